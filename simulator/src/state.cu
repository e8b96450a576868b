#include "state.cuh"

#include <thrust/copy.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "device_loops.cuh"

namespace nestsim::sim::detail {

void BodyState::upload(const HostSlots& h) {
  const std::size_t n = h.id.size();
  capacity = n;
  used = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (h.id[i] >= 0) used = uint32_t(i + 1);
  for (int k = 0; k < 3; ++k) {
    x[k].assign(h.x[k].begin(), h.x[k].end());
    x_next[k] = x[k];
    for (auto* v : {&force[k], &force_pred[k], &move[k], &accepted[k]}) v->assign(n, 0.0);
    image[k].assign(h.image[k].begin(), h.image[k].end());
  }
  radius.assign(h.radius.begin(), h.radius.end());
  thickness.assign(h.thickness.begin(), h.thickness.end());
  diffusion.assign(h.diffusion.begin(), h.diffusion.end());
  id.assign(h.id.begin(), h.id.end());
  kind.assign(h.kind.begin(), h.kind.end());
  parent.assign(h.parent.begin(), h.parent.end());
  membrane.assign(h.membrane.begin(), h.membrane.end());
  compartment.assign(h.compartment.begin(), h.compartment.end());
  rejections.assign(n, 0u);
  reject.assign(n, 0);
}

void BodyState::download(model::Frame& f) const {
  const std::size_t n = capacity;
  count_host_sync();  // the first copy waits; the others follow it
  thrust::host_vector<double> hx[3];
  for (int k = 0; k < 3; ++k) hx[k] = x[k];
  f.position.resize(n);
  for (std::size_t i = 0; i < n; ++i) f.position[i] = {hx[0][i], hx[1][i], hx[2][i]};
  thrust::host_vector<int32_t> himage[3];
  for (int k = 0; k < 3; ++k) himage[k] = image[k];
  f.image.resize(n);
  for (std::size_t i = 0; i < n; ++i) f.image[i] = {himage[0][i], himage[1][i], himage[2][i]};
  thrust::host_vector<int64_t> hid = id;
  thrust::host_vector<int32_t> hkind = kind, hparent = parent, hmembrane = membrane;
  thrust::host_vector<double> hradius = radius, hthickness = thickness;
  f.id.assign(hid.begin(), hid.end());
  f.kind.assign(hkind.begin(), hkind.end());
  f.radius.assign(hradius.begin(), hradius.end());
  f.thickness.assign(hthickness.begin(), hthickness.end());
  f.parent.resize(n);
  f.membrane.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    f.parent[i] = hparent[i] >= 0 ? hid[std::size_t(hparent[i])] : -1;
    f.membrane[i] = hmembrane[i] >= 0 ? hid[std::size_t(hmembrane[i])] : -1;
  }
}

void BodyState::keep_start() {
  for (int k = 0; k < 3; ++k) {
    x_start[k].resize(x[k].size());
    thrust::copy_n(step_policy(), x[k].begin(), used, x_start[k].begin());
  }
  id_start.resize(id.size());
  thrust::copy_n(step_policy(), id.begin(), used, id_start.begin());
}

namespace {
struct IsEmpty {
  const int64_t* id;
  NESTSIM_HD bool operator()(uint32_t s) const { return id[s] < 0; }
};
}  // namespace

uint32_t BodyState::gather_free_slots(thrust::device_vector<uint32_t>& free_slots,
                                      uint32_t wanted, const char* what, uint64_t step) {
  const std::size_t n = std::size_t(capacity);
  count_host_sync();  // copy_if returns its count
  const auto end = thrust::copy_if(thrust::device, thrust::counting_iterator<uint32_t>(0),
                                   thrust::counting_iterator<uint32_t>(uint32_t(n)),
                                   free_slots.begin(), IsEmpty{raw(id)});
  const std::size_t free = std::size_t(end - free_slots.begin());
  if (free < wanted)
    throw std::runtime_error("nestsim simulation: step " + std::to_string(step) + ": " +
                             std::to_string(wanted) + " " + what + " but only " +
                             std::to_string(free) + " free slots of " + std::to_string(n) +
                             "; raise simulation.capacity");
  return read_back(free_slots, wanted - 1);
}

uint64_t BodyState::rejected_moves() const {
  count_host_sync();
  return thrust::reduce(thrust::device, rejections.begin(), rejections.end(), uint64_t(0));
}

void BodyState::fill(SlotView& v) {
  v.n = used;
  for (int k = 0; k < 3; ++k) {
    v.x[k] = raw(x[k]);
    v.x_next[k] = raw(x_next[k]);
    v.force[k] = raw(force[k]);
    v.move[k] = raw(move[k]);
    v.accepted[k] = raw(accepted[k]);
  }
  v.radius = raw(radius);
  v.thickness = raw(thickness);
  v.diffusion = raw(diffusion);
  v.id = raw(id);
  v.parent = raw(parent);
  v.membrane = raw(membrane);
  v.compartment = raw(compartment);
  v.rejections = raw(rejections);
  v.reject = raw(reject);
  v.contacts = uint8_t(contacts);
  v.kind = raw(kind);
  v.contact_exempt = contact_exempt.empty() ? nullptr : raw(contact_exempt);
  v.kinds = kinds;
  v.kind_step = kind_step.empty() ? nullptr : raw(kind_step);
  if (contacts != model::Contacts::soft) v.repulsion = 0;
}

void BodyState::set_contacts(const model::Setup& setup) {
  contacts = setup.contacts;
  kinds = uint32_t(setup.kinds.size());
  const std::size_t want = setup.kinds.size() * setup.kinds.size();
  if (!setup.contact_exempt.empty() && setup.contact_exempt.size() != want)
    throw std::invalid_argument("Setup::contact_exempt has " +
                                std::to_string(setup.contact_exempt.size()) +
                                " entries; expected 0 or kinds x kinds = " + std::to_string(want));
  // An empty table (nothing exempt) is cleared, not assigned: Thrust's copy from an empty
  // host range dereferences its begin.
  if (setup.contact_exempt.empty())
    contact_exempt.clear();
  else
    contact_exempt.assign(setup.contact_exempt.begin(), setup.contact_exempt.end());
  std::vector<uint32_t> steps;
  bool classes = false;
  for (const model::Kind& k : setup.kinds) {
    steps.push_back(k.step);
    classes = classes || k.step != 1;
  }
  if (classes)
    kind_step.assign(steps.begin(), steps.end());
  else
    kind_step.clear();
}

}  // namespace nestsim::sim::detail

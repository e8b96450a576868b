// The engine's host side: validation, slot arrays on the device, the step loop, frames
// and restore. The per-body physics is in dynamics.cuh.
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "nestsim/device/exec.cuh"  // the caching allocator of Thrust's temporaries
#include "dynamics.cuh"
#include "reactions.cuh"
#include "nestsim/broadphase.h"
#include "nestsim/device/check.cuh"
#include "nestsim/device/pair_finder.cuh"
#include "nestsim/morton.h"
#include "nestsim/sim/simulation.h"

namespace nestsim::sim {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

template <class F>
void for_each_slot(uint32_t n, F f) {
  if (n == 0) return;
  thrust::for_each_n(thrust::device, thrust::counting_iterator<uint32_t>(0), n, f);
}

template <class F>
void for_each_index(uint64_t n, F f) {
  if (n == 0) return;
  thrust::for_each_n(thrust::device, thrust::counting_iterator<uint64_t>(0), n, f);
}

struct Widen {
  NESTSIM_HD uint64_t operator()(uint8_t m) const { return m; }
};

void device_sync() {
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaDeviceSynchronize());
#endif
}

// Times a phase into `into` (device work finished before the clock stops).
class PhaseTimer {
 public:
  explicit PhaseTimer(double& into) : into_(into), start_(Clock::now()) {}
  ~PhaseTimer() {
    device_sync();
    into_ += std::chrono::duration<double>(Clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& into_;
  Clock::time_point start_;
};

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument("nestsim simulation: " + what);
}

// Host copies of the slot arrays (the same fields as a Frame, in slot indices).
struct HostSlots {
  std::vector<double> x[3], radius, thickness, diffusion;
  std::vector<int32_t> image[3];
  std::vector<int64_t> id;
  std::vector<int32_t> kind, parent, membrane;
  std::vector<uint8_t> compartment;

  void resize(std::size_t n) {
    for (auto& c : x) c.assign(n, 0.0);
    for (auto& c : image) c.assign(n, 0);
    radius.assign(n, 0.0);
    thickness.assign(n, 0.0);
    diffusion.assign(n, 0.0);
    id.assign(n, -1);
    kind.assign(n, -1);
    parent.assign(n, -1);
    membrane.assign(n, -1);
    compartment.assign(n, 0);
  }
};

// The slot of each initial body (index in Setup::bodies). Spatial: slots in the order
// of the Morton code of the initial position on a 1024^dim grid over the box, so that
// bodies near each other in space are near each other in memory. The neighbour loops
// then share cache lines: on the H100 at 1e7 bodies in setup order (random in space) the
// per-entry pair test ran at the speed of random 32-byte loads (docs/perf-log.md). Slots
// are fixed for a body's life, so a trajectory's slot order stays stable over time;
// ids stay the indices in Setup::bodies. The order is a pure function of the setup, so
// runs stay bitwise reproducible; it changes the association of force sums (neighbours
// are summed in slot order), i.e. the last bits, not the statistics.
std::vector<uint32_t> initial_slots(const Setup& s, bool spatial) {
  const std::size_t n = s.bodies.size();
  std::vector<uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  if (spatial && n > 1) {
    std::vector<uint64_t> key(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      double f[3] = {0, 0, 0};
      for (int k = 0; k < s.dim; ++k) {
        const double edge = s.box[std::size_t(k)];
        f[k] = edge > 0 ? s.bodies[i].position[std::size_t(k)] / edge : 0.0;
      }
      key[i] = morton_key(f, s.dim);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
  }
  std::vector<uint32_t> slot_of(n);
  for (std::size_t r = 0; r < n; ++r) slot_of[order[r]] = uint32_t(r);
  return slot_of;
}

}  // namespace

// A body as the lists see it: its kind's reaction reach added outside (and, for a
// hollow body, inside: thickness + 2 reach), as the finder adds its skin.
struct ListRadii {
  const double* radius;
  const double* thickness;
  const int32_t* kind;
  const double* reach;
  double* r_out;
  double* q_out;
  NESTSIM_HD void operator()(uint32_t i) const {
    const double e = kind[i] >= 0 ? reach[kind[i]] : 0.0;
    const double r = radius[i] + e;
    double q = thickness[i] >= radius[i] ? r : thickness[i] + 2 * e;
    if (q > r) q = r;
    r_out[i] = r;
    q_out[i] = q;
  }
};

// Is a pair (pair_key) of two live bodies (not empty slots, whose radius and position
// stay behind)?
struct LivePair {
  const int64_t* id;
  NESTSIM_HD bool operator()(uint64_t key) const {
    return id[device::pair_first(key)] >= 0 && id[device::pair_second(key)] >= 0;
  }
};

struct Simulation::Impl {
  Setup setup;  // kinds, box, constants (bodies are not kept)
  SimulationOptions options;
  uint64_t step = 0;
  uint64_t next_id = 0;
  uint64_t capacity = 0;
  uint32_t used = 0;  // high-water mark of filled slots
  double skin = 0;
  mutable PhaseTimes times;

  thrust::device_vector<double> x[3], x_next[3], x_built[3], force[3], move[3], accepted[3];
  thrust::device_vector<double> force_pred[3];  // Heun's forces at the predicted positions
  thrust::device_vector<int32_t> image[3];      // periodic images (UpdateImage)
  // With reaction rules: the positions and ids at the start of the step, for the images.
  thrust::device_vector<double> x_start[3];
  thrust::device_vector<int64_t> id_start;
  thrust::device_vector<double> radius, thickness, diffusion;
  thrust::device_vector<int64_t> id;
  thrust::device_vector<int32_t> kind, parent, membrane;
  thrust::device_vector<uint8_t> compartment;
  thrust::device_vector<uint32_t> rejections;
  thrust::device_vector<uint64_t> nbr_offsets;
  thrust::device_vector<uint32_t> nbrs;
  std::unique_ptr<device::PairFinder<double>> finder;
  // Compactions of the lists (dynamics.cuh): per build the row of each entry and the
  // entries Accept needs; per step the interacting entries and the chunks of long rows.
  uint64_t entries = 0;  // list entries, nbr_offsets[used]
  thrust::device_vector<uint32_t> nbr_row, sibs, sib_rows, force_nbrs;
  uint64_t sib_count = 0;
  thrust::device_vector<uint8_t> reject;
  thrust::device_vector<uint8_t> mark;  // entries + 1 (the scan's last input: its value is not used)
  thrust::device_vector<uint64_t> kept, force_offsets, chunk_offsets;
  thrust::device_vector<double> partial[3];
  nestsim::detail::CachingAllocator alloc;

  // Reactions (reactions.cuh).
  thrust::device_vector<detail::DeviceRule> rules;
  bool pair_rules = false;
  // Per kind, how far beyond touching the lists must reach for the reaction rules (a
  // pair of kinds a, b is listed out to reach[a] + reach[b] beyond contact).
  std::vector<double> reach;
  bool any_reach = false;
  thrust::device_vector<double> kind_reach, list_radius, list_thickness;
  thrust::device_vector<double> kind_radius, kind_thickness, kind_diffusion;
  thrust::device_vector<uint8_t> kind_compartment, kind_membrane;
  thrust::device_vector<unsigned long long> claim, pair_counter, events;
  thrust::device_vector<int32_t> uni_rule, pair_rule;
  thrust::device_vector<uint32_t> birth, birth_rank, free_slots, pair_a, pair_b;
  bool lists_stale = false;
  // Compartment events (reactions.cuh): per slot marks, and the candidates of one phase.
  bool fusion_rules = false, bud_rules = false;
  thrust::device_vector<int32_t> fuse_into, ev_v, ev_y, ev_target, ev_rule;
  thrust::device_vector<uint32_t> ev_slot, ev_fits, ev_rank;
  thrust::device_vector<double> ev_centre[3], ev_mid, ev_aux;
  thrust::device_vector<unsigned long long> ev_blocked;
  thrust::device_vector<uint32_t> push_count, push_list;  // budding in a crowd
  thrust::device_vector<int32_t> push_by;

  detail::SlotView view() {
    detail::SlotView v;
    v.dim = setup.dim;
    v.n = used;
    const bool periodic = setup.boundary == Boundary::periodic;
    v.space.dim = setup.dim;
    for (int k = 0; k < 3; ++k) {
      const bool wrap = periodic && k < setup.dim;
      v.space.edge[k] = wrap ? setup.box[k] : 0.0;
      v.space.inv_edge[k] = wrap ? 1.0 / setup.box[k] : 0.0;
      v.box[k] = setup.box[k];
      v.x[k] = raw(x[k]);
      v.x_next[k] = raw(x_next[k]);
      v.x_built[k] = raw(x_built[k]);
      v.force[k] = raw(force[k]);
      v.move[k] = raw(move[k]);
      v.accepted[k] = raw(accepted[k]);
    }
    v.reflective = setup.boundary == Boundary::reflective;
    v.dt = setup.dt;
    v.kT = setup.kT;
    v.repulsion = setup.repulsion;
    v.seed = setup.seed;
    v.step = step;
    v.radius = raw(radius);
    v.thickness = raw(thickness);
    v.diffusion = raw(diffusion);
    v.id = raw(id);
    v.parent = raw(parent);
    v.membrane = raw(membrane);
    v.compartment = raw(compartment);
    v.rejections = raw(rejections);
    v.nbr_offsets = raw(nbr_offsets);
    v.nbrs = raw(nbrs);
    v.sib_rows = raw(sib_rows);
    v.sibs = raw(sibs);
    v.sib_count = sib_count;
    v.reject = raw(reject);
    return v;
  }

  void validate_setup() const {
    const Setup& s = setup;
    if (s.dim != 2 && s.dim != 3) invalid("dim must be 2 or 3, not " + std::to_string(s.dim));
    if (!(s.dt > 0)) invalid("dt must be > 0");
    if (!(s.kT > 0)) invalid("kT must be > 0");
    if (!(s.repulsion >= 0)) invalid("repulsion must be >= 0");
    for (int k = 0; k < s.dim; ++k)
      if (!(s.box[k] > 0 && std::isfinite(s.box[k])))
        invalid("box edge " + std::to_string(k) + " must be > 0");
    for (std::size_t k = 0; k < s.kinds.size(); ++k) {
      const Kind& kind = s.kinds[k];
      if (!(kind.radius > 0)) invalid("kind '" + kind.name + "': radius must be > 0");
      if (!(kind.thickness >= 0 && kind.thickness <= kind.radius))
        invalid("kind '" + kind.name + "': thickness must be in [0, radius]");
      if (!(kind.diffusion >= 0)) invalid("kind '" + kind.name + "': diffusion must be >= 0");
    }
    if (!(options.skin >= 0)) invalid("skin must be >= 0");
    // The stiffest soft contact must be resolved to the accuracy the setup asks for
    // (time_step.h): refuse a larger step instead of producing biased contacts.
    std::vector<ContactKind> contact;
    for (const Kind& kind : s.kinds)
      contact.push_back({kind.compartment, kind.membrane, kind.diffusion});
    const double largest = max_dt(contact, s.repulsion, s.kT, s.dt_limit);
    if (s.dt > largest) {
      char msg[512];
      std::snprintf(msg, sizeof msg,
                    "time step too large for accurate contacts: (D_a + D_b) / kT * repulsion "
                    "* dt = %g for the fastest soft pair, above %g; use dt <= %g",
                    s.dt * contact_rate(contact, s.repulsion, s.kT),
                    contact_step_limit(s.dt_limit), largest);
      invalid(msg);
    }
  }

  // Validates slots (kinds, parents, membranes, acyclic chains), sets the derived fields
  // and projects bound bodies onto their membrane's mid-surface.
  void prepare(HostSlots& h) const {
    const std::size_t n = h.id.size();
    const int dim = setup.dim;
    for (std::size_t i = 0; i < n; ++i) {  // derived fields first: links may point forward
      if (h.id[i] < 0) continue;
      if (h.kind[i] < 0 || std::size_t(h.kind[i]) >= setup.kinds.size())
        invalid("body " + std::to_string(h.id[i]) + ": kind out of range");
      const Kind& kind = setup.kinds[std::size_t(h.kind[i])];
      h.compartment[i] = kind.compartment ? 1 : 0;
      h.diffusion[i] = kind.diffusion;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (h.id[i] < 0) continue;
      const std::string who = "body " + std::to_string(h.id[i]);
      if (!(h.radius[i] > 0 && h.thickness[i] >= 0 && h.thickness[i] <= h.radius[i]))
        invalid(who + ": needs radius > 0 and thickness in [0, radius]");
      for (int k = 0; k < dim; ++k)
        if (!std::isfinite(h.x[k][i])) invalid(who + ": position not finite");
      for (const int32_t link : {h.parent[i], h.membrane[i]}) {
        if (link < 0) continue;
        if (std::size_t(link) >= n || h.id[std::size_t(link)] < 0 || !h.compartment[std::size_t(link)])
          invalid(who + ": parent/membrane is not a compartment of the model");
      }
    }
    for (std::size_t i = 0; i < n; ++i) {  // acyclic parent chains
      if (h.id[i] < 0) continue;
      int32_t p = h.parent[i];
      for (std::size_t depth = 0; p >= 0; ++depth, p = h.parent[std::size_t(p)])
        if (depth > n || std::size_t(p) == i)
          invalid("body " + std::to_string(h.id[i]) + ": its parent chain is a cycle");
    }
    const bool periodic = setup.boundary == Boundary::periodic;
    for (std::size_t i = 0; i < n; ++i) {
      if (h.id[i] < 0) continue;
      const int32_t c = h.membrane[i];
      if (c >= 0) {
        if (h.compartment[i])
          invalid("body " + std::to_string(h.id[i]) + ": only species can be membrane-bound");
        h.parent[i] = h.parent[std::size_t(c)];
        double rel[3] = {0, 0, 0}, r2 = 0;
        for (int k = 0; k < dim; ++k) {
          rel[k] = h.x[k][i] - h.x[k][std::size_t(c)];
          if (periodic) rel[k] -= setup.box[k] * std::floor(rel[k] / setup.box[k] + 0.5);
          r2 += rel[k] * rel[k];
        }
        if (!(r2 > 0))
          invalid("body " + std::to_string(h.id[i]) + ": at its membrane's centre, no direction");
        const double scale = (h.radius[std::size_t(c)] - 0.5 * h.thickness[std::size_t(c)]) / std::sqrt(r2);
        for (int k = 0; k < dim; ++k) h.x[k][i] = h.x[k][std::size_t(c)] + rel[k] * scale;
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (h.id[i] < 0) continue;
      for (int k = 0; k < dim; ++k) {
        double& p = h.x[k][i];
        const double edge = setup.box[k];
        if (periodic) {
          p -= edge * std::floor(p / edge);
          if (p >= edge) p -= edge;
          if (p < 0) p = 0;
        } else if (h.parent[i] < 0 && h.membrane[i] < 0) {
          const double s = h.radius[i];
          if (!(p >= s && p <= edge - s))
            invalid("body " + std::to_string(h.id[i]) +
                    " (top level) is not wholly inside the reflective box");
        }
      }
    }
  }

  void upload(const HostSlots& h) {
    const std::size_t n = h.id.size();
    capacity = n;
    used = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (h.id[i] >= 0) used = uint32_t(i + 1);
    for (int k = 0; k < 3; ++k) {
      x[k].assign(h.x[k].begin(), h.x[k].end());
      x_next[k] = x[k];
      x_built[k] = x[k];
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

  // Neighbour lists at the current positions, with at least `wanted_skin`.
  void rebuild(double wanted_skin) {
    PhaseTimer timer(times.broadphase);
    if (finder && wanted_skin != skin) {
      skin = wanted_skin;
      finder->set_skin(0.5 * skin);
    }
    if (!finder) {
      skin = wanted_skin;
      BroadphaseOptions o;
      o.overlap = setup.collision == Collision::solid ? Overlap::solid : Overlap::hollow;
      o.method = Method::hsx;
      o.domain.dim = setup.dim;
      o.domain.periodic = setup.boundary == Boundary::periodic;
      if (o.domain.periodic)
        for (int k = 0; k < setup.dim; ++k) o.domain.size[k] = setup.box[k];
      // The finder searches every body with r + skin_f: a pair is listed out to 2 skin_f
      // beyond contact; bodies that moved at most skin / 2 each need skin.
      o.skin = 0.5 * skin;
      o.sort_pairs = false;  // neighbor_lists() sorts both directions of every pair
      finder = std::make_unique<device::PairFinder<double>>(o);
    }
    finder->find(list_bodies());
    // The rows and the row of each entry (nbr_row), from the lists' sorted keys.
    finder->neighbor_lists(used, nbr_offsets, nbrs, &nbr_row);
    if (nbrs.empty()) nbrs.resize(1);  // a valid pointer for an empty list
    for (int k = 0; k < 3; ++k) x_built[k] = x[k];
    // Buffers for the compactions, sized once per build (none in the step loop). Every
    // pair's two bodies are below `used`: each pair gives two entries.
    entries = 2 * finder->pair_count();
    // Exact sizes (nestsim::detail::resize_discard): at 1e8 bodies these buffers are tens
    // of GB, and thrust's resize may double a growing one.
    const std::size_t room = std::size_t(std::max<uint64_t>(entries, 1));
    nbr_row.resize(room);  // already 2 entries per pair; one when there are none
    nestsim::detail::resize_discard(mark, std::size_t(entries) + 1);
    nestsim::detail::resize_discard(kept, std::size_t(entries) + 1);
    nestsim::detail::resize_discard(force_nbrs, room);
    for (auto* o : {&force_offsets, &chunk_offsets}) o->resize(std::size_t(used) + 1);
    for (auto& p : partial) nestsim::detail::resize_discard(p, std::size_t(max_chunks()));
    for_each_index(entries, detail::MarkSibling{view(), raw(nbr_row), raw(mark)});
    // The sibling entries (a compartment and a body of the same parent) are few: their
    // buffers are sized to their count.
    sib_count = compact(nullptr, sibs, &sib_rows, /*size_outputs=*/true);
    built_at = step;
    ++times.rebuilds;
  }

  // The bodies as the lists see them, at the current positions: each body searched with
  // its kind's reaction reach on top of its radius.
  device::SphereView<double> list_bodies() {
    device::SphereView<double> bodies;
    for (int k = 0; k < 3; ++k) bodies.pos[k] = raw(x[k]);
    bodies.radius = raw(radius);
    bodies.thickness = raw(thickness);
    if (any_reach) {
      list_radius.resize(radius.size());
      list_thickness.resize(radius.size());
      for_each_slot(used, ListRadii{raw(radius), raw(thickness), raw(kind), raw(kind_reach),
                                    raw(list_radius), raw(list_thickness)});
      bodies.radius = raw(list_radius);
      bodies.thickness = raw(list_thickness);
    }
    bodies.n = used;
    return bodies;
  }

  // The pairs of live bodies that lists built now with skin 0 would hold
  // (Frame::broadphase_pairs): a function of the frame alone, unlike the lists' own
  // size, which depends on when they were built, with which skin, and on the slots of
  // removed bodies (a resumed run has none past its last live slot). The finder takes
  // the lists' skin back; the lists themselves are untouched.
  int64_t pairs_without_skin() {
    PhaseTimer timer(times.broadphase);
    finder->set_skin(0);
    const uint64_t found = finder->find(list_bodies());
    const auto& keys = finder->keys();
    const uint64_t live = found == 0 ? 0 : uint64_t(thrust::count_if(
        thrust::device, keys.begin(), keys.begin() + found, LivePair{raw(id)}));
    finder->set_skin(0.5 * skin);
    return int64_t(live);
  }

  // A bound on the chunks of the long rows: ceil(m / C) < 2 m / C for m > C.
  uint64_t max_chunks() const { return 2 * entries / detail::kForceChunk + 1; }

  // The list entries marked in `mark`, in list order: neighbours into `out`, and row
  // offsets into `offsets` and/or the row of each entry into `rows` (an exclusive scan of
  // the marks places them). Returns the number kept.
  // With size_outputs, `out` and `rows` are sized to the count first (one read-back);
  // else they hold `entries` already.
  uint64_t compact(thrust::device_vector<uint64_t>* offsets, thrust::device_vector<uint32_t>& out,
                   thrust::device_vector<uint32_t>* rows = nullptr, bool size_outputs = false) {
    const auto marks = thrust::make_transform_iterator(mark.begin(), Widen{});
    thrust::exclusive_scan(nestsim::detail::policy(alloc), marks, marks + entries + 1,
                           kept.begin(), uint64_t(0));
    if (size_outputs) {
      const std::size_t count = std::max<std::size_t>(kept[std::size_t(entries)], 1);
      nestsim::detail::resize_discard(out, count);
      if (rows) nestsim::detail::resize_discard(*rows, count);
    }
    for_each_index(entries, detail::ScatterKept{raw(kept), raw(nbrs), raw(out)});
    if (rows) for_each_index(entries, detail::ScatterKept{raw(kept), raw(nbr_row), raw(*rows)});
    if (offsets)
      for_each_slot(used + 1, detail::RowStart{raw(kept), raw(nbr_offsets), raw(*offsets)});
    return kept[std::size_t(entries)];
  }

  // Impermeability tests of the proposals (dynamics.cuh, Accept).
  void accept(const detail::SlotView& v) {
    for_each_slot(used, detail::AcceptParent{v});
    for_each_index(sib_count, detail::AcceptSibling{v});
    for_each_slot(used, detail::AcceptApply{v});
  }

  // Is there a soft force to integrate (else Heun's corrector equals the predictor)?
  bool soft_forces() const { return setup.repulsion > 0 && entries > 0; }

  // Excluded-volume forces at the positions v.x, into v.force (dynamics.cuh, Forces).
  void forces(const detail::SlotView& v) {
    if (!soft_forces()) {
      for (int k = 0; k < 3; ++k)
        thrust::fill_n(thrust::device, thrust::device_pointer_cast(v.force[k]), used, 0.0);
      return;
    }
    for_each_index(entries, detail::MarkInteracting{v, raw(nbr_row), raw(mark)});
    compact(&force_offsets, force_nbrs);
    for_each_slot(used + 1, detail::ChunkCount{used, raw(force_offsets), raw(chunk_offsets)});
    thrust::exclusive_scan(nestsim::detail::policy(alloc), chunk_offsets.begin(),
                           chunk_offsets.begin() + used + 1, chunk_offsets.begin());
    detail::ForceLists l;
    l.offsets = raw(force_offsets);
    l.nbrs = raw(force_nbrs);
    l.chunk_offsets = raw(chunk_offsets);
    for (int k = 0; k < 3; ++k) l.partial[k] = raw(partial[k]);
    for_each_index(max_chunks(), detail::ForceChunk{v, l});
    for_each_slot(used, detail::ForceRow{v, l});
  }

  // The initial state must satisfy the invariants that the steps keep (dynamics.cuh).
  void check_invariants() {
    for (int k = 0; k < 3; ++k) thrust::fill(move[k].begin(), move[k].end(), 0.0);
    thrust::fill(rejections.begin(), rejections.end(), 0u);
    accept(view());
    thrust::host_vector<uint32_t> r(rejections.begin(), rejections.begin() + used);
    thrust::fill(rejections.begin(), rejections.end(), 0u);
    for (uint32_t i = 0; i < used; ++i)
      if (r[i])
        invalid("body " + std::to_string(int64_t(id[i])) +
                " intersects a membrane: a body's whole ball must lie in its parent's lumen "
                "(distance from the parent's centre + radius <= r - q of the parent) and "
                "off every sibling compartment (distance >= the sum of the radii)");
  }

  // The rules on the device and the reach the lists need for them.
  void setup_rules() {
    const Setup& s = setup;
    const std::size_t K = s.kinds.size();
    if (s.reactions.size() > std::size_t(detail::kMaxRules))
      invalid("at most " + std::to_string(detail::kMaxRules) + " reaction rules");
    std::vector<double> kr(K), kq(K), kd(K);
    std::vector<uint8_t> kc(K), km(K);
    for (std::size_t k = 0; k < K; ++k) {
      kr[k] = s.kinds[k].radius;
      kq[k] = s.kinds[k].compartment ? s.kinds[k].thickness : s.kinds[k].radius;
      kd[k] = s.kinds[k].diffusion;
      kc[k] = s.kinds[k].compartment ? 1 : 0;
      km[k] = s.kinds[k].membrane ? 1 : 0;
    }
    std::vector<detail::DeviceRule> host;
    rule_restructures.clear();
    pair_rules = false;
    fusion_rules = bud_rules = false;
    reach.assign(K, 0.0);
    const auto need = [&](int32_t a, double extra_a, int32_t b, double extra_b) {
      if (a >= 0) reach[std::size_t(a)] = std::max(reach[std::size_t(a)], extra_a);
      if (b >= 0) reach[std::size_t(b)] = std::max(reach[std::size_t(b)], extra_b);
    };
    for (const Reaction& rule : s.reactions) {
      const std::string who = "reaction '" + rule.name + "': ";
      detail::DeviceRule d;
      d.reactants = int(rule.reactants.size());
      d.products = int(rule.products.size());
      if (d.reactants < 1 || d.reactants > 2 || d.products > 2)
        invalid(who + "needs 1 or 2 reactants and at most 2 products");
      if (!(rule.rate >= 0)) invalid(who + "rate must be >= 0");
      const auto term = [&](const Term& t, int32_t& kind, uint8_t& where, int32_t& comp) {
        if (t.kind >= K) invalid(who + "kind out of range");
        kind = int32_t(t.kind);
        where = uint8_t(t.site.where);
        comp = t.site.where == Site::Where::any ? -1 : int32_t(t.site.compartment);
        if (comp >= int32_t(K) || (comp >= 0 && !s.kinds[std::size_t(comp)].compartment))
          invalid(who + "a site names no compartment kind");
      };
      for (int k = 0; k < d.reactants; ++k)
        term(rule.reactants[std::size_t(k)], d.reactant[k], d.reactant_where[k], d.reactant_compartment[k]);
      for (int k = 0; k < d.products; ++k) {
        term(rule.products[std::size_t(k)], d.product[k], d.product_where[k], d.product_compartment[k]);
      }
      d.rate = rule.rate;
      d.radius = rule.radius;
      d.probability = -std::expm1(-rule.rate * s.dt);
      const bool c0 = kc[std::size_t(d.reactant[0])] != 0;
      const bool c1 = d.reactants == 2 && kc[std::size_t(d.reactant[1])] != 0;
      const auto is_comp = [&](int32_t kind) { return kc[std::size_t(kind)] != 0; };
      const uint8_t on = uint8_t(Site::Where::on), in = uint8_t(Site::Where::in),
                    any = uint8_t(Site::Where::any);
      if (d.reactants == 1 && c0) invalid(who + "a compartment is a reactant only of fusion (\"V + Y -> Y\")");
      // Budding: "S on X -> V + S' on V" or "S on X -> V + S' in V" (V first).
      d.bud = d.reactants == 1 && d.products == 2 && (is_comp(d.product[0]) || is_comp(d.product[1]));
      if (d.bud) {
        if (!is_comp(d.product[0]) || is_comp(d.product[1]))
          invalid(who + "budding makes one compartment V and one species: \"S on X -> V + S' on V\"");
        if (d.reactant_where[0] != on || !km[std::size_t(d.reactant[0])])
          invalid(who + "budding starts from a membrane species on a compartment: \"S on X -> ...\"");
        if (!(d.product_where[0] == any ||
              (d.product_where[0] == in && d.product_compartment[0] == d.reactant_compartment[0])))
          invalid(who + "the new compartment buds into X's lumen: write it without a site (or \"in X\")");
        const bool onv = d.product_where[1] == on, inv = d.product_where[1] == in;
        if (!(onv || inv) || d.product_compartment[1] != d.product[0])
          invalid(who + "the species goes with the new compartment: \"S' on V\" or \"S' in V\"");
        if (onv != (km[std::size_t(d.product[1])] != 0))
          invalid(who + "\"on V\" needs a membrane species, \"in V\" a free one");
        const double rv = kr[std::size_t(d.product[0])];
        if (!(rv - 0.5 * kq[std::size_t(d.product[0])] > 0)) invalid(who + "the bud's mid-surface radius must be > 0");
      } else {
        for (int k = 0; k < d.products; ++k)
          if (is_comp(d.product[k]) && !(c0 && c1))
            invalid(who + "a compartment is a product only of budding or fusion");
      }
      if (d.reactants == 2) {
        if (!(rule.radius > 0)) invalid(who + "two reactants need a reaction radius > 0");
        if (c0 && c1) {  // fusion: "V + Y -> Y"
          d.fusion = true;
          if (d.products != 1 || d.product[0] != d.reactant[1] || d.product_where[0] != any ||
              d.reactant_where[0] != any || d.reactant_where[1] != any)
            invalid(who + "two compartments react only by fusion, \"V + Y -> Y\" (Y stays, no sites)");
          need(d.reactant[0], 0.5 * rule.radius, d.reactant[1], 0.5 * rule.radius);
        } else if (c0) {
          invalid(who + "write the species first (\"S + K -> S' on K\")");
        } else if (c1) {  // binding
          d.binding = true;
          if (d.products != 1 || d.product_where[0] != uint8_t(Site::Where::on) ||
              d.product_compartment[0] != d.reactant[1])
            invalid(who + "a species and a compartment kind K react only as binding, \"S + K -> S' on K\"");
          // The species' ball within the radius of the membrane's wall (its inner surface
          // from the lumen, its outer surface from outside): all of the reach on the species.
          need(d.reactant[0], rule.radius, -1, 0);
        } else {
          const double gap = rule.radius - kr[std::size_t(d.reactant[0])] - kr[std::size_t(d.reactant[1])];
          need(d.reactant[0], 0.5 * gap, d.reactant[1], 0.5 * gap);
        }
        pair_rules = true;
      }
      fusion_rules = fusion_rules || d.fusion;
      bud_rules = bud_rules || d.bud;
      // Does an event of this rule change what the lists or Accept's compaction were
      // built from (new bodies, locations, a larger radius)? Then the lists are rebuilt.
      bool restructures = d.binding || d.fusion || (d.products == 2 && d.reactants == 1);
      for (int k = 0; k < d.products; ++k) {
        if (d.product_where[k] != uint8_t(Site::Where::any)) restructures = true;
        const int from = std::min(k, d.reactants - 1);
        if (kr[std::size_t(d.product[k])] > kr[std::size_t(d.reactant[from])]) restructures = true;
        if (d.reactants == 2 && kr[std::size_t(d.product[k])] >
                                    std::min(kr[std::size_t(d.reactant[0])], kr[std::size_t(d.reactant[1])]))
          restructures = true;
      }
      // A -> B + C (species): the spread of the products. Detailed balance of the Doi
      // model with a reverse rule B + C -> A of radius R needs C uniform in the ball of
      // radius R around B (then A + B <-> C reaches K = lambda (4/3 pi R^3) / k_back); with
      // no reverse rule, the ball of the contact distance r_B + r_C.
      if (d.reactants == 1 && d.products == 2 && !d.bud) {
        d.spread = kr[std::size_t(d.product[0])] + kr[std::size_t(d.product[1])];
        for (const Reaction& back : s.reactions)
          if (back.reactants.size() == 2 && back.products.size() == 1 &&
              back.products[0].kind == uint32_t(d.reactant[0]) &&
              ((back.reactants[0].kind == uint32_t(d.product[0]) && back.reactants[1].kind == uint32_t(d.product[1])) ||
               (back.reactants[0].kind == uint32_t(d.product[1]) && back.reactants[1].kind == uint32_t(d.product[0]))))
            d.spread = back.radius;
        // clear_at: compartments whose ball meets a product's ball within the spread.
        const double rp = std::max(kr[std::size_t(d.product[0])], kr[std::size_t(d.product[1])]);
        need(d.reactant[0], d.spread + rp - kr[std::size_t(d.reactant[0])], -1, 0);
      }
      // A release from K's membrane ("in K" / "outside K"): the product's ball just off
      // the wall, up to q_K / 2 + r_p from the reactant; clear_at looks for compartments
      // meeting that ball.
      for (int k = 0; k < d.products && d.reactants == 1 && !d.bud; ++k) {
        const uint8_t w = d.product_where[k];
        if ((w == uint8_t(Site::Where::in) || w == uint8_t(Site::Where::outside)) && d.product_compartment[k] >= 0)
          need(d.reactant[0], 2 * kr[std::size_t(d.product[k])] +
                                  0.5 * kq[std::size_t(d.product_compartment[k])] -
                                  kr[std::size_t(d.reactant[0])], -1, 0);
      }
      rule_restructures.push_back(restructures);
      host.push_back(d);
    }
    // thrust::copy of an empty range binds a reference to a null element (UBSan).
    if (host.empty()) rules.clear(); else rules.assign(host.begin(), host.end());
    kind_radius.assign(kr.begin(), kr.end());
    kind_thickness.assign(kq.begin(), kq.end());
    kind_diffusion.assign(kd.begin(), kd.end());
    kind_compartment.assign(kc.begin(), kc.end());
    kind_membrane.assign(km.begin(), km.end());
    any_reach = false;
    for (double e : reach) any_reach = any_reach || e > 0;
    kind_reach.assign(reach.begin(), reach.end());
    if (events.size() != host.size()) events.assign(host.size(), 0ull);
  }

  detail::ReactionView reaction_view(const detail::SlotView& v) {
    detail::ReactionView r;
    r.v = v;
    r.rules = raw(rules);
    r.rule_count = int(rules.size());
    r.kind = raw(kind);
    r.kind_radius = raw(kind_radius);
    r.kind_thickness = raw(kind_thickness);
    r.kind_diffusion = raw(kind_diffusion);
    r.kind_compartment = raw(kind_compartment);
    r.kind_membrane = raw(kind_membrane);
    r.claim = raw(claim);
    r.uni_rule = raw(uni_rule);
    r.pair_a = raw(pair_a);
    r.pair_b = raw(pair_b);
    r.pair_rule = raw(pair_rule);
    r.pair_count = raw(pair_counter);
    r.pair_capacity = pair_a.size();
    r.nbr_row = raw(nbr_row);
    r.id = raw(id);
    r.parent = raw(parent);
    r.membrane = raw(membrane);
    r.radius = raw(radius);
    r.thickness = raw(thickness);
    r.diffusion = raw(diffusion);
    r.compartment = raw(compartment);
    r.fuse_into = raw(fuse_into);
    r.birth = raw(birth);
    r.birth_rank = raw(birth_rank);
    r.free_slots = raw(free_slots);
    r.next_id = next_id;
    r.events = raw(events);
    return r;
  }

  struct IsEmpty {
    const int64_t* id;
    NESTSIM_HD bool operator()(uint32_t s) const { return id[s] < 0; }
  };

  // The empty slots, ascending, into free_slots; throws when fewer than `wanted`
  // (`what` names the bodies that need them). Returns the slot of the last one wanted.
  uint32_t gather_free_slots(uint32_t wanted, const char* what) {
    const std::size_t n = std::size_t(capacity);
    const auto end = thrust::copy_if(thrust::device, thrust::counting_iterator<uint32_t>(0),
                                     thrust::counting_iterator<uint32_t>(uint32_t(n)),
                                     free_slots.begin(), IsEmpty{raw(id)});
    const std::size_t free = std::size_t(end - free_slots.begin());
    if (free < wanted)
      throw std::runtime_error("nestsim simulation: step " + std::to_string(step) + ": " +
                               std::to_string(wanted) + " " + what + " but only " +
                               std::to_string(free) + " free slots of " + std::to_string(n) +
                               "; raise simulation.capacity");
    return free_slots[wanted - 1];
  }

  // The reactions of this step, at the new positions (reactions.cuh).
  void react() {
    if (rules.empty()) return;
    PhaseTimer timer(times.reactions);
    const std::size_t n = std::size_t(capacity);
    if (claim.size() != n) {
      claim.resize(n);
      uni_rule.resize(n);
      birth.resize(n + 1);
      birth_rank.resize(n + 1);
      free_slots.resize(std::max<std::size_t>(n, 1));
      pair_counter.resize(1);
      if (pair_a.empty())
        for (auto* b : {&pair_a, &pair_b}) b->resize(1024);
      if (pair_rule.empty()) pair_rule.resize(1024);
      if (fusion_rules)
        for (auto* b : {&fuse_into, &ev_v, &ev_y}) b->assign(n, -1);
      if (bud_rules) {
        push_count.assign(n, 0u);
        push_by.assign(n, -1);
      }
    }
    detail::ReactionView r = reaction_view(view());
    for_each_slot(used, detail::UniCandidates{r});
    uint64_t pairs = 0;
    if (pair_rules && entries > 0) {
      for (;;) {
        pair_counter[0] = 0ull;
        r.pair_capacity = pair_a.size();
        for_each_index(entries, detail::PairCandidates{r});
        pairs = pair_counter[0];
        if (pairs <= pair_a.size()) break;
        for (auto* b : {&pair_a, &pair_b}) b->resize(std::size_t(2 * pairs));
        pair_rule.resize(std::size_t(2 * pairs));
        r = reaction_view(view());
      }
      // Candidates were appended in any order; nothing depends on it: the claims are
      // maxima and the winning events touch disjoint bodies.
      for_each_index(pairs, detail::ClaimPairs{r});
    }
    birth[used] = 0u;
    for_each_slot(used, detail::UniWinner{r});
    thrust::exclusive_scan(nestsim::detail::policy(alloc), birth.begin(), birth.begin() + used + 1,
                           birth_rank.begin(), 0u);
    const uint32_t births = birth_rank[used];
    if (births > 0) {
      const uint32_t last = gather_free_slots(births, "new bodies");
      r.free_slots = raw(free_slots);
      for_each_slot(used, detail::ExecuteUni{r});
      used = std::max(used, last + 1);
      next_id += births;
    } else {
      for_each_slot(used, detail::ExecuteUni{r});
    }
    if (pairs > 0) for_each_index(pairs, detail::ExecutePairs{r});
    if (fusion_rules && pairs > 0) fusions(r);
    if (bud_rules) buds(reaction_view(view()));  // positions after the fusions
    if (births > 0 || restructuring_events() != events_seen) lists_stale = true;
    events_seen = restructuring_events();
  }

  struct FusesInto {
    const int32_t* into;
    NESTSIM_HD bool operator()(uint32_t s) const { return into[s] >= 0; }
  };
  struct Buds {
    const int32_t* uni_rule;
    const detail::DeviceRule* rules;
    NESTSIM_HD bool operator()(uint32_t s) const { return uni_rule[s] >= 0 && rules[uni_rule[s]].bud; }
  };

  // The candidates of one phase of compartment events, in slot order.
  template <class Pred>
  detail::EventList event_list(Pred pred) {
    const auto first = thrust::counting_iterator<uint32_t>(0);
    const std::size_t count = std::size_t(thrust::count_if(thrust::device, first, first + used, pred));
    detail::EventList e;
    if (count == 0) return e;
    if (ev_slot.size() < count) {
      const std::size_t room = std::max<std::size_t>(2 * count, 64);
      for (auto* b : {&ev_slot, &ev_fits, &ev_rank}) b->resize(room);
      for (auto* b : {&ev_target, &ev_rule}) b->resize(room);
      for (auto* b : {&ev_centre[0], &ev_centre[1], &ev_centre[2], &ev_mid, &ev_aux}) b->resize(room);
      ev_blocked.resize(room);
    }
    thrust::copy_if(thrust::device, first, first + used, ev_slot.begin(), pred);
    e.count = uint32_t(count);
    e.slot = raw(ev_slot);
    e.target = raw(ev_target);
    e.rule = raw(ev_rule);
    for (int k = 0; k < 3; ++k) e.centre[k] = raw(ev_centre[k]);
    e.mid = raw(ev_mid);
    e.aux = raw(ev_aux);
    e.blocked = raw(ev_blocked);
    e.ev_v = raw(ev_v);
    e.ev_y = raw(ev_y);
    return e;
  }

  // This step's fusions (reactions.cuh): checked against every body, then executed.
  void fusions(const detail::ReactionView& r) {
    detail::EventList e = event_list(FusesInto{raw(fuse_into)});
    if (e.count == 0) return;
    for_each_slot(e.count, RuleOfFusion{r, e});
    e.ghost_proteins = raw(ev_fits);
    e.ghost_children = raw(ev_rank);
    for_each_slot(e.count, detail::FusionSetup{r, e});
    for_each_slot(used, detail::FusionCheck{r, e});
    for_each_slot(e.count, detail::FusionGhost{e});
    for_each_slot(used, detail::FusionMove{r, e});
    for (int k = 0; k < 3; ++k) x[k].swap(x_next[k]);
    const detail::ReactionView moved = reaction_view(view());
    for_each_slot(used, detail::FusionApplyLumen{moved, e});
    for_each_slot(used, detail::FusionApplyMembrane{moved, e});
    for_each_slot(e.count, detail::FusionDone{moved, e});
  }

  // The rule of each fusion: the winning pair candidate that marked it.
  struct RuleOfFusion {
    detail::ReactionView r;
    detail::EventList e;
    NESTSIM_HD void operator()(uint32_t c) const {
      const uint32_t a = e.slot[c];
      const int32_t b = r.fuse_into[a];
      for (int k = 0; k < r.rule_count; ++k)
        if (r.rules[k].fusion && r.claim[a] == detail::pair_priority(r, a, uint32_t(b), k, uint32_t(b))) {
          e.rule[c] = k;
          return;
        }
      e.rule[c] = 0;
    }
  };

  // This step's buds (reactions.cuh): checked against every body and each other, then
  // the new compartments born in free slots.
  void buds(detail::ReactionView r) {
    detail::EventList e = event_list(Buds{raw(uni_rule), raw(rules)});
    if (e.count == 0) return;
    for_each_slot(e.count, detail::BudSetup{r, e});
    detail::PushView push;
    push.count = raw(push_count);
    push.by = raw(push_by);
    for_each_slot(used, detail::BudCheck{r, e, push});
    for_each_slot(used, detail::PushPlan{r, e, push});
    const auto first = thrust::counting_iterator<uint32_t>(0);
    push.n = uint32_t(thrust::count_if(thrust::device, first, first + used, Pushed{push.count}));
    if (push.n > 0) {
      if (push_list.size() < push.n) push_list.resize(std::max<std::size_t>(2 * push.n, 64));
      thrust::copy_if(thrust::device, first, first + used, push_list.begin(), Pushed{push.count});
      push.list = raw(push_list);
      for_each_slot(used, detail::PushCheck{r, e, push});
    }
    for_each_slot(e.count, detail::BudPairs{r, e, raw(ev_fits)});
    thrust::exclusive_scan(thrust::device, ev_fits.begin(), ev_fits.begin() + e.count,
                           ev_rank.begin(), 0u);
    const uint32_t born = ev_rank[e.count - 1] + ev_fits[e.count - 1];
    if (born > 0) {
      const uint32_t last = gather_free_slots(born, "buds");
      r.free_slots = raw(free_slots);
      r.next_id = next_id;
      for_each_slot(e.count, detail::BudExecute{r, e, raw(ev_fits), raw(ev_rank)});
      for_each_slot(push.n, detail::PushApply{r, e, push, raw(ev_fits)});
      used = std::max(used, last + 1);
      next_id += born;
    }
    thrust::fill_n(thrust::device, push_count.begin(), used, 0u);
  }
  // Proteins counted in exactly one bud's ball: pushed if that bud happens.
  struct Pushed {
    const uint32_t* count;
    NESTSIM_HD bool operator()(uint32_t s) const { return count[s] == 1; }
  };

  std::vector<bool> rule_restructures;
  unsigned long long events_seen = 0;  // of the rules that restructure

  unsigned long long restructuring_events() const {
    thrust::host_vector<unsigned long long> e(events.begin(), events.end());
    unsigned long long total = 0;
    for (std::size_t k = 0; k < e.size(); ++k)
      if (rule_restructures[k]) total += e[k];
    return total;
  }

  void one_step() {
    if (lists_stale) {  // reactions changed bodies: lists at the current positions
      rebuild(event_skin());
      lists_stale = false;
    }
    const bool events_possible = !rules.empty();
    if (events_possible) {  // the images need where each slot's body started the step
      PhaseTimer timer(times.integrate);
      for (int k = 0; k < 3; ++k) {
        x_start[k].resize(x[k].size());
        thrust::copy_n(thrust::device, x[k].begin(), used, x_start[k].begin());
      }
      id_start.resize(id.size());
      thrust::copy_n(thrust::device, id.begin(), used, id_start.begin());
    }
    detail::SlotView v = view();
    {
      PhaseTimer timer(times.forces);
      forces(v);
    }
    {
      PhaseTimer timer(times.integrate);
      for_each_slot(used, detail::Propose{v});
    }
    keep_lists_valid(v);
    if (soft_forces()) {  // Heun's corrector: forces at the predicted positions
      detail::SlotView predicted = v;
      {
        PhaseTimer timer(times.forces);
        detail::Predict p{v};
        for (int k = 0; k < 3; ++k) p.x_pred[k] = raw(x_next[k]);
        for_each_slot(used, p);
        for (int k = 0; k < 3; ++k) {
          predicted.x[k] = raw(x_next[k]);
          predicted.force[k] = raw(force_pred[k]);
        }
        forces(predicted);
      }
      detail::SlotView corrector = v;
      for (int k = 0; k < 3; ++k) corrector.force_pred[k] = raw(force_pred[k]);
      {
        PhaseTimer timer(times.integrate);
        for_each_slot(used, detail::Propose{corrector});
      }
      keep_lists_valid(v);
    }
    {
      PhaseTimer timer(times.integrate);
      accept(v);
      for_each_slot(used, detail::Apply{v});
      for_each_slot(used, detail::ApplyBound{v});
      for (int k = 0; k < 3; ++k) x[k].swap(x_next[k]);
      if (!events_possible) update_images(x_next, nullptr);
    }
    react();
    if (events_possible) {
      PhaseTimer timer(times.integrate);
      update_images(x_start, raw(id_start));
    }
    ++step;
    ++times.steps;
  }

  // The periodic images after this step's moves and events (dynamics.cuh, UpdateImage).
  void update_images(thrust::device_vector<double> (&before)[3], const int64_t* id_before) {
    if (setup.boundary != Boundary::periodic) return;
    detail::UpdateImage u{view()};
    for (int k = 0; k < 3; ++k) {
      u.before[k] = raw(before[k]);
      u.image[k] = raw(image[k]);
    }
    u.id_before = id_before;
    for_each_slot(used, u);
  }

  // Rebuilds the lists at the current positions when the proposed moves could take a
  // body more than half the skin from where they were built; `v` is refreshed then.
  void keep_lists_valid(detail::SlotView& v) {
    detail::StepBound b;
    {
      PhaseTimer timer(times.integrate);
      b = thrust::transform_reduce(nestsim::detail::policy(alloc),
                                   thrust::counting_iterator<uint32_t>(0),
                                   thrust::counting_iterator<uint32_t>(used),
                                   detail::BoundOfBody{v}, detail::StepBound{},
                                   detail::MaxStepBound{});
    }
    last_step_bound = b.step;
    if (b.from_built <= 0.5 * skin) return;
    // Lists at the old positions that stay valid whatever this step accepts. With an
    // automatic skin shrunk for frequent events (event_skin), lists that the motion
    // outlived in a step or two mean the skin should grow back.
    double wanted = skin;
    if (auto_skin() && step - built_at <= 2) wanted = std::min(base_skin, 2.0 * skin);
    rebuild(std::max(wanted, 2.0 * b.step * (1.0 + 1e-9) + 1e-300));
    v = view();
  }

  // The automatic skin (options.skin == 0) adapts to how long lists live. Events that
  // restructure (births, moves to a membrane, growth) force a rebuild at the next step;
  // at scale some event happens every step somewhere, so lists live a step or two and a
  // skin for many steps of motion only makes them long. Then the skin halves, down to
  // what a few steps of the recent motion need; when lists live long again it doubles,
  // up to the default. The trajectory does not depend on the skin (tested), only speed.
  bool auto_skin() const { return !(options.skin > 0); }
  double event_skin() const {
    if (!auto_skin()) return skin;
    const uint64_t age = step - built_at;
    if (age <= 2) return std::max(4.0 * last_step_bound, 0.5 * skin);
    if (age >= 8) return std::min(base_skin, 2.0 * skin);
    return skin;
  }
  uint64_t built_at = 0;
  double base_skin = 0, last_step_bound = 0;

  double default_skin() const {
    double dmax = 0;
    for (const Kind& k : setup.kinds) dmax = std::max(dmax, k.diffusion);
    return 32.0 * std::sqrt(2.0 * dmax * setup.dt);
  }

  void start(const HostSlots& h) {
    setup_rules();
    upload(h);
    finder.reset();
    skin = 0;
    base_skin = options.skin > 0 ? options.skin : default_skin();
    rebuild(base_skin);
    check_invariants();
  }
};

Simulation::Simulation(const Setup& setup, const SimulationOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.setup = setup;
  m.setup.bodies.clear();
  m.setup.bodies.shrink_to_fit();
  m.options = options;
  m.validate_setup();
  const std::size_t n = setup.bodies.size();
  const std::size_t capacity = std::max<std::size_t>(setup.capacity, n);
  if (capacity >= (std::size_t(1) << 31)) invalid("capacity must be < 2^31 slots");
  const std::vector<uint32_t> slot_of = initial_slots(setup, options.spatial_slots);
  HostSlots h;
  h.resize(capacity);
  for (std::size_t i = 0; i < n; ++i) {
    const Body& b = setup.bodies[i];
    if (b.kind >= setup.kinds.size()) invalid("body " + std::to_string(i) + ": kind out of range");
    const Kind& kind = setup.kinds[b.kind];
    const std::size_t slot = slot_of[i];
    for (int k = 0; k < 3; ++k) h.x[k][slot] = k < setup.dim ? b.position[k] : 0.0;
    h.id[slot] = int64_t(i);
    h.kind[slot] = int32_t(b.kind);
    h.radius[slot] = kind.radius;
    h.thickness[slot] = kind.compartment ? kind.thickness : kind.radius;
    for (const int64_t link : {b.parent, b.membrane})
      if (link < -1 || link >= int64_t(n))
        invalid("body " + std::to_string(i) + ": parent/membrane id out of range");
    h.parent[slot] = b.parent < 0 ? -1 : int32_t(slot_of[std::size_t(b.parent)]);
    h.membrane[slot] = b.membrane < 0 ? -1 : int32_t(slot_of[std::size_t(b.membrane)]);
  }
  m.prepare(h);
  m.next_id = n;
  m.start(h);
}

Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

void Simulation::run(uint64_t steps) {
  for (uint64_t s = 0; s < steps; ++s) impl_->one_step();
}

uint64_t Simulation::step() const { return impl_->step; }
double Simulation::time() const { return double(impl_->step) * impl_->setup.dt; }

Frame Simulation::frame() const {
  Impl& m = *impl_;
  const int64_t pairs = m.pairs_without_skin();  // timed as broad phase, not output
  PhaseTimer timer(m.times.output);
  const std::size_t n = m.capacity;
  Frame f;
  f.step = m.step;
  f.time = time();
  f.next_id = m.next_id;
  f.broadphase_pairs = pairs;
  f.reaction_events.resize(m.events.size());
  thrust::copy(m.events.begin(), m.events.end(), f.reaction_events.begin());
  thrust::host_vector<double> x[3];
  for (int k = 0; k < 3; ++k) x[k] = m.x[k];
  f.position.resize(n);
  for (std::size_t i = 0; i < n; ++i) f.position[i] = {x[0][i], x[1][i], x[2][i]};
  thrust::host_vector<int32_t> image[3];
  for (int k = 0; k < 3; ++k) image[k] = m.image[k];
  f.image.resize(n);
  for (std::size_t i = 0; i < n; ++i) f.image[i] = {image[0][i], image[1][i], image[2][i]};
  thrust::host_vector<int64_t> id = m.id;
  thrust::host_vector<int32_t> kind = m.kind, parent = m.parent, membrane = m.membrane;
  thrust::host_vector<double> radius = m.radius, thickness = m.thickness;
  f.id.assign(id.begin(), id.end());
  f.kind.assign(kind.begin(), kind.end());
  f.radius.assign(radius.begin(), radius.end());
  f.thickness.assign(thickness.begin(), thickness.end());
  f.parent.resize(n);
  f.membrane.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    f.parent[i] = parent[i] >= 0 ? id[std::size_t(parent[i])] : -1;
    f.membrane[i] = membrane[i] >= 0 ? id[std::size_t(membrane[i])] : -1;
  }
  return f;
}

void Simulation::restore(const Frame& f) {
  Impl& m = *impl_;
  const std::size_t n = f.position.size();
  if (f.id.size() != n || f.kind.size() != n || f.radius.size() != n ||
      f.thickness.size() != n || f.parent.size() != n || f.membrane.size() != n ||
      !(f.image.empty() || f.image.size() == n))
    invalid("restore: the frame's arrays differ in length");
  if (n >= (std::size_t(1) << 31)) invalid("restore: capacity must be < 2^31 slots");
  std::unordered_map<int64_t, int32_t> slot_of;
  slot_of.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (f.id[i] < 0) continue;
    if (uint64_t(f.id[i]) >= f.next_id) invalid("restore: an id is not below next_id");
    if (!slot_of.emplace(f.id[i], int32_t(i)).second)
      invalid("restore: id " + std::to_string(f.id[i]) + " appears twice");
  }
  const auto slot = [&](int64_t body) -> int32_t {
    if (body < 0) return -1;
    const auto it = slot_of.find(body);
    if (it == slot_of.end()) invalid("restore: a parent/membrane id names no body");
    return it->second;
  };
  HostSlots h;
  h.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (f.id[i] < 0) continue;
    for (int k = 0; k < 3; ++k) h.x[k][i] = k < m.setup.dim ? f.position[i][std::size_t(k)] : 0.0;
    if (!f.image.empty())
      for (int k = 0; k < 3; ++k) h.image[k][i] = f.image[i][std::size_t(k)];
    h.id[i] = f.id[i];
    h.kind[i] = f.kind[i];
    h.radius[i] = f.radius[i];
    h.thickness[i] = f.thickness[i];
    h.parent[i] = slot(f.parent[i]);
    h.membrane[i] = slot(f.membrane[i]);
  }
  // Bound bodies are already on their sphere in a frame of this engine; prepare()
  // re-projects them, which would change the last bits: keep their positions.
  HostSlots kept = h;
  m.prepare(h);
  for (std::size_t i = 0; i < n; ++i)
    if (h.membrane[i] >= 0)
      for (int k = 0; k < 3; ++k) h.x[k][i] = kept.x[k][i];
  m.step = f.step;
  m.next_id = f.next_id;
  m.start(h);
  thrust::fill(m.events.begin(), m.events.end(), 0ull);
  if (!f.reaction_events.empty()) {
    if (f.reaction_events.size() != m.events.size())
      invalid("restore: the frame counts events of another set of reaction rules");
    thrust::copy(f.reaction_events.begin(), f.reaction_events.end(), m.events.begin());
  }
  m.events_seen = m.restructuring_events();
}

PhaseTimes Simulation::times() const { return impl_->times; }
void Simulation::reset_times() { impl_->times = PhaseTimes{}; }

uint64_t Simulation::rejected_moves() const {
  const auto& r = impl_->rejections;
  return thrust::reduce(thrust::device, r.begin(), r.end(), uint64_t(0));
}

double Simulation::skin() const { return impl_->skin; }
uint64_t Simulation::capacity() const { return impl_->capacity; }

std::string Simulation::backend_name() { return Broadphase<double>::backend_name(); }

}  // namespace nestsim::sim

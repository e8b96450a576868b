#include "host_slots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "nestsim/morton.h"

namespace nestsim::sim::detail {

void HostSlots::resize(std::size_t n) {
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

void invalid(const std::string& what) {
  throw std::invalid_argument("nestsim simulation: " + what);
}

void validate_setup(const model::Setup& s, const SimulationOptions& options) {
  if (s.dim != 2 && s.dim != 3) invalid("dim must be 2 or 3, not " + std::to_string(s.dim));
  if (!(s.dt > 0)) invalid("dt must be > 0");
  if (!(s.kT > 0)) invalid("kT must be > 0");
  if (!(s.repulsion >= 0)) invalid("repulsion must be >= 0");
  for (int k = 0; k < s.dim; ++k)
    if (!(s.box[k] > 0 && std::isfinite(s.box[k])))
      invalid("box edge " + std::to_string(k) + " must be > 0");
  for (std::size_t k = 0; k < s.kinds.size(); ++k) {
    const model::Kind& kind = s.kinds[k];
    if (!(kind.radius > 0)) invalid("kind '" + kind.name + "': radius must be > 0");
    if (!(kind.thickness >= 0 && kind.thickness <= kind.radius))
      invalid("kind '" + kind.name + "': thickness must be in [0, radius]");
    if (!(kind.diffusion >= 0)) invalid("kind '" + kind.name + "': diffusion must be >= 0");
    if (!model::valid_step_class(kind.step))
      invalid("kind '" + kind.name + "': step must be a power of two from 1 to " +
              std::to_string(model::kMaxStepClass));
  }
  if (!(options.skin >= 0)) invalid("skin must be >= 0");
  // The stiffest soft contact must be resolved to the accuracy the setup asks for
  // (time_step.h): refuse a larger step instead of producing biased contacts. A kind of
  // time-step class K moves by steps of K dt: its contacts are held to the rule there.
  std::vector<model::ContactKind> contact;
  for (const model::Kind& kind : s.kinds)
    contact.push_back({kind.compartment, kind.membrane, kind.diffusion * double(kind.step)});
  // hard, none: no stiffness
  const double soft = s.contacts == model::Contacts::soft ? s.repulsion : 0;
  const double largest = model::max_dt(contact, soft, s.kT, s.dt_limit);
  if (s.dt > largest) {
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "time step too large for accurate contacts: (D_a + D_b) / kT * repulsion "
                  "* dt = %g for the fastest soft pair, above %g; use dt <= %g",
                  s.dt * model::contact_rate(contact, soft, s.kT),
                  model::contact_step_limit(s.dt_limit), largest);
    invalid(msg);
  }
}

namespace {

// The slot of each initial body (index in Setup::bodies). Spatial: slots in the order
// of the Morton code of the initial position on a 1024^dim grid over the box, so that
// bodies near each other in space are near each other in memory. The neighbour loops
// then share cache lines: on the H100 at 1e7 bodies in setup order (random in space) the
// per-entry pair test ran at the speed of random 32-byte loads (docs/performance.md,
// "Initial slots in Morton order"). Slots are fixed for a body's life, so a trajectory's
// slot order stays stable over time; ids stay the indices in Setup::bodies. The order is
// a pure function of the setup, so runs stay bitwise reproducible; it changes the
// association of force sums (neighbours are summed in slot order), i.e. the last bits,
// not the statistics.
std::vector<uint32_t> initial_slots(const model::Setup& s, bool spatial) {
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

// Kinds in range, links to live compartments, acyclic parent chains; sets the derived
// fields (compartment, diffusion).
void check_links(const model::Setup& setup, HostSlots& h) {
  const std::size_t n = h.id.size();
  for (std::size_t i = 0; i < n; ++i) {  // derived fields first: links may point forward
    if (h.id[i] < 0) continue;
    if (h.kind[i] < 0 || std::size_t(h.kind[i]) >= setup.kinds.size())
      invalid("body " + std::to_string(h.id[i]) + ": kind out of range");
    const model::Kind& kind = setup.kinds[std::size_t(h.kind[i])];
    h.compartment[i] = kind.compartment ? 1 : 0;
    h.diffusion[i] = kind.diffusion;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (h.id[i] < 0) continue;
    const std::string who = "body " + std::to_string(h.id[i]);
    if (!(h.radius[i] > 0 && h.thickness[i] >= 0 && h.thickness[i] <= h.radius[i]))
      invalid(who + ": needs radius > 0 and thickness in [0, radius]");
    for (int k = 0; k < setup.dim; ++k)
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
}

// Membrane-bound bodies take their membrane's parent and are projected onto its
// mid-surface.
void project_bound(const model::Setup& setup, HostSlots& h) {
  const bool periodic = setup.boundary == model::Boundary::periodic;
  for (std::size_t i = 0; i < h.id.size(); ++i) {
    const int32_t c = h.membrane[i];
    if (h.id[i] < 0 || c < 0) continue;
    if (h.compartment[i])
      invalid("body " + std::to_string(h.id[i]) + ": only species can be membrane-bound");
    const std::size_t m = std::size_t(c);
    h.parent[i] = h.parent[m];
    double rel[3] = {0, 0, 0}, r2 = 0;
    for (int k = 0; k < setup.dim; ++k) {
      rel[k] = h.x[k][i] - h.x[k][m];
      if (periodic) rel[k] -= setup.box[k] * std::floor(rel[k] / setup.box[k] + 0.5);
      r2 += rel[k] * rel[k];
    }
    if (!(r2 > 0))
      invalid("body " + std::to_string(h.id[i]) + ": at its membrane's centre, no direction");
    const double scale = (h.radius[m] - 0.5 * h.thickness[m]) / std::sqrt(r2);
    for (int k = 0; k < setup.dim; ++k) h.x[k][i] = h.x[k][m] + rel[k] * scale;
  }
}

// Periodic: positions wrapped into the box; reflective: top-level bodies wholly inside.
void fit_box(const model::Setup& setup, HostSlots& h) {
  const bool periodic = setup.boundary == model::Boundary::periodic;
  for (std::size_t i = 0; i < h.id.size(); ++i) {
    if (h.id[i] < 0) continue;
    for (int k = 0; k < setup.dim; ++k) {
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

// Validates slots (kinds, parents, membranes, acyclic chains), sets the derived fields
// and projects bound bodies onto their membrane's mid-surface.
void prepare(const model::Setup& setup, HostSlots& h) {
  check_links(setup, h);
  project_bound(setup, h);
  fit_box(setup, h);
}

}  // namespace

HostSlots slots_of_setup(const model::Setup& setup, bool spatial_slots) {
  const std::size_t n = setup.bodies.size();
  const std::size_t capacity = std::max<std::size_t>(setup.capacity, n);
  if (capacity >= (std::size_t(1) << 31)) invalid("capacity must be < 2^31 slots");
  const std::vector<uint32_t> slot_of = initial_slots(setup, spatial_slots);
  HostSlots h;
  h.resize(capacity);
  for (std::size_t i = 0; i < n; ++i) {
    const model::Body& b = setup.bodies[i];
    if (b.kind >= setup.kinds.size()) invalid("body " + std::to_string(i) + ": kind out of range");
    const model::Kind& kind = setup.kinds[b.kind];
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
  prepare(setup, h);
  return h;
}

namespace {

// The slot of each body id of a frame (its index), checked unique and below next_id.
std::unordered_map<int64_t, int32_t> slots_by_id(const model::Frame& f) {
  std::unordered_map<int64_t, int32_t> slot_of;
  slot_of.reserve(f.id.size());
  for (std::size_t i = 0; i < f.id.size(); ++i) {
    if (f.id[i] < 0) continue;
    if (uint64_t(f.id[i]) >= f.next_id) invalid("restore: an id is not below next_id");
    if (!slot_of.emplace(f.id[i], int32_t(i)).second)
      invalid("restore: id " + std::to_string(f.id[i]) + " appears twice");
  }
  return slot_of;
}

}  // namespace

HostSlots slots_of_frame(const model::Setup& setup, const model::Frame& f) {
  const std::size_t n = f.position.size();
  if (f.id.size() != n || f.kind.size() != n || f.radius.size() != n ||
      f.thickness.size() != n || f.parent.size() != n || f.membrane.size() != n ||
      !(f.image.empty() || f.image.size() == n))
    invalid("restore: the frame's arrays differ in length");
  if (n >= (std::size_t(1) << 31)) invalid("restore: capacity must be < 2^31 slots");
  const std::unordered_map<int64_t, int32_t> slot_of = slots_by_id(f);
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
    for (int k = 0; k < 3; ++k) h.x[k][i] = k < setup.dim ? f.position[i][std::size_t(k)] : 0.0;
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
  const HostSlots kept = h;
  prepare(setup, h);
  for (std::size_t i = 0; i < n; ++i)
    if (h.membrane[i] >= 0)
      for (int k = 0; k < 3; ++k) h.x[k][i] = kept.x[k][i];
  return h;
}

}  // namespace nestsim::sim::detail

// Resolves `place:` into bodies. Each entry draws from its own random stream
// (seed, entry index), so that a change to one entry's count leaves the draws of
// the entries before it alone. Placed bodies are kept in one hash grid per kind, so
// that a crowded model of 10^5 bodies, or of 10^5 `place:` entries, places in near
// linear time.
#include "nestsim/model/placement.h"

#include "nestsim/model/kon_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace nestsim::model {
namespace {

using Vec = std::array<double, 3>;

// splitmix64 (Steele, Lea, Flood 2014): small, fast, and the same on every platform,
// unlike the distributions of <random>.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::size_t below(std::size_t n) { return std::size_t(uniform() * double(n)); }
  Vec in_unit_ball() {
    for (;;) {
      const Vec v{2 * uniform() - 1, 2 * uniform() - 1, 2 * uniform() - 1};
      if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] <= 1) return v;
    }
  }
  Vec on_unit_sphere() {
    for (;;) {
      const Vec v = in_unit_ball();
      const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      if (n > 1e-6) return {v[0] / n, v[1] / n, v[2] / n};
    }
  }

 private:
  uint64_t state_;
};

// The placed bodies of one kind (all of its radius) in a hash grid of cells at least
// the kind's diameter, at most 2^20 per axis (cell numbers stay far inside 64 bits).
struct KindGrid {
  double cell = 1;
  std::array<int64_t, 3> cells{1, 1, 1};
  std::unordered_map<uint64_t, std::vector<int64_t>> buckets;
  std::vector<int64_t> ids;  // every body of the kind, in placement order
  // outside: the distinct parents of `ids` (containers), and their free volume, as of
  // `containers_of` bodies
  std::vector<int64_t> containers;
  double container_volume = 0;
  std::size_t containers_of = 0;
};

constexpr double pi = 3.14159265358979323846;

double ball_volume(double r) { return 4.0 / 3.0 * pi * r * r * r; }

class Placer {
 public:
  Placer(const Model& model, Setup& setup, const std::function<bool()>& stop)
      : model_(model), setup_(setup), stop_(stop), box_(setup.box),
        periodic_(setup.boundary == Boundary::periodic), grids_(setup.kinds.size()) {
    const double widest = std::max({box_[0], box_[1], box_[2]});
    for (std::size_t k = 0; k < grids_.size(); ++k) {
      KindGrid& g = grids_[k];
      g.cell = std::max(2 * setup.kinds[k].radius, widest * 0x1p-20);
      for (int d = 0; d < 3; ++d) g.cells[d] = std::max<int64_t>(1, int64_t(box_[d] / g.cell));
    }
  }

  // Throws PlacementStopped when the caller's stop() asks to: between entries and every
  // 1024 bodies of an entry.
  void check_stop() const {
    if (stop_ && stop_()) throw PlacementStopped();
  }

  void place(std::size_t entry_index) {
    check_stop();
    const Placement& p = model_.place[entry_index];
    key_ = "place[" + std::to_string(entry_index) + "]";
    where_ = p.where;
    const uint32_t kind = uint32_t(model_.kind_index(p.kind));
    Random rng(model_.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull * (entry_index + 1));
    if (p.region == Placement::Region::at) return place_at(kind, p.at);
    KindGrid& target = grids_[std::size_t(model_.kind_index(p.target))];
    const std::vector<int64_t>& instances = target.ids;
    const double r = setup_.kinds[kind].radius;
    if (p.region == Placement::Region::in) check_lumen_fits(kind, instances.front());
    if (p.region == Placement::Region::outside) update_containers(target, kind);
    const std::vector<int64_t>& containers = target.containers;
    check_volume(p, kind, target);
    for (uint64_t n = 0; n < p.count; ++n) {
      if (n % 1024 == 1023) check_stop();
      bool placed = false;
      for (int attempt = 0; attempt < placement_attempts && !placed; ++attempt) {
        Body b;
        b.kind = kind;
        if (p.region == Placement::Region::on) {
          const auto& host = setup_.bodies[instances[rng.below(instances.size())]];
          const int64_t host_id = &host - setup_.bodies.data();
          const auto& hk = setup_.kinds[host.kind];
          b.position = offset(host.position, rng.on_unit_sphere(), hk.radius - hk.thickness / 2);
          b.membrane = host_id;
          b.parent = host.parent;
        } else {
          const int64_t container = p.region == Placement::Region::in
                                        ? instances[rng.below(instances.size())]
                                        : containers[rng.below(containers.size())];
          b.parent = container;
          if (container < 0) {
            for (int d = 0; d < 3; ++d)
              b.position[d] = periodic_ ? rng.uniform() * box_[d]
                                        : r + rng.uniform() * (box_[d] - 2 * r);
          } else {
            const auto& c = setup_.bodies[container];
            const auto& ck = setup_.kinds[c.kind];
            b.position = offset(c.position, rng.in_unit_ball(), ck.radius - ck.thickness - r);
          }
        }
        if (!inside_box(b.position, r)) continue;
        if (conflict(b) >= 0) continue;
        add(b);
        placed = true;
      }
      if (!placed) {
        std::ostringstream os;
        os << "placement cannot fit: placed " << n << " of " << p.count << " '" << p.kind
           << "' but found no free spot for the next after " << placement_attempts
           << " attempts (the region is too crowded)";
        fail(os.str());
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(model_.path, where_.line, where_.column, key_, what);
  }

  // The distinct parents of the target kind's bodies (sorted; -1: the box) and their
  // volume, worked out again only when bodies of that kind were added since; a lumen too
  // small for `kind` is refused.
  void update_containers(KindGrid& target, uint32_t kind) {
    if (target.containers_of != target.ids.size()) {
      target.containers.clear();
      for (int64_t i : target.ids) target.containers.push_back(setup_.bodies[i].parent);
      std::sort(target.containers.begin(), target.containers.end());
      target.containers.erase(std::unique(target.containers.begin(), target.containers.end()),
                              target.containers.end());
      target.container_volume = 0;
      for (int64_t c : target.containers) {
        if (c < 0) {
          target.container_volume += box_[0] * box_[1] * box_[2];
        } else {
          const auto& ck = setup_.kinds[setup_.bodies[c].kind];
          target.container_volume += ball_volume(ck.radius - ck.thickness);
        }
      }
      target.containers_of = target.ids.size();
    }
    for (int64_t c : target.containers)
      if (c >= 0) check_lumen_fits(kind, c);
  }

  // Refuses at once an entry whose bodies take more room than its whole region has
  // (volume, or membrane area for on:), with the numbers, instead of searching for a
  // place that cannot exist.
  void check_volume(const Placement& p, uint32_t kind, const KindGrid& target) const {
    const auto& k = setup_.kinds[kind];
    const auto& tk = setup_.kinds[std::size_t(model_.kind_index(p.target))];
    const double n = double(target.ids.size());
    double need = 0, room = 0;
    const char* measure = "volume";
    if (p.region == Placement::Region::on) {
      measure = "membrane area";
      need = double(p.count) * pi * k.radius * k.radius;
      const double mid = tk.radius - tk.thickness / 2;
      room = n * 4 * pi * mid * mid;
    } else {
      need = double(p.count) * ball_volume(k.radius);
      room = p.region == Placement::Region::in ? n * ball_volume(tk.radius - tk.thickness)
                                               : target.container_volume;
    }
    if (need <= room) return;
    std::ostringstream os;
    os.precision(3);
    os << "placement cannot fit: " << p.count << " '" << k.name << "' (radius " << k.radius
       << ") take a " << measure << " of " << need << ", more than the " << room
       << " of the whole region (" << (p.region == Placement::Region::on ? "on" : p.region ==
                                       Placement::Region::in ? "in" : "outside")
       << " the " << target.ids.size() << " '" << p.target << "')";
    fail(os.str());
  }

  void check_lumen_fits(uint32_t kind, int64_t container) const {
    const auto& ck = setup_.kinds[setup_.bodies[container].kind];
    const auto& k = setup_.kinds[kind];
    if (ck.radius - ck.thickness < k.radius) {
      std::ostringstream os;
      os << "placement cannot fit: a '" << k.name << "' (radius " << k.radius
         << ") is larger than the lumen of a '" << ck.name << "' (inner radius "
         << ck.radius - ck.thickness << ")";
      fail(os.str());
    }
  }

  Vec offset(const Vec& centre, const Vec& direction, double length) const {
    Vec x;
    for (int d = 0; d < 3; ++d) x[d] = wrap(centre[d] + direction[d] * length, d);
    return x;
  }

  double wrap(double x, int d) const {
    if (!periodic_) return x;
    x -= box_[d] * std::floor(x / box_[d]);
    return x < box_[d] ? x : 0.0;  // rounding can give exactly box_[d]
  }

  bool inside_box(const Vec& x, double r) const {
    for (int d = 0; d < 3; ++d) {
      if (periodic_ ? !(x[d] >= 0 && x[d] < box_[d]) : !(x[d] >= r && x[d] <= box_[d] - r))
        return false;
    }
    return true;
  }

  double distance2(const Vec& a, const Vec& b) const {
    double s = 0;
    for (int d = 0; d < 3; ++d) {
      double dx = a[d] - b[d];
      if (periodic_) dx -= box_[d] * std::round(dx / box_[d]);
      s += dx * dx;
    }
    return s;
  }

  bool is_ancestor(int64_t candidate, int64_t of_parent) const {
    for (int64_t a = of_parent; a >= 0; a = setup_.bodies[a].parent)
      if (a == candidate) return true;
    return false;
  }

  // The first placed body that `b` would overlap (solid spheres, touching allowed),
  // ignoring the compartments that hold it in their lumen and the membrane it sits
  // in; -1 if none.
  int64_t conflict(const Body& b) const {
    const double r = setup_.kinds[b.kind].radius;
    int64_t found = -1;
    for (std::size_t k = 0; k < grids_.size() && found < 0; ++k) {
      const double reach = r + setup_.kinds[k].radius;
      visit(grids_[k], b.position, reach, [&](int64_t j) {
        if (j == b.membrane || is_ancestor(j, b.parent)) return false;
        if (distance2(b.position, setup_.bodies[j].position) >= reach * reach) return false;
        found = j;
        return true;
      });
    }
    return found;
  }

  // Calls f(j) for the bodies of grid g that may lie within `reach` of x (and maybe
  // others), until f returns true; returns whether it did. Visits the cells within
  // reach, or every body of the kind when they are fewer.
  template <class F>
  bool visit(const KindGrid& g, const Vec& x, double reach, F&& f) const {
    if (g.ids.empty()) return false;
    int64_t span[3];
    double cells = 1;
    for (int d = 0; d < 3; ++d) {
      span[d] = int64_t(std::min(std::ceil(reach / g.cell), double(g.cells[d] + 1)));
      cells *= double(2 * span[d] + 1);
    }
    if (cells >= double(g.ids.size())) {
      for (int64_t j : g.ids)
        if (f(j)) return true;
      return false;
    }
    const auto c = cell_of(g, x);
    for (int64_t dx = -span[0]; dx <= span[0]; ++dx)
      for (int64_t dy = -span[1]; dy <= span[1]; ++dy)
        for (int64_t dz = -span[2]; dz <= span[2]; ++dz) {
          const auto it = g.buckets.find(cell_key(g, {c[0] + dx, c[1] + dy, c[2] + dz}));
          if (it == g.buckets.end()) continue;
          for (int64_t j : it->second)
            if (f(j)) return true;
        }
    return false;
  }

  std::array<int64_t, 3> cell_of(const KindGrid& g, const Vec& x) const {
    std::array<int64_t, 3> c;
    for (int d = 0; d < 3; ++d)
      c[d] = int64_t(std::clamp(std::floor(x[d] / g.cell), -1.0, double(g.cells[d])));
    return c;
  }

  uint64_t cell_key(const KindGrid& g, std::array<int64_t, 3> c) const {
    for (int d = 0; d < 3; ++d) {
      // In a periodic box neighbours wrap; cells past the last one (box_ not a multiple
      // of the cell) fold into the last, which stays correct: cells only get fuller.
      if (periodic_) c[d] = ((c[d] % g.cells[d]) + g.cells[d]) % g.cells[d];
      c[d] = std::clamp<int64_t>(c[d], -1, g.cells[d]);
    }
    const auto u = [](int64_t v) { return uint64_t(v + 1); };  // >= 0, at most 2^20 + 2
    return (u(c[0]) * u(g.cells[1] + 1) + u(c[1])) * u(g.cells[2] + 1) + u(c[2]);
  }

  void add(const Body& b) {
    const int64_t id = int64_t(setup_.bodies.size());
    setup_.bodies.push_back(b);
    KindGrid& g = grids_[b.kind];
    g.ids.push_back(id);
    g.buckets[cell_key(g, cell_of(g, b.position))].push_back(id);
  }

  void place_at(uint32_t kind, const Vec& at) {
    Body b;
    b.kind = kind;
    const double r = setup_.kinds[kind].radius;
    for (int d = 0; d < 3; ++d) b.position[d] = wrap(at[d], d);
    if (!inside_box(b.position, r)) {
      std::ostringstream os;
      os << "at: the body (radius " << r << ") does not lie inside the box";
      fail(os.str());
    }
    // The innermost compartment whose lumen holds the whole body: of the smallest kind
    // that has one (compartments do not overlap, so a kind has at most one there; of
    // two kinds of one radius, the first in body order).
    double innermost = INFINITY;
    for (std::size_t k = 0; k < grids_.size(); ++k) {
      const auto& ok = setup_.kinds[k];
      const double room = ok.radius - ok.thickness - r;
      if (!ok.compartment || room < 0 || ok.radius > innermost) continue;
      visit(grids_[k], b.position, room, [&](int64_t j) {
        if (distance2(b.position, setup_.bodies[j].position) > room * room) return false;
        if (ok.radius < innermost || j < b.parent) {
          innermost = ok.radius;
          b.parent = j;
        }
        return false;  // every candidate: the first in body order among equals
      });
    }
    if (const int64_t j = conflict(b); j >= 0) {
      const auto& o = setup_.kinds[setup_.bodies[j].kind];
      fail("at: the body overlaps body " + std::to_string(j) + " (a '" + o.name + "'" +
           (o.compartment ? ": it would cross its membrane" : "") + ")");
    }
    add(b);
  }

  const Model& model_;
  Setup& setup_;
  const std::function<bool()>& stop_;
  Vec box_;
  bool periodic_;
  std::vector<KindGrid> grids_;  // by kind index
  std::string key_;
  Location where_;
};

}  // namespace

namespace {

Term term_of(const RuleTerm& t, const Model& m) {
  Term out;
  out.kind = uint32_t(m.kind_index(t.kind));
  switch (t.where) {
    case RuleTerm::Where::any: out.site.where = Site::Where::any; break;
    case RuleTerm::Where::in: out.site.where = Site::Where::in; break;
    case RuleTerm::Where::on: out.site.where = Site::Where::on; break;
    case RuleTerm::Where::outside: out.site.where = Site::Where::outside; break;
  }
  if (t.where != RuleTerm::Where::any)
    out.site.compartment = uint32_t(m.kind_index(t.compartment));
  return out;
}

// A validated rule in kind indices. Binding rules are stored species first
// ("S + K -> S2 on K"), whichever order the file wrote them in.
Reaction reaction_of(const ReactionSpec& x, const Model& m) {
  Reaction r;
  r.name = x.name;
  const KonRule k = calibrate_rule(x, m);  // kon held at dt (nestsim/model/kon_calibration.h)
  r.rate = k.rate;
  r.radius = k.radius;
  r.equilibrium_products = x.forward >= 0;
  for (const auto& t : x.reactants) r.reactants.push_back(term_of(t, m));
  for (const auto& t : x.products) r.products.push_back(term_of(t, m));
  if (r.reactants.size() == 2 && m.kinds[r.reactants[0].kind].compartment &&
      !m.kinds[r.reactants[1].kind].compartment)
    std::swap(r.reactants[0], r.reactants[1]);
  // Fusion "V + Y -> Y": the compartment that stays second.
  if (r.reactants.size() == 2 && r.products.size() == 1 &&
      m.kinds[r.reactants[0].kind].compartment && m.kinds[r.reactants[1].kind].compartment &&
      r.products[0].kind == r.reactants[0].kind && r.products[0].kind != r.reactants[1].kind)
    std::swap(r.reactants[0], r.reactants[1]);
  // Budding "S on X -> V + S2 on V": the new compartment first.
  if (r.reactants.size() == 1 && r.products.size() == 2 &&
      !m.kinds[r.products[0].kind].compartment && m.kinds[r.products[1].kind].compartment)
    std::swap(r.products[0], r.products[1]);
  return r;
}

}  // namespace

Setup make_setup_without_bodies(const Model& m) {
  Setup s;
  s.dim = 3;
  s.box = m.box;
  s.boundary = m.periodic ? Boundary::periodic : Boundary::reflective;
  s.length_unit = m.units.length;
  s.time_unit = m.units.time;
  s.dt = m.dt;
  s.dt_limit = m.dt_limit;
  s.steps = m.steps;
  s.seed = m.seed;
  s.output_every = m.output_every;
  s.output_file = m.output_file;
  s.repulsion = m.repulsion;
  s.contacts = m.contacts;
  s.collision = m.solid ? Collision::solid : Collision::hollow;
  s.kT = 1;  // energies are in kT
  const std::vector<uint32_t> classes = step_classes(m);
  for (const auto& k : m.kinds) {
    Kind kind;
    kind.step = classes[s.kinds.size()];
    kind.name = k.name;
    kind.compartment = k.compartment;
    kind.radius = k.radius;
    kind.thickness = k.thickness;
    kind.diffusion = diffusion_of(k, m);
    kind.membrane = k.membrane;
    s.kinds.push_back(kind);
  }
  for (const auto& x : m.reactions) s.reactions.push_back(reaction_of(x, m));
  s.contact_exempt = kon_contact_exempt(m);
  s.capacity = m.capacity;
  s.model_text = m.text;
  s.model_path = m.path;
  return s;
}

Setup make_setup(const Model& m, const std::function<bool()>& stop) {
  validate(m);
  // The bodies asked for, before any is placed: a run holds at most max_slots.
  uint64_t n = 0;
  for (std::size_t i = 0; i < m.place.size(); ++i) {
    const Placement& p = m.place[i];
    const bool beyond = p.count > UINT64_MAX - n;
    n = beyond ? UINT64_MAX : n + p.count;
    if (n > max_slots)
      throw ModelError(m.path, p.where.line, p.where.column,
                       "place[" + std::to_string(i) + "].count",
                       "the entries up to here place " +
                           (beyond ? "more than 2^64" : std::to_string(n)) +
                           " bodies, more than the " + std::to_string(max_slots) +
                           " slots a run holds (2^31 - 1)");
  }
  if (m.capacity != 0 && m.capacity < n)
    throw ModelError(m.path, 0, 0, "simulation.capacity",
                     "expected at least the " + std::to_string(n) + " bodies placed, got " +
                         std::to_string(m.capacity));
  Setup s = make_setup_without_bodies(m);
  Placer placer(m, s, stop);
  for (std::size_t i = 0; i < m.place.size(); ++i) placer.place(i);
  if (m.capacity == 0) s.capacity = std::min(default_capacity(n), max_slots);
  return s;
}

}  // namespace nestsim::model

// Resolves `place:` into bodies. Each entry draws from its own random stream
// (seed, entry index), so that a change to one entry's count leaves the draws of
// the entries before it alone. Placed bodies are kept in a hash grid (small ones) and
// a list (large ones) so that a crowded model of 10^5 bodies places in O(N).
#include "nestsim/io/placement.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace nestsim::io {
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

class Placer {
 public:
  Placer(const Model& model, sim::Setup& setup)
      : model_(model), setup_(setup), box_(setup.box),
        periodic_(setup.boundary == sim::Boundary::periodic) {
    double largest_species = 0;
    for (const auto& k : setup.kinds)
      if (!k.compartment) largest_species = std::max(largest_species, k.radius);
    cell_ = std::max(2 * largest_species, 1e-9 * std::max({box_[0], box_[1], box_[2]}));
    for (int d = 0; d < 3; ++d) cells_[d] = std::max<int64_t>(1, int64_t(box_[d] / cell_));
  }

  void place(std::size_t entry_index) {
    const Placement& p = model_.place[entry_index];
    key_ = "place[" + std::to_string(entry_index) + "]";
    where_ = p.where;
    const uint32_t kind = uint32_t(model_.kind_index(p.kind));
    Random rng(model_.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull * (entry_index + 1));
    if (p.region == Placement::Region::at) return place_at(kind, p.at);
    std::vector<int64_t> instances;
    for (std::size_t i = 0; i < setup_.bodies.size(); ++i)
      if (setup_.kinds[setup_.bodies[i].kind].name == p.target) instances.push_back(int64_t(i));
    std::vector<int64_t> containers;  // for outside: the distinct parents of the instances
    if (p.region == Placement::Region::outside) {
      for (int64_t i : instances) containers.push_back(setup_.bodies[i].parent);
      std::sort(containers.begin(), containers.end());
      containers.erase(std::unique(containers.begin(), containers.end()), containers.end());
    }
    const double r = setup_.kinds[kind].radius;
    if (p.region == Placement::Region::in) check_lumen_fits(kind, instances.front());
    if (p.region == Placement::Region::outside)
      for (int64_t c : containers)
        if (c >= 0) check_lumen_fits(kind, c);
    for (uint64_t n = 0; n < p.count; ++n) {
      bool placed = false;
      for (int attempt = 0; attempt < placement_attempts && !placed; ++attempt) {
        sim::Body b;
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
  int64_t conflict(const sim::Body& b) const {
    const double r = setup_.kinds[b.kind].radius;
    auto clashes = [&](int64_t j) {
      if (j == b.membrane || is_ancestor(j, b.parent)) return false;
      const auto& o = setup_.bodies[j];
      const double reach = r + setup_.kinds[o.kind].radius;
      return distance2(b.position, o.position) < reach * reach;
    };
    for (int64_t j : large_)
      if (clashes(j)) return j;
    if (r > cell_ / 2) {  // a large body: test every small one
      for (const auto& [key, ids] : grid_)
        for (int64_t j : ids)
          if (clashes(j)) return j;
      return -1;
    }
    const auto c = cell_of(b.position);
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          const auto it = grid_.find(cell_key({c[0] + dx, c[1] + dy, c[2] + dz}));
          if (it == grid_.end()) continue;
          for (int64_t j : it->second)
            if (clashes(j)) return j;
        }
    return -1;
  }

  std::array<int64_t, 3> cell_of(const Vec& x) const {
    std::array<int64_t, 3> c;
    for (int d = 0; d < 3; ++d) c[d] = int64_t(std::floor(x[d] / cell_));
    return c;
  }

  int64_t cell_key(std::array<int64_t, 3> c) const {
    for (int d = 0; d < 3; ++d) {
      // In a periodic box neighbours wrap; cells past the last one (box_ not a multiple
      // of cell_) fold into the last, which stays correct: cells only get fuller.
      if (periodic_) c[d] = ((c[d] % cells_[d]) + cells_[d]) % cells_[d];
      c[d] = std::clamp<int64_t>(c[d], -1, cells_[d]);
    }
    return ((c[0] + 1) * (cells_[1] + 2) + (c[1] + 1)) * (cells_[2] + 2) + (c[2] + 1);
  }

  void add(const sim::Body& b) {
    const int64_t id = int64_t(setup_.bodies.size());
    setup_.bodies.push_back(b);
    if (setup_.kinds[b.kind].radius > cell_ / 2)
      large_.push_back(id);
    else
      grid_[cell_key(cell_of(b.position))].push_back(id);
  }

  void place_at(uint32_t kind, const Vec& at) {
    sim::Body b;
    b.kind = kind;
    const double r = setup_.kinds[kind].radius;
    for (int d = 0; d < 3; ++d) b.position[d] = wrap(at[d], d);
    if (!inside_box(b.position, r)) {
      std::ostringstream os;
      os << "at: the body (radius " << r << ") does not lie inside the box";
      fail(os.str());
    }
    // The innermost compartment whose lumen holds the whole body.
    double innermost = INFINITY;
    for (std::size_t j = 0; j < setup_.bodies.size(); ++j) {
      const auto& o = setup_.bodies[j];
      const auto& ok = setup_.kinds[o.kind];
      if (!ok.compartment) continue;
      const double room = ok.radius - ok.thickness - r;
      if (room >= 0 && distance2(b.position, o.position) <= room * room && ok.radius < innermost) {
        innermost = ok.radius;
        b.parent = int64_t(j);
      }
    }
    if (const int64_t j = conflict(b); j >= 0) {
      const auto& o = setup_.kinds[setup_.bodies[j].kind];
      fail("at: the body overlaps body " + std::to_string(j) + " (a '" + o.name + "'" +
           (o.compartment ? ": it would cross its membrane" : "") + ")");
    }
    add(b);
  }

  const Model& model_;
  sim::Setup& setup_;
  Vec box_;
  bool periodic_;
  double cell_;
  std::array<int64_t, 3> cells_{};
  std::unordered_map<int64_t, std::vector<int64_t>> grid_;
  std::vector<int64_t> large_;
  std::string key_;
  Location where_;
};

}  // namespace

namespace {

sim::Term term_of(const RuleTerm& t, const Model& m) {
  sim::Term out;
  out.kind = uint32_t(m.kind_index(t.kind));
  switch (t.where) {
    case RuleTerm::Where::any: out.site.where = sim::Site::Where::any; break;
    case RuleTerm::Where::in: out.site.where = sim::Site::Where::in; break;
    case RuleTerm::Where::on: out.site.where = sim::Site::Where::on; break;
    case RuleTerm::Where::outside: out.site.where = sim::Site::Where::outside; break;
  }
  if (t.where != RuleTerm::Where::any)
    out.site.compartment = uint32_t(m.kind_index(t.compartment));
  return out;
}

// A validated rule in kind indices. Binding rules are stored species first
// ("S + K -> S2 on K"), whichever order the file wrote them in.
sim::Reaction reaction_of(const ReactionSpec& x, const Model& m) {
  sim::Reaction r;
  r.name = x.name;
  r.rate = reaction_rate(x, m);  // from kon when the rule gives one
  r.radius = x.radius.value_or(0);
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

sim::Setup make_setup_without_bodies(const Model& m) {
  sim::Setup s;
  s.dim = 3;
  s.box = m.box;
  s.boundary = m.periodic ? sim::Boundary::periodic : sim::Boundary::reflective;
  s.length_unit = m.units.length;
  s.time_unit = m.units.time;
  s.dt = m.dt;
  s.dt_limit = m.dt_limit;
  s.steps = m.steps;
  s.seed = m.seed;
  s.output_every = m.output_every;
  s.output_file = m.output_file;
  s.repulsion = m.repulsion;
  s.collision = m.solid ? sim::Collision::solid : sim::Collision::hollow;
  s.kT = 1;  // energies are in kT
  for (const auto& k : m.kinds) {
    sim::Kind kind;
    kind.name = k.name;
    kind.compartment = k.compartment;
    kind.radius = k.radius;
    kind.thickness = k.thickness;
    kind.diffusion = diffusion_of(k, m);
    kind.membrane = k.membrane;
    s.kinds.push_back(kind);
  }
  for (const auto& x : m.reactions) s.reactions.push_back(reaction_of(x, m));
  s.capacity = m.capacity;
  s.model_text = m.text;
  s.model_path = m.path;
  return s;
}

sim::Setup make_setup(const Model& m) {
  validate(m);
  sim::Setup s = make_setup_without_bodies(m);
  Placer placer(m, s);
  for (std::size_t i = 0; i < m.place.size(); ++i) placer.place(i);
  const uint64_t n = s.bodies.size();
  if (m.capacity == 0) {
    s.capacity = default_capacity(n);
  } else if (m.capacity < n) {
    throw ModelError(m.path, 0, 0, "simulation.capacity",
                     "expected at least the " + std::to_string(n) + " bodies placed, got " +
                         std::to_string(m.capacity));
  }
  return s;
}

}  // namespace nestsim::io

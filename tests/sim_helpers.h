// Setups built in code for the simulator tests, and a geometric checker of the
// impermeability invariants that knows nothing of how the engine keeps them.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "nestsim/model/setup.h"

namespace nestsim::testing {

using model::Body;
using model::Boundary;
using model::Frame;
using model::Kind;
using model::Setup;
using Vec = std::array<double, 3>;

struct SetupBuilder {
  Setup s;
  explicit SetupBuilder(int dim, double box, Boundary boundary, double dt, uint64_t seed = 1) {
    s.dim = dim;
    s.box = {box, box, dim == 3 ? box : 0.0};
    s.boundary = boundary;
    s.dt = dt;
    s.seed = seed;
    s.kT = 1;
  }
  uint32_t kind(const std::string& name, bool compartment, double r, double q, double D) {
    Kind k;
    k.name = name;
    k.compartment = compartment;
    k.radius = r;
    k.thickness = compartment ? q : r;
    k.diffusion = D;
    s.kinds.push_back(k);
    return uint32_t(s.kinds.size() - 1);
  }
  int64_t add(uint32_t kind, Vec p, int64_t parent = -1, int64_t membrane = -1) {
    Body b;
    b.kind = kind;
    b.position = p;
    b.parent = parent;
    b.membrane = membrane;
    s.bodies.push_back(b);
    return int64_t(s.bodies.size() - 1);
  }
  double mid(int64_t c) const {
    const Kind& k = s.kinds[s.bodies[std::size_t(c)].kind];
    return k.radius - 0.5 * k.thickness;
  }
  double radius(int64_t b) const { return s.kinds[s.bodies[std::size_t(b)].kind].radius; }
  Vec pos(int64_t b) const { return s.bodies[std::size_t(b)].position; }

  // A random point whose ball of radius `r` lies in the lumen of `parent` (or in the box
  // when parent < 0) and clear of every body already placed with the same parent.
  // Returns false when no place was found.
  bool place(std::mt19937_64& rng, double r, int64_t parent, Vec& out, int tries = 2000) const {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int t = 0; t < tries; ++t) {
      Vec p{0, 0, 0};
      if (parent >= 0) {
        const Kind& k = s.kinds[s.bodies[std::size_t(parent)].kind];
        const double room = k.radius - k.thickness - r;
        if (room <= 0) return false;
        Vec c = pos(parent), d{0, 0, 0};
        double d2 = 2;
        while (d2 > 1) {
          d2 = 0;
          for (int a = 0; a < s.dim; ++a) {
            d[a] = 2 * u(rng) - 1;
            d2 += d[a] * d[a];
          }
        }
        for (int a = 0; a < s.dim; ++a) p[a] = c[a] + room * d[a];
      } else {
        for (int a = 0; a < s.dim; ++a) p[a] = r + (s.box[a] - 2 * r) * u(rng);
      }
      bool clear = true;
      for (std::size_t j = 0; j < s.bodies.size() && clear; ++j) {
        const Body& b = s.bodies[j];
        const Kind& k = s.kinds[b.kind];
        const bool sibling = b.parent == parent && b.membrane < 0;
        const bool own_bound = b.membrane >= 0 && s.bodies[std::size_t(b.membrane)].parent == parent;
        if (!sibling && !own_bound) continue;
        if (distance(p, b.position) < r + k.radius) clear = false;
      }
      if (clear) {
        out = p;
        return true;
      }
    }
    return false;
  }

  double distance(const Vec& a, const Vec& b) const { return std::sqrt(distance2(s, a, b)); }

  static double distance2(const Setup& s, const Vec& a, const Vec& b) {
    double d2 = 0;
    for (int k = 0; k < s.dim; ++k) {
      double d = a[k] - b[k];
      if (s.boundary == Boundary::periodic) d -= s.box[k] * std::floor(d / s.box[k] + 0.5);
      d2 += d * d;
    }
    return d2;
  }
};

// The frame with body id i in slot i (the engine puts bodies into slots in spatial
// order; the checks below index bodies by id). Empty slots come last.
inline Frame by_id(const Frame& f) {
  Frame g = f;
  const std::size_t n = f.id.size();
  std::vector<std::size_t> from(n, n);
  for (std::size_t s = 0; s < n; ++s)
    if (f.id[s] >= 0 && std::size_t(f.id[s]) < n) from[std::size_t(f.id[s])] = s;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t s = from[i];
    const bool has = s < n;
    g.id[i] = has ? f.id[s] : -1;
    g.position[i] = has ? f.position[s] : std::array<double, 3>{0, 0, 0};
    g.kind[i] = has ? f.kind[s] : -1;
    g.radius[i] = has ? f.radius[s] : 0.0;
    g.thickness[i] = has ? f.thickness[s] : 0.0;
    g.parent[i] = has ? f.parent[s] : -1;
    g.membrane[i] = has ? f.membrane[s] : -1;
  }
  return g;
}

// Is compartment `c` (id) in the parent chain of body `b` (id)? Ids are slots here.
inline bool in_chain(const Frame& f, int64_t c, int64_t b) {
  for (int64_t p = f.parent[std::size_t(b)]; p >= 0; p = f.parent[std::size_t(p)])
    if (p == c) return true;
  return false;
}

// Counts violations of the impermeability invariants in a frame: every free body's ball
// lies wholly in the lumen (r - q) of the compartments in its parent chain and off
// every other compartment (a compartment's own descendants excepted), up to a rounding
// of 1e-9 of the radii; every parent is the one the setup gave. Bound bodies sit on
// their membrane (checked elsewhere). `what` names the first one.
inline std::size_t membrane_violations(const Setup& s, const std::vector<int64_t>& parents,
                                       const Frame& f, std::string& what) {
  std::size_t bad = 0;
  std::vector<std::size_t> compartments;
  for (std::size_t i = 0; i < f.id.size(); ++i)
    if (f.id[i] >= 0 && s.kinds[std::size_t(f.kind[i])].compartment) compartments.push_back(i);
  for (std::size_t b = 0; b < f.id.size(); ++b) {
    if (f.id[b] < 0) continue;
    if (f.parent[b] != parents[b]) {
      if (!bad++) what = "body " + std::to_string(b) + " changed parent";
      continue;
    }
    if (f.membrane[b] >= 0) continue;
    for (std::size_t c : compartments) {
      if (c == b || in_chain(f, int64_t(b), int64_t(c))) continue;
      const double d = std::sqrt(SetupBuilder::distance2(s, f.position[b], f.position[c]));
      const double tol = 1e-9 * (f.radius[b] + f.radius[c]);
      const bool inside = in_chain(f, int64_t(c), int64_t(b));
      const bool ok = inside ? d + f.radius[b] <= f.radius[c] - f.thickness[c] + tol
                             : d >= f.radius[b] + f.radius[c] - tol;
      if (!ok) {
        if (!bad++)
          what = "step " + std::to_string(f.step) + ": body " + std::to_string(b) +
                 (inside ? " reached out of " : " reached into ") + "compartment " + std::to_string(c);
      }
    }
  }
  return bad;
}

// A small crowded cell in a periodic box: a moving cell (r 25) holding moving lysosomes
// that hold vesicles with cargo, moving vesicles with cargo and bound proteins in the
// cytosol, `proteins` crowded cytosolic proteins, bound proteins on the cell membrane,
// and proteins outside the cell.
inline Setup crowded_cell(std::size_t proteins, uint64_t seed, double repulsion = 10) {
  SetupBuilder b(3, 60, Boundary::periodic, 0.005, seed);
  b.s.repulsion = repulsion;
  // (10 + 10) x 10 x 0.005 = 1: stable, not accurate contacts (the tests that use this
  // cell check mechanics, not contact statistics).
  b.s.dt_limit = model::DtLimit::stable;
  const uint32_t cell = b.kind("cell", true, 25, 1.5, 0.5);
  const uint32_t lysosome = b.kind("lysosome", true, 7, 1, 2);
  const uint32_t vesicle = b.kind("vesicle", true, 2.5, 0.5, 4);
  const uint32_t protein = b.kind("protein", false, 1, 1, 10);
  const uint32_t cargo = b.kind("cargo", false, 0.6, 0.6, 10);
  const uint32_t bound = b.kind("receptor", false, 0.5, 0.5, 5);
  std::mt19937_64 rng(seed);
  Vec p;
  const int64_t c = b.add(cell, {30, 30, 30});
  const auto fill = [&](int64_t parent, uint32_t kind, int count) {
    for (int k = 0; k < count; ++k)
      if (b.place(rng, b.s.kinds[kind].radius, parent, p)) b.add(kind, p, parent);
  };
  const auto with_cargo = [&](int64_t parent, int receptors) {
    if (!b.place(rng, 2.5, parent, p)) return;
    const int64_t v = b.add(vesicle, p, parent);
    fill(v, cargo, 2);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int k = 0; k < receptors; ++k) {
      Vec d{u(rng), u(rng), u(rng)}, q = b.pos(v);
      const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      for (int a = 0; a < 3; ++a) q[a] += d[a] / n * b.mid(v);
      b.add(bound, q, parent, v);
    }
  };
  for (int l = 0; l < 3; ++l) {
    if (!b.place(rng, 7, c, p)) continue;
    const int64_t lys = b.add(lysosome, p, c);
    with_cargo(lys, 0);
    with_cargo(lys, 0);
    fill(lys, cargo, 6);
  }
  for (int v = 0; v < 8; ++v) with_cargo(c, 2);
  fill(c, protein, int(proteins));
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < 20; ++k) {
    Vec d{u(rng), u(rng), u(rng)}, q = b.pos(c);
    const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int a = 0; a < 3; ++a) q[a] += d[a] / n * b.mid(c);
    b.add(bound, q, -1, c);
  }
  fill(-1, protein, 200);
  return b.s;
}

inline std::vector<int64_t> parents_of(const Setup& s) {
  std::vector<int64_t> out;
  for (const Body& b : s.bodies) out.push_back(b.parent);
  return out;
}

}  // namespace nestsim::testing

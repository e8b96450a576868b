// The independent reference for every broad-phase test: the plain host double loop
// over all pairs, applying the relations of predicates.h (the HSX paper's equations
// (1)-(4)) exactly as the specification states them. No grid, no Thrust.
#pragma once
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/predicates.h"
#include "nestsim/testing/scenes.h"

namespace nestsim::testing {

using Pair = std::pair<uint32_t, uint32_t>;

template <class Real>
SphereSet<Real> convert(const SphereSet<double>& b) {
  return scenes::converted<Real>(b);
}

template <class Real>
std::vector<Pair> reference_pairs(const SphereSet<Real>& b, const BroadphaseOptions& o) {
  Space<Real> space;
  space.dim = o.domain.dim;
  for (int a = 0; a < 3; ++a) {
    const bool wrap = o.domain.periodic && a < space.dim;
    space.edge[a] = wrap ? Real(o.domain.size[a]) : Real(0);
    space.inv_edge[a] = wrap ? Real(1) / space.edge[a] : Real(0);
  }
  const std::size_t n = b.size();
  std::vector<Real> r(n), q(n);
  const Real skin = Real(o.skin);
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = b.radius[i] + skin;
    q[i] = b.thickness[i] + skin + skin;
    if (o.overlap == Overlap::solid || q[i] > r[i]) q[i] = r[i];
  }
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < n; ++i) {
    const Real pi[3] = {b.x[i], b.y[i], space.dim == 3 ? b.z[i] : Real(0)};
    for (std::size_t j = i + 1; j < n; ++j) {
      const Real pj[3] = {b.x[j], b.y[j], space.dim == 3 ? b.z[j] : Real(0)};
      if (hsx_intersect(space.distance2(pi, pj), r[i], q[i], r[j], q[j]))
        pairs.emplace_back(uint32_t(i), uint32_t(j));
    }
  }
  return pairs;
}

inline std::vector<Pair> to_pairs(const PairList& p) {
  std::vector<Pair> out(p.size());
  for (std::size_t k = 0; k < p.size(); ++k) out[k] = {p.i[k], p.j[k]};
  return out;
}

// Both directions: what the reference has and the result lacks (missed), and what the
// result has and the reference lacks (false). Expects sorted inputs.
struct Difference {
  std::vector<Pair> missed, spurious;
  std::string describe() const {
    std::ostringstream s;
    s << missed.size() << " missed, " << spurious.size() << " false";
    for (std::size_t k = 0; k < std::min<std::size_t>(missed.size(), 5); ++k)
      s << " | missed (" << missed[k].first << "," << missed[k].second << ")";
    for (std::size_t k = 0; k < std::min<std::size_t>(spurious.size(), 5); ++k)
      s << " | false (" << spurious[k].first << "," << spurious[k].second << ")";
    return s.str();
  }
};

inline Difference compare(const std::vector<Pair>& reference, const std::vector<Pair>& result) {
  Difference d;
  std::set_difference(reference.begin(), reference.end(), result.begin(), result.end(),
                      std::back_inserter(d.missed));
  std::set_difference(result.begin(), result.end(), reference.begin(), reference.end(),
                      std::back_inserter(d.spurious));
  return d;
}

inline bool sorted_unique_ordered(const std::vector<Pair>& p) {
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (p[k].first >= p[k].second) return false;
    if (k > 0 && !(p[k - 1] < p[k])) return false;
  }
  return true;
}

}  // namespace nestsim::testing

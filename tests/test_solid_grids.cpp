// The solid-sphere baseline grids (Method::grid_uniform, Method::grid_aabb): their
// names, that the scenes give them pairs to find, and that the solid relation applied
// directly (ssx_intersect, HSX paper equation 4) agrees with the shared reference. The
// grids themselves are checked against that reference, on every scene family, in both
// directions, by test_broadphase (which runs every method).
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/predicates.h"
#include "nestsim/testing/scenes.h"
#include "reference.h"
#include "scene_cases.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

// All pairs, each relation applied directly as predicates.h states it: ssx_intersect
// for solid spheres, hsx_intersect for hollow ones; minimum image in a periodic box.
template <class Real>
std::vector<Pair> double_loop(const SphereSet<Real>& b, const BroadphaseOptions& o) {
  Space<Real> space;
  space.dim = o.domain.dim;
  for (int a = 0; a < 3; ++a) {
    const bool wrap = o.domain.periodic && a < space.dim;
    space.edge[a] = wrap ? Real(o.domain.size[a]) : Real(0);
    space.inv_edge[a] = wrap ? Real(1) / space.edge[a] : Real(0);
  }
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const Real pi[3] = {b.x[i], b.y[i], space.dim == 3 ? b.z[i] : Real(0)};
    for (std::size_t j = i + 1; j < b.size(); ++j) {
      const Real pj[3] = {b.x[j], b.y[j], space.dim == 3 ? b.z[j] : Real(0)};
      const Real d2 = space.distance2(pi, pj);
      const bool hit = o.overlap == Overlap::solid
                           ? ssx_intersect(d2, b.radius[i], b.radius[j])
                           : hsx_intersect(d2, b.radius[i], b.thickness[i], b.radius[j],
                                           b.thickness[j]);
      if (hit) pairs.emplace_back(uint32_t(i), uint32_t(j));
    }
  }
  return pairs;
}

}  // namespace

TEST_CASE("the solid relation, applied directly, agrees with the shared reference") {
  // test_broadphase checks every method (the grids included) against reference.h, which
  // implements solid mode as hollow with q = r; here SSX (equation 4) is applied
  // directly, so that equivalence is checked too, on every scene family.
  for (const SceneCase& c : scene_cases()) {
    if (c.skin != 0) continue;
    CAPTURE(c.name);
    const scenes::Scene s = c.make();
    const auto o = options_for(s, Overlap::solid, Method::brute);
    CHECK(double_loop(s.bodies, o) == reference_pairs(s.bodies, o));
    const auto f = convert<float>(s.bodies);
    CHECK(double_loop(f, o) == reference_pairs(f, o));
  }
}

TEST_CASE("the scenes give the grids something to find") {
  // Guards the comparison above: the dense scenes have pairs in both modes, and the
  // hollow relation removes some (concentric shells: all solid pairs, no hollow one).
  const scenes::Scene dense = scenes::exponential(3000, 0.3, 3, 102);
  const auto solid = double_loop(dense.bodies, options_for(dense, Overlap::solid, Method::brute));
  const auto hollow =
      double_loop(dense.bodies, options_for(dense, Overlap::hollow, Method::brute));
  CHECK(hollow.size() > 100);
  CHECK(solid.size() > hollow.size());
  const scenes::Scene shells = scenes::concentric(50, 3);
  for (Method m : {Method::grid_uniform, Method::grid_aabb}) {
    CAPTURE(to_string(m));
    CHECK(find_pairs(shells.bodies, options_for(shells, Overlap::solid, m)).size() == 50 * 49 / 2);
    CHECK(find_pairs(shells.bodies, options_for(shells, Overlap::hollow, m)).size() == 0);
  }
}

TEST_CASE("the grid methods are named on the command line") {
  CHECK(method_from_string("grid_uniform") == Method::grid_uniform);
  CHECK(method_from_string("grid_aabb") == Method::grid_aabb);
  CHECK(std::string(to_string(Method::grid_aabb)) == "grid_aabb");
  const auto names = method_names();
  CHECK(std::find(names.begin(), names.end(), "grid_uniform") != names.end());
  CHECK(std::find(names.begin(), names.end(), "grid_aabb") != names.end());
}

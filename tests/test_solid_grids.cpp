// The solid-sphere baseline grids (Method::grid_uniform, Method::grid_aabb) against an
// independent host double loop over all pairs that applies ssx_intersect (solid mode,
// HSX paper equation 4) or hsx_intersect (hollow mode, equation 3) from predicates.h,
// and against Method::brute, on the scene families of nestsim/scenes.h, in both
// precisions and both overlap modes, in both directions: no missed pair and no false
// pair.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/predicates.h"
#include "nestsim/scenes.h"
#include "reference.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

struct Case {
  std::string name;
  std::function<scenes::Scene()> make;
};

BroadphaseOptions options_for(const scenes::Scene& s, Overlap overlap, Method method) {
  BroadphaseOptions o;
  o.overlap = overlap;
  o.method = method;
  o.domain = s.domain;
  if (!o.domain.periodic) o.domain.size = {0, 0, 0};
  return o;
}

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

template <class Real>
std::vector<Pair> run(const SphereSet<Real>& bodies, const BroadphaseOptions& o,
                      uint64_t* counted) {
  Broadphase<Real> finder(o);
  finder.upload(bodies);
  *counted = finder.count();
  const uint64_t found = finder.find();
  std::vector<Pair> pairs = to_pairs(finder.pairs());
  CHECK(found == pairs.size());
  return pairs;
}

template <class Real>
void check_scene(const Case& c) {
  const scenes::Scene scene = c.make();
  const SphereSet<Real> bodies = convert<Real>(scene.bodies);
  const char* precision = sizeof(Real) == 4 ? "float" : "double";
  for (Overlap overlap : {Overlap::hollow, Overlap::solid}) {
    const BroadphaseOptions base = options_for(scene, overlap, Method::brute);
    const std::vector<Pair> reference = double_loop(bodies, base);
    uint64_t brute_count = 0;
    const std::vector<Pair> brute = run(bodies, base, &brute_count);
    for (Method method : {Method::grid_uniform, Method::grid_aabb}) {
      const std::string label = c.name + " / " + precision + " / " +
                                (overlap == Overlap::hollow ? "hollow" : "solid") + " / " +
                                to_string(method);
      uint64_t counted = 0;
      const std::vector<Pair> result =
          run(bodies, options_for(scene, overlap, method), &counted);
      const Difference d = compare(reference, result);
      INFO(label << ": " << d.describe());
      CHECK(d.missed.empty());
      CHECK(d.spurious.empty());
      CHECK(sorted_unique_ordered(result));
      CHECK(counted == result.size());
      CHECK(result == brute);
    }
  }
}

std::vector<Case> cases() {
  using namespace scenes;
  auto periodic = [](Scene s) {
    make_periodic(s);
    return s;
  };
  std::vector<Case> v;
  v.push_back({"exponential 3D phi=0.1", [] { return exponential(3000, 0.1, 3, 101); }});
  v.push_back({"exponential 3D phi=0.3", [] { return exponential(3000, 0.3, 3, 102); }});
  v.push_back({"exponential 2D phi=0.3", [] { return exponential(2500, 0.3, 2, 103); }});
  v.push_back({"equal radii 3D", [] { return equal_radii(3000, 0.3, 3, 104); }});
  v.push_back({"equal radii 2D", [] { return equal_radii(2000, 0.4, 2, 105); }});
  v.push_back({"concentric 3D", [] { return concentric(120, 3); }});
  v.push_back({"concentric 2D", [] { return concentric(120, 2); }});
  v.push_back({"cell-like", [] { return cell_like(3000, 106); }});
  v.push_back({"contacts 3D", [] { return contacts(3); }});
  v.push_back({"contacts 2D", [] { return contacts(2); }});
  v.push_back({"radii 1e-3..1e3 3D", [] { return log_uniform(2000, 0.2, 3, 107, 1e-3, 1e3); }});
  v.push_back({"radii 1e-3..1e3 2D", [] { return log_uniform(2000, 0.2, 2, 108, 1e-3, 1e3); }});
  v.push_back({"one giant among dust", [] {
                 // Mean diameter ~ 1e-2, one body of radius 1e3: with cells of the mean
                 // diameter its box alone would take ~1e15 cells.
                 auto s = log_uniform(1500, 0.05, 3, 109, 1e-3, 1e-2);
                 s.bodies.push_back(s.bodies.x[0], s.bodies.y[0], s.bodies.z[0], 1e3, 10);
                 return s;
               }});
  v.push_back({"periodic exponential 3D",
               [periodic] { return periodic(exponential(3000, 0.3, 3, 110)); }});
  v.push_back({"periodic exponential 2D",
               [periodic] { return periodic(exponential(2000, 0.3, 2, 111)); }});
  v.push_back({"periodic equal radii 3D",
               [periodic] { return periodic(equal_radii(2000, 0.3, 3, 112)); }});
  v.push_back({"periodic radii 1e-3..1e3",
               [periodic] { return periodic(log_uniform(1500, 0.2, 3, 113, 1e-3, 1e3)); }});
  v.push_back({"periodic cell-like", [periodic] { return periodic(cell_like(1500, 114)); }});
  v.push_back({"periodic contacts 3D", [periodic] { return periodic(contacts(3)); }});
  v.push_back({"periodic, fewer than 3 cells per axis", [periodic] {
                 // Bodies up to a third of the box wide: 1 or 2 cells per axis.
                 return periodic(exponential(60, 0.5, 3, 115, 1.0, 4.0));
               }});
  v.push_back({"periodic 2D, fewer than 3 cells per axis",
               [periodic] { return periodic(exponential(40, 0.6, 2, 116, 1.0, 4.0)); }});
  v.push_back({"no body", [] { return exponential(0, 0.3, 3, 117); }});
  v.push_back({"one body", [] { return exponential(1, 0.3, 3, 118); }});
  v.push_back({"one body 2D periodic", [periodic] { return periodic(exponential(1, 0.3, 2, 119)); }});
  v.push_back({"two bodies", [] { return exponential(2, 0.9, 3, 120); }});
  v.push_back({"sparse, far from the origin", [] {
                 auto s = exponential(400, 0.005, 3, 121);
                 for (std::size_t i = 0; i < s.bodies.size(); ++i) s.bodies.x[i] += 4000;
                 return s;
               }});
  return v;
}

}  // namespace

TEST_CASE("solid grids equal the double loop and brute force on every scene family") {
  for (const Case& c : cases()) {
    SUBCASE(c.name.c_str()) {
      check_scene<double>(c);
      check_scene<float>(c);
    }
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

// Crowded cells of near-concentric shells (broadphase/src/hsx/shell_cells.cuh): the
// families they exist for (concentric, near-concentric, a cell full of nested vesicles)
// in 2D and 3D, float and double, open and periodic, with and without a skin, against the
// brute-force reference (reference.h): the grid forced (the GPU's default takes all pairs
// below 15000 bodies), its pairs in the order found, and the automatic choice; on one
// configuration per family also the old walk (shell cells off) and solid spheres.
// test_broadphase_paths forces shell cells on every scene family of scene_cases.h.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/scenes.h"
#include "nestsim/tuning.h"
#include "reference.h"
#include "scene_cases.h"
#include "test_broadphase_check.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

struct Family {
  std::string name;
  scenes::Scene (*make)(int dim);
};

std::vector<Family> families() {
  return {
      {"concentric", [](int dim) { return scenes::concentric(scaled(1000), dim); }},
      {"near-concentric", [](int dim) { return scenes::near_concentric(scaled(1000), dim, 7); }},
      {"nested", [](int dim) { return scenes::nested(scaled(3000), dim, 11); }},
  };
}

// Hollow (the shell cells' relation): the grid forced, its pairs in the order found, the
// automatic choice. `more`: also the old walk (shell cells off) and solid (SSX, where no
// cell qualifies: every shell wall is as thick as its radius).
template <class Real>
void check_scene(const std::string& name, const scenes::Scene& scene, double skin, bool more) {
  const SphereSet<Real> bodies = convert<Real>(scene.bodies);
  const std::string label =
      name + (sizeof(Real) == 4 ? " / float" : " / double") + " / skin " + std::to_string(skin);
  BroadphaseOptions o = options_for(scene, Overlap::hollow, Method::hsx, skin);
  const std::vector<Pair> reference = reference_pairs(bodies, o);
  o.hsx_small_n = 0;  // the grid, whatever the backend's crossover
  check_method(label + " / grid", bodies, o, reference);
  BroadphaseOptions any = o;
  any.sort_pairs = false;
  check_method(label + " / grid, pairs in the order found", bodies, any, reference);
  BroadphaseOptions automatic = o;
  automatic.hsx_small_n = -1;
  check_method(label + " / automatic", bodies, automatic, reference);
  if (!more) return;
  BroadphaseOptions off = o;
  off.tuning.hsx.shell_min_bodies = 0;
  check_method(label + " / no shell cells", bodies, off, reference);
  BroadphaseOptions solid = options_for(scene, Overlap::solid, Method::hsx, skin);
  const std::vector<Pair> solid_reference = reference_pairs(bodies, solid);
  solid.hsx_small_n = 0;
  check_method(label + " / solid", bodies, solid, solid_reference);
}

}  // namespace

TEST_CASE_TEMPLATE("nested shells: every family equals the brute-force reference", Real, float,
                   double) {
  for (const Family& f : families())
    for (int dim : {3, 2})
      for (bool periodic : {false, true})
        for (double skin : {0.0, 0.3}) {
          scenes::Scene scene = f.make(dim);
          if (periodic) scenes::make_periodic(scene);
          const std::string name = f.name + (dim == 3 ? " 3D" : " 2D") +
                                   (periodic ? " periodic" : "");
          check_scene<Real>(name, scene, skin, dim == 3 && !periodic && skin == 0);
        }
}

TEST_CASE("nested shells: the scenes hold what they promise") {
  // Concentric shells never intersect as hollow spheres; near-concentric ones sometimes
  // (the thick walls); the nested cell's vesicles cut lysosome walls and each other.
  for (int dim : {3, 2}) {
    const scenes::Scene c = scenes::concentric(500, dim);
    CHECK(reference_pairs(c.bodies, options_for(c, Overlap::hollow, Method::hsx)).empty());
    const scenes::Scene nc = scenes::near_concentric(1500, dim, 7);
    CHECK(!reference_pairs(nc.bodies, options_for(nc, Overlap::hollow, Method::hsx)).empty());
    const scenes::Scene n = scenes::nested(3000, dim, 11);
    CHECK(n.bodies.size() == 3000);
    CHECK(reference_pairs(n.bodies, options_for(n, Overlap::hollow, Method::hsx)).size() > 100);
  }
}

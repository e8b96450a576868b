// Crowded cells of near-concentric shells (broadphase/src/hsx/shell_cells.cuh): the
// families they exist for (concentric, near-concentric, a cell full of nested vesicles,
// a stack among more lysosomes than a cell has anchors, clouds of ILVs, crowded clouds of
// ILVs of radii over a decade in a small periodic box, a simulator's fast ligands at large
// steps) in 2D and 3D, float and double, open and periodic, with and without a skin,
// against the brute-force reference (reference.h): the grid forced (the GPU's default
// takes all pairs below 15000 bodies) with the default tuning and with every crowded
// cell prepared (hsx.shell_prep_min_bodies 0, as in every variant after it), its pairs
// in the order found, and the automatic choice; on one configuration per family
// also the old walk (shell cells off) and solid spheres; every configuration also with
// the small members' fine cells finer and coarser (hsx.shell_fine_width) and their boxes
// smaller or none (hsx.shell_block).
// test_broadphase_paths forces shell cells on every scene family of scene_cases.h.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"
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

// Random draws of the scenes below: uniform numbers, points in a ball (a disc in 2D), and
// a stack of shells of radius 2 i about a centre (5% of them solid-ish, wall 1.8).
struct Draws {
  std::mt19937_64 rng;
  int dim;
  std::uniform_real_distribution<double> uniform{0.0, 1.0};
  double unit() { return uniform(rng); }
  void in_ball(const double* c, double radius, double* out) {
    double u[3], n2;
    do {
      for (double& v : u) v = 2 * unit() - 1;
      if (dim == 2) u[2] = 0;
      n2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    } while (n2 > 1);
    for (int a = 0; a < 3; ++a) out[a] = c[a] + radius * u[a];
  }
  void stack(scenes::Scene& s, const double* centre, int shells) {
    for (int i = 1; i <= shells; ++i) {
      double x[3];
      in_ball(centre, 0.3, x);
      s.bodies.push_back(x[0], x[1], x[2], 2.0 * i, unit() < 0.05 ? 1.8 : 0.5);
    }
  }
};

// One stack of 120 near-concentric shells beside 24 lysosomes of radius 18 (wall 1), each
// holding 40 ILVs (radius 0.5 to 1, wall 0.3 r), all in the stack's few cells: more
// compartments than a cell has anchors (shell_cells.cuh, kShellAnchors), so that the
// ILVs of the lysosomes without one go with the nearest anchor; and ILVs that touch,
// cut or sit inside their lysosome's wall.
scenes::Scene crowded_lysosomes(int dim) {
  Draws d{std::mt19937_64(23), dim};
  scenes::Scene s;
  s.domain.dim = dim;
  const double centre[3] = {400, 400, dim == 3 ? 400.0 : 0.0};
  d.stack(s, centre, 120);
  for (int l = 0; l < 24; ++l) {
    double c[3];
    do d.in_ball(centre, 380, c);  // off the stack (radius 240), inside the box
    while (std::hypot(c[0] - centre[0], c[1] - centre[1], c[2] - centre[2]) < 262);
    s.bodies.push_back(c[0], c[1], c[2], 18.0, 1.0);
    for (int i = 0; i < 40; ++i) {
      double x[3];
      d.in_ball(c, 17.5, x);
      const double r = 0.5 + 0.5 * d.unit();
      s.bodies.push_back(x[0], x[1], x[2], r, 0.3 * r);
    }
  }
  for (int a = 0; a < 3; ++a) {
    s.domain.lo[a] = 0;
    s.domain.size[a] = a < dim ? 800 : 0;
  }
  return s;
}

// A stack of 60 shells among 12 lysosomes of radius 14 holding 400 ILVs each (radius 0.5
// to 1, wall 0.3 r; in 2D 150 ILVs in a disc of radius 12): clouds of small members
// several blocks long (searched by rows of fine cells and by boxes), ILVs that touch
// across a block's edge, and one lysosome at the box's corner, so that on a periodic box
// its ILVs wrap around every axis.
scenes::Scene ilv_clouds(int dim) {
  Draws d{std::mt19937_64(29), dim};
  scenes::Scene s;
  s.domain.dim = dim;
  const double centre[3] = {200, 200, dim == 3 ? 200.0 : 0.0};
  d.stack(s, centre, 60);
  const double lysosome = dim == 3 ? 14.0 : 12.0;
  const int ilvs = dim == 3 ? 400 : 150;
  for (int l = 0; l < 12; ++l) {
    double c[3] = {0, 0, 0};  // the first at the box's corner
    if (l > 0) {
      do d.in_ball(centre, 190, c);
      while (std::hypot(c[0] - centre[0], c[1] - centre[1], c[2] - centre[2]) < 137);
    }
    s.bodies.push_back(c[0], c[1], c[2], lysosome, 1.0);
    for (int i = 0; i < ilvs; ++i) {
      double x[3];
      d.in_ball(c, lysosome - 1.5, x);
      const double r = 0.5 + 0.5 * d.unit();
      s.bodies.push_back(x[0], x[1], x[2], r, 0.3 * r);
      if (i % 50 == 0) {  // a twin touching it exactly along x
        const double r2 = 0.5;
        s.bodies.push_back(x[0] + r + r2, x[1], x[2], r2, 0.3 * r2);
      }
    }
  }
  for (int a = 0; a < 3; ++a) {
    s.domain.lo[a] = 0;
    s.domain.size[a] = a < dim ? 400 : 0;
  }
  return s;
}

// A stack of 30 shells beside 8 lysosomes of radius 22 crowded with 700 ILVs each (2D:
// 250 in radius 20) of radii from 0.15 to 2.5 (log-uniform; wall 0.3 r) and a tenth of
// them tiny (0.05): many small members per shell cell whose fine cells hold several, ILVs
// in many rows of the fine grid; the box's edge 200, one lysosome at its corner and one
// at a face, so that periodic windows wrap and some leave half an edge of their anchor.
scenes::Scene varied_ilvs(int dim) {
  Draws d{std::mt19937_64(31), dim};
  scenes::Scene s;
  s.domain.dim = dim;
  const double centre[3] = {100, 100, dim == 3 ? 100.0 : 0.0};
  d.stack(s, centre, 30);
  const double lysosome = dim == 3 ? 22.0 : 20.0;
  const int ilvs = dim == 3 ? 700 : 250;
  for (int l = 0; l < 8; ++l) {
    double c[3] = {0, 0, 0};  // the first at the box's corner, the second at a face
    if (l == 1) c[0] = 100, c[1] = 199, c[2] = dim == 3 ? 100.0 : 0.0;
    if (l > 1) {
      do d.in_ball(centre, 95, c);
      while (std::hypot(c[0] - centre[0], c[1] - centre[1], c[2] - centre[2]) < 85);
    }
    s.bodies.push_back(c[0], c[1], c[2], lysosome, 1.0);
    for (int i = 0; i < ilvs; ++i) {
      double x[3];
      d.in_ball(c, lysosome - 1.0, x);
      const double r = i % 10 == 0 ? 0.05 : 0.15 * std::pow(2.5 / 0.15, d.unit());
      s.bodies.push_back(x[0], x[1], x[2], r, 0.3 * r);
    }
  }
  for (int a = 0; a < 3; ++a) {
    s.domain.lo[a] = 0;
    s.domain.size[a] = a < dim ? 200 : 0;
  }
  return s;
}

// The simulator's lists at large steps (receptor_cycle_physiological.yaml tiled): solid
// balls of radii 0.2 to 60 (exponential, mean 15: a fast ligand's list radius is mostly
// its step) among 6 cells of radius 35 (wall 1) holding 40 solid crowders each. Crowded
// grid cells of mostly small members whose fine cells would be a few to a cell: ordinary
// cells under hsx.shell_fine_min_cells, shell cells with that test off (check_scene's
// fine-cell variants).
scenes::Scene ligand_clouds(int dim) {
  Draws d{std::mt19937_64(37), dim};
  scenes::Scene s;
  s.domain.dim = dim;
  const double edge = 400;
  for (int k = 0; k < 6; ++k) {
    double c[3] = {0, 0, 0};
    for (int a = 0; a < dim; ++a) c[a] = 60 + (edge - 120) * d.unit();
    s.bodies.push_back(c[0], c[1], c[2], 35.0, 1.0);
    for (int i = 0; i < 40; ++i) {
      double x[3];
      d.in_ball(c, 30.0, x);
      const double r = 1 + 6 * d.unit();
      s.bodies.push_back(x[0], x[1], x[2], r, r);
    }
  }
  std::exponential_distribution<double> step(1.0 / 15);
  const int ligands = dim == 3 ? 3000 : 1500;
  for (int i = 0; i < ligands; ++i) {
    double x[3] = {0, 0, 0};
    for (int a = 0; a < dim; ++a) x[a] = edge * d.unit();
    const double r = std::min(60.0, 0.2 + step(d.rng));
    s.bodies.push_back(x[0], x[1], x[2], r, r);
  }
  for (int a = 0; a < 3; ++a) {
    s.domain.lo[a] = 0;
    s.domain.size[a] = a < dim ? edge : 0;
  }
  return s;
}

std::vector<Family> families() {
  return {
      {"concentric", [](int dim) { return scenes::concentric(scaled(1000), dim); }},
      {"near-concentric", [](int dim) { return scenes::near_concentric(scaled(1000), dim, 7); }},
      {"nested", [](int dim) { return scenes::nested(scaled(3000), dim, 11); }},
      {"crowded lysosomes", crowded_lysosomes},
      {"ILV clouds", ilv_clouds},
      {"varied ILVs", varied_ilvs},
      {"ligand clouds", ligand_clouds},
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
  check_method(label + " / grid, default tuning", bodies, o, reference);
  // The families' cells of a few hundred members prepared too (the default prepares
  // only where a cell has hsx.shell_prep_min_bodies): every variant below.
  o.tuning.hsx.shell_prep_min_bodies = 0;
  check_method(label + " / grid", bodies, o, reference);
  BroadphaseOptions any = o;
  any.sort_pairs = false;
  check_method(label + " / grid, pairs in the order found", bodies, any, reference);
  BroadphaseOptions automatic = o;
  automatic.hsx_small_n = -1;
  check_method(label + " / automatic", bodies, automatic, reference);
  // The small members' fine cells finer (more walkers by boxes) and coarser (more by
  // rows); boxes of 4 (second-level boxes of 64 members, several per lysosome) and none
  // (the small part whole for the walkers that do not take rows).
  // The fine-cell test off (hsx.shell_fine_min_cells): coarse fine cells stay shell cells.
  BroadphaseOptions fine = o;
  fine.tuning.hsx.shell_fine_min_cells = 0;
  fine.tuning.hsx.shell_fine_width = 0.5;
  check_method(label + " / fine cells of half a diameter", bodies, fine, reference);
  fine.sort_pairs = false;
  check_method(label + " / fine cells of half a diameter, pairs in the order found", bodies,
               fine, reference);
  fine = o;
  fine.tuning.hsx.shell_fine_min_cells = 0;
  fine.tuning.hsx.shell_fine_width = 8;
  fine.tuning.hsx.shell_block = 4;
  check_method(label + " / fine cells of 8 diameters, boxes of 4", bodies, fine, reference);
  fine.tuning.hsx.shell_block = 0;
  check_method(label + " / fine cells of 8 diameters, no boxes", bodies, fine, reference);
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
    const scenes::Scene l = crowded_lysosomes(dim);
    CHECK(l.bodies.size() == 120 + 24 * 41);
    CHECK(reference_pairs(l.bodies, options_for(l, Overlap::hollow, Method::hsx)).size() > 100);
    const scenes::Scene v = ilv_clouds(dim);
    const std::size_t ilvs = dim == 3 ? 400 : 150;
    CHECK(v.bodies.size() == 60 + 12 * (1 + ilvs + ilvs / 50));
    CHECK(reference_pairs(v.bodies, options_for(v, Overlap::hollow, Method::hsx)).size() > 200);
    const scenes::Scene w = varied_ilvs(dim);
    CHECK(w.bodies.size() == 30 + 8 * (1 + std::size_t(dim == 3 ? 700 : 250)));
    CHECK(reference_pairs(w.bodies, options_for(w, Overlap::hollow, Method::hsx)).size() > 500);
    const scenes::Scene g = ligand_clouds(dim);
    CHECK(g.bodies.size() == 6 * 41 + std::size_t(dim == 3 ? 3000 : 1500));
    CHECK(reference_pairs(g.bodies, options_for(g, Overlap::hollow, Method::hsx)).size() > 5000);
  }
}

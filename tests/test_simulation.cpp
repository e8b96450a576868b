// The simulation engine, fast checks: the random generator, reproducibility and resume
// (bitwise), independence of the neighbour-list skin, carrying, bound bodies, boxes,
// excluded-volume forces and input validation. Statistical suites: test_simulation_stats.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "nestsim/sim/philox.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;

namespace {

bool same_bits(const Frame& a, const Frame& b) {
  return a.step == b.step && a.id == b.id && a.parent == b.parent && a.membrane == b.membrane &&
         a.position.size() == b.position.size() &&
         std::memcmp(a.position.data(), b.position.data(), a.position.size() * sizeof(Vec)) == 0;
}

double dist(const Setup& s, const Vec& a, const Vec& b) {
  return std::sqrt(SetupBuilder::distance2(s, a, b));
}

}  // namespace

TEST_CASE("philox4x32-10 matches the Random123 known-answer vectors") {
  const Philox4x32 zero = philox4x32_10(Philox4x32{{0, 0, 0, 0}}, 0, 0);
  CHECK(zero.v[0] == 0x6627e8d5u);
  CHECK(zero.v[1] == 0xe169c58du);
  CHECK(zero.v[2] == 0xbc57ac4cu);
  CHECK(zero.v[3] == 0x9b00dbd8u);
  const Philox4x32 ones =
      philox4x32_10(Philox4x32{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                    0xffffffffu, 0xffffffffu);
  CHECK(ones.v[0] == 0x408f276du);
  CHECK(ones.v[1] == 0x41c83b0eu);
  CHECK(ones.v[2] == 0xa20bc7c6u);
  CHECK(ones.v[3] == 0x6d5451fdu);
  const Philox4x32 pi = philox4x32_10(
      Philox4x32{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u);
  CHECK(pi.v[0] == 0xd16cfe09u);
  CHECK(pi.v[1] == 0x94fdccebu);
  CHECK(pi.v[2] == 0x5001e420u);
  CHECK(pi.v[3] == 0x24126ea1u);
}

TEST_CASE("the same seed gives a bitwise identical run; another seed does not") {
  const Setup s = crowded_cell(300, 7);
  Simulation a(s), b(s);
  a.run(60);
  b.run(30);
  b.run(30);
  CHECK(same_bits(a.frame(), b.frame()));
  Setup other = s;
  other.seed = 8;
  Simulation c(other);
  c.run(60);
  CHECK_FALSE(same_bits(a.frame(), c.frame()));
}

TEST_CASE("restore from a frame continues bitwise") {
  const Setup s = crowded_cell(300, 11);
  Simulation straight(s);
  straight.run(80);
  Simulation first(s);
  first.run(40);
  const Frame middle = first.frame();
  CHECK(middle.step == 40);
  Simulation resumed(s);  // a fresh engine, as after a restart
  resumed.restore(middle);
  CHECK(resumed.step() == 40);
  resumed.run(40);
  first.run(40);
  CHECK(same_bits(straight.frame(), resumed.frame()));
  CHECK(same_bits(straight.frame(), first.frame()));
}

TEST_CASE("the trajectory does not depend on the skin (when lists are rebuilt)") {
  const Setup s = crowded_cell(300, 3);
  SimulationOptions thin, thick;
  thin.skin = 0.05;
  thick.skin = 6.0;
  Simulation a(s, thin), b(s, thick);
  a.run(50);
  b.run(50);
  CHECK(a.times().rebuilds > b.times().rebuilds);
  CHECK(same_bits(a.frame(), b.frame()));
}

TEST_CASE("long force lists (chunked sums) do not depend on the skin either") {
  // 200 proteins piled into a ball of radius 3 in a cell's lumen: each overlaps most of
  // the others, so the force rows are far longer than one chunk (force_kernels.cuh,
  // kForceChunk) and their sums are chunked. A soft repulsion lets the pile spread.
  SetupBuilder b(3, 60, Boundary::periodic, 0.005, 7);
  b.s.repulsion = 0.1;
  const uint32_t cell = b.kind("cell", true, 25, 1.5, 0.5);
  const uint32_t protein = b.kind("protein", false, 1, 1, 10);
  const int64_t c = b.add(cell, {30, 30, 30});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int k = 0; k < 200;) {
    const Vec d{u(rng), u(rng), u(rng)};
    if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 9) continue;
    b.add(protein, {30 + d[0], 30 + d[1], 30 + d[2]}, c);
    ++k;
  }
  SimulationOptions thin, thick;
  thin.skin = 0.05;
  thick.skin = 6.0;
  Simulation a(b.s, thin), other(b.s, thick);
  a.run(30);
  other.run(30);
  CHECK(a.times().rebuilds > other.times().rebuilds);
  CHECK(same_bits(a.frame(), other.frame()));
  const Frame f = by_id(a.frame());
  double mean = 0;
  for (int k = 1; k <= 200; ++k) mean += dist(b.s, f.position[std::size_t(k)], f.position[0]);
  CHECK(mean / 200 > 3);  // the pile spread (uniform in the ball of 3: mean 2.25)
}

TEST_CASE("a compartment carries its contents, through two levels") {
  SetupBuilder b(3, 100, Boundary::reflective, 0.01);
  const uint32_t cell = b.kind("cell", true, 40, 2, 0);
  const uint32_t lysosome = b.kind("lysosome", true, 12, 1, 5);
  const uint32_t vesicle = b.kind("vesicle", true, 4, 0.5, 0);
  const uint32_t cargo = b.kind("cargo", false, 0.5, 0.5, 0);
  const int64_t c = b.add(cell, {50, 50, 50});
  const int64_t l = b.add(lysosome, {50, 50, 50}, c);
  const int64_t v = b.add(vesicle, {53, 50, 50}, l);
  const int64_t in_vesicle = b.add(cargo, {54, 50.5, 50}, v);
  const int64_t in_lysosome = b.add(cargo, {46, 48, 51}, l);
  b.s.repulsion = 10;
  Simulation sim(b.s);
  const Frame start = by_id(sim.frame());
  double moved = 0;
  for (int f = 0; f < 20; ++f) {
    sim.run(10);
    const Frame now = by_id(sim.frame());
    for (int64_t body : {v, in_vesicle, in_lysosome})
      for (int k = 0; k < 3; ++k) {
        const double follow = now.position[body][k] - start.position[body][k];
        const double carrier = now.position[l][k] - start.position[l][k];
        CHECK(std::abs(follow - carrier) < 1e-9);
      }
    for (int k = 0; k < 3; ++k) CHECK(now.position[c][k] == start.position[c][k]);
    moved = dist(b.s, now.position[l], start.position[l]);
  }
  CHECK(moved > 0.5);  // sigma per axis over 200 steps: sqrt(2 * 5 * 2) = 4.5
}

TEST_CASE("membrane-bound bodies stay on their moving membrane's mid-surface") {
  for (int dim : {2, 3}) {
    SetupBuilder b(dim, 60, Boundary::periodic, 0.01);
    b.s.repulsion = 1;
    const uint32_t vesicle = b.kind("vesicle", true, 6, 1, 2);
    const uint32_t receptor = b.kind("receptor", false, 0.5, 0.5, 3);
    const int64_t v = b.add(vesicle, {59, 30, dim == 3 ? 30.0 : 0.0});  // crosses the box edge
    std::vector<int64_t> bound;
    for (int k = 0; k < 12; ++k) {
      const double a = 0.5 * k, z = dim == 3 ? std::cos(1.3 * k) : 0;
      const double rho = std::sqrt(1 - z * z);
      const Vec p = b.pos(v);
      // deliberately off the sphere: the engine projects bound bodies onto it
      bound.push_back(b.add(receptor, {p[0] + 7 * rho * std::cos(a), p[1] + 7 * rho * std::sin(a),
                                       p[2] + 7 * z}, -1, v));
    }
    Simulation sim(b.s);
    const Frame start = by_id(sim.frame());
    const double m = 6 - 0.5;
    double travelled = 0;
    for (int f = 0; f < 30; ++f) {
      sim.run(10);
      const Frame now = by_id(sim.frame());
      for (int64_t r : bound) {
        CHECK(std::abs(dist(b.s, now.position[r], now.position[v]) - m) < 1e-12 * 60);
        CHECK(now.membrane[r] == v);
        CHECK(now.parent[r] == -1);
        travelled = std::max(travelled, dist(b.s, now.position[r], start.position[r]));
      }
    }
    CHECK(travelled > 1.0);
  }
}

TEST_CASE("reflective walls keep every body, and each compartment's contents, in the box") {
  SetupBuilder b(3, 20, Boundary::reflective, 0.01);
  b.s.repulsion = 0.2;
  const uint32_t protein = b.kind("protein", false, 0.5, 0.5, 20);
  const uint32_t vesicle = b.kind("vesicle", true, 3, 0.5, 10);
  const uint32_t cargo = b.kind("cargo", false, 0.5, 0.5, 20);
  const int64_t v = b.add(vesicle, {3, 10, 16.5});
  b.add(cargo, {3.5, 10, 16.5}, v);
  for (int k = 0; k < 100; ++k)
    b.add(protein, {0.5 + 0.1 * (k % 10) + (k % 2 ? 18 : 0), 0.5 + 0.19 * k, 0.5 + 0.05 * k});
  Simulation sim(b.s);
  std::size_t outside = 0;
  for (int f = 0; f < 100; ++f) {
    sim.run(5);
    const Frame now = by_id(sim.frame());
    for (std::size_t i = 0; i < now.position.size(); ++i)  // whole balls in the box
      for (int k = 0; k < 3; ++k)
        if (!(now.position[i][k] >= now.radius[i] && now.position[i][k] <= 20 - now.radius[i])) ++outside;
    for (int k = 0; k < 3; ++k)
      CHECK((now.position[v][k] >= 3 && now.position[v][k] <= 20 - 3));
  }
  CHECK(outside == 0);
}

TEST_CASE("periodic boxes wrap positions into [0, box)") {
  SetupBuilder b(2, 10, Boundary::periodic, 0.01);
  const uint32_t protein = b.kind("protein", false, 0.2, 0.2, 10);
  for (int k = 0; k < 50; ++k) b.add(protein, {0.2 * k, 9.9, 0});
  Simulation sim(b.s);
  Frame before = by_id(sim.frame());
  std::size_t crossings = 0, outside = 0;
  for (int f = 0; f < 50; ++f) {
    sim.run(2);
    const Frame now = by_id(sim.frame());
    for (std::size_t i = 0; i < now.position.size(); ++i) {
      for (int k = 0; k < 2; ++k) {
        if (!(now.position[i][k] >= 0 && now.position[i][k] < 10)) ++outside;
        if (std::abs(now.position[i][k] - before.position[i][k]) > 5) ++crossings;
      }
      CHECK(now.position[i][2] == 0);
    }
    before = now;
  }
  CHECK(outside == 0);
  CHECK(crossings > 10);
}

TEST_CASE("periodic images unwrap the trajectory, through reactions and resume") {
  // Frames every step: the unwrapped position (position + image * box) must move by the
  // minimum-image displacement between consecutive frames; a slot's new body starts at
  // image 0; a resumed run continues the images bitwise.
  SetupBuilder b(3, 12, Boundary::periodic, 0.01, 5);
  const uint32_t a = b.kind("a", false, 0.2, 0.2, 10);
  const uint32_t c = b.kind("c", false, 0.2, 0.2, 10);
  for (int k = 0; k < 40; ++k) b.add(a, {0.3 * k, 11.9, 6});
  nestsim::model::Reaction split;
  split.name = "split";
  split.rate = 2;
  split.reactants = {Term{a, {}}};
  split.products = {Term{a, {}}, Term{c, {}}};
  b.s.reactions = {split};
  b.s.capacity = 400;
  Simulation sim(b.s);
  Frame before = sim.frame();
  std::size_t crossings = 0;
  for (int step = 0; step < 150; ++step) {
    sim.run(1);
    const Frame now = sim.frame();
    REQUIRE(now.image.size() == now.position.size());
    for (std::size_t i = 0; i < now.id.size(); ++i) {
      if (now.id[i] < 0) continue;
      if (before.id[i] != now.id[i]) {  // a new body in this slot
        CHECK(now.image[i] == std::array<int32_t, 3>{0, 0, 0});
        continue;
      }
      for (int k = 0; k < 3; ++k) {
        const double unwrapped_now = now.position[i][k] + 12.0 * now.image[i][k];
        const double unwrapped_before = before.position[i][k] + 12.0 * before.image[i][k];
        double d = now.position[i][k] - before.position[i][k];
        d -= 12.0 * std::floor(d / 12.0 + 0.5);
        CHECK(std::abs(unwrapped_now - unwrapped_before - d) < 1e-9);
        crossings += now.image[i][k] != before.image[i][k];
      }
    }
    before = now;
  }
  CHECK(crossings > 20);
  CHECK(sim.frame().reaction_events[0] > 20);
  Simulation resumed(b.s);
  resumed.restore(before);
  sim.run(30);
  resumed.run(30);
  CHECK(sim.frame().image == resumed.frame().image);
  CHECK(same_bits(sim.frame(), resumed.frame()));
}

TEST_CASE("excluded volume pushes overlapping proteins apart; membranes are hard walls") {
  SetupBuilder b(3, 50, Boundary::reflective, 1e-3);
  // Drift D/kT k h dt = 0.05 h per step, noise sqrt(2 D dt) = 0.0045 per step, thermal
  // overlap sqrt(kT / k) = 0.014: the deterministic push dominates.
  b.s.kT = 1e-4;
  b.s.repulsion = 0.5;
  const uint32_t protein = b.kind("protein", false, 1, 1, 0.01);
  const uint32_t vesicle = b.kind("vesicle", true, 5, 1, 0);
  const int64_t p1 = b.add(protein, {10, 10, 10});
  const int64_t p2 = b.add(protein, {11, 10, 10});  // overlap 1
  const int64_t v = b.add(vesicle, {30, 30, 30});
  const int64_t inner = b.add(protein, {33, 30, 30}, v);  // touching the lumen's surface
  const int64_t outer = b.add(protein, {30, 36, 30});     // touching the outer surface
  Simulation sim(b.s);
  sim.run(200);
  const Frame f = by_id(sim.frame());
  CHECK(dist(b.s, f.position[p1], f.position[p2]) > 1.9);
  CHECK(dist(b.s, f.position[inner], f.position[v]) <= 3);  // never into the wall
  CHECK(dist(b.s, f.position[outer], f.position[v]) >= 6);
  CHECK(sim.rejected_moves() > 0);  // the walls turned moves back
}

TEST_CASE("invalid setups are refused with a message") {
  SetupBuilder b(3, 50, Boundary::reflective, 0.01);
  const uint32_t protein = b.kind("protein", false, 1, 1, 1);
  const uint32_t vesicle = b.kind("vesicle", true, 5, 1, 1);
  SUBCASE("a body outside its parent") {
    const int64_t v = b.add(vesicle, {20, 20, 20});
    b.add(protein, {27, 20, 20}, v);
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("a protein whose ball reaches into its parent's membrane") {
    const int64_t v = b.add(vesicle, {20, 20, 20});
    b.add(protein, {23.5, 20, 20}, v);  // lumen 4, radius 1: 4.5 > 4
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("a protein whose ball reaches into a membrane from outside") {
    b.add(vesicle, {20, 20, 20});
    b.add(protein, {25.5, 20, 20});  // 5.5 < 5 + 1
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("a time step too large for accurate contacts, accepted as merely stable") {
    b.add(protein, {20, 20, 20});
    b.s.repulsion = 10;
    b.s.dt = 0.04;  // (1 + 1) x 10 x 0.04 = 0.8
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
    b.s.dt_limit = DtLimit::stable;
    CHECK_NOTHROW(Simulation{b.s});
    b.s.dt = 0.06;  // 1.2: not even stable
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("a protein inside a compartment it is not a child of") {
    b.add(vesicle, {20, 20, 20});
    b.add(protein, {21, 20, 20});
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("a parent that is not a compartment") {
    const int64_t p = b.add(protein, {20, 20, 20});
    b.add(protein, {25, 20, 20}, p);
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("no time step") {
    b.add(protein, {20, 20, 20});
    b.s.dt = 0;
    CHECK_THROWS_AS(Simulation{b.s}, std::invalid_argument);
  }
  SUBCASE("a valid one is accepted") {
    const int64_t v = b.add(vesicle, {20, 20, 20});
    b.add(protein, {21, 20, 20}, v);
    CHECK_NOTHROW(Simulation{b.s});
  }
}

TEST_CASE("frames hold capacity slots, empty ones with id -1") {
  SetupBuilder b(3, 50, Boundary::periodic, 0.01);
  const uint32_t protein = b.kind("protein", false, 1, 1, 1);
  b.add(protein, {20, 20, 20});
  b.add(protein, {30, 20, 20});
  b.s.capacity = 5;
  Simulation sim(b.s);
  sim.run(3);
  const Frame f = sim.frame();
  REQUIRE(f.id.size() == 5);
  CHECK(std::min(f.id[0], f.id[1]) == 0);
  CHECK(std::max(f.id[0], f.id[1]) == 1);
  for (std::size_t slot = 2; slot < 5; ++slot) CHECK(f.id[slot] == -1);
  CHECK(f.next_id == 2);
  CHECK(f.time == doctest::Approx(0.03));
}

TEST_CASE("initial bodies take slots in spatial order, or slot = id on request") {
  SetupBuilder b(3, 64, Boundary::periodic, 0.01);
  const uint32_t protein = b.kind("protein", false, 0.5, 0.5, 1);
  for (int k = 0; k < 8; ++k) b.add(protein, {60.0 - 7.0 * k, 1, 1});  // ids run right to left
  Simulation spatial(b.s);
  const Frame f = spatial.frame();
  for (std::size_t slot = 0; slot < 8; ++slot) CHECK(f.id[slot] == int64_t(7 - slot));
  SimulationOptions plain;
  plain.spatial_slots = false;
  Simulation in_order(b.s, plain);
  const Frame g = in_order.frame();
  for (std::size_t slot = 0; slot < 8; ++slot) CHECK(g.id[slot] == int64_t(slot));
  // The same bodies, whatever their slots.
  CHECK(same_bits(by_id(f), by_id(g)));
}

TEST_CASE("collision: solid runs the same trajectory through more broad-phase pairs") {
  // Without nesting, HSX and SSX are the same relation: the runs are bitwise identical,
  // lists included. With nesting (the crowded cell), the SSX lists also hold every body
  // deep inside a compartment with that compartment (the spurious contacts that nesting
  // rules out), and the forces and events filter them away: still the same trajectory.
  SetupBuilder b(3, 30, Boundary::periodic, 0.001, 5);
  b.s.repulsion = 10;
  const uint32_t a = b.kind("a", false, 0.6, 0.6, 1);
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> u(0, 30);
  for (int k = 0; k < 1500; ++k) b.add(a, {u(rng), u(rng), u(rng)});
  // Nested: a resting cell holding slow proteins (a thin skin), most far from its membrane.
  SetupBuilder n(3, 30, Boundary::periodic, 0.001, 7);
  n.s.repulsion = 10;
  const uint32_t cell = n.kind("cell", true, 12, 0.5, 0);
  const uint32_t p = n.kind("p", false, 0.3, 0.3, 0.1);
  const int64_t c = n.add(cell, {15, 15, 15});
  Vec at;
  for (int k = 0; k < 400; ++k)
    if (n.place(rng, 0.3, c, at)) n.add(p, at, c);
  for (const Setup* hollow : {&b.s, &n.s}) {
    Setup solid = *hollow;
    solid.collision = nestsim::model::Collision::solid;
    Simulation h(*hollow), s(solid);
    h.run(200);
    s.run(200);
    const Frame fh = h.frame(), fs = s.frame();
    CHECK(fh.position == fs.position);
    CHECK(fh.id == fs.id);
    REQUIRE(fh.broadphase_pairs >= 0);
    if (hollow == &b.s)
      CHECK(fs.broadphase_pairs == fh.broadphase_pairs);
    else
      CHECK(fs.broadphase_pairs > fh.broadphase_pairs + 200);  // proteins deep in the cell
    MESSAGE("broad-phase pairs: hollow " << fh.broadphase_pairs << ", solid " << fs.broadphase_pairs);
  }
}

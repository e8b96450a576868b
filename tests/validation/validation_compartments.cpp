// Validation: membranes as hard walls and compartments that carry their contents
// (docs/validation.md).
//
//  confinement_*_rep{0,10}: one protein (radius r_i, D 1) in the lumen of each of 512
//    immobile compartments (r_C 5, q_C 1). A hard wall by rejection of a symmetric
//    (Gaussian) proposal is a Metropolis step for the uniform density, so at equilibrium
//    the centre is uniform in the ball of radius rho = r_C - q_C - r_i at ANY dt, with or
//    without repulsion (one protein per lumen: nothing to repel). Statistics, sampled
//    every 0.1 rho^2 / D from a uniform start:
//      fraction of samples with |x - x_C| < rho / 2:  theory 1/8;
//      mean of (|x - x_C| / rho)^3:                   theory 1/2 (uniform in [0, 1]).
//    se from the per-body time averages (bodies in different lumens are independent).
//    (The old rule kept the centre inside the mid-surface, radius r_C - q_C / 2: 0.037.)
//  confinement_overlap (INVARIANT): in every sampled frame, and in every step of a
//    stretch of 200 steps, every protein's ball is inside its lumen:
//    |x - x_C| + r_i <= r_C - q_C + 1e-9.
//  compartment_D_{loaded,empty}: vesicles (r 12, q 2, D 2) in a periodic box at 2.3%
//    volume fraction, half of them each holding 10 proteins (r 1, D 10) in the lumen and
//    4 (r 1, D 1) on the membrane, repulsion 10, dt the largest accepted. A compartment
//    carries its contents rigidly and nothing it carries moves it, so D_eff =
//    <|dx|^2> / (6 tau) = 2 for loaded and empty vesicles alike (the bug of issue 30 gave
//    5.5). Samples: each vesicle over 40 non-overlapping windows of tau = 0.2 (|dx| ~ 1.5,
//    far less than the gaps between vesicles, ~50): independent increments, se ~1.6%.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "frames.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

void confinement(Ledger& ledger, double repulsion, uint64_t seed) {
  const Timer timer("confinement_rep" + std::to_string(int(repulsion)), seed);
  const double rc = 5, qc = 1, ri = 1, D = 1, rho = rc - qc - ri, spacing = 11;
  const int side = 8, samples = 60;
  SetupBuilder b(3, side * spacing, Boundary::periodic, 0.02, stream(seed, 20 + uint64_t(repulsion)));
  b.s.repulsion = repulsion;
  const uint32_t cell = b.kind("cell", true, rc, qc, 0);
  const uint32_t protein = b.kind("protein", false, ri, ri, D);
  // The largest accepted dt (repulsion 10: the protein-protein contact step; 0: no
  // limit, 0.02 then, a step of 0.2 against rho = 3).
  b.s.dt = std::min(0.02, largest_dt(b.s));
  std::mt19937_64 rng(stream(seed, 30 + uint64_t(repulsion)));
  std::vector<int64_t> cells, proteins;
  for (int m = 0; m < side * side * side; ++m) {
    const Vec c{spacing * (m % side + 0.5), spacing * (m / side % side + 0.5), spacing * (m / side / side + 0.5)};
    cells.push_back(b.add(cell, c));
    Vec p{0, 0, 0};
    REQUIRE(b.place(rng, ri, cells.back(), p));  // uniform in the ball of radius rho
    proteins.push_back(b.add(protein, p, cells.back()));
  }
  Simulation sim(b.s);
  const Vec box = b.s.box;
  uint64_t violations = 0, checked = 0;
  double worst = -INFINITY;
  std::vector<Mean> inner(proteins.size()), cube(proteins.size());
  const auto check = [&](const Frame& f, bool sample) {
    for (std::size_t k = 0; k < proteins.size(); ++k) {
      const double r = std::sqrt(norm2(periodic_delta(f.position[std::size_t(proteins[k])],
                                                      f.position[std::size_t(cells[k])], box)));
      const double excess = r + ri - (rc - qc);
      worst = std::max(worst, excess);
      violations += excess > 1e-9 ? 1 : 0;
      ++checked;
      if (sample) {
        inner[k].add(r < 0.5 * rho ? 1.0 : 0.0);
        cube[k].add(std::pow(r / rho, 3));
      }
    }
  };
  for (int s = 0; s < 200; ++s) {  // every step of a stretch
    sim.run(1);
    check(by_id(sim.frame()), false);
  }
  const uint64_t every = uint64_t(std::llround(0.1 * rho * rho / D / b.s.dt));
  for (int s = 0; s < samples; ++s) {
    sim.run(every);
    check(by_id(sim.frame()), true);
  }
  Mean fraction, r3;
  for (std::size_t k = 0; k < proteins.size(); ++k) {
    fraction.add(inner[k].mean());
    r3.add(cube[k].mean());
  }
  const std::string tag = "_rep" + std::to_string(int(repulsion));
  ledger.add("confinement_inner_fraction" + tag, fraction.mean(), 0.125, fraction.se(), seed);
  ledger.add("confinement_r3" + tag, r3.mean(), 0.5, r3.se(), seed);
  ledger.invariant("confinement_overlap" + tag, violations, checked, worst, seed);
}

Vec on_sphere(const Vec& c, double r, std::mt19937_64& rng) {
  std::normal_distribution<double> n01(0, 1);
  const Vec d{n01(rng), n01(rng), n01(rng)};
  const double len = std::sqrt(norm2(d));
  return {c[0] + d[0] / len * r, c[1] + d[1] / len * r, c[2] + d[2] / len * r};
}

void compartment_diffusion(Ledger& ledger, uint64_t seed) {
  const Timer timer("compartment_D", seed);
  const double box = 330, rv = 12, qv = 2, Dv = 2;
  const int per_kind = 64, windows = 40, window = 400;
  SetupBuilder b(3, box, Boundary::periodic, 1, stream(seed, 40));
  b.s.repulsion = 10;
  const uint32_t loaded = b.kind("loaded", true, rv, qv, Dv);
  const uint32_t empty = b.kind("empty", true, rv, qv, Dv);
  const uint32_t cargo = b.kind("cargo", false, 1, 1, 10);
  const uint32_t coat = b.kind("coat", false, 1, 1, 1);
  b.s.kinds[coat].membrane = true;
  b.s.dt = largest_dt(b.s);  // 0.1 / (2 x 10 x 10) = 0.0005
  std::mt19937_64 rng(stream(seed, 41));
  std::vector<int64_t> vesicles[2];
  Vec p{0, 0, 0};
  for (int v = 0; v < 2 * per_kind; ++v) {
    const bool full = v % 2 == 0;
    REQUIRE(b.place(rng, rv + 6, -1, p));  // at least 12 apart
    const int64_t id = b.add(full ? loaded : empty, p);
    vesicles[full ? 0 : 1].push_back(id);
    if (!full) continue;
    for (int k = 0; k < 10; ++k) {
      Vec q{0, 0, 0};
      REQUIRE(b.place(rng, 1, id, q));
      b.add(cargo, q, id);
    }
    for (int k = 0; k < 4; ++k) b.add(coat, on_sphere(p, b.mid(id), rng), -1, id);
  }
  Simulation sim(b.s);
  const double tau = window * b.s.dt;
  Frame last = by_id(sim.frame());
  Mean d_eff[2];
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const Frame now = by_id(sim.frame());
    for (int k = 0; k < 2; ++k)
      for (int64_t id : vesicles[k])
        d_eff[k].add(norm2(periodic_delta(now.position[std::size_t(id)], last.position[std::size_t(id)], b.s.box)) /
                     (6 * tau));
    last = now;
  }
  ledger.add("compartment_D_loaded", d_eff[0].mean(), Dv, d_eff[0].se(), seed);
  ledger.add("compartment_D_empty", d_eff[1].mean(), Dv, d_eff[1].se(), seed);
}

}  // namespace

TEST_CASE("validation: hard walls, a lone protein is uniform in its lumen's free ball") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    confinement(ledger, 0, seed);
    confinement(ledger, 10, seed);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

TEST_CASE("validation: loaded and empty compartments diffuse with their own D") {
  Ledger ledger;
  for (uint64_t seed : seeds()) compartment_diffusion(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

// Validation: a crowded fluid converged in dt (docs/validation.md).
//
//  crowded_{energy,D}_dt{max,max/2}: 1000 soft spheres (radius 1, D 1, k 10 kT/length^2,
//    volume fraction 0.3, periodic) at dt_max (the largest accepted: contact step 0.1),
//    dt_max / 2 and dt_max / 4. Statistics: the mean soft energy per body (kT) and the
//    long-time D = <|dx|^2> / (6 tau) over windows of tau = 5 (the cage time is ~1: D is
//    ~0.75, not 1). The runs at dt_max and dt_max / 2 are compared with the one at
//    dt_max / 4 (the "theory" of the line); se of the difference from both runs, each from
//    24 blocks: 3 windows x the 8 octants of the box where the bodies were at the window's
//    start (a window is 5 cage times, an octant 6 diameters across: blocks are nearly
//    independent; per-body or per-frame samples are not, neighbours move and collide
//    together, and an error from them came out ~1.5x too small against the spread of
//    repeated runs). Each run has its own random stream. A step that is too coarse for
//    the crowd (several contacts per body, stiffer than one pair) shows as a difference;
//    the accurate limit promises ~1%.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "frames.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

struct Crowd {
  double energy = 0, energy_se = 0, D = 0, D_se = 0;
};

Crowd crowded(double dt_fraction, uint64_t seed) {
  const double a = 1, D = 1, k = 10, phi = 0.3, t_equilibrate = 4, window = 5;
  const int side = 10, n = side * side * side, windows = 3;
  const double box = std::cbrt(n * 4.0 / 3.0 * kPi * a * a * a / phi);
  SetupBuilder b(3, box, Boundary::periodic, 1, stream(seed, 90 + uint64_t(8 * dt_fraction)));
  b.s.repulsion = k;
  const uint32_t protein = b.kind("protein", false, a, a, D);
  b.s.dt = largest_dt(b.s) * dt_fraction;
  const double spacing = box / side;
  for (int i = 0; i < n; ++i)
    b.add(protein, {spacing * (i % side + 0.5), spacing * (i / side % side + 0.5), spacing * (i / side / side + 0.5)});
  Simulation sim(b.s);
  sim.run(uint64_t(std::llround(t_equilibrate / b.s.dt)));  // the lattice melts in ~1
  const int per_window = 50;  // energy frames per window
  const uint64_t every = uint64_t(std::llround(window / per_window / b.s.dt));
  const double tau = double(every * per_window) * b.s.dt;
  // Blocks: (window, octant of the box where the body was at the window's start).
  Mean energy_blocks, d_blocks;
  Frame last = by_id(sim.frame());
  for (int w = 0; w < windows; ++w) {
    std::vector<int> octant(std::size_t(n), 0);
    for (int i = 0; i < n; ++i)
      for (int ax = 0; ax < 3; ++ax) {
        const double x = last.position[std::size_t(i)][ax] / box;
        octant[std::size_t(i)] += (x - std::floor(x) >= 0.5 ? 1 : 0) << ax;
      }
    std::vector<double> e_sum(8, 0.0), d_sum(8, 0.0), count(8, 0.0);
    for (int i = 0; i < n; ++i) count[std::size_t(octant[std::size_t(i)])] += 1;
    for (int f = 0; f < per_window; ++f) {
      sim.run(every);
      const Frame now = by_id(sim.frame());
      for_close_pairs(now.position, b.s.box, 2 * a, [&](std::size_t i, std::size_t j, double r) {
        const double half = 0.25 * k * (2 * a - r) * (2 * a - r);  // each body takes half
        e_sum[std::size_t(octant[i])] += half;
        e_sum[std::size_t(octant[j])] += half;
      });
    }
    const Frame now = by_id(sim.frame());
    for (int i = 0; i < n; ++i)
      d_sum[std::size_t(octant[std::size_t(i)])] +=
          norm2(periodic_delta(now.position[std::size_t(i)], last.position[std::size_t(i)], b.s.box)) / (6 * tau);
    for (std::size_t o = 0; o < 8; ++o) {
      energy_blocks.add(e_sum[o] / (per_window * count[o]));
      d_blocks.add(d_sum[o] / count[o]);
    }
    last = now;
  }
  Crowd out;
  out.energy = energy_blocks.mean();
  out.energy_se = energy_blocks.se();
  out.D = d_blocks.mean();
  out.D_se = d_blocks.se();
  return out;
}

void crowded_convergence(Ledger& ledger, uint64_t seed) {
  const Timer timer("crowded_convergence", seed);
  const Crowd fine = crowded(0.25, seed), half = crowded(0.5, seed), full = crowded(1, seed);
  const auto both = [](double x, double y) { return std::sqrt(x * x + y * y); };
  ledger.add("crowded_energy_dtmax", full.energy, fine.energy, both(full.energy_se, fine.energy_se), seed);
  ledger.add("crowded_energy_dtmax/2", half.energy, fine.energy, both(half.energy_se, fine.energy_se), seed);
  ledger.add("crowded_D_dtmax", full.D, fine.D, both(full.D_se, fine.D_se), seed);
  ledger.add("crowded_D_dtmax/2", half.D, fine.D, both(half.D_se, fine.D_se), seed);
}

}  // namespace

TEST_CASE("validation: a crowded fluid's energy and long-time D converge in dt") {
  Ledger ledger;
  for (uint64_t seed : seeds()) crowded_convergence(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

// Diffusion on a sphere, measured: 20 cells of radius R with 150 membrane proteins each,
// the mean cosine of a protein's direction from its cell's centre between frames
// `window` steps apart, against exp(-2 D t / R^2) in the checks that use it.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "frames.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "stats.h"

namespace nestsim::validation {

// The caller's builder b holds the kinds `cell` (a compartment of radius about R) and
// `receptor` (a membrane protein); the cells go on a 4 x 4 x 2 lattice `spacing` apart in
// a periodic box of edge `box`, the proteins on each at radius R (a Fibonacci lattice).
// Runs `windows` windows of `window` steps.
inline Mean membrane_direction_cosine(nestsim::testing::SetupBuilder& b, uint32_t cell,
                                      uint32_t receptor, double R, double spacing, double box,
                                      int window, int windows) {
  const int cells = 20, per = 150;
  std::vector<int64_t> home, receptors;
  for (int m = 0; m < cells; ++m) {
    const Vec centre{spacing * (0.5 + m % 4), spacing * (0.5 + m / 4 % 4),
                     spacing * (0.5 + m / 16)};
    const int64_t c = b.add(cell, centre);
    for (int k = 0; k < per; ++k) {
      const double z = 1 - 2 * (k + 0.5) / per, a = 2.399963 * k + m, rho = std::sqrt(1 - z * z);
      receptors.push_back(b.add(
          receptor,
          {centre[0] + R * rho * std::cos(a), centre[1] + R * rho * std::sin(a), centre[2] + R * z},
          -1, c));
      home.push_back(c);
    }
  }
  nestsim::sim::Simulation sim(b.s);
  const Vec pbox{box, box, box};
  const auto directions = [&](const nestsim::model::Frame& f) {
    return unit_directions(f, receptors, home, pbox);
  };
  std::vector<Vec> last = directions(nestsim::testing::by_id(sim.frame()));
  Mean cosine;
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const std::vector<Vec> now = directions(nestsim::testing::by_id(sim.frame()));
    for (std::size_t k = 0; k < now.size(); ++k)
      cosine.add(now[k][0] * last[k][0] + now[k][1] * last[k][1] + now[k][2] * last[k][2]);
    last = now;
  }
  return cosine;
}

}  // namespace nestsim::validation

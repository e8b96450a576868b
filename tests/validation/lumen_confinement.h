// One protein in the lumen of each of 256 vesicles, measured: how often a protein is
// within half the lumen's radius of its vesicle's centre (1/8 for a uniform lumen), and
// every sampled distance against the lumen's radius (a leak is one beyond it).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "frames.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "stats.h"

namespace nestsim::validation {

// Vesicles along each of the lattice's first two axes (4 along the third): a caller sizes
// its box from it.
constexpr int kLumenSide = 8;

struct LumenSamples {
  Mean plateau;              // per vesicle, the fraction of samples within rho / 2
  uint64_t leaks = 0;        // distances beyond rho
  uint64_t checked = 0;      // distances sampled
  double worst = -INFINITY;  // the largest distance minus rho
};

// The caller's builder b holds the kinds `vesicle` (a compartment whose lumen has radius
// rho) and `protein`; the vesicles go on a kLumenSide^2 x 4 lattice `spacing` apart in a
// periodic box of edge `box`, a protein at each centre. After 100 steps of warm-up,
// `samples` samples, steps_before(k) steps before sample k; the plateau counts every
// `plateau_every`-th sample, the leaks every sample.
inline LumenSamples lumen_confinement(nestsim::testing::SetupBuilder& b, uint32_t vesicle,
                                      uint32_t protein, double rho, double spacing, double box,
                                      int samples, const std::function<int(int)>& steps_before,
                                      int plateau_every) {
  const int side = kLumenSide, n = side * side * 4;
  std::vector<int64_t> cs, ps;
  for (int m = 0; m < n; ++m) {
    const Vec c{spacing * (0.5 + m % side), spacing * (0.5 + m / side % side),
                spacing * (0.5 + m / (side * side))};
    cs.push_back(b.add(vesicle, c));
    ps.push_back(b.add(protein, c, cs.back()));
  }
  nestsim::sim::Simulation sim(b.s);
  sim.run(100);
  std::vector<Mean> inner(std::size_t(n), Mean{});
  LumenSamples out;
  const Vec pbox{box, box, box};
  for (int k = 0; k < samples; ++k) {
    sim.run(steps_before(k));
    const nestsim::model::Frame f = nestsim::testing::by_id(sim.frame());
    for (int m = 0; m < n; ++m) {
      const double r =
          std::sqrt(norm2(periodic_delta(f.position[std::size_t(ps[std::size_t(m)])],
                                         f.position[std::size_t(cs[std::size_t(m)])], pbox)));
      if (k % plateau_every == 0) inner[std::size_t(m)].add(r < 0.5 * rho ? 1.0 : 0.0);
      out.worst = std::max(out.worst, r - rho);
      ++out.checked;
      if (r > rho * (1 + 1e-9)) ++out.leaks;
    }
  }
  for (const Mean& m : inner) out.plateau.add(m.mean());
  return out;
}

}  // namespace nestsim::validation

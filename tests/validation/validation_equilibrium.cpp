// Validation: the equilibrium of a reversible Doi reaction (docs/validation.md).
//
//  equilibrium_K: A + B <-> C, forward Doi rate lambda within sigma, backward k_off with
//    the products placed as the engine does (A at C's place, B uniform in the ball of the
//    reverse rule's radius sigma around it; simulator/src/reactions/products.cuh,
//    models/README.md).
//    Detailed balance between "C" and "A, B at separation r < sigma" gives
//        [C] k_off / V_sigma = lambda [A][B]  =>  K = [C] / ([A][B]) = lambda V_sigma / k_off,
//    V_sigma = 4/3 pi sigma^3, for non-interacting bodies (repulsion 0), whatever D. In a
//    closed box with fixed totals the canonical form is exact: <N_C> = (K / V) <N_A N_B>.
//    (This holds in a box of any size, so the run is 16 independent small boxes, V = 18^3,
//    totals 216.) Statistic: K_meas = V <N_C> / <N_A N_B> over the frames of all boxes
//    (every 0.5 time units; relaxation time ~3); se by the delta method from the residual
//    N_C - (K / V) N_A N_B averaged per box: independent replicas (one long box with an
//    autocorrelation-time estimate gave an error 2x too small: the series has long tails).
//    The engine's per-step probabilities make the exact discrete-time constant
//    V_sigma (1 - e^{-lambda dt}) / (1 - e^{-k_off dt}), 0.4% below lambda V_sigma / k_off
//    at the dt used (lambda dt = 0.01; se ~1.5%); the check compares with the
//    continuous-time formula. Two A firing for one B in one step
//    (one wins) needs two B within sigma of an A: n_B V_sigma ~ 0.1, and both firing
//    together ~ lambda dt of that: negligible.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "nestsim/sim/replicas.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "frames.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

void equilibrium(Ledger& ledger, uint64_t seed) {
  const Timer timer("equilibrium_K", seed);
  const double box = 18, sigma = 1, lambda = 1, koff = 0.2, D = 1, dt = 0.01;
  const double volume = box * box * box, K = lambda * 4.0 / 3.0 * kPi * std::pow(sigma, 3) / koff;
  const int replicas = 16, frames = 70, total = 216, bound = 73;
  const uint64_t every = uint64_t(std::llround(0.5 / dt));  // 35 time units, ~12 relaxation times
  struct Sums {
    double residual = 0, c = 0, ab = 0;  // N_C - (K / V) N_A N_B, N_C, N_A N_B over frames
  };
  std::vector<Sums> per_replica(replicas);  // filled side by side (nestsim/sim/replicas.h)
  nestsim::sim::for_each_replica(replicas, [&](int rep) {
    SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, 60 + 2 * uint64_t(rep)));
    b.s.repulsion = 0;
    const uint32_t a = b.kind("A", false, 0.1, 0.1, D);
    const uint32_t bb = b.kind("B", false, 0.1, 0.1, D);
    const uint32_t c = b.kind("C", false, 0.1, 0.1, D);
    b.s.reactions = {rule("bind", lambda, sigma, {a, bb}, {c}), rule("unbind", koff, 0, {c}, {a, bb})};
    // Totals A + C = B + C = 216, started near equilibrium (N_C ~ 73).
    std::mt19937_64 rng(stream(seed, 61 + 2 * uint64_t(rep)));
    std::uniform_real_distribution<double> u(0, box);
    for (int i = 0; i < total - bound; ++i) b.add(a, {u(rng), u(rng), u(rng)});
    for (int i = 0; i < total - bound; ++i) b.add(bb, {u(rng), u(rng), u(rng)});
    for (int i = 0; i < bound; ++i) b.add(c, {u(rng), u(rng), u(rng)});
    b.s.capacity = 3 * total;
    Simulation sim(b.s);
    sim.run(uint64_t(std::llround(5 / dt)));  // ~2 relaxation times from near equilibrium
    Sums& sums = per_replica[std::size_t(rep)];
    for (int f = 0; f < frames; ++f) {
      sim.run(every);
      const Frame fr = sim.frame();
      const double na = double(count_kind(fr, a)), nb = double(count_kind(fr, bb)), nc = double(count_kind(fr, c));
      REQUIRE(na + nc == total);
      REQUIRE(nb + nc == total);
      sums.residual += nc - K / volume * na * nb;
      sums.c += nc;
      sums.ab += na * nb;
    }
  });
  Mean residual;  // per replica: the average of N_C - (K / V) N_A N_B over its frames
  double c_sum = 0, ab_sum = 0;
  for (const Sums& sums : per_replica) {
    residual.add(sums.residual / frames);
    c_sum += sums.c;
    ab_sum += sums.ab;
  }
  const double n = double(replicas) * frames, ab = ab_sum / n;
  ledger.add("equilibrium_K", volume * (c_sum / n) / ab, K, volume * residual.se() / ab, seed);
  std::printf("# equilibrium_K: <N_C> %.2f of %d per box\n", c_sum / n, total);
}

}  // namespace

TEST_CASE("validation: A + B <-> C equilibrium, K = lambda V_sigma / k_off") {
  Ledger ledger;
  for (uint64_t seed : seeds()) equilibrium(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

// Validation: reactions against analytic results (docs/validation.md).
//
//  decay_survival: A -> 0 at rate k fires with probability 1 - exp(-k dt) per step, so a
//    body survives n steps with probability exp(-k n dt) exactly. 20000 bodies, k t = 1:
//    surviving fraction against exp(-1), binomial se sqrt(p (1 - p) / N).
//  doi_rate: A + B -> C + B (B a catalyst) against Erban-Chapman with the start-up
//    transient in the theory (doi_run.h says how and why the count has an exact
//    two-body expectation; doi.h computes it).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "doi_run.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "frames.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

void decay(Ledger& ledger, uint64_t seed) {
  const Timer timer("decay_survival", seed);
  const double k = 1, dt = 0.01, box = 100;
  const int n = 20000, steps = 100;
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, 50));
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.1, 0.1, 1);
  std::mt19937_64 rng(stream(seed, 51));
  std::uniform_real_distribution<double> u(0, box);
  for (int i = 0; i < n; ++i) b.add(a, {u(rng), u(rng), u(rng)});
  b.s.reactions = {rule("decay", k, 0, {a}, {})};
  Simulation sim(b.s);
  sim.run(steps);
  const double p = std::exp(-k * steps * dt);
  const double left = double(count_kind(sim.frame(), a)) / n;
  ledger.add("decay_survival", left, p, std::sqrt(p * (1 - p) / n), seed);
}

void doi(Ledger& ledger, uint64_t seed) {
  const Timer timer("doi_rate", seed);
  DoiRun r;  // sigma 1, D_A = D_B = 0.5, lambda 2.25 (g = 1.5: k_EC = 0.53 lambda V_sigma)
  r.seed = stream(seed, 70);
  const DoiRun::Outcome o = r.run();
  const double ec = erban_chapman(r.lambda, r.DA + r.DB, r.sigma);
  ledger.add("doi_rate", ec * o.counted / o.expected, ec, ec * o.se / o.expected, seed);
}

}  // namespace

TEST_CASE("validation: A -> 0 survival is exp(-k t)") {
  Ledger ledger;
  for (uint64_t seed : seeds()) decay(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

TEST_CASE("validation: Doi A + B -> C + B against Erban-Chapman, transient included") {
  Ledger ledger;
  for (uint64_t seed : seeds()) doi(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

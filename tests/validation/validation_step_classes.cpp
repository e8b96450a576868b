// Validation with time-step classes on (docs/validation.md, "Time-step classes"): the
// checks of the large-steps issue with kinds of class K = 8 (their bodies move every 8th
// step by a step of 8 dt; nestsim/model/time_step.h) beside kinds of class 1.
//
//  class_free_msd_K{1,8}: contacts none, free bodies of D 10 (K 1) and D 1 (K 8) in one
//    periodic box, dt 0.1 us: D_eff = <|dx|^2> / (6 tau) over windows of 40 steps (5
//    moves of the slow kind) = D for each kind. se: independent bodies and windows.
//  class_membrane_cos_K8: contacts none, receptors of D 1 and class 8 bound to immobile
//    compartments whose mid-surface radius R is the smallest that the membrane rule
//    accepts at 8 dt (5 D 8 dt / R^2 = 0.01): <cos theta> = exp(-2 D_eff t / R^2),
//    D_eff = D (1 - 5 D 8 dt / R^2), over windows t ~ R^2 / (4 D) (a multiple of 8 steps).
//  class_confinement_K8, class_confinement_leaks_K8: contacts hard, one protein (D 10,
//    class 1) in the lumen of each of 256 vesicles that diffuse (D 1, class 8): the
//    protein's distance from its vesicle's centre is below rho / 2 for 1/8 of the
//    samples (Metropolis on the uniform ball, relative to the carrier that moves it), and
//    it never leaves its lumen (invariant, every sampled step, slow and fast steps alike).
//  class_kon_{fastA,slowA}_dt{0.01,0.1,1}: a model file's "A + B -> C", kon 1e8 /M/s,
//    contacts none: one reactant fast (D 18, class 1), the other slow (D 2, class 8), so
//    D_A + D_B = 20 as in large_kon; the rate law k(t) = kon (1 + a / sqrt(pi D t)),
//    a = kon / (4 pi D) (validation_large_step_reactions.cpp) against the events counted.
//    Reactions run at every base step, the slow bodies resting between their moves;
//    Andrews-Bray's radius for D_A + D_B at dt: the mean squared relative move per step,
//    averaged over 8 steps, is still 6 (D_A + D_B) dt (and K D_slow = 16 <= D_fast, as
//    time_step.h's accuracy rule asks).
//  class_decay_K8: A (D 1, class 8) -> 0 at k dt = 0.1 over 10 steps: exp(-1).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frames.h"
#include "lumen_confinement.h"
#include "membrane_cosine.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "stats.h"

using namespace nestsim::model;
using namespace nestsim::sim;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

constexpr uint32_t kSlow = 8;

void free_msd(Ledger& ledger, uint64_t seed) {
  const Timer timer("class_free_msd", seed);
  const double dt = 0.1, box = 200;
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, 1));
  b.s.contacts = Contacts::none;
  const uint32_t fast = b.kind("fast", false, 2.5, 2.5, 10);
  const uint32_t slow = b.kind("slow", false, 2.5, 2.5, 1);
  b.s.kinds[slow].step = kSlow;
  const int n = 1000, windows = 10, window = 5 * int(kSlow);
  std::mt19937_64 rng(stream(seed, 2));
  std::uniform_real_distribution<double> u(0, box);
  for (int k = 0; k < 2 * n; ++k) b.add(k < n ? fast : slow, {u(rng), u(rng), u(rng)});
  Simulation sim(b.s);
  Frame last = sim.frame();
  Mean d_eff[2];
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const Frame now = sim.frame();
    for (std::size_t s = 0; s < now.id.size(); ++s) {
      if (now.id[s] < 0) continue;
      Vec d{0, 0, 0};
      for (int a = 0; a < 3; ++a)
        d[std::size_t(a)] = now.position[s][std::size_t(a)] - last.position[s][std::size_t(a)] +
                            box * (now.image[s][std::size_t(a)] - last.image[s][std::size_t(a)]);
      const bool is_slow = now.kind[s] == int32_t(slow);
      d_eff[is_slow].add(norm2(d) / (6 * window * dt));
    }
    last = now;
  }
  ledger.add("class_free_msd_K1", d_eff[0].mean(), 10, d_eff[0].se(), seed);
  ledger.add("class_free_msd_K8", d_eff[1].mean(), 1, d_eff[1].se(), seed);
}

void membrane_cos(Ledger& ledger, uint64_t seed) {
  const Timer timer("class_membrane_cos_K8", seed);
  const double dt = 0.1, D = 1, K = kSlow;
  const double R = std::sqrt(5 * D * K * dt / kMembraneStepAccurate), qc = 1, rc = R + 0.5 * qc;
  const int window = int(kSlow) * int(std::lround(0.25 * R * R / D / dt / K)), windows = 4;
  const double spacing = 2.5 * rc, box = 4 * spacing;
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, 3));
  b.s.contacts = Contacts::none;
  const uint32_t cell = b.kind("cell", true, rc, qc, 0);
  const uint32_t receptor = b.kind("receptor", false, 2.5, 2.5, D);
  b.s.kinds[receptor].membrane = true;
  b.s.kinds[receptor].step = kSlow;
  const Mean cosine =
      membrane_direction_cosine(b, cell, receptor, R, spacing, box, window, windows);
  const double d_eff = D * (1 - 5 * D * K * dt / (R * R));
  ledger.add("class_membrane_cos_K8", cosine.mean(), std::exp(-2 * d_eff * window * dt / (R * R)),
             cosine.se(), seed);
}

void confinement(Ledger& ledger, uint64_t seed) {
  const Timer timer("class_confinement_K8", seed);
  const double dt = 0.1, D = 10, s = std::sqrt(2 * D * dt), rho = 3 * s, qc = 1;
  const double rc = rho + 2.5 + qc, spacing = 2 * rc + 4;
  const double box = spacing * kLumenSide;
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, 4));
  b.s.contacts = Contacts::hard;
  const uint32_t ves = b.kind("vesicle", true, rc, qc, 1);
  b.s.kinds[ves].step = kSlow;
  const uint32_t p = b.kind("protein", false, 2.5, 2.5, D);
  // samples at the slow kind's steps and between them
  const LumenSamples l = lumen_confinement(
      b, ves, p, rho, spacing, box, 200, [](int k) { return k % 2 ? 1 : 4; }, 5);
  ledger.add("class_confinement_K8", l.plateau.mean(), 0.125, l.plateau.se(), seed);
  ledger.invariant("class_confinement_leaks_K8", l.leaks, l.checked, l.worst, seed);
}

// A + B -> C with one reactant of class 8 (validation_large_step_reactions.cpp's measure,
// its densities and rate law, with D_A and D_B apart).
void kon(Ledger& ledger, double dt, bool slow_a, uint64_t seed) {
  char name[64];
  std::snprintf(name, sizeof name, "class_kon_%s_dt%g", slow_a ? "slowA" : "fastA", dt);
  const Timer timer(name, seed);
  const double d_fast = 18, d_slow = 2, D = d_fast + d_slow, kon_molar = 1e8;
  const double kon = kon_molar * 1.6605390671738467e-6;  // nm^3/us
  const double a = kon / (4 * kPi * D);
  const double ball = 4.0 / 3 * kPi * std::pow(andrews_bray_binding_radius(kon, D, dt), 3);
  const double duration = std::max(10.0, 50 * dt);
  const int n = 10000;
  const double conc = std::min(0.25 / (kon * duration), 0.005 / ball);
  const double box = std::max(std::cbrt(n / conc), 17 * std::sqrt(2 * D * dt * kSlow));
  const double volume = box * box * box;
  const auto steps = uint64_t(std::llround(duration / dt));
  const uint64_t chunks = std::min<uint64_t>(steps, 50);
  std::ostringstream os;
  os.precision(17);
  const auto species = [&](const char* k, bool slow) {
    os << "  " << k << ": {radius: 0.5, diffusion: " << (slow ? d_slow : d_fast)
       << (slow ? ", step: 8" : "") << "}\n";
  };
  os << "nestsim: 1\nunits: {length: nm, time: us}\n"
     << "box: {size: [" << box << ", " << box << ", " << box << "], boundary: periodic}\n"
     << "simulation: {dt: " << dt << ", steps: " << steps << ", seed: " << stream(seed, 7)
     << ", dt_limit: stable}\nspecies:\n";
  species("A", slow_a);
  species("B", !slow_a);
  os << "  C: {radius: 0.5, diffusion: 10}\n"
     << "interactions: {contacts: none}\n"
     << "place:\n  - {species: A, at: [1, 1, 1]}\n"
     << "reactions:\n  - {name: bind, rule: A + B -> C, kon: " << kon_molar << " /M/s, radius: 1}\n";
  const Model model = parse_model(os.str(), std::string(name) + ".yaml");
  Setup setup = make_setup(model);
  const uint32_t A = uint32_t(model.kind_index("A")), B = uint32_t(model.kind_index("B"));
  REQUIRE(setup.kinds[slow_a ? A : B].step == kSlow);
  setup.bodies.clear();
  std::mt19937_64 rng(stream(seed, 8));
  std::uniform_real_distribution<double> u(0, box);
  for (uint32_t kind : {A, B})
    for (int i = 0; i < n; ++i) {
      Body body;
      body.kind = kind;
      body.position = {u(rng), u(rng), u(rng)};
      setup.bodies.push_back(body);
    }
  setup.capacity = setup.bodies.size() + 64;
  Simulation sim(setup);
  double expected = 0;
  uint64_t done = 0;
  Frame frame = sim.frame();
  for (uint64_t k = 0; k < chunks; ++k) {
    const uint64_t upto = steps * (k + 1) / chunks;
    const double t0 = double(done) * dt, t1 = double(upto) * dt;
    const double p0 = double(count_kind(frame, A)) * double(count_kind(frame, B));
    sim.run(upto - done);
    done = upto;
    frame = sim.frame();
    const double p1 = double(count_kind(frame, A)) * double(count_kind(frame, B));
    expected += 0.5 * (p0 + p1) / volume * kon *
                ((t1 - t0) + 2 * a * (std::sqrt(t1) - std::sqrt(t0)) / std::sqrt(kPi * D));
  }
  const double counted = double(frame.reaction_events.at(0));
  ledger.add(name, counted / expected, 1.0, std::sqrt(counted) / expected, seed);
}

void decay(Ledger& ledger, uint64_t seed) {
  const Timer timer("class_decay_K8", seed);
  const double dt = 1, kdt = 0.1, box = 200;
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, 21));
  b.s.contacts = Contacts::none;
  const uint32_t A = b.kind("A", false, 0.5, 0.5, 1);
  b.s.kinds[A].step = kSlow;
  b.s.reactions.push_back(rule("decay", kdt / dt, 0, {A}, {}));
  const int n = 20000;
  std::mt19937_64 rng(stream(seed, 22));
  std::uniform_real_distribution<double> u(0, box);
  for (int i = 0; i < n; ++i) b.add(A, {u(rng), u(rng), u(rng)});
  b.s.capacity = uint64_t(n) + 64;
  Simulation sim(b.s);
  sim.run(10);
  const double left = double(count_kind(sim.frame(), A)) / n, theory = std::exp(-kdt * 10);
  ledger.add("class_decay_K8", left, theory, std::sqrt(theory * (1 - theory) / n), seed);
}

}  // namespace

TEST_CASE("validation: time-step classes, diffusion and membranes") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    free_msd(ledger, seed);
    membrane_cos(ledger, seed);
    confinement(ledger, seed);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

TEST_CASE("validation: time-step classes, kon between a fast and a slow reactant, decay") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    for (double dt : {0.01, 0.1, 1.0})
      for (bool slow_a : {false, true}) kon(ledger, dt, slow_a, seed);
    decay(ledger, seed);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

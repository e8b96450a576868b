// Validation: kon held at large steps and with soft contacts (docs/validation.md, "Large
// steps: reactions").
//
//  large_kon_none_{1e+08_dt{0.01,0.1,1,10},1e+06_dt0.01}: a model file's "A + B -> C" with
//    `kon:` in M^-1 s^-1, A and B of D = 10 um^2/s (D_A + D_B = 20 nm^2/us), run at dt
//    0.01-10 us through io (Andrews-Bray's binding radius for the run's dt,
//    nestsim/io/kon_calibration.h). N A and N B start uniform; the rate law
//    dN/dt = -k(t) N_A N_B / V with the long-time rate of any short-range reaction,
//      k(t) = kon (1 + a / sqrt(pi D t)),  a = kon / (4 pi D)
//    (the 1/sqrt(t) tail is fixed by kon and D alone; before ~a^2 / D the true rate is
//    finite where this diverges, an integrated difference < 0.3% of the counts here).
//    Expected events = sum over chunks of N_A N_B / V int k dt (N from the frames at the
//    chunk's middle), against the events counted. Densities keep c V_b <= 0.005 (V_b the
//    binding ball): a pair sees a third body in the ball rarely (the calibration is of
//    isolated pairs). se: Poisson of the count (the reactions of distinct pairs are
//    nearly independent). A binding radius off by 5% moves the rate by ~10-15%.
//  large_kon_hard_1e+08_dt1: the same under contacts hard, where the reactant kinds are
//    exempt from each other's exclusion (the rest exclude).
//  large_kon_soft_contact: issue 46's case, A and B of radius 2.5 nm, `radius: 5` (the
//    contact distance), `repulsion: 1`, dt 0.002 us (`dt_limit: stable`): the force-free
//    Doi rate gave 0.58 of kon; the soft calibration must give 1.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "frames.h"
#include "nestsim/io/kon_calibration.h"
#include "nestsim/io/model.h"
#include "nestsim/io/placement.h"
#include "nestsim/io/rates.h"
#include "nestsim/sim/simulation.h"
#include "stats.h"

using namespace nestsim::validation;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct Case {
  std::string name, contacts;
  double kon_molar = 1e8, dt = 0.01;
  int n = 10000;          // A and B each
  double radius = 0.5;    // of A, B, C (nm); soft only touches
  double repulsion = 0;
  double duration = 0;    // us; 0: chosen below
};

std::string model_text(const Case& c, double box, uint64_t steps, uint64_t seed) {
  std::ostringstream os;
  os.precision(17);
  os << "nestsim: 1\nunits: {length: nm, time: us}\n"
     << "box: {size: [" << box << ", " << box << ", " << box << "], boundary: periodic}\n"
     << "simulation: {dt: " << c.dt << ", steps: " << steps << ", seed: " << seed
     << ", dt_limit: stable}\n"
     << "species:\n"
     << "  A: {radius: " << c.radius << ", diffusion: 10}\n"
     << "  B: {radius: " << c.radius << ", diffusion: 10}\n"
     << "  C: {radius: " << c.radius << ", diffusion: 10}\n"
     << "interactions: {contacts: " << c.contacts << ", repulsion: " << c.repulsion << "}\n"
     << "place:\n  - {species: A, at: [1, 1, 1]}\n"  // the bodies: uniform, set below
     << "reactions:\n  - {name: bind, rule: A + B -> C, kon: " << c.kon_molar
     << " /M/s, radius: " << 2 * c.radius << "}\n";
  return os.str();
}

void measure(Ledger& ledger, const Case& c, uint64_t seed) {
  const Timer timer(c.name, seed);
  const double D = 20;  // nm^2/us
  const double kon = c.kon_molar * 1.6605390671738467e-6;  // nm^3/us
  const double a = kon / (4 * kPi * D);
  // Binding ball of the run (none/hard) or the reaction ball (soft).
  const double ball_radius = c.contacts == "soft" ? 2 * c.radius : nestsim::io::andrews_bray_binding_radius(kon, D, c.dt);
  const double ball = 4.0 / 3 * kPi * std::pow(ball_radius, 3);
  const double duration = c.duration > 0 ? c.duration : std::max(10.0, 50 * c.dt);
  // A quarter of the pairs react by the end (c kon T = 1/4), unless that crowds the
  // binding ball (every pair in it reacts; under soft contacts the Doi probability per
  // step is ~1e-3 and two events at one body in a step are negligible).
  double conc = 0.25 / (kon * duration);
  if (c.contacts != "soft") conc = std::min(conc, 0.005 / ball);
  double box = std::cbrt(c.n / conc);
  box = std::max(box, 17 * std::sqrt(2 * D * c.dt));  // the periodic-image limit of dt
  const double volume = box * box * box;
  const auto steps = uint64_t(std::llround(duration / c.dt));
  const uint64_t chunks = std::min<uint64_t>(steps, 50);
  const nestsim::io::Model model = nestsim::io::parse_model(model_text(c, box, steps, stream(seed, 7)), c.name + ".yaml");
  nestsim::sim::Setup setup = nestsim::io::make_setup(model);
  const uint32_t A = uint32_t(model.kind_index("A")), B = uint32_t(model.kind_index("B"));
  setup.bodies.clear();
  std::mt19937_64 rng(stream(seed, 8));
  std::uniform_real_distribution<double> u(0, box);
  for (uint32_t kind : {A, B})
    for (int i = 0; i < c.n; ++i) {
      nestsim::sim::Body body;
      body.kind = kind;
      body.position = {u(rng), u(rng), u(rng)};
      setup.bodies.push_back(body);
    }
  setup.capacity = setup.bodies.size() + 64;
  nestsim::sim::Simulation sim(setup);
  double expected = 0;
  uint64_t done = 0;
  auto frame = sim.frame();
  for (uint64_t k = 0; k < chunks; ++k) {
    const uint64_t upto = steps * (k + 1) / chunks;
    const double t0 = double(done) * c.dt, t1 = double(upto) * c.dt;
    const double na0 = double(count_kind(frame, A)), nb0 = double(count_kind(frame, B));
    sim.run(upto - done);
    done = upto;
    frame = sim.frame();
    const double na1 = double(count_kind(frame, A)), nb1 = double(count_kind(frame, B));
    // The chunk's N_A N_B at its ends (trapezoid), the rate integrated exactly.
    const double pairs = 0.5 * (na0 * nb0 + na1 * nb1);
    expected += pairs / volume * kon * ((t1 - t0) + 2 * a * (std::sqrt(t1) - std::sqrt(t0)) / std::sqrt(kPi * D));
  }
  const double counted = double(frame.reaction_events.at(0));
  ledger.add(c.name, counted / expected, 1.0, std::sqrt(counted) / expected, seed);
  std::fflush(stdout);
  std::printf("# %s: dt %g us, binding/reaction radius %.4g nm (s = %.3g), box %.4g nm, %llu steps, %g events\n",
              c.name.c_str(), c.dt, ball_radius, std::sqrt(2 * D * c.dt) / ball_radius, box,
              (unsigned long long)steps, counted);
}

void run_cases(const std::vector<Case>& cases) {
  Ledger ledger;
  for (uint64_t seed : seeds())
    for (const Case& c : cases) measure(ledger, c, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

}  // namespace

TEST_CASE("validation: kon at large steps, contacts none (Andrews-Bray)") {
  std::vector<Case> cases;
  for (double kon : {1e6, 1e8})
    for (double dt : {0.01, 0.1, 1.0, 10.0}) {
      // kon 1e6 needs dense bodies (c kon T = 1/4), and at large steps the lists reach
      // twice the largest step (the whole box, ~1 min a seed): its smallest step only.
      if (kon < 1e7 && dt > 0.01) continue;
      Case c;
      c.contacts = "none";
      c.kon_molar = kon;
      c.dt = dt;
      char name[64];
      std::snprintf(name, sizeof name, "large_kon_none_%g_dt%g", kon, dt);
      c.name = name;
      // The small steps run the longest: fewer bodies there.
      if (dt < 0.1) c.n = 4000;
      cases.push_back(c);
    }
  run_cases(cases);
}

TEST_CASE("validation: kon at a large step, contacts hard (reactants exempt)") {
  // Under hard contacts A and B meet as points (Setup::contact_exempt from io); A-A,
  // B-B and C pairs still exclude. dt 1 us, s = 1.8.
  Case c;
  c.name = "large_kon_hard_1e+08_dt1";
  c.contacts = "hard";
  c.kon_molar = 1e8;
  c.dt = 1;
  run_cases({c});
}

TEST_CASE("validation: kon with soft contacts at the contact radius") {
  Case c;
  c.name = "large_kon_soft_contact";
  c.contacts = "soft";
  c.kon_molar = 1e8;
  c.dt = 0.002;
  c.radius = 2.5;
  c.repulsion = 1;
  c.n = 3000;
  c.duration = 8;
  run_cases({c});
}

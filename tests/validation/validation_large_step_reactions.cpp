// Validation: kon held at large steps and with soft contacts (docs/validation.md, "Large
// steps: reactions").
//
//  large_kon_none_{1e+08_dt{0.01,0.1,1,10},1e+06_dt0.01}: a model file's "A + B -> C" with
//    `kon:` in M^-1 s^-1, A and B of D = 10 um^2/s (D_A + D_B = 20 nm^2/us), run at dt
//    0.01-10 us through io (Andrews-Bray's binding radius for the run's dt,
//    nestsim/model/kon_calibration.h). N A and N B start uniform; the rate law
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
//  large_K_{none_dt{0.01,0.1,1,10},hard_dt1,soft_contact}: the reversible
//    "A + B <-> C" with kon 1e8 /M/s and koff in a model file, read by io: the reverse's
//    unbinding probability per step q = p V koff / kon and its products drawn from the
//    pair's equilibrium density in the forward rule's ball (nestsim/model/kon_calibration.h)
//    hold K = [C] / ([A][B]) = kon / koff at any dt. Closed boxes (totals n
//    of A + C and of B + C), started at the expected bound count; K_meas = V <N_C> /
//    <N_A N_B> over the frames of all boxes, se by the delta method from the residual
//    N_C - (K / V) N_A N_B averaged per box (independent replicas, as equilibrium_K).
//    koff is chosen per dt so that q = 0.01 (none, hard): the free reactants then fill
//    c V = q of the ball (K c = 1 at half bound), the pairs that meet a third body in it
//    (which the claims of one step resolve, a body reacting once) bias K by ~q / 2 =
//    0.5%, and the boxes relax in ~1 / (2 q) = 50 steps whatever dt. Under soft contacts
//    the ball is the reaction ball (V_eff ~ 370 nm^3), dilute when K ~ 20 V_eff.
//  large_kon_soft_contact: issue 46's case, A and B of radius 2.5 nm, `radius: 5` (the
//    contact distance), `repulsion: 1`, dt 0.002 us (`dt_limit: stable`): the force-free
//    Doi rate gave 0.58 of kon; the soft calibration must give 1.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>
#include <array>
#include <random>
#include <sstream>
#include <string>

#include "frames.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/model/rates.h"
#include "nestsim/sim/replicas.h"
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
  const double ball_radius = c.contacts == "soft" ? 2 * c.radius : nestsim::model::andrews_bray_binding_radius(kon, D, c.dt);
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
  const nestsim::model::Model model = nestsim::model::parse_model(model_text(c, box, steps, stream(seed, 7)), c.name + ".yaml");
  nestsim::model::Setup setup = nestsim::model::make_setup(model);
  const uint32_t A = uint32_t(model.kind_index("A")), B = uint32_t(model.kind_index("B"));
  setup.bodies.clear();
  std::mt19937_64 rng(stream(seed, 8));
  std::uniform_real_distribution<double> u(0, box);
  for (uint32_t kind : {A, B})
    for (int i = 0; i < c.n; ++i) {
      nestsim::model::Body body;
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

// --- A + B <-> C: K against kon / koff -------------------------------------------

namespace {

struct KCase {
  std::string name, contacts;
  double dt = 1;
  double radius = 0.5;  // of A, B, C (nm)
  double repulsion = 0;
  int replicas = 6;
  int pairs = 150;  // n, the totals of A + C and of B + C per box
  double q = 0.01;  // the reverse's unbinding probability per step: koff follows
  int taus = 8;     // relaxation times ~1 / (2 q) steps measured per box
};

void measure_k(Ledger& ledger, const KCase& c, uint64_t seed) {
  const Timer timer(c.name, seed);
  const double D = 20;                                     // nm^2/us
  const double kon = 1e8 * 1.6605390671738467e-6;          // nm^3/us
  // p V of the forward rule at dt (kon_calibration.h), and the koff that gives q.
  double pv = 0, reach = 0;
  if (c.contacts == "soft") {
    const double contact = 2 * c.radius;
    const double lambda = nestsim::model::doi_rate_for_kon_soft(kon, D, contact, contact, c.repulsion);
    pv = -std::expm1(-lambda * c.dt) * nestsim::model::boltzmann_ball_volume(contact, contact, c.repulsion);
    reach = contact;
  } else {
    reach = nestsim::model::andrews_bray_binding_radius(kon, D, c.dt);
    pv = 4.0 / 3 * kPi * reach * reach * reach;
  }
  const double koff = c.q * kon / pv;  // /us
  const double K = kon / koff;
  // Half bound: V = K n / 2. Periodic where the box of that volume passes the periodic-
  // image limit of dt (8 sqrt(2 D dt) <= edge / 2); else reflective (walls that mirror
  // the moves keep the density uniform, and a reverse whose B would leave the box waits:
  // detailed balance within it), where V is the volume the centres reach, [r, L - r]^3.
  const double volume = K * c.pairs / 2;
  const bool periodic = std::cbrt(volume) >= 16.5 * std::sqrt(2 * D * c.dt);
  const double box = std::cbrt(volume) + (periodic ? 0 : 2 * c.radius);
  const int n = c.pairs;
  // Started at the expected bound count, K / V (n - N_C)^2 = N_C.
  const double a = K / volume;
  const int bound = int(std::lround(n + 1 / (2 * a) - std::sqrt(1 / (4 * a * a) + n / a)));
  const int tau = int(std::lround(1 / (2 * c.q)));
  const int steps_per_frame = std::max(1, tau / 4), frames = 4 * c.taus, relax = tau;
  struct Sums {
    double residual = 0, c = 0, ab = 0;
  };
  std::vector<Sums> per_replica(std::size_t(c.replicas));
  uint32_t kind_a = 0, kind_b = 0, kind_c = 0;
  {
    std::ostringstream os;
    os.precision(17);
    os << "nestsim: 1\nunits: {length: nm, time: us}\n"
       << "box: {size: [" << box << ", " << box << ", " << box << "], boundary: " << (periodic ? "periodic" : "reflective") << "}\n"
       << "simulation: {dt: " << c.dt << ", steps: 1, dt_limit: accurate}\n"
       << "species:\n  A: {radius: " << c.radius << ", diffusion: 10}\n"
       << "  B: {radius: " << c.radius << ", diffusion: 10}\n  C: {radius: " << c.radius << ", diffusion: 10}\n"
       << "interactions: {contacts: " << c.contacts << ", repulsion: " << c.repulsion << "}\n"
       << "place:\n  - {species: A, at: [" << box / 2 << ", " << box / 2 << ", " << box / 2 << "]}\n"
       << "reactions:\n  - {name: bind, rule: \"A + B <-> C\", kon: 1e8 /M/s, koff: " << koff
       << " /us, radius: " << 2 * c.radius << "}\n";
    const nestsim::model::Model model = nestsim::model::parse_model(os.str(), c.name + ".yaml");
    kind_a = uint32_t(model.kind_index("A"));
    kind_b = uint32_t(model.kind_index("B"));
    kind_c = uint32_t(model.kind_index("C"));
    const nestsim::model::Setup base = nestsim::model::make_setup(model);
    nestsim::sim::for_each_replica(c.replicas, [&](int rep) {
      nestsim::model::Setup setup = base;
      setup.seed = stream(seed, 100 + 2 * uint64_t(rep));
      setup.bodies.clear();
      std::mt19937_64 rng(stream(seed, 101 + 2 * uint64_t(rep)));
      std::uniform_real_distribution<double> u(periodic ? 0 : c.radius, periodic ? box : box - c.radius);
      // Uniform; under hard contacts off every body placed before (all exclude but A-B).
      const auto clear = [&](const std::array<double, 3>& x, uint32_t kind) {
        if (c.contacts != "hard") return true;
        for (const auto& b : setup.bodies) {
          if ((kind == kind_a && b.kind == kind_b) || (kind == kind_b && b.kind == kind_a)) continue;
          double d2 = 0;
          for (int k = 0; k < 3; ++k) {
            double d = std::fabs(x[std::size_t(k)] - b.position[std::size_t(k)]);
            if (periodic) d = std::min(d, box - d);
            d2 += d * d;
          }
          if (d2 < 4 * c.radius * c.radius) return false;
        }
        return true;
      };
      const auto add = [&](uint32_t kind, int count) {
        for (int i = 0; i < count;) {
          nestsim::model::Body body;
          body.kind = kind;
          body.position = {u(rng), u(rng), u(rng)};
          if (!clear(body.position, kind)) continue;
          setup.bodies.push_back(body);
          ++i;
        }
      };
      add(kind_a, n - bound);
      add(kind_b, n - bound);
      add(kind_c, bound);
      setup.capacity = 3 * uint64_t(n) + 64;
      nestsim::sim::Simulation sim(setup);
      sim.run(relax);
      Sums& sums = per_replica[std::size_t(rep)];
      for (int f = 0; f < frames; ++f) {
        sim.run(steps_per_frame);
        const nestsim::model::Frame fr = sim.frame();
        const double na = double(count_kind(fr, kind_a)), nb = double(count_kind(fr, kind_b)),
                     nc = double(count_kind(fr, kind_c));
        if (na + nc != n || nb + nc != n) throw std::runtime_error(c.name + ": totals not conserved");
        sums.residual += nc - K / volume * na * nb;
        sums.c += nc;
        sums.ab += na * nb;
      }
    });
  }
  Mean residual;
  double c_sum = 0, ab_sum = 0;
  for (const Sums& sums : per_replica) {
    residual.add(sums.residual / frames);
    c_sum += sums.c;
    ab_sum += sums.ab;
  }
  const double count = double(c.replicas) * frames, ab = ab_sum / count;
  ledger.add(c.name, volume * (c_sum / count) / ab / K, 1.0, volume * residual.se() / ab / K, seed);
  std::printf("# %s: dt %g us, ball %.4g nm, koff %.4g /us, K %.5g nm^3, %s box %.4g nm, n %d, <N_C> %.2f\n",
              c.name.c_str(), c.dt, reach, koff, K, periodic ? "periodic" : "reflective", box, n, c_sum / count);
}

}  // namespace

TEST_CASE("validation: A + B <-> C, K = kon / koff at large steps") {
  std::vector<KCase> cases;
  for (double dt : {0.01, 0.1, 1.0, 10.0}) {
    KCase c;
    c.contacts = "none";
    c.dt = dt;
    char name[64];
    std::snprintf(name, sizeof name, "large_K_none_dt%g", dt);
    c.name = name;
    if (dt > 1) c.pairs = 100;  // its lists reach far: fewer bodies
    cases.push_back(c);
  }
  KCase hard;
  hard.name = "large_K_hard_dt1";
  hard.contacts = "hard";
  hard.dt = 1;
  cases.push_back(hard);
  // Soft at the contact radius (proteins of radius 2.5 nm, `radius: 5`), repulsion 0.25
  // (U = 3 kT at full overlap) at the accurate contact step c = 20 x 0.25 x dt = 0.1: the
  // e^{-U} weighted placement of the products (V_eff = 0.7 of the ball). Dilute in the
  // ball: K = p V / q = 20 V_eff, so q = p / 20 (p = lambda dt = 0.0085) and a relaxation
  // takes ~1,200 steps; 4 boxes over 3 of them.
  KCase soft;
  soft.name = "large_K_soft_contact";
  soft.contacts = "soft";
  soft.dt = 0.02;
  soft.radius = 2.5;
  soft.repulsion = 0.25;
  soft.replicas = 4;
  soft.pairs = 150;
  soft.taus = 3;
  {
    const double kon = 1e8 * 1.6605390671738467e-6;
    soft.q = -std::expm1(-nestsim::model::doi_rate_for_kon_soft(kon, 20, 5, 5, 0.25) * soft.dt) / 20;
  }
  cases.push_back(soft);
  Ledger ledger;
  for (uint64_t seed : seeds())
    for (const KCase& c : cases) measure_k(ledger, c, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

// --- A -> 0 at large k dt ----------------------------------------------------------
//
//  large_decay_kdt{0.1,1,3}: 20000 immobile A with `rate:` k per us at dt 1 us, k dt = 0.1, 1, 3;
//  the surviving fraction after n = max(1, round(1 / (k dt))) steps against exp(-k n dt)
//  (the rule fires with probability 1 - exp(-k dt) per step: exact at any k dt; k dt as
//  a probability would give 0.35, 0 and 0). se: binomial at the theory's fraction.
TEST_CASE("validation: A -> 0 at large k dt") {
  Ledger ledger;
  for (uint64_t seed : seeds())
    for (double kdt : {0.1, 1.0, 3.0}) {
      char name[64];
      std::snprintf(name, sizeof name, "large_decay_kdt%g", kdt);
      const Timer timer(name, seed);
      const int n = 20000;
      const uint64_t steps = uint64_t(std::max(1L, std::lround(1 / kdt)));
      std::ostringstream os;
      os.precision(17);
      os << "nestsim: 1\nunits: {length: nm, time: us}\n"
         << "box: {size: [200, 200, 200], boundary: periodic}\n"
         << "simulation: {dt: 1, steps: " << steps << ", seed: " << stream(seed, 21) << "}\n"
         << "species:\n  A: {radius: 0.5, diffusion: 0}\n"  // fixed: no lists to build
         << "interactions: {contacts: none}\n"
         << "place:\n  - {species: A, at: [1, 1, 1]}\n"  // the bodies: uniform, set below
         << "reactions:\n  - {name: decay, rule: A -> 0, rate: " << kdt << " /us}\n";
      const nestsim::model::Model model = nestsim::model::parse_model(os.str(), std::string(name) + ".yaml");
      nestsim::model::Setup setup = nestsim::model::make_setup(model);
      setup.bodies.clear();
      std::mt19937_64 rng(stream(seed, 22));
      std::uniform_real_distribution<double> u(0, 200);
      for (int i = 0; i < n; ++i) {
        nestsim::model::Body body;
        body.kind = uint32_t(model.kind_index("A"));
        body.position = {u(rng), u(rng), u(rng)};
        setup.bodies.push_back(body);
      }
      setup.capacity = uint64_t(n) + 64;
      nestsim::sim::Simulation sim(setup);
      sim.run(steps);
      const double left = double(count_kind(sim.frame(), uint32_t(model.kind_index("A")))) / n;
      const double theory = std::exp(-kdt * double(steps));
      ledger.add(name, left, theory, std::sqrt(theory * (1 - theory) / n), seed);
    }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

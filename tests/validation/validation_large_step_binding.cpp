// Validation: binding onto a membrane keeps its rate at large steps (docs/validation.md,
// "Large steps: binding onto a membrane").
//
//  large_membrane_bind_dt{0.01,0.1,1,10}: a model file's "S + K -> S2 on K" with `kon:` in
//    M^-1 s^-1, S free (radius 0.5 nm, D = 10 um^2/s), K immobile compartments on a
//    simple cubic lattice of spacing L in a periodic box, contacts none; io calibrates
//    the probability per step p of binding within the rule's radius h of the wall for the
//    run's dt (nestsim/model/kon_calibration.h). kon is a fifth of K's diffusion limit 4 pi
//    D R (R = r_K + r_S the contact radius), so diffusion matters (a rate computed as if
//    reaction-limited would be 25% high). S starts uniform outside the K's.
//    Theory, the rate onto one K from a uniform start:
//      k(t) = k_CK(t) + kon (a / L) E(D t / L^2),   a = kon / (4 pi D),
//    k_CK(t) = kon [1 + kappa' e^{x^2} erfc(x)], x = (1 + kappa') sqrt(D t) / R, kappa' =
//    kon / (4 pi D R - kon) (Collins and Kimball, J. Colloid Sci. 4, 425, 1949: the
//    partially absorbing sphere whose steady rate is kon), and the lattice's first-order
//    correction: the other K's deplete S too, so each K sees, beyond its own depletion,
//    the mean concentration times 1 + (a / L) E, E(tau) = 4 pi int_tau^inf (theta^3 - 1 -
//    (4 pi t)^(-3/2)) dt + xi, theta(tau) = sum_n exp(-4 pi^2 n^2 tau) the periodic heat
//    kernel (one axis, unit cell), xi = 2.8373 (the simple cubic lattice's constant of
//    the periodic Green's function, 1 / (4 pi r) - xi / (4 pi L) near a sink: E(0) = 0;
//    the test computes xi from that condition and checks it). E is 0 while t << L^2 / D
//    (an isolated K) and xi - 1 / sqrt(pi D t / L^2) after (the steady lattice: the
//    isolated transient of k_CK cancelled). Terms of order (a / L)^2 (~0.3%) are
//    left out. Expected events = sum over chunks of N_S n_K / V_free int k dt (N_S at
//    the chunk's ends, trapezoid; V_free the volume outside the contact spheres), from
//    a warm-up of 20 steps on. se: Poisson of the count. The run ends when ~40% are bound.
//  The geometry follows dt (the periodic-image limit, 17 sqrt(2 x 2D x dt) <= edge, and
//  the step against K): at dt 0.01 and 0.1 us R = 3 nm, L = 30 nm; at dt 1 R = 10, L =
//  60; at dt 10 R = 50, L = 360 (one K: a step of 14 nm against it). h = 0.5 nm (1 nm at
//  dt 10, and 600 S there: its lists reach across the box): s / h from 0.9 to 14.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "frames.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"
#include "stats.h"

using namespace nestsim::validation;

namespace {

constexpr double kD = 10;                             // nm^2/us, S (K immobile)
constexpr double kPerMolarSecond = 1.6605390671738467e-6;  // nm^3/us
constexpr double kXi = 2.837297479;                   // simple cubic (Hasimoto 1959)

// theta(tau) = sum_n exp(-4 pi^2 n^2 tau) = sum_n (4 pi tau)^(-1/2) exp(-n^2 / (4 tau)).
double theta(double tau) {
  double s = 0;
  if (tau < 0.2) {
    for (int n = -8; n <= 8; ++n) s += std::exp(-double(n * n) / (4 * tau));
    return s / std::sqrt(4 * kPi * tau);
  }
  s = 1;
  for (int m = 1; m <= 8; ++m) s += 2 * std::exp(-4 * kPi * kPi * m * m * tau);
  return s;
}

// 4 pi int_tau^inf (theta^3 - 1 - (4 pi t)^(-3/2)) dt (Simpson in ln t to tau_max = 4,
// beyond which theta^3 - 1 < 1e-60 and the last term is integrated exactly).
double lattice_integral(double tau) {
  const double top = 4;
  const auto f = [](double t) { return (std::pow(theta(t), 3) - 1 - std::pow(4 * kPi * t, -1.5)) * t; };
  double sum = 0;
  double lo = std::log(std::max(tau, 1e-9));
  const int n = 4000;
  const double h = (std::log(top) - lo) / n;
  for (int i = 0; i <= n; ++i) sum += (i == 0 || i == n ? 1 : i % 2 ? 4 : 2) * f(std::exp(lo + i * h));
  double integral = sum * h / 3 - 2 * std::pow(4 * kPi, -1.5) / std::sqrt(top);
  if (tau < 1e-9) integral -= 1e-9 - tau;  // the integrand is -1 there
  return 4 * kPi * integral;
}

// e^{x^2} erfc(x), x >= 0.
double erfcx(double x) {
  if (x < 5) return std::exp(x * x) * std::erfc(x);
  const double y = 1 / (2 * x * x);
  return (1 - y * (1 - 3 * y * (1 - 5 * y * (1 - 7 * y)))) / (x * std::sqrt(kPi));
}

struct Case {
  std::string name;
  double dt = 0.01;
  double contact = 3;    // R = r_K + r_S, nm
  double spacing = 30;   // L, nm
  int per_axis = 2;      // K's per box edge
  double shell = 0.5;    // h, nm
  int n = 2000;          // S
  double bound = 0.4;    // fraction bound at the end
};

struct Theory {
  double kon = 0, a = 0, kappa = 0, R = 0, L = 0;
  // k(t) above, nm^3/us.
  double rate(double t) const {
    const double x = (1 + kappa) * std::sqrt(kD * t) / R;
    return kon * (1 + kappa * erfcx(x)) + kon * a / L * (lattice_integral(kD * t / (L * L)) + kXi);
  }
  double integral(double t0, double t1) const {  // Simpson over [t0, t1], t0 > 0
    const int n = 16;
    const double h = (t1 - t0) / n;
    double s = 0;
    for (int i = 0; i <= n; ++i) s += (i == 0 || i == n ? 1 : i % 2 ? 4 : 2) * rate(t0 + i * h);
    return s * h / 3;
  }
};

void measure(Ledger& ledger, const Case& c, uint64_t seed) {
  const Timer timer(c.name, seed);
  const double rs = 0.5, rk = c.contact - rs, box = c.spacing * c.per_axis;
  Theory th;
  th.R = c.contact;
  th.L = c.spacing;
  th.kon = 0.2 * 4 * kPi * kD * c.contact;
  th.a = th.kon / (4 * kPi * kD);
  th.kappa = th.kon / (4 * kPi * kD * c.contact - th.kon);
  const int kinds = c.per_axis * c.per_axis * c.per_axis;
  const double v_free = box * box * box - kinds * 4.0 / 3 * kPi * std::pow(c.contact, 3);
  // Duration: c.bound of the S bound at the steady lattice rate.
  const double per_s = kinds * th.kon * (1 + kXi * th.a / th.L) / v_free;
  const double duration = -std::log1p(-c.bound) / per_s;
  const uint64_t warm = 20, steps = std::max<uint64_t>(warm + 50, uint64_t(std::llround(duration / c.dt)));
  std::ostringstream os;
  os.precision(17);
  os << "nestsim: 1\nunits: {length: nm, time: us}\n"
     << "box: {size: [" << box << ", " << box << ", " << box << "], boundary: periodic}\n"
     << "simulation: {dt: " << c.dt << ", steps: " << steps << ", seed: " << stream(seed, 11)
     << ", dt_limit: stable}\n"
     << "compartments:\n  K: {radius: " << rk << ", thickness: " << std::min(1.0, rk / 2) << ", diffusion: 0}\n"
     << "species:\n  S: {radius: " << rs << ", diffusion: " << kD << "}\n"
     << "  S2: {radius: " << rs << ", diffusion: 0, membrane: true}\n"
     << "interactions: {contacts: none}\nplace:\n";
  for (int i = 0; i < c.per_axis; ++i)
    for (int j = 0; j < c.per_axis; ++j)
      for (int k = 0; k < c.per_axis; ++k)
        os << "  - {compartment: K, at: [" << (i + 0.5) * c.spacing << ", " << (j + 0.5) * c.spacing << ", "
           << (k + 0.5) * c.spacing << "]}\n";
  os << "  - {species: S, count: " << c.n << ", outside: K}\n"
     << "reactions:\n  - {name: bind, rule: S + K -> S2 on K, kon: " << th.kon / kPerMolarSecond
     << " /M/s, radius: " << c.shell << "}\n";
  const nestsim::model::Model model = nestsim::model::parse_model(os.str(), c.name + ".yaml");
  nestsim::model::Setup setup = nestsim::model::make_setup(model);
  const uint32_t S = uint32_t(model.kind_index("S"));
  nestsim::sim::Simulation sim(setup);
  sim.run(warm);
  auto frame = sim.frame();
  const double before = double(frame.reaction_events.at(0));
  const uint64_t chunks = std::min<uint64_t>(steps - warm, 40);
  double expected = 0;
  uint64_t done = warm;
  for (uint64_t k = 0; k < chunks; ++k) {
    const uint64_t upto = warm + (steps - warm) * (k + 1) / chunks;
    const double t0 = double(done) * c.dt, t1 = double(upto) * c.dt;
    const double n0 = double(count_kind(frame, S));
    sim.run(upto - done);
    done = upto;
    frame = sim.frame();
    const double n1 = double(count_kind(frame, S));
    expected += 0.5 * (n0 + n1) * kinds / v_free * th.integral(t0, t1);
  }
  const double counted = double(frame.reaction_events.at(0)) - before;
  ledger.add(c.name, counted / expected, 1.0, std::sqrt(counted) / expected, seed);
  const double p = nestsim::model::membrane_binding_probability(th.kon, kD, c.dt, c.contact, c.shell);
  std::printf("# %s: dt %g us, s/h %.3g, R %g nm, L %g nm, kon %.4g nm^3/us (%.3g /M/s), p %.4g, "
              "reaction-limited p %.4g, %llu steps, %g events, lattice term %.3f\n",
              c.name.c_str(), c.dt, std::sqrt(2 * kD * c.dt) / c.shell, c.contact, c.spacing, th.kon,
              th.kon / kPerMolarSecond, p,
              th.kon * c.dt / (4.0 / 3 * kPi * (std::pow(c.contact + c.shell, 3) - std::pow(c.contact, 3))),
              (unsigned long long)steps, counted, kXi * th.a / th.L);
  std::fflush(stdout);
}

}  // namespace

TEST_CASE("validation: the lattice constant of the binding theory") {
  // E(0) = 0 fixes xi: the short-time limit of the periodic kernel is the free one.
  const double xi = -lattice_integral(0);
  std::printf("# lattice constant xi = %.7f (Hasimoto: %.7f)\n", xi, kXi);
  CHECK(std::fabs(xi - kXi) < 1e-4);
  // Long times: theta^3 -> 1, and the integral is the free kernel's, -1 / sqrt(pi tau).
  CHECK(std::fabs(lattice_integral(3) + 1 / std::sqrt(kPi * 3)) < 1e-6);
}

TEST_CASE("validation: binding onto a membrane at large steps (Collins-Kimball)") {
  std::vector<Case> cases;
  for (double dt : {0.01, 0.1, 1.0, 10.0}) {
    Case c;
    char name[64];
    std::snprintf(name, sizeof name, "large_membrane_bind_dt%g", dt);
    c.name = name;
    c.dt = dt;
    if (dt == 1.0) {
      c.contact = 10;
      c.spacing = 60;
    } else if (dt == 10.0) {
      c.contact = 50;
      c.spacing = 360;
      c.per_axis = 1;
      c.shell = 1;
      c.n = 600;  // the lists of a 14 nm step reach across the box: few S
    }
    cases.push_back(c);
  }
  Ledger ledger;
  for (uint64_t seed : seeds())
    for (const Case& c : cases) measure(ledger, c, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

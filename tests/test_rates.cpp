// Bimolecular rate constants (nestsim/model/rates.h): Erban-Chapman's k(lambda) against an
// independent evaluation and its limits, the inversion kon -> lambda, the diffusion
// limit, and the molar unit. The calibrations that hold kon at the run's dt
// (nestsim/model/kon_calibration.h): Andrews-Bray's step volume against the published
// values and its two limits, the binding radius, the soft Doi rate against Erban-Chapman
// and the Boltzmann-weighted ball, and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/model/rates.h"

using namespace nestsim;

namespace {

constexpr double pi = 3.14159265358979323846;

// k(lambda) written as in Erban and Chapman (2009), in long double and without the
// small-kappa series: an independent evaluation where it does not cancel.
double reference(double lambda, double D, double sigma) {
  const long double l = lambda, d = D, s = sigma;
  const long double k =
      4 * 3.14159265358979323846264338L * d * s *
      (1 - std::sqrt(d / (l * s * s)) * std::tanh(s * std::sqrt(l / d)));
  return double(k);
}

double relative(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

}  // namespace

TEST_CASE("Erban-Chapman's k(lambda) at known points") {
  // Hand-computed: 4 pi (1 - tanh 1) and 4 pi 2 3 (1 - sqrt(2 / 4.5) tanh(3 sqrt(0.25))).
  CHECK(model::erban_chapman_rate(1, 1, 1) == doctest::Approx(2.9958961928889725).epsilon(1e-14));
  CHECK(model::erban_chapman_rate(0.5, 2, 3) == doctest::Approx(29.900510021189547).epsilon(1e-14));
  // Against the long-double closed form over kappa = sigma sqrt(lambda / D) from 0.05 to
  // 1e3, across the switch to the series at kappa = 0.1.
  for (double D : {0.1, 1.0, 50.0, 1e3})
    for (double sigma : {0.5, 4.0, 12.0})
      for (double kappa : {0.05, 0.0999, 0.1, 0.1001, 0.3, 1.0, 2.0, 5.0, 20.0, 1e3}) {
        const double lambda = kappa * kappa * D / (sigma * sigma);
        CAPTURE(D);
        CAPTURE(sigma);
        CAPTURE(kappa);
        CHECK(relative(model::erban_chapman_rate(lambda, D, sigma), reference(lambda, D, sigma)) <
              1e-12);
      }
}

TEST_CASE("Erban-Chapman's limits") {
  const double D = 50, sigma = 4;
  const double ball = 4.0 / 3 * pi * sigma * sigma * sigma;
  SUBCASE("reaction-limited, lambda -> 0: k -> lambda (4/3) pi sigma^3") {
    // k / (lambda V) = 1 - (2/5) kappa^2 + (17/105) kappa^4 + O(kappa^6).
    for (double kappa : {1e-2, 1e-4, 1e-8}) {
      const double lambda = kappa * kappa * D / (sigma * sigma);
      const double ratio = model::erban_chapman_rate(lambda, D, sigma) / (lambda * ball);
      const double k2 = kappa * kappa;
      CHECK(ratio == doctest::Approx(1 - 0.4 * k2 + 17.0 / 105 * k2 * k2).epsilon(1e-12));
    }
    CHECK(model::erban_chapman_rate(1e-300, D, sigma) / (1e-300 * ball) ==
          doctest::Approx(1).epsilon(1e-14));
    CHECK(model::erban_chapman_rate(0, D, sigma) == 0);
  }
  SUBCASE("diffusion-limited, lambda -> infinity: k -> 4 pi D sigma") {
    const double limit = 4 * pi * D * sigma;
    // k = limit (1 - tanh(kappa) / kappa), tanh = 1 in double from kappa ~ 19.
    for (double kappa : {1e2, 1e4, 1e8}) {
      const double lambda = kappa * kappa * D / (sigma * sigma);
      CHECK(model::erban_chapman_rate(lambda, D, sigma) ==
            doctest::Approx(limit * (1 - 1 / kappa)).epsilon(1e-14));
      CHECK(model::erban_chapman_rate(lambda, D, sigma) < limit);
    }
    CHECK(model::erban_chapman_rate(INFINITY, D, sigma) == doctest::Approx(limit).epsilon(1e-15));
  }
  SUBCASE("no diffusion: no pair meets again, k = 0") {
    CHECK(model::erban_chapman_rate(3, 0, sigma) == 0);
    CHECK(model::erban_chapman_rate(INFINITY, 0, sigma) == 0);
  }
  SUBCASE("increasing in lambda") {
    double previous = 0;
    for (double e = -12; e <= 12; e += 0.25) {
      const double k = model::erban_chapman_rate(std::pow(10.0, e), D, sigma);
      CHECK(k > previous);
      previous = k;
    }
  }
  SUBCASE("invalid arguments") {
    CHECK_THROWS_AS(model::erban_chapman_rate(-1, D, sigma), std::domain_error);
    CHECK_THROWS_AS(model::erban_chapman_rate(1, -1, sigma), std::domain_error);
    CHECK_THROWS_AS(model::erban_chapman_rate(1, D, 0), std::domain_error);
    CHECK_THROWS_AS(model::erban_chapman_rate(NAN, D, sigma), std::domain_error);
  }
}

TEST_CASE("kon -> Doi rate: the inverse of Erban-Chapman on a grid") {
  for (double D : {1e-3, 0.1, 1.0, 50.0, 1e3})
    for (double sigma : {0.5, 4.0, 12.0})
      for (double e = -10; e <= 8; e += 0.5) {
        // lambda sigma^2 / D = kappa^2 = 10^e: from reaction- to diffusion-limited.
        const double lambda = std::pow(10.0, e) * D / (sigma * sigma);
        const double kon = model::erban_chapman_rate(lambda, D, sigma);
        const double back = model::doi_rate_from_kon(kon, D, sigma);
        CAPTURE(D);
        CAPTURE(sigma);
        CAPTURE(e);
        // The inverse reproduces kon to the tolerance asked of it...
        CHECK(relative(model::erban_chapman_rate(back, D, sigma), kon) < 1e-12);
        // ...and lambda itself where k(lambda) is not flat: near the diffusion limit
        // dk/k = dlambda / (2 kappa lambda), so lambda is only as precise as kappa eps.
        if (e <= 4) CHECK(relative(back, lambda) < 1e-12);
      }
  CHECK(model::doi_rate_from_kon(0, 50, 4) == 0);
  CHECK(model::doi_rate_from_kon(0, 0, 4) == 0);
  // Reaction-limited: lambda = kon / ((4/3) pi sigma^3).
  const double ball = 4.0 / 3 * pi * 64;
  CHECK(model::doi_rate_from_kon(1e-9, 50, 4) == doctest::Approx(1e-9 / ball).epsilon(1e-12));
}

TEST_CASE("a kon at or above the diffusion limit 4 pi D sigma is refused") {
  const double D = 50, sigma = 4, limit = 4 * pi * D * sigma;
  CHECK_THROWS_AS(model::doi_rate_from_kon(limit, D, sigma), std::domain_error);
  CHECK_THROWS_AS(model::doi_rate_from_kon(limit * (1 + 1e-12), D, sigma), std::domain_error);
  CHECK_THROWS_AS(model::doi_rate_from_kon(2 * limit, D, sigma), std::domain_error);
  // Just below it, a large but finite rate that gives it back.
  const double near = limit * (1 - 1e-9);
  const double lambda = model::doi_rate_from_kon(near, D, sigma);
  CHECK(std::isfinite(lambda));
  CHECK(lambda > 1e15 * D / (sigma * sigma));
  CHECK(relative(model::erban_chapman_rate(lambda, D, sigma), near) < 1e-12);
  // Without diffusion the limit is 0: every kon > 0 is refused.
  CHECK_THROWS_AS(model::doi_rate_from_kon(1e-6, 0, sigma), std::domain_error);
  // Invalid arguments.
  CHECK_THROWS_AS(model::doi_rate_from_kon(-1, D, sigma), std::domain_error);
  CHECK_THROWS_AS(model::doi_rate_from_kon(1, D, -4), std::domain_error);
  CHECK_THROWS_AS(model::doi_rate_from_kon(INFINITY, D, sigma), std::domain_error);
}

TEST_CASE("1 M^-1 s^-1 in model units") {
  // 1e-3 m^3 / (6.02214076e23 s) = 1.66053906717e-27 m^3/s.
  const double si = 1e-3 / 6.02214076e23;
  CHECK(si == doctest::Approx(1.6605390671738467e-27).epsilon(1e-15));
  CHECK(model::per_molar_second_in_model_units(model::Units{"nm", "us"}) ==
        doctest::Approx(1.6605390671738467e-6).epsilon(1e-14));
  CHECK(model::per_molar_second_in_model_units(model::Units{"nm", "s"}) ==
        doctest::Approx(1.6605390671738467).epsilon(1e-14));
  CHECK(model::per_molar_second_in_model_units(model::Units{"nm", "ns"}) ==
        doctest::Approx(1.6605390671738467e-9).epsilon(1e-14));
  CHECK(model::per_molar_second_in_model_units(model::Units{"um", "s"}) ==
        doctest::Approx(1.6605390671738467e-9).epsilon(1e-14));
  CHECK(model::per_molar_second_in_model_units(model::Units{"um", "ms"}) ==
        doctest::Approx(1.6605390671738467e-12).epsilon(1e-14));
  // A typical kon, 1e6 /M/s, against the diffusion limit of two proteins (D_A + D_B =
  // 50 nm^2/us, sigma = 4 nm: 2513 nm^3/us = 1.5e9 /M/s): well below, reaction-limited.
  const double kon = 1e6 * model::per_molar_second_in_model_units(model::Units{"nm", "us"});
  const double lambda = model::doi_rate_from_kon(kon, 50, 4);
  CHECK(lambda == doctest::Approx(kon / (4.0 / 3 * pi * 64)).epsilon(1e-3));
}

// --- kon held at the run's dt (nestsim/model/kon_calibration.h) ---------------------

TEST_CASE("Andrews-Bray: F(s) = kon dt / sigma_b^3 against the published values and limits") {
  // Andrews and Bray (2004), the irreversible reaction's steady state, as tabulated in
  // Smoldyn's rxnparam.c (yi[], ln s = 3 - 0.2 i; its stated error < 2.4%, mostly at
  // small s): ln s = -2, -1, 0, 1, 2.
  struct Published {
    double ln_s, F;
  };
  for (const Published p : {Published{-2, 0.1061375}, Published{-1, 0.668167}, Published{0, 2.7239775},
                            Published{1, 4.054173}, Published{2, 4.182243}}) {
    CAPTURE(p.ln_s);
    CHECK(relative(model::andrews_bray_step_volume_solved(std::exp(p.ln_s)), p.F) < 3e-3);
  }
  // s -> 0: Smoluchowski's 4 pi D sigma_b less the overshoot of a Gaussian walk at an
  // absorbing wall, F = 2 pi s^2 (1 - 0.5826 s) (next order s^2); s -> inf: 4 pi / 3.
  const double s0 = 0.02;
  CHECK(relative(model::andrews_bray_step_volume_solved(s0), 2 * pi * s0 * s0 * (1 - 0.5825971579 * s0)) < 1e-3);
  CHECK(relative(model::andrews_bray_step_volume(20.0), 4 * pi / 3) < 1e-4);
  CHECK(model::andrews_bray_step_volume(20.0) < 4 * pi / 3);
  // The table and its extensions against the solver off the table's nodes.
  for (double ln_s : {-3.33, -0.77, 0.55}) {
    CAPTURE(ln_s);
    CHECK(relative(model::andrews_bray_step_volume(std::exp(ln_s)), model::andrews_bray_step_volume_solved(std::exp(ln_s))) <
          2e-5);
  }
  // Increasing in s.
  double previous = 0;
  for (double e = -7; e <= 5; e += 0.05) {
    const double F = model::andrews_bray_step_volume(std::exp(e));
    CHECK(F > previous);
    previous = F;
  }
  CHECK_THROWS_AS(model::andrews_bray_step_volume(0), std::domain_error);
}

TEST_CASE("Andrews-Bray: the binding radius gives kon back at any dt") {
  const double D = 20;  // nm^2/us: two proteins of 10 um^2/s
  for (double kon_molar : {1e6, 1e8, 1e9})
    for (double dt : {1e-4, 0.01, 0.1, 1.0, 10.0}) {
      const double kon = kon_molar * model::per_molar_second_in_model_units(model::Units{"nm", "us"});
      const double sb = model::andrews_bray_binding_radius(kon, D, dt);
      const double s = std::sqrt(2 * D * dt) / sb;
      CAPTURE(kon_molar);
      CAPTURE(dt);
      CHECK(relative(model::andrews_bray_step_volume(s) * sb * sb * sb, kon * dt) < 1e-9);
    }
  // Small steps: sigma_b -> kon / (4 pi D) (Smoluchowski); large: (3 kon dt / 4 pi)^(1/3).
  CHECK(relative(model::andrews_bray_binding_radius(100, 20, 1e-9), 100 / (4 * pi * 20)) < 1e-3);
  CHECK(relative(model::andrews_bray_binding_radius(1, 20, 1e4), std::cbrt(3e4 / (4 * pi))) < 1e-3);
  CHECK(model::andrews_bray_binding_radius(1, 0, 2) == doctest::Approx(std::cbrt(6 / (4 * pi))).epsilon(1e-14));
  CHECK_THROWS_AS(model::andrews_bray_binding_radius(0, 20, 1), std::domain_error);
  CHECK_THROWS_AS(model::andrews_bray_binding_radius(1, 20, 0), std::domain_error);
}

TEST_CASE("soft contacts: the Doi rate with the repulsion inside the reaction ball") {
  // No repulsion: Erban-Chapman exactly.
  for (double lambda : {1e-3, 0.3, 30.0, 3e3})
    CHECK(relative(model::soft_doi_rate(lambda, 20, 5, 5, 0), model::erban_chapman_rate(lambda, 20, 5)) < 1e-9);
  // Reaction-limited (lambda -> 0): k = lambda int_ball e^{-U} dV, U = k_r / 2 (5 - r)^2,
  // by an independent quadrature (Simpson, 2e4 intervals).
  const double lambda = 1e-7, stiffness = 1, contact = 5, R = 5;
  double weighted = 0;
  const int n = 20000;
  for (int i = 0; i <= n; ++i) {
    const double r = R * i / n, u = 0.5 * stiffness * (contact - r) * (contact - r);
    weighted += (i == 0 || i == n ? 1 : i % 2 ? 4 : 2) * 4 * pi * r * r * std::exp(-u);
  }
  weighted *= R / n / 3;
  CHECK(relative(model::soft_doi_rate(lambda, 20, R, contact, stiffness), lambda * weighted) < 1e-5);
  // Issue 46's measurement: A, B of radius 2.5 nm, D = 20 nm^2/us, kon 1e8 /M/s at radius
  // 5 with repulsion 1 ran at 0.58 +- 0.03 of kon with the force-free Doi rate; the
  // equation predicts 0.589.
  const double kon = 1e8 * model::per_molar_second_in_model_units(model::Units{"nm", "us"});
  const double ratio = model::soft_doi_rate(model::doi_rate_from_kon(kon, 20, 5), 20, 5, 5, 1) / kon;
  CHECK(std::fabs(ratio - 0.58) < 0.03);
  // The inverse gives kon back; the diffusion limit is 4 pi D R whatever U.
  for (double k : {0.1, 166.0, 1000.0}) {
    const double l = model::doi_rate_for_kon_soft(k, 20, 5, 5, 1);
    CHECK(relative(model::soft_doi_rate(l, 20, 5, 5, 1), k) < 1e-9);
    CHECK(l > model::doi_rate_from_kon(k, 20, 5));
  }
  CHECK_THROWS_AS(model::doi_rate_for_kon_soft(4 * pi * 20 * 5, 20, 5, 5, 1), std::domain_error);
}

namespace {

std::string pair_model(const std::string& contacts, double dt, const std::string& kon,
                       const std::string& diffusion = "10", const std::string& boundary = "periodic") {
  return "nestsim: 1\nunits: {length: nm, time: us}\nbox: {size: [100, 100, 100], boundary: " + boundary +
         "}\n"
         "simulation: {dt: " + std::to_string(dt) + ", steps: 10, dt_limit: stable}\n"
         "species:\n  A: {radius: 2.5, diffusion: " + diffusion + "}\n  B: {radius: 2.5, diffusion: " +
         diffusion + "}\n"
         "  C: {radius: 2.5, diffusion: " + diffusion + "}\n"
         "interactions: {contacts: " + contacts + ", repulsion: 1}\n"
         "place:\n  - {species: A, at: [50, 50, 50]}\n"
         "reactions:\n  - {name: bind, rule: A + B -> C, kon: " + kon + ", radius: 5}\n";
}

}  // namespace

TEST_CASE("a kon rule: calibrated for its contact model, refused where dt cannot hold it") {
  const double kon = 1e8 * model::per_molar_second_in_model_units(model::Units{"nm", "us"});
  {  // soft: the Doi rate at the written radius
    const model::Model m = model::parse_model(pair_model("soft", 0.002, "1e8 /M/s"), "m.yaml");
    const model::KonRule k = model::calibrate_rule(m.reactions[0], m);
    CHECK(!k.every_pair);
    CHECK(k.radius == 5);
    CHECK(relative(model::soft_doi_rate(k.rate, 20, 5, 5, 1), kon) < 1e-9);
    CHECK(model::make_setup(m).contact_exempt.empty());
  }
  for (const char* contacts : {"none", "hard"}) {  // Andrews-Bray at the run's dt
    CAPTURE(contacts);
    const model::Model m = model::parse_model(pair_model(contacts, 0.5, "1e8 /M/s"), "m.yaml");
    const model::KonRule k = model::calibrate_rule(m.reactions[0], m);
    CHECK(k.every_pair);
    CHECK(std::isinf(k.rate));
    CHECK(k.radius == doctest::Approx(model::andrews_bray_binding_radius(kon, 20, 0.5)).epsilon(1e-12));
    const nestsim::model::Setup s = model::make_setup(m);
    CHECK(s.reactions[0].radius == k.radius);
    if (std::string(contacts) == "hard") {
      // A and B meet as points; every other pair excludes.
      REQUIRE(s.contact_exempt.size() == 9);
      CHECK(s.contact_exempt == std::vector<uint8_t>{0, 1, 0, 1, 0, 0, 0, 0, 0});
    } else {
      CHECK(s.contact_exempt.empty());
    }
  }
  // none, slow reactants (D = 0.02 nm^2/us), kon 1e10 /M/s: even the smallest binding
  // radius, Smoluchowski's kon / (4 pi D) = 66 um, does not fit the box of 100 nm.
  CHECK_THROWS_WITH_AS(model::parse_model(pair_model("none", 100, "1e10 /M/s", "0.01"), "m.yaml"),
                       doctest::Contains("m.yaml:13:41: reactions[0].kon: kon 1e+10 /M/s = 16605.4 nm^3/us "
                                         "needs a binding radius of at least kon / (4 pi D) = 66070.8 nm at any dt"),
                       nestsim::model::ModelError);
  // none, D = 0.2 nm^2/us, kon 7e7 /M/s at 1 ms in a reflective box (no periodic image
  // limits dt): kon / (4 pi D) = 46 nm fits, but sigma_b grows with dt past 50 nm; the
  // largest dt gives a ball of the box's width.
  const double slow = 7e7 * model::per_molar_second_in_model_units(model::Units{"nm", "us"});
  try {
    model::parse_model(pair_model("none", 1000, "7e7 /M/s", "0.1", "reflective"), "m.yaml");
    FAIL("accepted");
  } catch (const nestsim::model::ModelError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("m.yaml:13:41: reactions[0].kon") != std::string::npos);
    CHECK(what.find("the largest dt is ") != std::string::npos);
    const double largest = std::stod(what.substr(what.find("the largest dt is ") + 18));
    CHECK(largest < 1000);
    CHECK(2 * model::andrews_bray_binding_radius(slow, 0.2, largest) == doctest::Approx(100).epsilon(1e-4));
  }
  // soft at a step whose probability lambda dt exceeds the bound.
  CHECK_THROWS_WITH_AS(model::parse_model(pair_model("soft", 0.2, "5e8 /M/s"), "m.yaml"),
                       doctest::Contains("lambda dt must stay <= 0.05"), nestsim::model::ModelError);
}

// --- binding onto a membrane: "S + K -> S2 on K" with kon --------------------------

namespace {

// The Doi shell in continuous time (rate lambda within h of a reflecting sphere of radius
// R, relative D): u = r n solves u'' = (lambda / D) u in the shell, u'(R) = u(R) / R, and
// u = r - a beyond; k = 4 pi D a. Written here from the equation, apart from io's.
double doi_shell_rate(double lambda, double D, double R, double h) {
  const double g = std::sqrt(lambda / D);
  const double u = std::cosh(g * h) + std::sinh(g * h) / (g * R);
  const double du = g * std::sinh(g * h) + std::cosh(g * h) / R;
  return 4 * pi * D * (R + h - u / du);
}

double shell_volume(double R, double h) { return 4.0 / 3 * pi * (std::pow(R + h, 3) - std::pow(R, 3)); }

std::string binding_model(double dt, const std::string& kon, double radius) {
  return "nestsim: 1\nunits: {length: nm, time: us}\nbox: {size: [200, 200, 200], boundary: periodic}\n"
         "simulation: {dt: " + std::to_string(dt) + ", steps: 10, dt_limit: stable}\n"
         "compartments:\n  K: {radius: 9.5, thickness: 1, diffusion: 0}\n"
         "species:\n  S: {radius: 0.5, diffusion: 10}\n  S2: {radius: 0.5, diffusion: 0, membrane: true}\n"
         "interactions: {contacts: none}\n"
         "place:\n  - {compartment: K, at: [100, 100, 100]}\n"
         "reactions:\n  - {name: bind, rule: S + K -> S2 on K, kon: " + kon + ", radius: " +
         std::to_string(radius) + "}\n";
}

}  // namespace

TEST_CASE("membrane binding: the scheme's rate in its limits") {
  const double D = 10, R = 10, h = 1;
  for (double dt : {1e-3, 0.1, 10.0}) {
    CAPTURE(dt);
    // Reaction-limited: the shell stays at the bulk density, k = p V_shell / dt.
    CHECK(relative(model::membrane_binding_rate(1e-9, D, dt, R, h), 1e-9 * shell_volume(R, h) / dt) < 1e-5);
    // k rises with p, and p = 1 is below the diffusion limit of the shell's outer sphere.
    double last = 0;
    for (double p : {0.01, 0.1, 0.5, 1.0}) {
      const double k = model::membrane_binding_rate(p, D, dt, R, h);
      CHECK(k > last);
      last = k;
    }
    CHECK(last < 4 * pi * D * (R + h));
  }
  // Small steps: the Doi shell of continuous time, lambda = -ln(1 - p) / dt. At s = 0.14 h
  // (solved on the grid, not the continuous formula io takes beyond h = 20 s) the step's
  // overshoot costs 0.1% where lambda h^2 / D = 100 (near the diffusion limit).
  for (double lambda : {0.1, 10.0, 1000.0}) {
    CAPTURE(lambda);
    const double dt = 1e-3, p = -std::expm1(-lambda * dt);
    CHECK(relative(model::membrane_binding_rate(p, D, dt, R, h), doi_shell_rate(lambda, D, R, h)) < 2e-3);
  }
  // Binding at every step in reach gets rarer as the step outgrows the shell.
  CHECK(model::membrane_binding_rate(1, D, 10, R, h) < model::membrane_binding_rate(1, D, 1, R, h));
  CHECK(model::membrane_binding_rate(1, D, 1, R, h) < model::membrane_binding_rate(1, D, 0.1, R, h));
}

TEST_CASE("membrane binding: kon gives its probability back, and the largest dt") {
  const double D = 10, R = 10, h = 1;
  for (double dt : {0.01, 0.1, 1.0, 10.0})
    for (double frac : {0.01, 0.2, 0.5}) {
      CAPTURE(dt);
      CAPTURE(frac);
      const double kon = frac * 4 * pi * D * R;
      if (kon > model::membrane_binding_rate(1, D, dt, R, h)) {
        CHECK_THROWS_AS(model::membrane_binding_probability(kon, D, dt, R, h), std::domain_error);
        CHECK(model::largest_dt_for_binding(kon, D, R, h) < dt);
        continue;
      }
      const double p = model::membrane_binding_probability(kon, D, dt, R, h);
      CHECK(p > 0);
      CHECK(p <= 1);
      CHECK(relative(model::membrane_binding_rate(p, D, dt, R, h), kon) < 1e-9);
    }
  CHECK_THROWS_AS(model::membrane_binding_probability(4 * pi * D * R, D, 0.01, R, h), std::domain_error);
  // The largest dt: binding at every step in reach there gives kon.
  const double kon = 0.5 * 4 * pi * D * R;
  const double largest = model::largest_dt_for_binding(kon, D, R, h);
  CHECK(largest > 0.01);
  CHECK(largest < 10);
  CHECK(relative(model::membrane_binding_rate(1, D, largest, R, h), kon) < 2e-3);
}

TEST_CASE("membrane binding: a kon rule in a model file, calibrated or refused") {
  const double unit = model::per_molar_second_in_model_units(model::Units{"nm", "us"});
  {
    const model::Model m = model::parse_model(binding_model(1, "1e8 /M/s", 0.5), "m.yaml");
    const model::KonRule k = model::calibrate_rule(m.reactions[0], m);
    CHECK(!k.every_pair);
    CHECK(k.radius == 0.5);
    const double p = -std::expm1(-k.rate * 1);
    CHECK(relative(model::membrane_binding_rate(p, 10, 1, 10, 0.5), 1e8 * unit) < 1e-9);
    const nestsim::model::Setup s = model::make_setup(m);
    CHECK(s.reactions[0].rate == k.rate);
    CHECK(s.contact_exempt.empty());
  }
  // At or above the diffusion limit 4 pi D (r_K + r_S) = 1256.6 nm^3/us = 7.57e8 /M/s.
  CHECK_THROWS_WITH_AS(model::parse_model(binding_model(0.01, "1e9 /M/s", 0.5), "m.yaml"),
                       doctest::Contains("is at or above the diffusion limit 4 pi D (r_K + r_S) = 1256.64 nm^3/us"),
                       nestsim::model::ModelError);
  // 5e8 /M/s (two thirds of the limit) within 0.2 nm of the wall: held at 0.01 us, not at
  // 1 us, where the step (4.5 nm) leaves the shell too rarely occupied.
  CHECK_NOTHROW(model::parse_model(binding_model(0.01, "5e8 /M/s", 0.2), "m.yaml"));
  try {
    model::parse_model(binding_model(1, "5e8 /M/s", 0.2), "m.yaml");
    FAIL("accepted");
  } catch (const nestsim::model::ModelError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("reactions[0].kon") != std::string::npos);
    CHECK(what.find("the largest dt is ") != std::string::npos);
    const double largest = std::stod(what.substr(what.find("the largest dt is ") + 18));
    CHECK(largest > 0.01);
    CHECK(largest < 1);
    CHECK(relative(model::membrane_binding_rate(1, 10, largest, 10, 0.2), 5e8 * unit) < 2e-3);
  }
}

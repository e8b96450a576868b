// Bimolecular rate constants (nestsim/io/rates.h): Erban-Chapman's k(lambda) against an
// independent evaluation and its limits, the inversion kon -> lambda, the diffusion
// limit, and the molar unit.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "nestsim/io/model.h"
#include "nestsim/io/rates.h"

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
  CHECK(io::erban_chapman_rate(1, 1, 1) == doctest::Approx(2.9958961928889725).epsilon(1e-14));
  CHECK(io::erban_chapman_rate(0.5, 2, 3) == doctest::Approx(29.900510021189547).epsilon(1e-14));
  // Against the long-double closed form over kappa = sigma sqrt(lambda / D) from 0.05 to
  // 1e3, across the switch to the series at kappa = 0.1.
  for (double D : {0.1, 1.0, 50.0, 1e3})
    for (double sigma : {0.5, 4.0, 12.0})
      for (double kappa : {0.05, 0.0999, 0.1, 0.1001, 0.3, 1.0, 2.0, 5.0, 20.0, 1e3}) {
        const double lambda = kappa * kappa * D / (sigma * sigma);
        CAPTURE(D);
        CAPTURE(sigma);
        CAPTURE(kappa);
        CHECK(relative(io::erban_chapman_rate(lambda, D, sigma), reference(lambda, D, sigma)) <
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
      const double ratio = io::erban_chapman_rate(lambda, D, sigma) / (lambda * ball);
      const double k2 = kappa * kappa;
      CHECK(ratio == doctest::Approx(1 - 0.4 * k2 + 17.0 / 105 * k2 * k2).epsilon(1e-12));
    }
    CHECK(io::erban_chapman_rate(1e-300, D, sigma) / (1e-300 * ball) ==
          doctest::Approx(1).epsilon(1e-14));
    CHECK(io::erban_chapman_rate(0, D, sigma) == 0);
  }
  SUBCASE("diffusion-limited, lambda -> infinity: k -> 4 pi D sigma") {
    const double limit = 4 * pi * D * sigma;
    // k = limit (1 - tanh(kappa) / kappa), tanh = 1 in double from kappa ~ 19.
    for (double kappa : {1e2, 1e4, 1e8}) {
      const double lambda = kappa * kappa * D / (sigma * sigma);
      CHECK(io::erban_chapman_rate(lambda, D, sigma) ==
            doctest::Approx(limit * (1 - 1 / kappa)).epsilon(1e-14));
      CHECK(io::erban_chapman_rate(lambda, D, sigma) < limit);
    }
    CHECK(io::erban_chapman_rate(INFINITY, D, sigma) == doctest::Approx(limit).epsilon(1e-15));
  }
  SUBCASE("no diffusion: no pair meets again, k = 0") {
    CHECK(io::erban_chapman_rate(3, 0, sigma) == 0);
    CHECK(io::erban_chapman_rate(INFINITY, 0, sigma) == 0);
  }
  SUBCASE("increasing in lambda") {
    double previous = 0;
    for (double e = -12; e <= 12; e += 0.25) {
      const double k = io::erban_chapman_rate(std::pow(10.0, e), D, sigma);
      CHECK(k > previous);
      previous = k;
    }
  }
  SUBCASE("invalid arguments") {
    CHECK_THROWS_AS(io::erban_chapman_rate(-1, D, sigma), std::domain_error);
    CHECK_THROWS_AS(io::erban_chapman_rate(1, -1, sigma), std::domain_error);
    CHECK_THROWS_AS(io::erban_chapman_rate(1, D, 0), std::domain_error);
    CHECK_THROWS_AS(io::erban_chapman_rate(NAN, D, sigma), std::domain_error);
  }
}

TEST_CASE("kon -> Doi rate: the inverse of Erban-Chapman on a grid") {
  for (double D : {1e-3, 0.1, 1.0, 50.0, 1e3})
    for (double sigma : {0.5, 4.0, 12.0})
      for (double e = -10; e <= 8; e += 0.5) {
        // lambda sigma^2 / D = kappa^2 = 10^e: from reaction- to diffusion-limited.
        const double lambda = std::pow(10.0, e) * D / (sigma * sigma);
        const double kon = io::erban_chapman_rate(lambda, D, sigma);
        const double back = io::doi_rate_from_kon(kon, D, sigma);
        CAPTURE(D);
        CAPTURE(sigma);
        CAPTURE(e);
        // The inverse reproduces kon to the tolerance asked of it...
        CHECK(relative(io::erban_chapman_rate(back, D, sigma), kon) < 1e-12);
        // ...and lambda itself where k(lambda) is not flat: near the diffusion limit
        // dk/k = dlambda / (2 kappa lambda), so lambda is only as precise as kappa eps.
        if (e <= 4) CHECK(relative(back, lambda) < 1e-12);
      }
  CHECK(io::doi_rate_from_kon(0, 50, 4) == 0);
  CHECK(io::doi_rate_from_kon(0, 0, 4) == 0);
  // Reaction-limited: lambda = kon / ((4/3) pi sigma^3).
  const double ball = 4.0 / 3 * pi * 64;
  CHECK(io::doi_rate_from_kon(1e-9, 50, 4) == doctest::Approx(1e-9 / ball).epsilon(1e-12));
}

TEST_CASE("a kon at or above the diffusion limit 4 pi D sigma is refused") {
  const double D = 50, sigma = 4, limit = 4 * pi * D * sigma;
  CHECK_THROWS_AS(io::doi_rate_from_kon(limit, D, sigma), std::domain_error);
  CHECK_THROWS_AS(io::doi_rate_from_kon(limit * (1 + 1e-12), D, sigma), std::domain_error);
  CHECK_THROWS_AS(io::doi_rate_from_kon(2 * limit, D, sigma), std::domain_error);
  // Just below it, a large but finite rate that gives it back.
  const double near = limit * (1 - 1e-9);
  const double lambda = io::doi_rate_from_kon(near, D, sigma);
  CHECK(std::isfinite(lambda));
  CHECK(lambda > 1e15 * D / (sigma * sigma));
  CHECK(relative(io::erban_chapman_rate(lambda, D, sigma), near) < 1e-12);
  // Without diffusion the limit is 0: every kon > 0 is refused.
  CHECK_THROWS_AS(io::doi_rate_from_kon(1e-6, 0, sigma), std::domain_error);
  // Invalid arguments.
  CHECK_THROWS_AS(io::doi_rate_from_kon(-1, D, sigma), std::domain_error);
  CHECK_THROWS_AS(io::doi_rate_from_kon(1, D, -4), std::domain_error);
  CHECK_THROWS_AS(io::doi_rate_from_kon(INFINITY, D, sigma), std::domain_error);
}

TEST_CASE("1 M^-1 s^-1 in model units") {
  // 1e-3 m^3 / (6.02214076e23 s) = 1.66053906717e-27 m^3/s.
  const double si = 1e-3 / 6.02214076e23;
  CHECK(si == doctest::Approx(1.6605390671738467e-27).epsilon(1e-15));
  CHECK(io::per_molar_second_in_model_units(io::Units{"nm", "us"}) ==
        doctest::Approx(1.6605390671738467e-6).epsilon(1e-14));
  CHECK(io::per_molar_second_in_model_units(io::Units{"nm", "s"}) ==
        doctest::Approx(1.6605390671738467).epsilon(1e-14));
  CHECK(io::per_molar_second_in_model_units(io::Units{"nm", "ns"}) ==
        doctest::Approx(1.6605390671738467e-9).epsilon(1e-14));
  CHECK(io::per_molar_second_in_model_units(io::Units{"um", "s"}) ==
        doctest::Approx(1.6605390671738467e-9).epsilon(1e-14));
  CHECK(io::per_molar_second_in_model_units(io::Units{"um", "ms"}) ==
        doctest::Approx(1.6605390671738467e-12).epsilon(1e-14));
  // A typical kon, 1e6 /M/s, against the diffusion limit of two proteins (D_A + D_B =
  // 50 nm^2/us, sigma = 4 nm: 2513 nm^3/us = 1.5e9 /M/s): well below, reaction-limited.
  const double kon = 1e6 * io::per_molar_second_in_model_units(io::Units{"nm", "us"});
  const double lambda = io::doi_rate_from_kon(kon, 50, 4);
  CHECK(lambda == doctest::Approx(kon / (4.0 / 3 * pi * 64)).epsilon(1e-3));
}

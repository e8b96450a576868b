// The Doi model's bimolecular rate, steady and time-dependent, for the validation suite.
//
// Two reactants whose centres are within sigma react at rate lambda (Doi). Their
// separation diffuses with D = D_A + D_B. From a uniform start (concentration c of A
// around each B, inside the reaction ball too), the expected number of reactions per B
// by time t is c K(t), K(t) = int_0^t k(t') dt', with k(t) the time-dependent rate:
//   k(0) = lambda 4/3 pi sigma^3 (the reaction-limited rate: the ball starts full), and
//   k(inf) = 4 pi D sigma (1 - tanh(g) / g), g = sigma sqrt(lambda / D)
// (Erban and Chapman 2009, Phys. Biol. 6 046001). In between, the concentration c u(r,t)
// solves du/dt = D lap u - lambda u [r < sigma], u(r, 0) = 1, whose Laplace transform
// (s) is, with a = sigma sqrt((s + lambda) / D), b = sigma sqrt(s / D),
//   inside   u = 1 / (s + lambda) + A sinh(a r / sigma) / r
//   outside  u = 1 / s + B exp(-b r / sigma) / r
// (value and flux continuous at sigma), and the rate's transform is
//   k^(s) = lambda int_ball u = 4 pi sigma^3 lambda / (s + lambda)
//           * [1/3 + lambda (1 + b) (a - tanh a) / (s a^2 (a + b tanh a))].
// (s k^(s) -> 4/3 pi sigma^3 lambda as s -> inf and -> Erban-Chapman as s -> 0.) K(t)
// is the inverse transform of k^(s) / s, by Talbot's method (Abate and Valko 2004).
#pragma once
#include <cmath>
#include <complex>

namespace nestsim::validation {

// Erban-Chapman: the steady Doi rate constant (volume / time).
inline double erban_chapman(double lambda, double D, double sigma) {
  const double g = sigma * std::sqrt(lambda / D);
  return 4 * 3.14159265358979323846 * D * sigma * (1 - std::tanh(g) / g);
}

// K(t) = int_0^t k(t') dt' (volume), the expected reactions per B by t per unit c.
inline double doi_integrated_rate(double lambda, double D, double sigma, double t) {
  using C = std::complex<double>;
  const double pi = 3.14159265358979323846;
  const auto transform = [&](C s) {  // k^(s) / s
    const C a = sigma * std::sqrt((s + lambda) / D), b = sigma * std::sqrt(s / D);
    const C th = std::tanh(a);
    const C bracket = 1.0 / 3.0 + lambda * (1.0 + b) * (a - th) / (s * a * a * (a + b * th));
    return 4 * pi * sigma * sigma * sigma * lambda / (s + lambda) * bracket / s;
  };
  // Fixed Talbot contour s(theta) = r theta (cot theta + i), r = 2M / (5t).
  const int M = 32;
  const double r = 2.0 * M / (5.0 * t);
  double sum = 0.5 * std::real(transform(C(r, 0)) * std::exp(r * t));
  for (int k = 1; k < M; ++k) {
    const double theta = k * pi / M, cot = std::cos(theta) / std::sin(theta);
    const C s(r * theta * cot, r * theta);
    const double sigma_k = theta + (theta * cot - 1) * cot;
    sum += std::real(std::exp(t * s) * transform(s) * C(1, sigma_k));
  }
  return r / M * sum;
}

}  // namespace nestsim::validation

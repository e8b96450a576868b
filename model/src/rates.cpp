// Erban-Chapman's rate of the Doi model and its inverse (nestsim/model/rates.h).
#include "nestsim/model/rates.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "nestsim/model/model.h"

namespace nestsim::model {
namespace {

constexpr double pi = 3.14159265358979323846;
constexpr double avogadro = 6.02214076e23;  // 1/mol, exact (SI 2019)

// Below this kappa, 1 - tanh(kappa)/kappa loses digits to cancellation (~eps / kappa^2):
// its Taylor series is used instead, truncated where the next term is < 1e-14 relative.
constexpr double kSeriesBelow = 0.1;

// The Taylor coefficients of tanh(x) = sum_n (-1)^(n+1) c_n x^(2n-1): 1, 1/3, 2/15, ...
constexpr double kTanh[] = {1.0,
                            1.0 / 3,
                            2.0 / 15,
                            17.0 / 315,
                            62.0 / 2835,
                            1382.0 / 155925,
                            21844.0 / 6081075};

// f(kappa) = 1 - tanh(kappa) / kappa: 0 at 0, increasing, -> 1; k = 4 pi D sigma f.
double shape(double kappa) {
  if (std::isinf(kappa)) return 1;
  if (kappa < kSeriesBelow) {
    const double x2 = kappa * kappa;
    double sum = 0, power = 1, sign = 1;
    for (int n = 1; n < 7; ++n) {
      power *= x2;
      sum += sign * kTanh[n] * power;
      sign = -sign;
    }
    return sum;
  }
  return 1 - std::tanh(kappa) / kappa;
}

// f'(kappa) = (tanh(kappa) - kappa sech^2(kappa)) / kappa^2.
double shape_slope(double kappa) {
  if (kappa < kSeriesBelow) {
    const double x2 = kappa * kappa;
    double sum = 0, power = 1 / kappa, sign = 1;
    for (int n = 1; n < 7; ++n) {
      power *= x2;
      sum += sign * 2 * n * kTanh[n] * power;
      sign = -sign;
    }
    return sum;
  }
  const double t = std::tanh(kappa);
  return (t - kappa * (1 - t * t)) / (kappa * kappa);
}

}  // namespace

double erban_chapman_rate(double doi_rate, double D, double sigma) {
  if (!(doi_rate >= 0) || !(D >= 0) || !std::isfinite(D) || !(sigma > 0) ||
      !std::isfinite(sigma))
    throw std::domain_error("erban_chapman_rate: expected lambda >= 0, D >= 0, sigma > 0");
  if (D == 0 || doi_rate == 0) return 0;
  const double kappa = sigma * std::sqrt(doi_rate / D);
  return 4 * pi * D * sigma * shape(kappa);
}

double doi_rate_from_kon(double kon, double D, double sigma) {
  if (!(kon >= 0) || !std::isfinite(kon) || !(D >= 0) || !std::isfinite(D) || !(sigma > 0) ||
      !std::isfinite(sigma))
    throw std::domain_error("doi_rate_from_kon: expected kon >= 0, D >= 0, sigma > 0");
  if (kon == 0) return 0;
  const double limit = 4 * pi * D * sigma;
  if (!(kon < limit))
    throw std::domain_error("doi_rate_from_kon: kon is at or above the diffusion limit 4 pi D sigma");
  // Solve f(kappa) = y in kappa, then lambda = D kappa^2 / sigma^2. f <= kappa^2 / 3 and
  // f >= 1 - 1/kappa bracket the root: sqrt(3 y) <= kappa <= 1 / (1 - y) (doubled, so
  // that rounding in 1 / (1 - y) cannot leave the root outside).
  const double y = kon / limit;
  double lo = std::sqrt(3 * y), hi = 2 / (1 - y);
  if (!(lo < hi)) lo = 0;
  double kappa = lo > 0 ? lo : hi / 2;
  for (int i = 0; i < 200; ++i) {
    const double g = shape(kappa) - y;
    if (g == 0) break;
    (g < 0 ? lo : hi) = kappa;
    // Newton, kept inside the bracket; bisection where it would leave it.
    double next = kappa - g / shape_slope(kappa);
    if (!(next > lo && next < hi)) next = lo + (hi - lo) / 2;
    const bool converged = std::fabs(next - kappa) <= 1e-15 * next;
    kappa = next;
    if (converged || hi - lo <= 4 * std::numeric_limits<double>::epsilon() * hi) break;
  }
  return D * kappa * kappa / (sigma * sigma);
}

double per_molar_second_in_model_units(const Units& units) {
  const double l = units.metres_per_length();
  return 1e-3 / avogadro / (l * l * l) * units.seconds_per_time();
}

}  // namespace nestsim::model

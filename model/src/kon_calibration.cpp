// A macroscopic kon held at the run's time step (nestsim/model/kon_calibration.h).
#include "nestsim/model/kon_calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "nestsim/model/model.h"
#include "nestsim/model/rates.h"

namespace nestsim::model {
namespace {

constexpr double pi = 3.14159265358979323846;
constexpr double ball = 4 * pi / 3;
// The overshoot of a Gaussian random walk at an absorbing wall, in units of its step's
// standard deviation: -zeta(1/2) / sqrt(2 pi) (Chandrasekhar; Siegmund).
constexpr double kOvershoot = 0.5825971579390107;

// --- Andrews-Bray: the radial steady state ---------------------------------------
//
// Lengths in units of sigma_b, the relative coordinate's step per axis is s. For a
// radial density g, u(x) = x g(|x|) extended oddly to x < 0 diffuses as a 1D function:
// one step is a convolution of u with the Gaussian of standard deviation s. Beyond
// 1 + kReach s the steady state is 1 - c / r (harmonic: the Gaussian's average of it
// is itself, up to tails below 1e-14), u = x - c, c taken from the iterated profile at
// its last node (at convergence c = F / (2 pi s^2), the flux kon = 4 pi D c sigma_b with
// D dt = s^2 / 2). Each iteration: remove the pairs within 1 (u = 0 there; the node at 1
// takes half, the trapezoid rule of a jump), diffuse, F = 4 pi int_0^1 r u dr (Simpson);
// until F changes by < 1e-11 relative.
constexpr double kReach = 8;          // Gaussian tails beyond 8 sd: exp(-32) ~ 1e-14
constexpr double kPointsPerStep = 24;  // grid points per s (s <= 1)
constexpr double kCoarsest = 0.05;    // grid spacing for s > 1.2 (in sigma_b)
constexpr double kConverged = 1e-11;
constexpr int kMaxIterations = 200000;

// The table of andrews_bray_step_volume_solved at ln s = kTableFirst + i kTableStep.
constexpr double kTableFirst = -4.6, kTableStep = 0.1;
#include "andrews_bray_table.inc"  // kTable[]: ln F
constexpr int kTableSize = int(sizeof(kTable) / sizeof(kTable[0]));

}  // namespace

double andrews_bray_step_volume_solved(double s) {
  if (!(s > 0) || !std::isfinite(s)) throw std::domain_error("andrews_bray_step_volume: s > 0");
  const int per = int(std::ceil(1 / std::min(s / kPointsPerStep, kCoarsest) / 2)) * 2;  // even
  const double h = 1.0 / per;
  const int band = int(std::ceil(kReach * s / h));
  const int n = int(std::ceil((1 + kReach * s) / h));  // nodes 0..n are iterated
  const int m = n + band;                              // nodes 0..m are read
  std::vector<double> w(std::size_t(band) + 1);
  for (int k = 0; k <= band; ++k) {
    const double z = k * h / s;
    w[std::size_t(k)] = h * std::exp(-0.5 * z * z) / (std::sqrt(2 * pi) * s);
  }
  double c = std::min(1.0, 2 / (3 * s * s));
  std::vector<double> u(std::size_t(m) + 1), a(std::size_t(m) + 1);
  for (int i = 0; i <= m; ++i) u[std::size_t(i)] = i * h - c;
  double F = 0;
  for (int it = 0; it < kMaxIterations; ++it) {
    for (int i = 0; i <= m; ++i) {
      const double v = i > n ? i * h - c : u[std::size_t(i)];
      a[std::size_t(i)] = i < per ? 0 : i == per ? 0.5 * v : v;
    }
    for (int i = 0; i <= n; ++i) {
      double sum = 0;
      for (int j = std::max(per, i - band); j <= i + band; ++j) sum += w[std::size_t(std::abs(i - j))] * a[std::size_t(j)];
      for (int j = per; j <= band - i; ++j) sum -= w[std::size_t(i + j)] * a[std::size_t(j)];  // x = -j
      u[std::size_t(i)] = sum;
    }
    double integral = 0;
    for (int i = 1; i <= per; ++i) integral += (i == per ? 1 : i % 2 ? 4 : 2) * (i * h) * u[std::size_t(i)];
    const double next = 4 * pi * integral * h / 3;
    c = n * h - u[std::size_t(n)];  // the far field continues the iterated profile
    const bool done = std::fabs(next - F) <= kConverged * next;
    F = next;
    if (done) break;
  }
  return F;
}

double andrews_bray_step_volume(double s) {
  if (!(s > 0) || !std::isfinite(s)) throw std::domain_error("andrews_bray_step_volume: s > 0");
  const double x = std::log(s);
  const double last = kTableFirst + (kTableSize - 1) * kTableStep;
  if (x < kTableFirst) {
    // Smoluchowski less the overshoot, scaled to meet the table's first value.
    const double first = std::exp(kTableFirst);
    const double at = 2 * pi * first * first * (1 - kOvershoot * first);
    return std::exp(kTable[0]) / at * 2 * pi * s * s * (1 - kOvershoot * s);
  }
  if (x > last) {
    // The deficit below 4 pi / 3 falls as s^-3 (a hole of volume ~ F spread over the
    // step's Gaussian), scaled to meet the table's last value.
    const double deficit = 1 - std::exp(kTable[kTableSize - 1]) / ball;
    return ball * (1 - deficit * std::exp(3 * (last - x)));
  }
  // Cubic Lagrange through the 4 nearest points in ln s.
  int i = int(std::floor((x - kTableFirst) / kTableStep)) - 1;
  i = std::clamp(i, 0, kTableSize - 4);
  double y = 0;
  for (int a = 0; a < 4; ++a) {
    double l = 1;
    const double xa = kTableFirst + (i + a) * kTableStep;
    for (int b = 0; b < 4; ++b)
      if (b != a) l *= (x - (kTableFirst + (i + b) * kTableStep)) / (xa - (kTableFirst + (i + b) * kTableStep));
    y += l * kTable[i + a];
  }
  return std::exp(y);
}

double andrews_bray_binding_radius(double kon, double D, double dt) {
  if (!(kon > 0) || !std::isfinite(kon) || !(D >= 0) || !std::isfinite(D) || !(dt > 0) ||
      !std::isfinite(dt))
    throw std::domain_error("andrews_bray_binding_radius: expected kon > 0, D >= 0, dt > 0");
  const double volume = kon * dt;
  if (D == 0) return std::cbrt(volume / ball);
  // F(s) / s^3 = kon dt / (2 D dt)^(3/2): decreasing in s; bisection in ln s.
  const double step = std::sqrt(2 * D * dt);
  const double target = volume / (step * step * step);
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    const double s = std::exp(mid);
    (andrews_bray_step_volume(s) / (s * s * s) > target ? lo : hi) = mid;
  }
  return step / std::exp(0.5 * (lo + hi));
}

// --- soft contacts: the Doi model with the repulsion inside the contact ------------

double soft_doi_rate(double lambda, double D, double R, double contact, double repulsion) {
  if (!(lambda >= 0) || !(D > 0) || !std::isfinite(D) || !(R > 0) || !std::isfinite(R) ||
      !(contact >= 0) || !(repulsion >= 0) || !std::isfinite(repulsion))
    throw std::domain_error("soft_doi_rate: expected lambda >= 0, D > 0, R > 0");
  if (lambda == 0) return 0;
  if (std::isinf(lambda)) return 4 * pi * D * R;
  // Shoot from r = 0 with q = e^U p (q(0) = 1, q'(0) = 0), flux y = r^2 e^{-U} q':
  //   q' = y e^U / r^2,  y' = (lambda / D) r^2 e^{-U} q [r < R].
  // Out to rm = max(R, contact), where U and the sink end; there p = A (1 - a / r).
  // Under a large kappa = R sqrt(lambda / D) q grows as e^{kappa r / R}: the state is
  // rescaled as it goes (only the ratio y / q matters).
  const double rm = std::max(R, contact);
  const auto U = [&](double r) { return r < contact ? 0.5 * repulsion * (contact - r) * (contact - r) : 0.0; };
  const double kappa = R * std::sqrt(lambda / D);
  const auto deriv = [&](double r, bool sink, double q, double y, double& dq, double& dy) {
    const double e = std::exp(U(r));
    dq = r > 0 ? y * e / (r * r) : 0;
    dy = sink ? lambda / D * r * r / e * q : 0;
  };
  // RK4 over [from, to] in `steps` steps, the sink on or off throughout (the sink's edge
  // is a segment's end, so no step straddles it).
  double q = 1, y = 0;
  const auto segment = [&](double from, double to, int steps, bool sink) {
    const double h = (to - from) / steps;
    for (int i = 0; i < steps; ++i) {
      const double r = from + i * h;
      double k1q, k1y, k2q, k2y, k3q, k3y, k4q, k4y;
      deriv(r, sink, q, y, k1q, k1y);
      deriv(r + h / 2, sink, q + h / 2 * k1q, y + h / 2 * k1y, k2q, k2y);
      deriv(r + h / 2, sink, q + h / 2 * k2q, y + h / 2 * k2y, k3q, k3y);
      deriv(r + h, sink, q + h * k3q, y + h * k3y, k4q, k4y);
      q += h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
      y += h / 6 * (k1y + 2 * k2y + 2 * k3y + k4y);
      if (q > 1e100) {
        q *= 1e-100;
        y *= 1e-100;
      }
    }
  };
  // From r = h0 with the series q = 1 + g r^2 / 6, g = (lambda / D) e^{-U(0)} (the terms
  // of U'(0) are of the next order and vanish with h0).
  const int inner = int(std::clamp(400 * (1 + kappa), 4000.0, 4e6));
  const double h0 = R / inner;
  const double g = lambda / D * std::exp(-U(0));
  q = 1 + g * h0 * h0 / 6;
  y = h0 * h0 * std::exp(-U(h0)) * g * h0 / 3;
  segment(h0, R, inner - 1, true);
  if (rm > R) segment(R, rm, int(std::max(4000.0, 400 * (rm - R) / R)), false);
  // At rm (U = 0): p = q, p' = y / rm^2. p = A - A a / r, p' = A a / r^2.
  const double dp = y / (rm * rm);
  const double A = q + dp * rm;
  const double a = dp * rm * rm / A;
  return 4 * pi * D * a;
}

double doi_rate_for_kon_soft(double kon, double D, double R, double contact, double repulsion) {
  if (!(kon >= 0) || !std::isfinite(kon) || !(D > 0) || !std::isfinite(D) || !(R > 0))
    throw std::domain_error("doi_rate_for_kon_soft: expected kon >= 0, D > 0, R > 0");
  if (kon == 0) return 0;
  if (!(kon < 4 * pi * D * R))
    throw std::domain_error("doi_rate_for_kon_soft: kon is at or above the diffusion limit 4 pi D R");
  if (repulsion == 0 || contact == 0) return doi_rate_from_kon(kon, D, R);
  // k(lambda) increases in lambda; bisection in ln lambda from the bracket around the
  // force-free lambda (the repulsion only lowers k at a given lambda).
  double lo = std::log(doi_rate_from_kon(kon, D, R)), hi = lo + 1;
  while (soft_doi_rate(std::exp(hi), D, R, contact, repulsion) < kon) {
    lo = hi;
    hi += 2;
    if (hi > 700) throw std::domain_error("doi_rate_for_kon_soft: no lambda reaches kon");
  }
  for (int i = 0; i < 100 && hi - lo > 1e-11; ++i) {
    const double mid = 0.5 * (lo + hi);
    (soft_doi_rate(std::exp(mid), D, R, contact, repulsion) < kon ? lo : hi) = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

KonRule calibrate_rule(const ReactionSpec& x, const Model& m) {
  KonRule out;
  out.radius = x.radius.value_or(0);
  if (x.forward >= 0) {
    const double q = unbinding_step_probability(x, m);
    if (!(q < 1))
      throw std::domain_error("reaction '" + x.name + "': no unbinding rate holds K = kon / koff at this dt");
    out.rate = -std::log1p(-q) / m.dt;
    return out;
  }
  if (!x.kon) {
    out.rate = x.rate;
    return out;
  }
  const double D = reactant_diffusion(x, m);
  if (double R = 0; is_membrane_binding(x, m, &R)) {
    out.rate = -std::log1p(-membrane_binding_probability(*x.kon, D, m.dt, R, out.radius)) / m.dt;
    return out;
  }
  if (m.contacts == Contacts::soft) {
    double contact = 0;
    for (const auto& t : x.reactants)
      if (const KindSpec* k = m.find_kind(t.kind)) contact += k->radius;
    out.rate = doi_rate_for_kon_soft(*x.kon, D, out.radius, contact, m.repulsion);
    return out;
  }
  if (*x.kon == 0) return out;  // rate 0 at the written radius: never reacts
  out.every_pair = true;
  out.rate = std::numeric_limits<double>::infinity();
  out.radius = andrews_bray_binding_radius(*x.kon, D, m.dt);
  return out;
}

}  // namespace nestsim::model

namespace nestsim::model {

std::vector<uint8_t> kon_contact_exempt(const Model& m) {
  if (m.contacts != Contacts::hard) return {};
  const std::size_t K = m.kinds.size();
  std::vector<uint8_t> t(K * K, 0);
  for (const ReactionSpec& x : m.reactions) {
    if (!x.kon || x.reactants.size() != 2 || is_membrane_binding(x, m)) continue;
    const int a = m.kind_index(x.reactants[0].kind), b = m.kind_index(x.reactants[1].kind);
    if (a < 0 || b < 0) continue;
    t[std::size_t(a) * K + std::size_t(b)] = t[std::size_t(b) * K + std::size_t(a)] = 1;
  }
  return t;
}

double largest_dt_for_kon(const ReactionSpec& x, const Model& m, double min_box) {
  if (!x.kon || !(*x.kon > 0)) return std::numeric_limits<double>::infinity();
  const double D = reactant_diffusion(x, m);
  if (double R = 0; is_membrane_binding(x, m, &R)) return largest_dt_for_binding(*x.kon, D, R, x.radius.value_or(0));
  if (m.contacts == Contacts::soft) return kMaxDoiStepProbability / calibrate_rule(x, m).rate;
  // sigma_b grows with dt from Smoluchowski's kon / (4 pi D) (dt -> 0): none fits when
  // that does not; else bisection in ln dt for 2 sigma_b = min_box.
  if (!(2 * *x.kon / (4 * pi * D) < min_box)) return 0;
  double lo = std::log(1e-30), hi = std::log(1e30);
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    const double mid = 0.5 * (lo + hi);
    (2 * andrews_bray_binding_radius(*x.kon, D, std::exp(mid)) < min_box ? lo : hi) = mid;
  }
  return std::exp(lo);
}

}  // namespace nestsim::model

namespace nestsim::model {

double boltzmann_ball_volume(double R, double contact, double repulsion) {
  if (!(R > 0) || !std::isfinite(R) || !(contact >= 0) || !(repulsion >= 0) || !std::isfinite(repulsion))
    throw std::domain_error("boltzmann_ball_volume: expected R > 0, contact >= 0, repulsion >= 0");
  if (repulsion == 0 || contact == 0) return ball * R * R * R;
  // Simpson over [0, min(R, contact)] (U smooth there), the rest exact.
  const double inner = std::min(R, contact);
  const int n = 20000;  // even
  const double h = inner / n;
  double sum = 0;
  for (int i = 0; i <= n; ++i) {
    const double r = i * h, d = contact - r;
    const double f = r * r * std::exp(-0.5 * repulsion * d * d);
    sum += (i == 0 || i == n ? 1 : i % 2 ? 4 : 2) * f;
  }
  double v = 4 * pi * sum * h / 3;
  if (R > contact) v += ball * (R * R * R - contact * contact * contact);
  return v;
}

namespace {

// p V of a reversible rule's forward rule at dt (kon_calibration.h: K = p V / q).
double binding_volume_per_step(const ReactionSpec& forward, const Model& m, double dt) {
  Model at = m;
  at.dt = dt;
  const KonRule f = calibrate_rule(forward, at);
  if (f.every_pair) return ball * f.radius * f.radius * f.radius;
  double contact = 0;
  if (m.contacts == Contacts::soft)
    for (const auto& t : forward.reactants)
      if (const KindSpec* k = m.find_kind(t.kind)) contact += k->radius;
  const double repulsion = m.contacts == Contacts::soft ? m.repulsion : 0;
  return -std::expm1(-f.rate * dt) * boltzmann_ball_volume(f.radius, contact, repulsion);
}

const ReactionSpec& forward_of(const ReactionSpec& x, const Model& m) {
  if (x.forward < 0 || std::size_t(x.forward) >= m.reactions.size() || !m.reactions[std::size_t(x.forward)].kon)
    throw std::invalid_argument("reaction '" + x.name + "': not the reverse of a reversible rule");
  return m.reactions[std::size_t(x.forward)];
}

}  // namespace

double unbinding_step_probability(const ReactionSpec& x, const Model& m) {
  const ReactionSpec& forward = forward_of(x, m);
  const double kon = *forward.kon, koff = x.koff.value_or(x.rate);
  if (!(koff > 0)) return 0;
  if (!(kon > 0)) return 1;  // K = 0: the reverse would have to be instantaneous
  return binding_volume_per_step(forward, m, m.dt) * koff / kon;
}

double largest_dt_for_koff(const ReactionSpec& x, const Model& m) {
  const ReactionSpec& forward = forward_of(x, m);
  const double kon = *forward.kon, koff = x.koff.value_or(x.rate);
  if (!(koff > 0)) return std::numeric_limits<double>::infinity();
  if (!(kon > 0)) return 0;
  const auto q = [&](double dt) { return binding_volume_per_step(forward, m, dt) * koff / kon; };
  // q grows with dt (p and sigma_b do); bisection in ln dt for q = 1.
  double lo = std::log(1e-30), hi = std::log(1e30);
  if (!(q(std::exp(lo)) < 1)) return 0;
  if (q(std::exp(hi)) < 1) return std::numeric_limits<double>::infinity();
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    const double mid = 0.5 * (lo + hi);
    (q(std::exp(mid)) < 1 ? lo : hi) = mid;
  }
  return std::exp(lo);
}

}  // namespace nestsim::model

namespace nestsim::model {

// --- binding onto a membrane: "S + K -> S2 on K" ----------------------------------
//
// The engine's scheme (simulator/src/reactions/candidates.cuh): S proposes a Gaussian
// move (standard deviation s = sqrt(2 D dt) per axis) that is rejected when it would
// reach into K (centre distance < R = r_K + r_S from outside), then S binds with
// probability p when its gap to the wall, r - R, is at most h. Around one immobile K
// the steady state is radial. With u(r) = r n(r), one Gaussian step of a radial density
// is the 1D convolution of u with the kernel G(r - y) - G(r + y) (the odd extension), to
// which the rejection adds the mass that stays, P(r) u(r), P(r) the chance that a
// proposal from r ends within R. Beyond the reach (h + kReach s from the wall) the steady
// state is harmonic, n = 1 - a / r (u = r - a), and the rate is Smoluchowski's flux,
// k = 4 pi D a. On nodes (trapezoid weights), P_i is taken as the discrete complement of
// the kernel's sum, so that the uniform density is exactly stationary (the rejection
// keeps it: a Metropolis step). The unknowns u_0..u_{N-1} and a satisfy u = (1 - p chi)
// (K u + P u), chi = 1 in the shell: a linear system of ~60-400 unknowns. Where the step
// is far below the shell (h > 20 s) the scheme is the Doi shell of continuous time.
namespace {

constexpr double kBindingReach = 7;       // Gaussian tails beyond 7 sd: exp(-24.5) ~ 2e-11
constexpr double kBindingShellPoints = 16;  // grid points per min(s, h) in the shell
constexpr double kBindingStepPoints = 32;   // grid points per s beyond it (rel. error ~1e-4)
constexpr double kBindingContinuum = 20;    // h / s beyond this: continuous time (Doi shell)

// The Doi shell in continuous time: rate lambda in [R, R + h], reflecting at R. u'' =
// gamma^2 u in the shell with u'(R) = u(R) / R (n'(R) = 0), u = r - a beyond: a = R + h
// - u / u' at R + h.
double binding_rate_continuum(double lambda, double D, double R, double h) {
  const double g = std::sqrt(lambda / D), t = std::tanh(g * h);
  const double ratio = std::isinf(g) ? 0 : (1 + t / (g * R)) / (g * t + 1 / R);
  return 4 * pi * D * (R + h - ratio);
}

}  // namespace

double membrane_binding_rate(double p, double D, double dt, double R, double h) {
  if (!(p >= 0 && p <= 1) || !(D >= 0) || !std::isfinite(D) || !(dt > 0) || !std::isfinite(dt) ||
      !(R > 0) || !std::isfinite(R) || !(h > 0) || !std::isfinite(h))
    throw std::domain_error("membrane_binding_rate: expected 0 <= p <= 1, D >= 0, dt > 0, R > 0, h > 0");
  if (p == 0 || D == 0) return 0;
  const double s = std::sqrt(2 * D * dt);
  if (s * kBindingContinuum < h) return binding_rate_continuum(-std::log1p(-p) / dt, D, R, h);
  // Nodes: the shell [R, R + h] at spacing h / m, its edge twice (the inside, index m,
  // which binds, and the outside, m + 1, which does not, each with its half of the
  // trapezoid: the density jumps there, before and after a step, the rejected moves
  // keeping it), then spacing `far` out to the reach; nodes N.. continue at `far` with
  // the far field u = r - a.
  const double fine = std::min(s, h) / kBindingShellPoints;
  const int m = int(std::ceil(h / fine));
  const double far = s / kBindingStepPoints;
  const int outside = int(std::ceil(kBindingReach * s / far));
  const int N = m + 2 + outside;  // unknowns u_0..u_{N-1} and a (index N)
  const auto r_at = [&](int j) { return j <= m ? R + j * (h / m) : R + h + (j - m - 1) * far; };
  const auto weight = [&](int j) {
    if (j == 0 || j == m) return 0.5 * h / m;
    if (j < m) return h / m;
    return j == m + 1 ? 0.5 * far : far;
  };
  const auto kernel = [&](int i, int j) {
    const double x = (r_at(i) - r_at(j)) / s, y = (r_at(i) + r_at(j)) / s;
    return weight(j) * (std::exp(-0.5 * x * x) - std::exp(-0.5 * y * y)) / (std::sqrt(2 * pi) * s);
  };
  const int n = N + 1;
  std::vector<double> A(std::size_t(n) * std::size_t(n), 0.0), rhs(std::size_t(n), 0.0);
  const auto at = [&](int i, int j) -> double& { return A[std::size_t(i) * std::size_t(n) + std::size_t(j)]; };
  // In v = u - r, the deviation from the uniform density (which the step keeps), so that
  // a is solved for, not found as a difference: v = (1 - p chi) (K v + P v) - p chi r.
  const auto add = [&](int i, int j, double coef) {  // coef v_j into row i
    if (j < N)
      at(i, j) += coef;
    else  // v_j = -a
      at(i, N) -= coef;
  };
  for (int i = 0; i <= N; ++i) {
    const double f = i <= m ? 1 - p : 1.0;
    rhs[std::size_t(i)] = (f - 1) * r_at(i);
    double kept = 0;  // sum_j c_ij r_j / r_i: the proposals that end outside R
    for (int j = 0; r_at(j) <= r_at(i) + kBindingReach * s; ++j) {
      const double c = kernel(i, j);
      kept += c * r_at(j);
      add(i, j, -f * c);
    }
    add(i, i, 1 - f * (1 - kept / r_at(i)));
  }
  // Elimination (diagonally dominant: no pivoting), then back substitution.
  for (int k = 0; k < n; ++k) {
    const double pivot = at(k, k);
    if (!(std::fabs(pivot) > 0)) throw std::domain_error("membrane_binding_rate: singular system");
    for (int i = k + 1; i < n; ++i) {
      const double factor = at(i, k) / pivot;
      if (factor == 0) continue;
      for (int j = k; j < n; ++j) at(i, j) -= factor * at(k, j);
      rhs[std::size_t(i)] -= factor * rhs[std::size_t(k)];
    }
  }
  std::vector<double> x(std::size_t(n), 0.0);
  for (int k = n - 1; k >= 0; --k) {
    double sum = rhs[std::size_t(k)];
    for (int j = k + 1; j < n; ++j) sum -= at(k, j) * x[std::size_t(j)];
    x[std::size_t(k)] = sum / at(k, k);
  }
  return 4 * pi * D * x[std::size_t(N)];
}

double membrane_binding_probability(double kon, double D, double dt, double R, double h) {
  if (!(kon >= 0) || !std::isfinite(kon)) throw std::domain_error("membrane_binding_probability: kon >= 0");
  if (kon == 0) return 0;
  if (!(kon < 4 * pi * D * R))
    throw std::domain_error("membrane_binding_probability: kon is at or above the diffusion limit 4 pi D R");
  const double most = membrane_binding_rate(1, D, dt, R, h);
  if (!(kon <= most))
    throw std::domain_error("membrane_binding_probability: kon is above the rate of binding at every step in reach");
  if (kon == most) return 1;
  // k(p) rises from 0 to `most`; regula falsi (Illinois) on [0, 1] from the straight
  // line, which the reaction-limited end nearly is.
  double lo = 0, hi = 1, flo = -kon, fhi = most - kon;
  double p = lo - flo * (hi - lo) / (fhi - flo);
  int side = 0;
  for (int it = 0; it < 100; ++it) {
    const double f = membrane_binding_rate(p, D, dt, R, h) - kon;
    if (std::fabs(f) <= 1e-10 * kon || hi - lo < 1e-15) break;
    if (f < 0) {
      lo = p;
      flo = f;
      if (side == -1) fhi *= 0.5;
      side = -1;
    } else {
      hi = p;
      fhi = f;
      if (side == 1) flo *= 0.5;
      side = 1;
    }
    p = lo - flo * (hi - lo) / (fhi - flo);
  }
  return p;
}

bool is_membrane_binding(const ReactionSpec& x, const Model& m, double* contact) {
  if (x.reactants.size() != 2) return false;
  const KindSpec* a = m.find_kind(x.reactants[0].kind);
  const KindSpec* b = m.find_kind(x.reactants[1].kind);
  if (!a || !b || a->compartment == b->compartment) return false;
  if (contact) *contact = a->radius + b->radius;
  return true;
}

double largest_dt_for_binding(double kon, double D, double R, double h) {
  if (!(kon > 0)) return std::numeric_limits<double>::infinity();
  if (!(kon < 4 * pi * D * R)) return 0;
  // Binding at every step in reach (p = 1) gets rarer as the step outgrows the shell: its
  // rate falls with dt. Bisection in ln dt for membrane_binding_rate(1, dt) = kon.
  const auto holds = [&](double dt) { return membrane_binding_rate(1, D, dt, R, h) >= kon; };
  double lo = std::log(1e-12 * h * h / D), hi = std::log(1e12 * h * h / D);
  if (!holds(std::exp(lo))) return 0;
  if (holds(std::exp(hi))) return std::numeric_limits<double>::infinity();
  while (hi - lo > 1e-3) {
    const double mid = 0.5 * (lo + hi);
    (holds(std::exp(mid)) ? lo : hi) = mid;
  }
  return std::exp(lo);
}

}  // namespace nestsim::model

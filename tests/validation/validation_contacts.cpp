// Validation: soft contacts at the largest accepted time step (docs/validation.md).
//
// The engine's soft pairs (two species) repel by U(r) = k/2 (2a - r)^2 for r < 2a (radius
// a each, k = Setup::repulsion); time_step.h accepts dt while the contact step
// c = (D_a + D_b) k dt / kT <= 0.1 and the stochastic Heun integrator then promises
// contact statistics within ~1% of Boltzmann.
//
//  contact_pairs_per_frame, contact_energy_per_pair: a dilute fluid of radius-2 proteins
//    (D 10, k 10 kT/nm^2, volume fraction 0.02; 16 independent boxes of 1000) in periodic
//    boxes at dt = max_dt (c = 0.1;
//    the old Euler step at c = 2 gave 2.5x Boltzmann's energy). Theory by quadrature of
//    the pair distribution g(r) = exp(-U(r)/kT) y(r), y(r) = 1 + rho (f*f)(r) with
//    f = exp(-U/kT) - 1 (the first density correction: +3.4% on the pairs here, the next
//    one ~0.2%; in the limit rho -> 0 the energy per pair is 0.4354 kT):
//      overlapping pairs per frame = N (N - 1) / (2 V) int_0^{2a} 4 pi r^2 g(r) dr,
//      energy per overlapping pair = int U g r^2 dr / int g r^2 dr  (over r < 2a).
//    Overlaps are found in each frame (every 20 steps) by a cell list (stats.h), not by the
//    engine. Frames are correlated over long times (the number of close pairs follows
//    density fluctuations, which relax diffusively: the autocorrelation of the pair count
//    still has ~0.04 at 100 frames, and a windowed estimate of the error came out 1.7x too
//    small), so the error comes from 16 independent replicas (their own seeds and
//    starts): se of the mean of the replicas' averages (the energy by the delta method,
//    from the replicas' average residual E_f - U_theory n_f).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "nestsim/sim/replicas.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "frames.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

// Dilute-limit pair statistics of harmonic soft spheres (radius a, stiffness k, kT 1) at
// number density rho, to first order in rho.
struct SoftSpherePairs {
  double a, k, rho;
  double pairs_integral = 0;  // int_0^{2a} 4 pi r^2 g(r) dr
  double energy_per_pair = 0;

  SoftSpherePairs(double radius, double stiffness, double density) : a(radius), k(stiffness), rho(density) {
    const double d = 2 * a;
    const auto U = [&](double r) { return r < d ? 0.5 * k * (d - r) * (d - r) : 0.0; };
    const auto f = [&](double r) { return std::exp(-U(r)) - 1; };
    // G(x) = int_0^min(x, d) t f(t) dt, tabulated (trapezoid on a fine grid).
    const int n = 20000;
    const double h = d / n;
    std::vector<double> G(std::size_t(n) + 1, 0.0);
    for (int i = 1; i <= n; ++i) {
      const double t0 = (i - 1) * h, t1 = i * h;
      G[std::size_t(i)] = G[std::size_t(i - 1)] + 0.5 * h * (t0 * f(t0) + t1 * f(t1));
    }
    const auto Gx = [&](double x) {
      if (x >= d) return G.back();
      const double u = x / h;
      const auto i = std::size_t(u);
      return G[i] + (u - double(i)) * (G[i + 1] - G[i]);
    };
    // (f*f)(r) = (2 pi / r) int_0^d s f(s) [G(r + s) - G(|r - s|)] ds.
    const auto ff = [&](double r) {
      return 2 * kPi / r * simpson([&](double s) { return s * f(s) * (Gx(r + s) - Gx(std::fabs(r - s))); }, 0, d, 2000);
    };
    const auto g = [&](double r) { return std::exp(-U(r)) * (1 + rho * ff(r)); };
    // exp(-U) is negligible below d - 3 (U > 45).
    const double lo = std::max(1e-6, d - 3);
    const double weight = simpson([&](double r) { return r * r * g(r); }, lo, d, 600);
    const double energy = simpson([&](double r) { return r * r * U(r) * g(r); }, lo, d, 600);
    pairs_integral = 4 * kPi * weight;
    energy_per_pair = energy / weight;
  }
};

void dilute(Ledger& ledger, uint64_t seed) {
  const Timer timer("contacts_dilute", seed);
  const double a = 2, D = 10, k = 10, phi = 0.02;
  const int n = 1000, replicas = 16, frames = 100, every = 20;
  const double volume = n * 4.0 / 3.0 * kPi * a * a * a / phi, box = std::cbrt(volume);
  const SoftSpherePairs theory(a, k, n / volume);
  struct Sums {
    double pairs = 0, residual = 0, energy = 0;
  };
  std::vector<Sums> per_replica(replicas);  // filled side by side (nestsim/sim/replicas.h)
  nestsim::sim::for_each_replica(replicas, [&](int rep) {
    SetupBuilder b(3, box, Boundary::periodic, 1, stream(seed, 80 + 2 * uint64_t(rep)));
    b.s.repulsion = k;
    const uint32_t protein = b.kind("protein", false, a, a, D);
    b.s.dt = largest_dt(b.s);  // 0.1 / (2 D k) = 0.0005
    std::mt19937_64 rng(stream(seed, 81 + 2 * uint64_t(rep)));
    Vec p{0, 0, 0};
    for (int i = 0; i < n; ++i) {
      REQUIRE(b.place(rng, a, -1, p));
      b.add(protein, p);
    }
    Simulation sim(b.s);
    sim.run(1000);  // 0.5 time units: contacts form within ~0.01
    Sums& sums = per_replica[std::size_t(rep)];
    for (int f = 0; f < frames; ++f) {
      sim.run(every);
      const auto [pairs, energy] = overlaps(positions(sim.frame()), b.s.box, a, k);
      sums.pairs += pairs;
      sums.residual += energy - theory.energy_per_pair * pairs;
      sums.energy += energy;
    }
  });
  Mean pairs_per_frame, residual_per_frame;  // one sample per replica
  double e_sum = 0, n_sum = 0;
  for (const Sums& sums : per_replica) {
    pairs_per_frame.add(sums.pairs / frames);
    residual_per_frame.add(sums.residual / frames);
    e_sum += sums.energy;
    n_sum += sums.pairs;
  }
  const double expected_pairs = double(n) * (n - 1) / (2 * volume) * theory.pairs_integral;
  ledger.add("contact_pairs_per_frame", pairs_per_frame.mean(), expected_pairs, pairs_per_frame.se(), seed);
  ledger.add("contact_energy_per_pair", e_sum / n_sum, theory.energy_per_pair,
             residual_per_frame.se() / pairs_per_frame.mean(), seed);
}

}  // namespace

TEST_CASE("validation: dilute soft-sphere contacts at the largest accepted dt match Boltzmann") {
  Ledger ledger;
  for (uint64_t seed : seeds()) dilute(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

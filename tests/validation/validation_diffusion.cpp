// Validation: free Brownian motion and diffusion on a membrane (docs/validation.md).
//
//  free_msd_{3d,2d}_dt*_D*: non-interacting bodies (repulsion 0) in a periodic box. The
//    integrator adds sqrt(2 D dt) xi per step and no drift, so the displacement over a
//    window tau is exactly Gaussian: D_eff = <|dx|^2> / (2 d tau) = D at ANY dt (checked
//    at a small and a large dt). Samples: every body over several non-overlapping windows
//    (independent increments of independent bodies); se from their sample variance.
//  membrane_cos_{3d,2d}: bodies bound to an immobile compartment's membrane diffuse on
//    the mid-surface sphere of radius R = r_C - q_C / 2: <cos theta(t)> = exp(-2 D t / R^2)
//    in 3D, exp(-D t / R^2) on a circle (2D), theta the angle travelled in time t. Windows
//    do not overlap and the motion is isotropic, so the angle travelled in one window is
//    independent of where the body is: samples over bodies and windows are independent.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "frames.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

// Free bodies of two diffusion coefficients; D_eff per kind from windows of `window` steps.
void free_msd(Ledger& ledger, int dim, double dt, int window, uint64_t seed, uint64_t variant) {
  const Timer timer("free_msd_" + std::to_string(dim) + "d", seed);
  const double box = 300;
  SetupBuilder b(dim, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.repulsion = 0;
  const double D[2] = {1.0, 4.0};
  const uint32_t kinds[2] = {b.kind("slow", false, 0.5, 0.5, D[0]), b.kind("fast", false, 0.5, 0.5, D[1])};
  const int n = 4000, windows = 10;
  std::mt19937_64 rng(stream(seed, variant));
  std::uniform_real_distribution<double> u(0, box);
  for (int k = 0; k < 2 * n; ++k) b.add(kinds[k % 2], {u(rng), u(rng), dim == 3 ? u(rng) : 0.0});
  Simulation sim(b.s);
  Frame last = by_id(sim.frame());
  Mean d_eff[2];
  const double tau = window * dt;
  const Vec pbox{box, box, dim == 3 ? box : 0.0};
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const Frame now = by_id(sim.frame());
    for (int k = 0; k < 2 * n; ++k) {
      const Vec d = periodic_delta(now.position[std::size_t(k)], last.position[std::size_t(k)], pbox);
      d_eff[k % 2].add(norm2(d) / (2 * dim * tau));
    }
    last = now;
  }
  char dts[32];
  std::snprintf(dts, sizeof dts, "%g", dt);
  for (int k = 0; k < 2; ++k)
    ledger.add("free_msd_" + std::to_string(dim) + "d_dt" + dts + "_D" + std::to_string(int(D[k])),
               d_eff[k].mean(), D[k], d_eff[k].se(), seed);
}

// Bodies bound to immobile compartments: <cos theta> after windows of `window` steps.
// Several compartments with ~150 bodies each keep the neighbour lists short.
void membrane_cos(Ledger& ledger, int dim, uint64_t seed) {
  const Timer timer("membrane_cos_" + std::to_string(dim) + "d", seed);
  const double box = 100, rc = 10, qc = 1, R = rc - 0.5 * qc, D = 1;
  // 2 D t / R^2 = 0.5 (3D), D t / R^2 = 0.5 (2D): cos theta ~ 0.61, sensitive to D. The
  // step is small against R (D dt / R^2 = 5e-4 in 3D): the tangential step and the
  // projection back onto the sphere bias D by O(D dt / R^2).
  const double t = dim == 3 ? 0.25 * R * R / D : 0.5 * R * R / D;
  const int window = dim == 3 ? 500 : 1000, windows = 4;
  const double dt = t / window;
  SetupBuilder b(dim, box, Boundary::periodic, dt, stream(seed, 10 + uint64_t(dim)));
  b.s.repulsion = 0;
  const uint32_t cell = b.kind("cell", true, rc, qc, 0);
  const uint32_t receptor = b.kind("receptor", false, 0.05, 0.05, D);
  b.s.kinds[receptor].membrane = true;
  const int cells = dim == 3 ? 20 : 16, per = 150;
  std::vector<int64_t> home;  // per receptor (in id order from 0): its compartment's id
  std::vector<int64_t> receptors;
  for (int m = 0; m < cells; ++m) {
    const Vec centre{12.5 + 25.0 * (m % 4), 12.5 + 25.0 * (m / 4 % 4), dim == 3 ? 12.5 + 25.0 * (m / 16) : 0.0};
    const int64_t c = b.add(cell, centre);
    for (int k = 0; k < per; ++k) {  // spread over the sphere (a spiral) or the circle
      const double z = dim == 3 ? 1 - 2 * (k + 0.5) / per : 0, a = 2.399963 * k + m;
      const double rho = std::sqrt(1 - z * z);
      receptors.push_back(b.add(receptor, {centre[0] + R * rho * std::cos(a), centre[1] + R * rho * std::sin(a),
                                           centre[2] + R * z}, -1, c));
      home.push_back(c);
    }
  }
  Simulation sim(b.s);
  const Vec pbox{box, box, dim == 3 ? box : 0.0};
  const auto directions = [&](const Frame& f) {
    return unit_directions(f, receptors, home, pbox);
  };
  std::vector<Vec> last = directions(by_id(sim.frame()));
  Mean cosine;
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const std::vector<Vec> now = directions(by_id(sim.frame()));
    for (std::size_t k = 0; k < now.size(); ++k) {
      const Vec& a = now[k];
      const Vec& p = last[k];
      cosine.add(a[0] * p[0] + a[1] * p[1] + a[2] * p[2]);
    }
    last = now;
  }
  const double theory = std::exp(-(dim == 3 ? 2.0 : 1.0) * D * t / (R * R));
  ledger.add("membrane_cos_" + std::to_string(dim) + "d", cosine.mean(), theory, cosine.se(), seed);
}

}  // namespace

TEST_CASE("validation: free Brownian motion, MSD = 2 d D t at two dt") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    free_msd(ledger, 3, 0.01, 20, seed, 1);
    free_msd(ledger, 3, 0.25, 20, seed, 2);
    free_msd(ledger, 2, 0.01, 20, seed, 3);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

TEST_CASE("validation: diffusion on a membrane, <cos theta> = exp(-2 D t / R^2)") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    membrane_cos(ledger, 3, seed);
    membrane_cos(ledger, 2, seed);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

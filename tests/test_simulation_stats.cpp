// The simulation engine against theory and geometry over long runs (label: slow).
//  - free diffusion: mean squared displacement 2 d D t, within 5 standard deviations of
//    the sample mean (|dx|^2 / (2 D t) is chi-squared with d degrees of freedom: variance
//    2 d, so the sample mean of N bodies has sigma = 2 D t sqrt(2 d / N));
//  - diffusion on a membrane: on a sphere of radius R, <|dx|^2> = 2 R^2 (1 - exp(-2 D t /
//    R^2)) (3D) and on a circle 2 R^2 (1 - exp(-D t / R^2)) (2D), within 5 sample sigma;
//  - impermeability: a crowded cell with moving compartments, every frame checked against
//    the geometry of every membrane.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;

namespace {

// Displacements summed frame to frame by minimum image: unwrapped through the box.
struct Unwrapper {
  const Setup& s;
  std::vector<Vec> total;
  Frame last;
  Unwrapper(const Setup& setup, const Frame& first)
      : s(setup), total(first.position.size(), Vec{0, 0, 0}), last(first) {}
  void add(const Frame& f) {
    for (std::size_t i = 0; i < f.position.size(); ++i)
      for (int k = 0; k < s.dim; ++k) {
        double d = f.position[i][k] - last.position[i][k];
        if (s.boundary == Boundary::periodic) d -= s.box[k] * std::floor(d / s.box[k] + 0.5);
        total[i][k] += d;
      }
    last = f;
  }
  double squared(std::size_t i) const {
    return total[i][0] * total[i][0] + total[i][1] * total[i][1] + total[i][2] * total[i][2];
  }
};

}  // namespace

TEST_CASE("free bodies: mean squared displacement is 2 d D t") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    SetupBuilder b(dim, 200, Boundary::periodic, 0.01, 42 + dim);
    b.s.repulsion = 1;  // on, but the bodies are far apart
    const double D[2] = {1.0, 4.0};
    const uint32_t slow = b.kind("slow", false, 0.1, 0.1, D[0]);
    const uint32_t fast = b.kind("fast", false, 0.1, 0.1, D[1]);
    const int n = 4000;  // per kind, on a lattice of spacing 2
    const int side = dim == 3 ? 20 : 90;
    for (int k = 0; k < 2 * n; ++k) {
      const Vec p = dim == 3 ? Vec{2.0 * (k % side), 2.0 * (k / side % side), 5.0 * (k / side / side)}
                             : Vec{2.0 * (k % side), 2.0 * (k / side), 0};
      b.add(k % 2 ? fast : slow, p);
    }
    Simulation sim(b.s);
    Unwrapper u(b.s, by_id(sim.frame()));
    for (int f = 0; f < 10; ++f) {
      sim.run(10);
      u.add(by_id(sim.frame()));
    }
    const double t = sim.time();
    for (int kind = 0; kind < 2; ++kind) {
      double sum = 0;
      for (int k = kind; k < 2 * n; k += 2) sum += u.squared(std::size_t(k));
      const double mean = sum / n;
      const double expected = 2 * dim * D[kind] * t;
      const double sigma = 2 * D[kind] * t * std::sqrt(2.0 * dim / n);
      CAPTURE(kind);
      CAPTURE(mean);
      CAPTURE(expected);
      CHECK(std::abs(mean - expected) < 5 * sigma);
    }
  }
}

TEST_CASE("bound bodies: diffusion on the membrane sphere") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    SetupBuilder b(dim, 100, Boundary::periodic, 0.01, 5 + dim);
    const double R = 10 - 0.5, D = 1;
    const uint32_t cell = b.kind("cell", true, 10, 1, 0);
    const uint32_t receptor = b.kind("receptor", false, 0.01, 0.01, D);
    const int64_t c = b.add(cell, {50, 50, dim == 3 ? 50.0 : 0.0});
    const int n = 3000;
    for (int k = 0; k < n; ++k) {  // spread over the sphere (a spiral), projected by the engine
      const double z = dim == 3 ? 1 - 2 * (k + 0.5) / n : 0, a = 2.399963 * k;
      const double rho = std::sqrt(1 - z * z);
      b.add(receptor, {50 + R * rho * std::cos(a), 50 + R * rho * std::sin(a), dim == 3 ? 50 + R * z : 0},
            -1, c);
    }
    Simulation sim(b.s);
    const Frame start = by_id(sim.frame());
    sim.run(2000);
    const Frame end = by_id(sim.frame());
    double sum = 0, sum2 = 0;
    for (int k = 1; k <= n; ++k) {
      double d2 = 0;
      for (int a = 0; a < dim; ++a) {
        const double d = end.position[k][a] - start.position[k][a];
        d2 += d * d;
      }
      sum += d2;
      sum2 += d2 * d2;
    }
    const double mean = sum / n, sigma = std::sqrt((sum2 / n - mean * mean) / n);
    const double t = sim.time();
    const double expected = dim == 3 ? 2 * R * R * (1 - std::exp(-2 * D * t / (R * R)))
                                     : 2 * R * R * (1 - std::exp(-D * t / (R * R)));
    CAPTURE(mean);
    CAPTURE(expected);
    CAPTURE(sigma);
    CHECK(std::abs(mean - expected) < 5 * sigma);
  }
}

TEST_CASE("impermeability: a crowded cell with moving compartments, every frame") {
  const Setup s = crowded_cell(1500, 2024);
  Simulation sim(s);
  const std::vector<int64_t> parents = parents_of(s);
  std::vector<int64_t> expected = parents;
  for (std::size_t i = 0; i < s.bodies.size(); ++i)  // bound bodies: their membrane's parent
    if (s.bodies[i].membrane >= 0) expected[i] = parents[std::size_t(s.bodies[i].membrane)];
  std::string what;
  std::size_t bad = membrane_violations(s, expected, by_id(sim.frame()), what);
  CHECK(bad == 0);
  Unwrapper u(s, by_id(sim.frame()));
  const int frames = 3000;
  for (int f = 0; f < frames && bad == 0; ++f) {
    sim.run(1);
    const Frame now = by_id(sim.frame());
    bad += membrane_violations(s, expected, now, what);
    u.add(now);
  }
  INFO(what);
  CHECK(bad == 0);
  // The run exercised what it claims: moves were rejected at membranes, and the
  // compartments (cell and lysosomes) travelled.
  CHECK(sim.rejected_moves() > 0);
  double compartment_msd = 0;
  int compartments = 0;
  for (std::size_t i = 0; i < s.bodies.size(); ++i)
    if (s.kinds[s.bodies[i].kind].compartment) {
      compartment_msd += u.squared(i);
      ++compartments;
    }
  CHECK(compartment_msd / compartments > 1.0);
  MESSAGE("bodies " << s.bodies.size() << ", rejected moves " << sim.rejected_moves()
                    << ", list builds " << sim.times().rebuilds);
}

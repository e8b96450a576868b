// Validation at large steps: proteins of D = 10 um^2/s (10 nm^2/us, radius 2.5 nm) at
// dt = 0.01, 0.1, 1 and 10 us, s = sqrt(2 D dt) = 0.45 to 14 nm per axis against a
// contact distance sigma = 5 nm (docs/validation.md, "Large steps: contacts and nesting").
//
//  large_free_msd_dt*: contacts none, free bodies in a periodic box: D_eff = <|dx|^2> /
//    (6 tau) = D at any dt (no force, Gaussian steps). se: independent bodies and windows.
//  large_membrane_cos_dt*: contacts none, bodies bound to immobile compartments whose
//    mid-surface radius R is the smallest that simulation.dt accepts at that dt
//    (time_step.h: 5 D dt / R^2 = 0.01); windows t = R^2 / (4 D): <cos theta> =
//    exp(-2 D_eff t / R^2), D_eff = D (1 - 5 D dt / R^2) (the projected step's bias).
//  large_confinement_*: contacts hard, one protein in the lumen of each of 256 immobile
//    vesicles whose room rho = r_C - q_C - r_i is 3 s: the fraction of samples with
//    |x - x_C| < rho / 2 is 1/8 (Metropolis on the uniform ball at any dt). se: the
//    per-protein averages. Invariant: never outside its lumen.
//  large_path_*: contacts hard, free proteins among immobile small vesicles of radius 5 nm
//    (diameter 10 nm, less than the step at dt = 10): invariant: no straight path of a
//    step (old to new position) meets a vesicle's ball, no protein ever inside one.
//  The refusals of hard and none contacts (models/README.md, "Contacts"): a model at the
//    membrane rule's and at the box rule's largest dt loads, one 1% above it is refused at
//    simulation.dt with that largest dt; the limits computed here from the rules' text.
//  hard_g_*_phi{0.1,0.3}_dt{0.1,1}: contacts hard, a hard-sphere fluid of volume
//    fraction phi (s / sigma = 0.28, 0.89), started by random sequential addition and
//    equilibrated at dt 0.1: g(sigma+) against Carnahan-Starling (1 - phi / 2) / (1 - phi)^3
//    by the insertion route (hard_g_contact: exposed surface over free volume,
//    hard_sphere_fluid.h) and by the pair route (hard_g_pairs: a log-linear fit over 5
//    shells of sigma / 25, ~1% low at phi 0.3 from the curvature). se: jackknife over 27
//    blocks of space. Invariant: no pair closer than sigma in any sampled frame. At phi 0.3
//    and dt 1 the rule rejects 99.9% of the moves: ~1% of the spheres move in the sampled
//    steps, so that case checks that what is accepted keeps the distribution, not that dt 1
//    reaches it. dt = 10 is not run: the box that the images rule asks for (edge >= 320
//    nm) holds 5e4-1.5e5 spheres, and the lists reach out to twice the largest step.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "frames.h"
#include "lumen_confinement.h"
#include "membrane_cosine.h"
#include "hard_sphere_fluid.h"
#include "nestsim/model/model.h"
#include "nestsim/sim/replicas.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "stats.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;
using namespace nestsim::validation;

namespace {

constexpr double kD = 10, kRadius = 2.5;

std::string dt_name(double dt) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", dt);
  return s;
}

// The smallest periodic edge that time_step.h's images rule accepts at dt for two
// proteins of D (8 sqrt(2 x 2D x dt) <= edge / 2).
double images_edge(double dt) { return 2 * kImageSigmas * std::sqrt(2 * 2 * kD * dt); }

void free_msd(Ledger& ledger, double dt, uint64_t seed, uint64_t variant) {
  const Timer timer("large_free_msd_dt" + dt_name(dt), seed);
  const double box = std::max(200.0, images_edge(dt));
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.contacts = Contacts::none;
  b.s.repulsion = 10;  // ignored without soft contacts
  const uint32_t p = b.kind("protein", false, kRadius, kRadius, kD);
  const int n = 2000, windows = 10, window = 5;
  std::mt19937_64 rng(stream(seed, variant));
  std::uniform_real_distribution<double> u(0, box);
  for (int k = 0; k < n; ++k) b.add(p, {u(rng), u(rng), u(rng)});
  Simulation sim(b.s);
  // Slots are fixed for a body's life: frames compared slot by slot, images included.
  Frame last = sim.frame();
  Mean d_eff;
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const Frame now = sim.frame();
    for (int k = 0; k < n; ++k) {
      // The true displacement: positions are wrapped, so unwrap with the images.
      Vec d{0, 0, 0};
      for (int a = 0; a < 3; ++a)
        d[a] = now.position[std::size_t(k)][a] - last.position[std::size_t(k)][a] +
               box * (now.image[std::size_t(k)][a] - last.image[std::size_t(k)][a]);
      d_eff.add(norm2(d) / (6 * window * dt));
    }
    last = now;
  }
  ledger.add("large_free_msd_dt" + dt_name(dt), d_eff.mean(), kD, d_eff.se(), seed);
}

void membrane_cos(Ledger& ledger, double dt, uint64_t seed, uint64_t variant) {
  const Timer timer("large_membrane_cos_dt" + dt_name(dt), seed);
  const double R = std::sqrt(5 * kD * dt / kMembraneStepAccurate), qc = 1, rc = R + 0.5 * qc;
  const double t = 0.25 * R * R / kD;
  const int window = int(std::lround(t / dt)), windows = 4;
  const double spacing = 2.5 * rc, box = 4 * spacing;
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.contacts = Contacts::none;
  const uint32_t cell = b.kind("cell", true, rc, qc, 0);
  const uint32_t receptor = b.kind("receptor", false, kRadius, kRadius, kD);
  b.s.kinds[receptor].membrane = true;
  const Mean cosine =
      membrane_direction_cosine(b, cell, receptor, R, spacing, box, window, windows);
  const double d_eff = kD * (1 - 5 * kD * dt / (R * R));
  ledger.add("large_membrane_cos_dt" + dt_name(dt), cosine.mean(),
             std::exp(-2 * d_eff * window * dt / (R * R)), cosine.se(), seed);
}

// One protein per lumen: the plateau at any dt, and never outside its lumen.
void confinement(Ledger& ledger, double dt, uint64_t seed, uint64_t variant) {
  const Timer timer("large_confinement_dt" + dt_name(dt), seed);
  const double s = std::sqrt(2 * kD * dt), rho = 3 * s, qc = 1, rc = rho + kRadius + qc;
  const double spacing = 2 * rc + 1;
  const double box = std::max(spacing * kLumenSide, images_edge(dt));
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.contacts = Contacts::hard;
  const uint32_t ves = b.kind("vesicle", true, rc, qc, 0);
  const uint32_t p = b.kind("protein", false, kRadius, kRadius, kD);
  const LumenSamples l =
      lumen_confinement(b, ves, p, rho, spacing, box, 40, [](int) { return 5; }, 1);
  ledger.add("large_confinement_dt" + dt_name(dt), l.plateau.mean(), 0.125, l.plateau.se(), seed);
  ledger.invariant("large_confinement_leaks_dt" + dt_name(dt), l.leaks, l.checked, l.worst, seed);
}

// Free proteins among small immobile vesicles: no step's straight path meets a vesicle.
void paths(Ledger& ledger, double dt, uint64_t seed, uint64_t variant) {
  const Timer timer("large_path_dt" + dt_name(dt), seed);
  const double rv = 5, qv = 1, box = std::max(120.0, images_edge(dt));
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.contacts = Contacts::hard;
  const uint32_t ves = b.kind("vesicle", true, rv, qv, 0);
  const uint32_t p = b.kind("protein", false, kRadius, kRadius, kD);
  std::mt19937_64 rng(stream(seed, variant));
  const int grid = 6;
  const double g = box / grid;
  for (int m = 0; m < grid * grid * grid; ++m)
    b.add(ves, {g * (0.5 + m % grid), g * (0.5 + m / grid % grid), g * (0.5 + m / (grid * grid))});
  for (int k = 0; k < 300; ++k) {
    Vec x;
    if (b.place(rng, kRadius, -1, x)) b.add(p, x);
  }
  Simulation sim(b.s);
  const Vec pbox{box, box, box};
  // Slots are fixed for a body's life: frames compared slot by slot, images included.
  Frame before = sim.frame();
  std::vector<std::size_t> vs, ps;
  for (std::size_t i = 0; i < before.id.size(); ++i)
    if (before.id[i] >= 0) (before.kind[i] == int32_t(ves) ? vs : ps).push_back(i);
  uint64_t crossings = 0, checked = 0;
  double worst = -INFINITY;
  const double need = rv + kRadius;
  for (int step = 0; step < 100; ++step) {
    sim.run(1);
    const Frame after = sim.frame();
    for (std::size_t i : ps) {
      Vec m{0, 0, 0};
      for (int a = 0; a < 3; ++a)
        m[a] = after.position[i][a] - before.position[i][a] +
               box * (after.image[i][a] - before.image[i][a]);
      for (std::size_t c : vs) {
        const Vec d0 = periodic_delta(before.position[i], before.position[c], pbox);
        const double mm = norm2(m);
        double t = mm > 0 ? -(d0[0] * m[0] + d0[1] * m[1] + d0[2] * m[2]) / mm : 0;
        t = std::min(1.0, std::max(0.0, t));
        const Vec q{d0[0] + t * m[0], d0[1] + t * m[1], d0[2] + t * m[2]};
        const double gap = std::sqrt(norm2(q)) - need;
        worst = std::max(worst, -gap);
        ++checked;
        if (gap < -1e-9 * need) ++crossings;
      }
    }
    before = after;
  }
  ledger.invariant("large_path_dt" + dt_name(dt), crossings, checked, worst, seed);
}

// A hard-sphere fluid of volume fraction phi at dt: g(sigma+) by the insertion route and
// by the pair route against Carnahan-Starling, and never an overlap. The fluid starts by
// random sequential addition and is brought to equilibrium at dt 0.1 (where moves are
// accepted often enough to relax it, and the equilibrium is the same at every dt), then
// runs at dt.
struct HardFluid {
  double phi, dt;
  int equilibrate;  // steps at dt 0.1 from the random start
  int warm;         // steps at dt before the first frame
  int frames, every;
};

struct HardFluidResult {
  ContactSums sums;
  int n = 0;
  double box = 0, rejected = 0, moved = 0;
};

Setup fluid_setup(double box, double dt, uint64_t seed, const std::vector<Vec>& at) {
  SetupBuilder b(3, box, Boundary::periodic, dt, seed);
  b.s.contacts = Contacts::hard;
  const uint32_t p = b.kind("protein", false, kRadius, kRadius, kD);
  for (const Vec& x : at) b.add(p, x);
  return b.s;
}

// Lists with a skin of a few steps (the default's floor of 8 radii lists hundreds of
// neighbours a sphere in the dense fluid; the trajectory does not depend on the skin).
SimulationOptions fluid_options(double dt) {
  SimulationOptions o;
  o.skin = 10 * std::sqrt(2 * kD * dt);
  return o;
}

HardFluidResult run_fluid(const HardFluid& c, uint64_t seed, uint64_t variant) {
  const double sigma = 2 * kRadius, width = sigma / 25;
  HardFluidResult r;
  // At least 2000 spheres, and the edge the images rule asks for at dt.
  r.box = std::max(std::cbrt(2000 * kPi / 6 * sigma * sigma * sigma / c.phi), images_edge(c.dt));
  r.n = int(std::lround(c.phi * r.box * r.box * r.box / (kPi / 6 * sigma * sigma * sigma)));
  std::mt19937_64 rng(stream(seed, variant));
  const double eq_dt = 0.1;
  Simulation start(fluid_setup(r.box, eq_dt, stream(seed, variant + 100),
                               random_sequential(r.n, r.box, sigma, rng)),
                   fluid_options(eq_dt));
  start.run(uint64_t(c.equilibrate));
  Simulation sim(fluid_setup(r.box, c.dt, stream(seed, variant + 200), positions(start.frame())),
                 fluid_options(c.dt));
  sim.run(uint64_t(c.warm));
  const uint64_t rejected_before = sim.rejected_moves();
  std::vector<Vec> first;
  for (int fr = 0; fr < c.frames; ++fr) {
    sim.run(uint64_t(c.every));
    const std::vector<Vec> x = positions(sim.frame());
    if (fr == 0) first = x;
    add_frame(r.sums, x, r.box, sigma, width, 3, 16, 20 * r.n, rng);
    if (fr == c.frames - 1) {  // slots are fixed for a body's life
      int moved = 0;
      for (std::size_t i = 0; i < x.size(); ++i)
        moved += norm2(periodic_delta(x[i], first[i], Vec{r.box, r.box, r.box})) > 0 ? 1 : 0;
      r.moved = double(moved) / r.n;
    }
  }
  r.rejected = double(sim.rejected_moves() - rejected_before) / (double(r.n) * c.frames * c.every);
  return r;
}

void report_fluid(Ledger& ledger, const HardFluid& c, const HardFluidResult& r, uint64_t seed) {
  const std::string tag = "_phi" + dt_name(c.phi) + "_dt" + dt_name(c.dt);
  const double sigma = 2 * kRadius, width = sigma / 25, rho = r.n / (r.box * r.box * r.box);
  const double cs = (1 - c.phi / 2) / ((1 - c.phi) * (1 - c.phi) * (1 - c.phi));
  const auto [gi, gi_se] =
      jackknife(r.sums, [&](const std::vector<bool>& u) { return insertion_contact(r.sums, u); });
  const auto [gp, gp_se] = jackknife(r.sums, [&](const std::vector<bool>& u) {
    return pair_contact(r.sums, u, r.n, rho, sigma, width);
  });
  ledger.add("hard_g_contact" + tag, gi, cs, gi_se, seed);
  ledger.add("hard_g_pairs" + tag, gp, cs, gp_se, seed);
  ledger.invariant("hard_g_overlap" + tag, r.sums.overlaps, r.sums.pairs_checked, r.sums.worst,
                   seed);
  std::printf(
      "hard_g: phi %g dt %g: %d spheres, box %.1f, s/sigma %.2f, %.4f of the moves rejected, "
      "%.3f of the spheres moved between the first and last frame\n",
      c.phi, c.dt, r.n, r.box, std::sqrt(2 * kD * c.dt) / sigma, r.rejected, r.moved);
}

const double kDts[] = {0.01, 0.1, 1, 10};

}  // namespace

TEST_CASE("validation: large steps, free MSD and membrane diffusion without contacts") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    uint64_t v = 1;
    for (double dt : kDts) {
      free_msd(ledger, dt, seed, v++);
      membrane_cos(ledger, dt, seed, v++);
    }
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

TEST_CASE("validation: large steps, confinement and paths past small vesicles (hard contacts)") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    uint64_t v = 20;
    for (double dt : kDts) {
      confinement(ledger, dt, seed, v++);
      paths(ledger, dt, seed, v++);
    }
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

// The cases side by side (for_each_replica: each its own Simulation, the same results
// on any number of workers).
TEST_CASE("validation: large steps, hard-sphere contact value against Carnahan-Starling") {
  const std::vector<HardFluid> cases{
      {0.1, 0.1, 100, 0, 30, 5},   // s / sigma 0.28
      {0.1, 1.0, 100, 10, 30, 2},  // s / sigma 0.89
      {0.3, 0.1, 400, 0, 40, 5},
      {0.3, 1.0, 400, 2, 8, 1},  // nearly frozen: see docs/validation.md
  };
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    std::vector<HardFluidResult> results(cases.size());
    for_each_replica(
        int(cases.size()),
        [&](int k) {
          const Timer timer("hard_g_phi" + dt_name(cases[std::size_t(k)].phi) + "_dt" +
                                dt_name(cases[std::size_t(k)].dt),
                            seed);
          results[std::size_t(k)] = run_fluid(cases[std::size_t(k)], seed, 40 + uint64_t(k));
        },
        2);
    for (std::size_t k = 0; k < cases.size(); ++k) report_fluid(ledger, cases[k], results[k], seed);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

namespace {

// A model of proteins (D 10, radius 2.5) in a cell of mid-surface radius R (and on its
// membrane when `bound`) in a periodic box of `edge`, with `contacts`, at `dt` (nm, us).
std::string contact_model(const std::string& contacts, double dt, double edge, double R,
                          bool bound = true) {
  char text[2048];
  std::snprintf(text, sizeof text,
                "nestsim: 1\nunits: {length: nm, time: us}\n"
                "box: {size: [%.17g, %.17g, %.17g], boundary: periodic}\n"
                "simulation: {dt: %.17g, steps: 10, seed: 7, output: {every: 5, file: t.h5}}\n"
                "compartments:\n  cell: {radius: %.17g, thickness: 2, diffusion: 0}\n"
                "species:\n  p: {radius: 2.5, diffusion: 10}\n"
                "%s"
                "interactions: {contacts: %s}\n"
                "place:\n  - {compartment: cell, at: [%.17g, %.17g, %.17g]}\n"
                "%s  - {species: p, count: 5, in: cell}\n",
                edge, edge, edge, dt, R + 1,
                bound ? "  r: {radius: 2.5, diffusion: 10, membrane: true}\n" : "",
                contacts.c_str(), edge / 2, edge / 2, edge / 2,
                bound ? "  - {species: r, count: 5, on: cell}\n" : "");
  return text;
}

// The message of the refusal, or "" when the model loads.
std::string refusal(const std::string& text) {
  try {
    nestsim::model::parse_model(text, "m.yaml");
  } catch (const nestsim::model::ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("large steps: hard and none refuse dt above the membrane and box rules") {
  for (const std::string contacts : {"hard", "none"}) {
    // Membrane: 5 D dt / R^2 <= 0.01 with R = 50, D = 10: dt <= 0.5 (the box is large).
    const double membrane = 0.01 * 50 * 50 / (5 * 10.0);
    CHECK(refusal(contact_model(contacts, membrane * 0.99, 4000, 50)).empty());
    const std::string m = refusal(contact_model(contacts, membrane * 1.01, 4000, 50));
    CHECK_MESSAGE(m.find("simulation.dt: too large for membrane diffusion") != std::string::npos,
                  m);
    CHECK_MESSAGE(m.find("use dt <= 0.5 ") != std::string::npos, m);
    // Box: 8 sqrt(2 x 20 x dt) <= edge / 2 with edge 160: dt <= 2.5 (no membrane
    // species: the membrane rule does not apply).
    const double box = std::pow(160 / 2.0 / 8, 2) / (2 * 20);
    CHECK(refusal(contact_model(contacts, box * 0.99, 160, 50, false)).empty());
    const std::string b = refusal(contact_model(contacts, box * 1.01, 160, 50, false));
    CHECK_MESSAGE(b.find("simulation.dt: too large for the periodic box") != std::string::npos, b);
    CHECK_MESSAGE(b.find("use dt <= 2.5") != std::string::npos, b);
  }
  // Soft contacts keep their own rule: (10 + 10) x 10 x dt <= 0.1, dt <= 5e-4.
  const std::string s = refusal(contact_model("soft", 1e-3, 4000, 50));
  CHECK_MESSAGE(s.find("simulation.dt: too large for accurate contacts") != std::string::npos, s);
}

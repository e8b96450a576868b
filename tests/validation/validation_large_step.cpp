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
//  hard_g_contact_phi*_dt*: contacts hard, a hard-sphere fluid of volume fraction phi in
//    a periodic box, at dt = 0.1 (and, on demand, 1; s / sigma = 0.28, 0.89): g(sigma+) from a
//    weighted log-linear fit of g over 5 shells of sigma / 25 from contact (the fit's
//    curvature bias is ~1% at phi 0.3), against Carnahan-Starling (1 - phi / 2) /
//    (1 - phi)^3. se: jackknife over 27 blocks of space (pairs counted at their first
//    body's block). Invariant: no pair closer than sigma at any sampled frame. dt = 10
//    is not run here: the box that the images rule asks for (edge >= 320 nm) holds
//    5e4-1.5e5 spheres, and the lists reach out to twice the largest step; dt = 0.01
//    (s / sigma = 0.09) needs ~2000 steps to equilibrate (docs/validation.md).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nestsim/io/model.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "frames.h"
#include "stats.h"

using namespace nestsim::sim;
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
  const int cells = 20, per = 150;
  std::vector<int64_t> home, receptors;
  for (int m = 0; m < cells; ++m) {
    const Vec centre{spacing * (0.5 + m % 4), spacing * (0.5 + m / 4 % 4),
                     spacing * (0.5 + m / 16)};
    const int64_t c = b.add(cell, centre);
    for (int k = 0; k < per; ++k) {
      const double z = 1 - 2 * (k + 0.5) / per, a = 2.399963 * k + m, rho = std::sqrt(1 - z * z);
      receptors.push_back(b.add(
          receptor,
          {centre[0] + R * rho * std::cos(a), centre[1] + R * rho * std::sin(a), centre[2] + R * z},
          -1, c));
      home.push_back(c);
    }
  }
  Simulation sim(b.s);
  const Vec pbox{box, box, box};
  const auto directions = [&](const Frame& f) {
    return unit_directions(f, receptors, home, pbox);
  };
  std::vector<Vec> last = directions(by_id(sim.frame()));
  Mean cosine;
  for (int w = 0; w < windows; ++w) {
    sim.run(uint64_t(window));
    const std::vector<Vec> now = directions(by_id(sim.frame()));
    for (std::size_t k = 0; k < now.size(); ++k)
      cosine.add(now[k][0] * last[k][0] + now[k][1] * last[k][1] + now[k][2] * last[k][2]);
    last = now;
  }
  const double d_eff = kD * (1 - 5 * kD * dt / (R * R));
  ledger.add("large_membrane_cos_dt" + dt_name(dt), cosine.mean(),
             std::exp(-2 * d_eff * window * dt / (R * R)), cosine.se(), seed);
}

// One protein per lumen: the plateau at any dt, and never outside its lumen.
void confinement(Ledger& ledger, double dt, uint64_t seed, uint64_t variant) {
  const Timer timer("large_confinement_dt" + dt_name(dt), seed);
  const double s = std::sqrt(2 * kD * dt), rho = 3 * s, qc = 1, rc = rho + kRadius + qc;
  const double spacing = 2 * rc + 1;
  const int side = 8, n = side * side * 4;
  const double box = std::max(spacing * side, images_edge(dt));
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.contacts = Contacts::hard;
  const uint32_t ves = b.kind("vesicle", true, rc, qc, 0);
  const uint32_t p = b.kind("protein", false, kRadius, kRadius, kD);
  std::vector<int64_t> cs, ps;
  for (int m = 0; m < n; ++m) {
    const Vec c{spacing * (0.5 + m % side), spacing * (0.5 + m / side % side),
                spacing * (0.5 + m / (side * side))};
    cs.push_back(b.add(ves, c));
    ps.push_back(b.add(p, c, cs.back()));
  }
  Simulation sim(b.s);
  sim.run(100);
  const int samples = 40;
  std::vector<Mean> inner(std::size_t(n), Mean{});
  uint64_t leaks = 0, checked = 0;
  double worst = -INFINITY;
  const Vec pbox{box, box, box};
  for (int k = 0; k < samples; ++k) {
    sim.run(5);
    const Frame f = by_id(sim.frame());
    for (int m = 0; m < n; ++m) {
      const double r =
          std::sqrt(norm2(periodic_delta(f.position[std::size_t(ps[std::size_t(m)])],
                                         f.position[std::size_t(cs[std::size_t(m)])], pbox)));
      inner[std::size_t(m)].add(r < 0.5 * rho ? 1.0 : 0.0);
      worst = std::max(worst, r - rho);
      ++checked;
      if (r > rho * (1 + 1e-9)) ++leaks;
    }
  }
  Mean per;
  for (const Mean& m : inner) per.add(m.mean());
  ledger.add("large_confinement_dt" + dt_name(dt), per.mean(), 0.125, per.se(), seed);
  ledger.invariant("large_confinement_leaks_dt" + dt_name(dt), leaks, checked, worst, seed);
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

// A hard-sphere fluid: g(sigma+) against Carnahan-Starling.
void hard_g(Ledger& ledger, double phi, double dt, uint64_t seed, uint64_t variant) {
  const std::string name = "hard_g_contact_phi" + dt_name(phi) + "_dt" + dt_name(dt);
  const Timer timer(name, seed);
  const double sigma = 2 * kRadius, s = std::sqrt(2 * kD * dt);
  // At least 2000 spheres (the contact shells then hold ~1e4 pairs over the frames).
  const double box =
      std::max(std::cbrt(2000 * kPi / 6 * sigma * sigma * sigma / phi), images_edge(dt));
  const int n = int(std::lround(phi * box * box * box / (kPi / 6 * sigma * sigma * sigma)));
  SetupBuilder b(3, box, Boundary::periodic, dt, stream(seed, variant));
  b.s.contacts = Contacts::hard;
  const uint32_t p = b.kind("protein", false, kRadius, kRadius, kD);
  // A start without overlaps: a simple cubic lattice, melted by the run.
  const int side = int(std::ceil(std::cbrt(double(n))));
  const double a = box / side;
  REQUIRE(a > sigma);
  for (int k = 0; k < n; ++k)
    b.add(p, {a * (0.5 + k % side), a * (0.5 + k / side % side), a * (0.5 + k / (side * side))});
  Simulation sim(b.s);
  // Steps for a protein to travel ~sigma (the contact shell is sigma / 10 deep).
  const int travel = std::max(1, int(std::ceil(sigma * sigma / (s * s))));
  sim.run(uint64_t(std::max(50, 10 * travel)));
  constexpr int shells = 5, blocks = 3;
  const double width = sigma / 25;
  std::vector<std::array<double, shells>> count(blocks * blocks * blocks);
  for (auto& c : count) c.fill(0);
  const int frames = 24;
  uint64_t overlaps = 0, pairs_checked = 0;
  double worst = -INFINITY;
  const double cell = box / std::floor(box / (sigma + shells * width));
  const int cells = int(std::lround(box / cell));
  for (int fr = 0; fr < frames; ++fr) {
    sim.run(uint64_t(std::max(2, travel / 2)));
    const Frame f = sim.frame();
    std::vector<std::vector<std::size_t>> grid(std::size_t(cells * cells * cells));
    const auto cell_of = [&](const Vec& x, int k) {
      return std::min(cells - 1, std::max(0, int(std::floor(x[std::size_t(k)] / cell))));
    };
    for (std::size_t i = 0; i < f.position.size(); ++i)
      if (f.id[i] >= 0)
        grid[std::size_t(cell_of(f.position[i], 0) +
                         cells * (cell_of(f.position[i], 1) + cells * cell_of(f.position[i], 2)))]
            .push_back(i);
    const Vec pbox{box, box, box};
    for (std::size_t i = 0; i < f.position.size(); ++i) {
      if (f.id[i] < 0) continue;
      const int cx = cell_of(f.position[i], 0), cy = cell_of(f.position[i], 1),
                cz = cell_of(f.position[i], 2);
      const int blk = int(f.position[i][0] / box * blocks) % blocks +
                      blocks * (int(f.position[i][1] / box * blocks) % blocks +
                                blocks * (int(f.position[i][2] / box * blocks) % blocks));
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int nc =
                (cx + dx + cells) % cells +
                cells * ((cy + dy + cells) % cells + cells * ((cz + dz + cells) % cells));
            for (std::size_t j : grid[std::size_t(nc)]) {
              if (j == i) continue;
              const double r = std::sqrt(norm2(periodic_delta(f.position[i], f.position[j], pbox)));
              if (j > i) {
                ++pairs_checked;
                worst = std::max(worst, sigma - r);
                if (r < sigma * (1 - 1e-9)) ++overlaps;
              }
              const int sh = int(std::floor((r - sigma) / width));
              if (sh >= 0 && sh < shells) count[std::size_t(blk)][std::size_t(sh)] += 1;
            }
          }
    }
  }
  // g per shell: ordered pairs / (N rho V_shell frames); the fit of ln g on the shell
  // centre, weighted by the counts (Poisson), gives ln g at contact.
  const double rho_n = n / (box * box * box);
  const auto contact_value = [&](const std::array<double, shells>& c) -> double {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < shells; ++k) {
      const double r0 = sigma + k * width, r1 = r0 + width, x = (k + 0.5) * width;
      const double ideal = n * rho_n * 4.0 / 3.0 * kPi * (r1 * r1 * r1 - r0 * r0 * r0) * frames;
      if (!(c[std::size_t(k)] > 0)) return NAN;
      const double y = std::log(c[std::size_t(k)] / ideal), w = c[std::size_t(k)];
      sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
    return std::exp((sy - slope * sx) / sw);
  };
  std::array<double, shells> total{};
  for (const auto& c : count)
    for (int k = 0; k < shells; ++k) total[std::size_t(k)] += c[std::size_t(k)];
  const double g0 = contact_value(total);
  // Jackknife over the blocks: leave one block's pairs out, scale to the full count.
  const int nb = blocks * blocks * blocks;
  std::vector<double> jack;
  for (int l = 0; l < nb; ++l) {
    std::array<double, shells> c{};
    for (int k = 0; k < shells; ++k)
      c[std::size_t(k)] =
          (total[std::size_t(k)] - count[std::size_t(l)][std::size_t(k)]) * nb / (nb - 1.0);
    jack.push_back(contact_value(c));
  }
  double jm = 0, jv = 0;
  for (double v : jack) jm += v / nb;
  for (double v : jack) jv += (v - jm) * (v - jm);
  const double se = std::sqrt((nb - 1.0) / nb * jv);
  const double cs = (1 - phi / 2) / ((1 - phi) * (1 - phi) * (1 - phi));
  ledger.add(name, g0, cs, se, seed);
  ledger.invariant(name + "_overlap", overlaps, pairs_checked, worst, seed);
  std::printf("hard_g: phi %g dt %g: %d spheres, box %.1f, s/sigma %.2f, rejected %llu moves\n",
              phi, dt, n, box, s / sigma, (unsigned long long)sim.rejected_moves());
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

TEST_CASE("validation: large steps, hard-sphere contact value against Carnahan-Starling") {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    uint64_t v = 40;
    for (double phi : {0.1, 0.3}) hard_g(ledger, phi, 0.1, seed, v++);
  }
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

// dt = 1 (s / sigma = 0.89): ~35 s a run on one core, as the lists reach twice the
// largest step; run on demand (--no-skip) and on the GPU.
TEST_CASE("validation: large steps, hard-sphere contact value at dt 1" * doctest::skip()) {
  Ledger ledger;
  for (uint64_t seed : seeds()) {
    uint64_t v = 50;
    for (double phi : {0.1, 0.3}) hard_g(ledger, phi, 1.0, seed, v++);
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
    nestsim::io::parse_model(text, "m.yaml");
  } catch (const nestsim::io::ModelError& e) {
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

// Speed of the simulation engine on a crowded cell: 1 cell, C compartments (C / 10
// lysosomes holding 2 vesicles each, 7 C / 10 free vesicles) and N proteins (85% in the
// cytosol, 10% in compartment lumens, 5% bound to compartment membranes), units nm and us.
// C is 1,000 up to 1e7 proteins and grows with N beyond (N / 10,000), so that the
// compartments' loads stay those of the 1e7 cell: with 1,000 compartments, 1e8 proteins
// would put 5,000 receptors on a vesicle's 18,000 nm^2 (5x its area) and 10,000 proteins
// in its lumen (4x its volume); --compartments sets C (a multiple of 10).
// Prints steps/s, body-steps/s and the time split by phase; --csv appends a row.
// --phase-times 0 leaves the phases untimed (no wait for the device per phase on the
// GPU; no split), as an untimed run steps.
//
//   bench_simulator [--proteins N] [--compartments C] [--steps S] [--dt DT] [--skin SKIN]
//                   [--output-every K] [--seed SEED] [--phase-times 1|0] [--csv FILE]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "nestsim/sim/simulation.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using Vec = std::array<double, 3>;

namespace {

struct Args {
  uint64_t proteins = 100000, compartments = 0, steps = 100, output_every = 25, seed = 1;
  double dt = 1e-4, skin = 3.0;  // 0.1 ns steps: sigma = 0.045 nm for D = 10 nm^2/us
  bool phase_times = true;
  std::string csv;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--proteins") a.proteins = std::stoull(value);
    else if (key == "--compartments") a.compartments = std::stoull(value);
    else if (key == "--steps") a.steps = std::stoull(value);
    else if (key == "--output-every") a.output_every = std::stoull(value);
    else if (key == "--seed") a.seed = std::stoull(value);
    else if (key == "--dt") a.dt = std::stod(value);
    else if (key == "--skin") a.skin = std::stod(value);
    else if (key == "--phase-times") a.phase_times = std::stoi(value) != 0;
    else if (key == "--csv") a.csv = value;
    else throw std::invalid_argument("unknown option " + key);
  }
  if (a.compartments == 0) a.compartments = std::max<uint64_t>(1000, a.proteins / 10000 / 10 * 10);
  if (a.compartments % 10 != 0) throw std::invalid_argument("--compartments must be a multiple of 10");
  return a;
}

constexpr double kPi = 3.14159265358979323846;

double norm(const Vec& d) { return std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]); }

// Compartments binned on a coarse grid for the placement tests.
struct CompartmentGrid {
  double cell;
  std::unordered_map<int64_t, std::vector<uint32_t>> bins;
  int64_t key(long long x, long long y, long long z) const {
    return (int64_t(x) * 4096 + y) * 4096 + z;
  }
  void add(uint32_t id, const Vec& p) {
    bins[key(std::llround(std::floor(p[0] / cell)), std::llround(std::floor(p[1] / cell)),
             std::llround(std::floor(p[2] / cell)))]
        .push_back(id);
  }
  template <class F>
  bool any_near(const Vec& p, F hit) const {
    const long long cx = std::llround(std::floor(p[0] / cell)), cy = std::llround(std::floor(p[1] / cell)),
                    cz = std::llround(std::floor(p[2] / cell));
    for (long long x = cx - 1; x <= cx + 1; ++x)
      for (long long y = cy - 1; y <= cy + 1; ++y)
        for (long long z = cz - 1; z <= cz + 1; ++z) {
          const auto it = bins.find(key(x, y, z));
          if (it == bins.end()) continue;
          for (uint32_t c : it->second)
            if (hit(c)) return true;
        }
    return false;
  }
};

Setup crowded_cell(const Args& a) {
  Setup s;
  s.dim = 3;
  s.dt = a.dt;
  s.seed = a.seed;
  s.kT = 1;
  s.repulsion = 10;  // kT / nm^2: drift D k dt / kT = 0.01 of an overlap per step at dt 1e-4
  s.boundary = Boundary::reflective;
  const auto kind = [&](const char* name, bool comp, double r, double q, double D) {
    Kind k;
    k.name = name;
    k.compartment = comp;
    k.radius = r;
    k.thickness = comp ? q : r;
    k.diffusion = D;
    s.kinds.push_back(k);
    return uint32_t(s.kinds.size() - 1);
  };
  const uint32_t cell = kind("cell", true, 0, 10, 0.001);
  const uint32_t lysosome = kind("lysosome", true, 150, 6, 0.05);
  const uint32_t vesicle = kind("vesicle", true, 40, 4, 0.5);
  const uint32_t protein = kind("protein", false, 2.5, 2.5, 10);
  const uint32_t receptor = kind("receptor", false, 2.5, 2.5, 1);
  const double protein_volume = 4.0 / 3.0 * kPi * 2.5 * 2.5 * 2.5;
  const uint64_t lysosomes = a.compartments / 10, free_vesicles = 7 * a.compartments / 10;
  const double compartments_volume = double(lysosomes) * 4.0 / 3.0 * kPi * std::pow(150, 3) +
                                     double(free_vesicles) * 4.0 / 3.0 * kPi * std::pow(40, 3);
  const double R = std::cbrt((double(a.proteins) * protein_volume / 0.15 + 5 * compartments_volume) * 3 / (4 * kPi)) + 20;
  s.kinds[cell].radius = R;
  s.box = {2 * R + 20, 2 * R + 20, 2 * R + 20};
  std::mt19937_64 rng(a.seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const auto body = [&](uint32_t k, Vec p, int64_t parent, int64_t membrane) {
    Body b;
    b.kind = k;
    b.position = p;
    b.parent = parent;
    b.membrane = membrane;
    s.bodies.push_back(b);
    return int64_t(s.bodies.size() - 1);
  };
  const auto in_ball = [&](const Vec& c, double room) {
    Vec d;
    do d = {u(rng), u(rng), u(rng)}; while (norm(d) > 1);
    return Vec{c[0] + room * d[0], c[1] + room * d[1], c[2] + room * d[2]};
  };
  const auto on_sphere = [&](const Vec& c, double m) {
    Vec d;
    do d = {u(rng), u(rng), u(rng)}; while (norm(d) > 1 || norm(d) < 0.1);
    const double n = norm(d);
    return Vec{c[0] + m * d[0] / n, c[1] + m * d[1] / n, c[2] + m * d[2] / n};
  };
  const auto dist = [](const Vec& p, const Vec& q) {
    return norm(Vec{p[0] - q[0], p[1] - q[1], p[2] - q[2]});
  };
  const Vec centre{R + 10, R + 10, R + 10};
  const int64_t c = body(cell, centre, -1, -1);
  CompartmentGrid grid{320, {}};
  std::vector<int64_t> top;  // compartments in the cytosol
  std::vector<std::vector<int64_t>> children(1);
  const auto place_compartment = [&](uint32_t k, double r) {
    for (int t = 0; t < 100000; ++t) {
      const Vec p = in_ball(centre, R - 10 - r - 2);
      if (grid.any_near(p, [&](uint32_t o) {
            return dist(p, s.bodies[o].position) < r + s.kinds[s.bodies[o].kind].radius + 1;
          }))
        continue;
      const int64_t id = body(k, p, c, -1);
      grid.add(uint32_t(id), p);
      top.push_back(id);
      return id;
    }
    throw std::runtime_error("could not place the compartments");
  };
  for (uint64_t l = 0; l < lysosomes; ++l) {
    const int64_t lys = place_compartment(lysosome, 150);
    const Vec p = s.bodies[lys].position;
    body(vesicle, {p[0] + 60, p[1], p[2]}, lys, -1);
    body(vesicle, {p[0] - 60, p[1], p[2]}, lys, -1);
  }
  for (uint64_t v = 0; v < free_vesicles; ++v) place_compartment(vesicle, 40);
  std::vector<int64_t> compartments;
  for (std::size_t i = 1; i < s.bodies.size(); ++i) compartments.push_back(int64_t(i));
  // Proteins: bound, in lumens, in the cytosol.
  const uint64_t bound = a.proteins / 20, lumen = a.proteins / 10, cytosol = a.proteins - bound - lumen;
  std::uniform_int_distribution<std::size_t> pick(0, compartments.size() - 1);
  for (uint64_t k = 0; k < bound; ++k) {
    const int64_t v = compartments[pick(rng)];
    const Kind& kv = s.kinds[s.bodies[v].kind];
    body(receptor, on_sphere(s.bodies[v].position, kv.radius - 0.5 * kv.thickness), s.bodies[v].parent, v);
  }
  for (uint64_t k = 0; k < lumen; ++k) {
    const int64_t v = compartments[pick(rng)];
    const Kind& kv = s.kinds[s.bodies[v].kind];
    for (;;) {
      const Vec p = in_ball(s.bodies[v].position, kv.radius - kv.thickness - 2.5);
      if (kv.radius > 100) {  // a lysosome: not into its vesicles
        const Vec q = s.bodies[v].position;
        if (dist(p, {q[0] + 60, q[1], q[2]}) < 45 || dist(p, {q[0] - 60, q[1], q[2]}) < 45) continue;
      }
      body(protein, p, v, -1);
      break;
    }
  }
  for (uint64_t k = 0; k < cytosol; ++k) {
    for (;;) {
      const Vec p = in_ball(centre, R - 10 - 2.5);
      if (grid.any_near(p, [&](uint32_t o) {
            return dist(p, s.bodies[o].position) < s.kinds[s.bodies[o].kind].radius + 2.5;
          }))
        continue;
      body(protein, p, c, -1);
      break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    const Setup s = crowded_cell(a);
    SimulationOptions options;
    options.skin = a.skin;
    options.phase_times = a.phase_times;
    Simulation sim(s, options);
    const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sim.run(2);  // warm up (allocations)
    sim.reset_times();
    const auto start = std::chrono::steady_clock::now();
    uint64_t done = 0;
    while (done < a.steps) {
      const uint64_t chunk = std::min(a.output_every ? a.output_every : a.steps, a.steps - done);
      sim.run(chunk);
      done += chunk;
      if (a.output_every) (void)sim.frame();
    }
    sim.finish();  // the device's last steps inside the clock
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const PhaseTimes t = sim.times();
    const double bodies = double(s.bodies.size());
    const double total = t.integrate + t.broadphase + t.forces + t.output;
    std::printf("backend        %s\n", Simulation::backend_name().c_str());
    std::printf("bodies         %.0f (1 cell, %llu compartments, %llu proteins); setup %.1f s\n", bodies,
                (unsigned long long)a.compartments, (unsigned long long)a.proteins, setup_s);
    std::printf("steps          %llu, dt %g us, skin %g nm, list builds %llu, rejected moves %llu\n",
                (unsigned long long)a.steps, a.dt, sim.skin(), (unsigned long long)t.rebuilds,
                (unsigned long long)sim.rejected_moves());
    std::printf("steps/s        %.2f\n", double(a.steps) / wall);
    std::printf("body-steps/s   %.3e\n", bodies * double(a.steps) / wall);
    if (t.timed)
      std::printf("phase          seconds   share\n");
    else
      std::printf("phase          not timed (--phase-times 1 times each phase)\n");
    const std::pair<const char*, double> phases[] = {
        {"integrate", t.integrate}, {"broad phase", t.broadphase}, {"forces", t.forces}, {"output", t.output}};
    for (const auto& [name, sec] : phases)
      if (t.timed) std::printf("  %-12s %8.3f  %5.1f%%\n", name, sec, total > 0 ? 100 * sec / total : 0.0);
    if (!a.csv.empty()) {
      std::ofstream csv(a.csv, std::ios::app);
      csv << Simulation::backend_name() << ',' << a.proteins << ',' << bodies << ',' << a.steps << ','
          << wall << ',' << double(a.steps) / wall << ',' << bodies * double(a.steps) / wall << ','
          << t.integrate << ',' << t.broadphase << ',' << t.forces << ',' << t.output << ','
          << t.rebuilds << '\n';
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_simulator: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Speed of a model with reactions and compartment events (issue 4): the model (by
// default models/receptor_recycling.yaml) tiled into K x K x K copies of its box, so a
// scenario of a few thousand bodies scales to ~1e6 with the same chemistry and density.
// Prints steps/s, body-steps/s, simulated seconds per wall-clock hour, the time split by
// phase (reactions and events included) and the events per rule; --csv appends a row.
//
//   bench_scenario [--model FILE | physiological] [--bodies N | --copies K] [--steps S]
//                  [--warmup W]
//                  [--skin S (fixed; default: automatic)] [--phase-times 1|0] [--csv FILE]
//                  [--positions FILE]
//
// --model physiological is models/receptor_cycle_physiological.yaml (the EGF receptor
// cycle at measured rates, dt 40 us, 1,201 bodies; --bodies 100000 tiles it 4^3 times,
// 76,864 bodies): the simulated seconds per wall-clock hour users plan runs by.
// --phase-times 1 (the default) times each phase (SimulationOptions::phase_times): on
// the GPU every phase then waits for the device, which a small model's steps/s pays
// for. --phase-times 0 gives the speed of an untimed run (what `nestsim run` does), with
// no split. --positions writes the last frame's ids and positions (raw int64 and double
// triples), for comparing trajectories bitwise (cmp) across builds and skins.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"

using namespace nestsim;

namespace {

struct Args {
  std::string model = NESTSIM_DEFAULT_SCENARIO;
  uint64_t bodies = 0, copies = 1, steps = 200, warmup = 20;
  double skin = 0;  // 0: the automatic, adaptive skin
  bool phase_times = true;
  std::string csv, positions;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--model") a.model = value == "physiological" ? NESTSIM_PHYSIOLOGICAL_SCENARIO : value;
    else if (key == "--bodies") a.bodies = std::stoull(value);
    else if (key == "--copies") a.copies = std::stoull(value);
    else if (key == "--steps") a.steps = std::stoull(value);
    else if (key == "--warmup") a.warmup = std::stoull(value);
    else if (key == "--skin") a.skin = std::stod(value);
    else if (key == "--phase-times") a.phase_times = std::stoi(value) != 0;
    else if (key == "--csv") a.csv = value;
    else if (key == "--positions") a.positions = value;
    else throw std::invalid_argument("unknown option " + key);
  }
  return a;
}

// K^3 copies of the setup, copy (a, b, c) shifted by (a, b, c) box edges.
model::Setup tile(const model::Setup& one, uint64_t k) {
  model::Setup s = one;
  const std::size_t n = one.bodies.size();
  s.bodies.clear();
  s.bodies.reserve(n * k * k * k);
  for (uint64_t a = 0; a < k; ++a)
    for (uint64_t b = 0; b < k; ++b)
      for (uint64_t c = 0; c < k; ++c) {
        const int64_t base = int64_t(s.bodies.size());
        const double shift[3] = {double(a) * one.box[0], double(b) * one.box[1], double(c) * one.box[2]};
        for (model::Body body : one.bodies) {
          for (int d = 0; d < 3; ++d) body.position[d] += shift[d];
          if (body.parent >= 0) body.parent += base;
          if (body.membrane >= 0) body.membrane += base;
          s.bodies.push_back(body);
        }
      }
  for (int d = 0; d < 3; ++d) s.box[d] = one.box[d] * double(k);
  s.capacity = std::max<uint64_t>(one.capacity, n) * k * k * k;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    const model::Model model = model::load_model(a.model);
    const model::Setup one = model::make_setup(model);
    uint64_t k = a.copies;
    if (a.bodies > 0)
      k = std::max<uint64_t>(1, uint64_t(std::llround(std::cbrt(double(a.bodies) / double(one.bodies.size())))));
    const model::Setup s = tile(one, k);
    sim::SimulationOptions options;
    options.skin = a.skin;
    options.phase_times = a.phase_times;
    sim::Simulation sim(s, options);
    sim.run(a.warmup);
    const model::Frame before = sim.frame();
    sim.reset_times();
    const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto start = std::chrono::steady_clock::now();
    sim.run(a.steps);
    sim.finish();  // the device's last steps inside the clock
    const sim::PhaseTimes t = sim.times();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const model::Frame after = sim.frame();
    uint64_t live = 0;
    for (int64_t id : after.id) live += id >= 0 ? 1 : 0;
    std::printf("backend        %s\n", sim::Simulation::backend_name().c_str());
    std::printf("model          %s x %llu copies (%llu^3)\n", a.model.c_str(),
                (unsigned long long)(k * k * k), (unsigned long long)k);
    std::printf("bodies         %zu at start, %llu after; setup %.1f s\n", s.bodies.size(),
                (unsigned long long)live, setup_s);
    std::printf("steps          %llu after %llu warm-up, dt %g, list builds %llu, skin now %g\n",
                (unsigned long long)a.steps, (unsigned long long)a.warmup, s.dt,
                (unsigned long long)t.rebuilds, sim.skin());
    std::printf("steps/s        %.2f\n", double(a.steps) / wall);
    std::printf("body-steps/s   %.3e\n", double(live) * double(a.steps) / wall);
    // Biological time per wall-clock hour: what a cell biologist plans a run by.
    const double simulated_s = double(a.steps) * s.dt * model.units.seconds_per_time();
    std::printf("simulated s/h  %.4g (%.4g s of biology in %.2f s)\n",
                simulated_s / wall * 3600, simulated_s, wall);
    if (t.timed)
      std::printf("phase          seconds   share\n");
    else
      std::printf("phase          not timed (--phase-times 1 times each phase)\n");
    const double total = t.integrate + t.broadphase + t.forces + t.reactions;
    const std::pair<const char*, double> phases[] = {{"integrate", t.integrate},
                                                     {"broad phase", t.broadphase},
                                                     {"forces", t.forces},
                                                     {"reactions", t.reactions}};
    for (const auto& [name, sec] : phases)
      if (t.timed)
        std::printf("  %-12s %8.3f  %5.1f%%\n", name, sec, total > 0 ? 100 * sec / total : 0.0);
    std::printf("events in the timed steps, per rule\n");
    for (std::size_t r = 0; r < s.reactions.size(); ++r)
      std::printf("  %-20s %llu\n", s.reactions[r].name.c_str(),
                  (unsigned long long)(after.reaction_events[r] - before.reaction_events[r]));
    if (!a.positions.empty()) {
      std::ofstream out(a.positions, std::ios::binary);
      out.write(reinterpret_cast<const char*>(after.id.data()),
                std::streamsize(after.id.size() * sizeof(after.id[0])));
      out.write(reinterpret_cast<const char*>(after.position.data()),
                std::streamsize(after.position.size() * sizeof(after.position[0])));
      if (!out) throw std::runtime_error("cannot write " + a.positions);
    }
    if (!a.csv.empty()) {
      std::ofstream csv(a.csv, std::ios::app);
      csv << sim::Simulation::backend_name() << ',' << a.model << ',' << k * k * k << ','
          << s.bodies.size() << ',' << a.steps << ',' << double(a.steps) / wall << ','
          << t.integrate << ',' << t.broadphase << ',' << t.forces << ',' << t.reactions << '\n';
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_scenario: %s\n", e.what());
    return 1;
  }
}

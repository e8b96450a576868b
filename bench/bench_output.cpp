// The cost of trajectory output to the steps (issue 36): N proteins (a jittered cubic
// lattice at volume fraction 0.15, the crowded cell's cytosol; periodic box) stepped
// with no output, with frames copied to the host between the steps (`sync`:
// Simulation::frame(), as `nestsim run --frames-in-flight 0`), and with frames copied
// aside and taken on a writer thread while the steps go on (`async`: snapshot() and a
// WriteQueue of depth F, as `nestsim run`). With --trajectory the frames are also written
// to H5MD files (FILE.sync.h5, FILE.async.h5); without, only copied. One simulation,
// the modes one after another, each S steps after a warm-up. Prints body-steps/s per mode
// and where a frame's time goes.
//
//   bench_output [--bodies N] [--steps S] [--output-every K] [--frames-in-flight F]
//                [--trajectory FILE] [--modes none,sync,async]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "nestsim/io/h5md.h"
#include "nestsim/io/write_queue.h"
#include "nestsim/sim/simulation.h"

using namespace nestsim;

namespace {

struct Args {
  uint64_t bodies = 100000, steps = 200, output_every = 50, frames_in_flight = 2;
  std::string trajectory, modes = "none,sync,async";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--bodies")
      a.bodies = std::stoull(value);
    else if (key == "--steps")
      a.steps = std::stoull(value);
    else if (key == "--output-every")
      a.output_every = std::stoull(value);
    else if (key == "--frames-in-flight")
      a.frames_in_flight = std::stoull(value);
    else if (key == "--trajectory")
      a.trajectory = value;
    else if (key == "--modes")
      a.modes = value;
    else
      throw std::invalid_argument("unknown option " + key);
  }
  if (a.output_every == 0 || a.frames_in_flight == 0 || a.bodies == 0)
    throw std::invalid_argument("--bodies, --output-every and --frames-in-flight must be >= 1");
  return a;
}

// Proteins of radius 2.5 nm, D 10 nm^2/us, one per lattice cell of 7.6 nm (volume
// fraction 0.15), each moved up to 1 nm from its cell's centre: no overlaps.
model::Setup lattice(uint64_t n) {
  model::Setup s;
  const double spacing = 7.6;
  const uint64_t side = uint64_t(std::ceil(std::cbrt(double(n)) - 1e-9));
  s.box = {spacing * double(side), spacing * double(side), spacing * double(side)};
  s.dt = 1e-4;
  s.seed = 1;
  s.repulsion = 10;
  s.steps = 1;
  s.output_every = 1;
  model::Kind protein;
  protein.name = "protein";
  protein.radius = protein.thickness = 2.5;
  protein.diffusion = 10;
  s.kinds.push_back(protein);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> jitter(-1, 1);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t c[3] = {i % side, i / side % side, i / side / side};
    model::Body b;
    for (int d = 0; d < 3; ++d)
      b.position[std::size_t(d)] = spacing * (double(c[d]) + 0.5) + jitter(rng);
    s.bodies.push_back(b);
  }
  s.capacity = n;
  return s;
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Result {
  double wall = 0, on_steps = 0, waited = 0, copy = 0, aside = 0;
  uint64_t frames = 0;
  io::WriteTimes write;
};

Result run_mode(const std::string& mode, sim::Simulation& simulation, const model::Setup& setup,
                const Args& a) {
  std::unique_ptr<io::H5mdWriter> writer;
  if (!a.trajectory.empty() && mode != "none")
    writer = std::make_unique<io::H5mdWriter>(a.trajectory + "." + mode + ".h5", setup, "bench");
  Result r;
  std::unique_ptr<io::WriteQueue<sim::PendingFrame>> queue;
  if (mode == "async")
    queue = std::make_unique<io::WriteQueue<sim::PendingFrame>>(
        a.frames_in_flight, [&](sim::PendingFrame& p) {
          const Clock::time_point t = Clock::now();
          const model::Frame f = p.take();
          r.copy += since(t);
          if (writer) writer->write(f);
        });
  simulation.reset_times();
  const Clock::time_point start = Clock::now();
  for (uint64_t done = 0; done < a.steps;) {
    const uint64_t chunk = std::min(a.output_every, a.steps - done);
    simulation.run(chunk);
    done += chunk;
    if (mode == "none") continue;
    const Clock::time_point t = Clock::now();
    if (mode == "sync") {
      const model::Frame f = simulation.frame();
      r.copy += since(t);
      if (writer) writer->write(f);
    } else {
      queue->wait_for_room();
      r.waited += since(t);
      queue->push(simulation.snapshot());
    }
    r.on_steps += since(t);
    ++r.frames;
  }
  if (queue) queue->finish();  // every frame taken is written, inside the timing
  r.wall = since(start);
  // frame(): the copy to the host; snapshot(): the copy aside (both after the frame's
  // broad-phase pair count, timed as broad phase).
  r.aside = simulation.times().output;
  if (writer) r.write = writer->times();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const model::Setup setup = lattice(a.bodies);
    sim::Simulation simulation(setup);
    simulation.run(2);  // warm up (allocations)
    std::printf(
        "backend %s; %llu bodies, %llu steps per mode, a frame every %llu, %llu in flight%s\n",
        sim::Simulation::backend_name().c_str(), (unsigned long long)a.bodies,
        (unsigned long long)a.steps, (unsigned long long)a.output_every,
        (unsigned long long)a.frames_in_flight,
        a.trajectory.empty() ? ", frames not written (--trajectory)" : "");
    std::printf("%-6s %13s %9s %s\n", "mode", "body-steps/s", "vs none",
                "per frame (ms): on the steps' thread [copy (aside), waited for room] | "
                "writer: copy+assemble, rows, HDF5 write, flush");
    double none_rate = 0;
    std::size_t from = 0;
    while (from <= a.modes.size()) {
      const std::size_t comma = std::min(a.modes.find(',', from), a.modes.size());
      const std::string mode = a.modes.substr(from, comma - from);
      from = comma + 1;
      if (mode != "none" && mode != "sync" && mode != "async")
        throw std::invalid_argument("--modes: none, sync or async, not '" + mode + "'");
      const Result r = run_mode(mode, simulation, setup, a);
      const double rate = double(a.bodies) * double(a.steps) / r.wall;
      if (mode == "none") none_rate = rate;
      const double per = r.frames ? 1e3 / double(r.frames) : 0;
      const bool async = mode == "async";
      std::printf("%-6s %13.3e %8.1f%% %.1f [%.1f, %.1f] | %.1f, %.1f, %.1f, %.1f\n", mode.c_str(),
                  rate, none_rate > 0 ? 100 * rate / none_rate : 100.0, r.on_steps * per,
                  r.aside * per, r.waited * per, async ? r.copy * per : 0.0, r.write.rows * per,
                  r.write.write * per, r.write.flush * per);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_output: %s\n", e.what());
    return 1;
  }
  return 0;
}

// `nestsim run`: a model file in, an H5MD trajectory out.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "commands/frame_output.h"
#include "data_dir.h"
#include "ensemble/ensemble_spec.h"
#include "nestsim/io/h5md.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/io/repair.h"
#include "nestsim/model/resume.h"
#include "nestsim/sim/simulation.h"
#include "nestsim/version.h"

namespace nestsim::app {

const char* const kRunHelp =
    "usage: nestsim run [MODEL.yaml] [-o OUT.h5] [--steps N] [--seed S]\n"
    "                   [--set KEY=VALUE]... [--collision hollow|solid] [--force]\n"
    "                   [--frames-in-flight F] [--phase-times]\n"
    "       nestsim run --resume OUT.h5 --steps N [--frames-in-flight F] [--phase-times]\n"
    "\n"
    "Runs a model by Brownian dynamics and writes an H5MD trajectory (one frame every\n"
    "simulation.output.every steps, and always the last step).\n"
    "\n"
    "MODEL.yaml     the model (models/README.md documents the format); without it, the\n"
    "               default model, models/default.yaml\n"
    "-o OUT.h5      the trajectory (default: the model's simulation.output.file)\n"
    "--steps N      total steps of the run (default: the model's simulation.steps)\n"
    "--seed S       random seed (default: the model's simulation.seed)\n"
    "--set K=V      set the model's key K (dotted: simulation.dt, reactions.binding.rate,\n"
    "               place.2.count) to the YAML value V before the model is validated;\n"
    "               repeatable. Errors name the --set argument\n"
    "--collision C  the broad phase that builds the neighbour lists: hollow (HSX, nested\n"
    "               hollow spheres) or solid (SSX, bounding spheres, as other tools do);\n"
    "               the trajectory is the same, only the lists' size and cost differ\n"
    "               (default: the model's collision, else hollow). Stored in the\n"
    "               trajectory's /parameters/collision; --resume keeps it\n"
    "--force        overwrite an existing trajectory\n"
    "--resume F     continue the trajectory F from its last frame up to step N (--steps);\n"
    "               the result is bitwise the trajectory of an uninterrupted run\n"
    "--frames-in-flight F  frames copied from the device and not yet written, at most\n"
    "               (default 2): a thread writes them while the steps go on, and the steps\n"
    "               wait when F are in flight. Each costs 72 bytes per slot of device and\n"
    "               as much pinned host memory (CUDA; 720 MB each at 1e7 bodies), plus\n"
    "               ~160 bytes per slot on the host while it is written. 0: each frame\n"
    "               written before the steps go on\n"
    "--phase-times  time each phase of a step (integrate, broad phase, forces, reactions,\n"
    "               output) and print the split at the end. On a GPU each timed phase\n"
    "               waits for the device, which slows a small model's steps\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM finishes the current frame, writes it and the frames in\n"
    "flight, and stops (exit code 130 or 143); resume with --resume. A frame the disk\n"
    "cannot take (full, a file size limit) is left out whole, the run stops with exit\n"
    "code 1, and --resume continues once there is room. Errors in the model are reported as\n"
    "'MODEL.yaml:LINE:COLUMN: key: what is wrong' with exit code 2, and nothing is\n"
    "written.\n";

namespace {

// The signal that asked the run to stop (SIGINT, SIGTERM), 0 while none has.
std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int signal) {
  if (g_stop_signal.exchange(signal) != 0) {
    std::signal(signal, SIG_DFL);  // a second one stops at once; the file stays readable
    std::raise(signal);
  }
  static const char note[] = "\nnestsim: stopping at the next frame (again: at once)\n";
  const ssize_t written = ::write(2, note, sizeof note - 1);  // async-signal-safe
  (void)written;
}

// Ctrl-C and SIGTERM (what schedulers and `kill` send) end the run at the next frame,
// from the start of the command: one that comes during the set-up stops the run at its
// first frame.
class StopSignals {
 public:
  StopSignals()
      : previous_int_(std::signal(SIGINT, on_stop_signal)),
        previous_term_(std::signal(SIGTERM, on_stop_signal)) {
    g_stop_signal = 0;
  }
  ~StopSignals() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

struct RunArgs {
  std::string model, output, resume;
  bool has_steps = false, has_seed = false, force = false;
  uint64_t steps = 0, seed = 0;
  std::size_t frames_in_flight = 2;
  bool phase_times = false;  // --phase-times: SimulationOptions::phase_times
  std::optional<model::Collision> collision;
  std::vector<SetArg> sets;  // --set KEY=VALUE, in order
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

uint64_t parse_count(const std::string& flag, const std::string& text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError(flag + " needs a whole number >= 0, not '" + text + "'");
  return v;
}

const char* collision_name(model::Collision c) {
  return c == model::Collision::solid ? "solid" : "hollow";
}

model::Collision parse_collision(const std::string& flag, const std::string& text) {
  if (text == "hollow") return model::Collision::hollow;
  if (text == "solid") return model::Collision::solid;
  throw UsageError(flag + " needs hollow or solid, not '" + text + "'");
}

RunArgs parse(const std::vector<std::string>& args) {
  RunArgs r;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    auto value = [&]() -> const std::string& {
      if (k + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++k];
    };
    if (a == "-o" || a == "--output") {
      r.output = value();
      if (r.output.empty()) throw UsageError(a + ": the trajectory's file name is empty");
    }
    else if (a == "--steps") { r.steps = parse_count(a, value()); r.has_steps = true; }
    else if (a == "--seed") { r.seed = parse_count(a, value()); r.has_seed = true; }
    else if (a == "--resume") r.resume = value();
    else if (a == "--collision") r.collision = parse_collision(a, value());
    else if (a == "--force") r.force = true;
    else if (a == "--phase-times") r.phase_times = true;
    else if (a == "--frames-in-flight") r.frames_in_flight = std::size_t(parse_count(a, value()));
    else if (a == "--set") {
      try {
        r.sets.push_back(parse_set(a, value()));
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
    else if (r.model.empty()) r.model = a;
    else throw UsageError("more than one model given ('" + r.model + "', '" + a + "')");
  }
  if (!r.resume.empty()) {
    if (!r.model.empty()) throw UsageError("--resume takes the model from the trajectory");
    if (r.has_seed) throw UsageError("--resume takes the seed from the trajectory");
    if (!r.sets.empty()) throw UsageError("--resume takes the model from the trajectory; no --set");
    if (!r.output.empty() && r.output != r.resume)
      throw UsageError("--resume appends to its own file; -o cannot name another");
    if (!r.has_steps) throw UsageError("--resume needs --steps N (the run's total steps)");
  }
  return r;
}

// models/default.yaml of the program's data (data_dir.h).
std::string default_model() {
  const std::filesystem::path model = find_data("models/default.yaml");
  if (model.empty())
    throw std::runtime_error("the default model (models/default.yaml) was not found; give a model file");
  return model.string();
}

std::string clock(double seconds) {
  const long s = long(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

// Progress: a bar on a terminal, a log line per frame otherwise.
class Progress {
 public:
  Progress(uint64_t first, uint64_t last) : first_(first), last_(last), tty_(::isatty(2)) {}
  void update(uint64_t step, bool frame_written) {
    const double elapsed = seconds();
    const double done = double(step - first_), total = double(last_ - first_);
    const double rate = elapsed > 0 ? done / elapsed : 0;
    const double eta = rate > 0 ? (total - done) / rate : 0;
    const double frac = total > 0 ? done / total : 1;
    if (tty_) {
      const int width = 30, fill = int(frac * width + 0.5);
      std::fprintf(stderr, "\r[%s%s] %3.0f%% step %llu/%llu  %.1f steps/s  ETA %s ",
                   std::string(std::size_t(fill), '#').c_str(),
                   std::string(std::size_t(width - fill), '.').c_str(), 100 * frac,
                   static_cast<unsigned long long>(step), static_cast<unsigned long long>(last_),
                   rate, clock(eta).c_str());
      if (step == last_) std::fprintf(stderr, "\n");
    } else if (frame_written) {
      std::fprintf(stderr, "step %llu/%llu  %.1f steps/s  elapsed %s  ETA %s\n",
                   static_cast<unsigned long long>(step), static_cast<unsigned long long>(last_),
                   rate, clock(elapsed).c_str(), clock(eta).c_str());
    }
    std::fflush(stderr);
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  uint64_t first_, last_;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

uint64_t live_bodies(const model::Frame& f) {
  return uint64_t(std::count_if(f.id.begin(), f.id.end(), [](int64_t id) { return id >= 0; }));
}

// The run's summary on standard output: speed, time by phase, output.
void report(const sim::Simulation& simulation, uint64_t frames, const io::WriteTimes& w,
            const FrameOutput& output, std::size_t frames_in_flight, uint64_t bodies,
            uint64_t first, uint64_t last, double wall, const std::string& out) {
  const sim::PhaseTimes t = simulation.times();
  const double steps = double(last - first);
  std::printf(
      "nestsim: %llu bodies, %llu steps (to step %llu) in %.2f s: %.1f steps/s, %.3g "
      "body-steps/s\n",
      static_cast<unsigned long long>(bodies), static_cast<unsigned long long>(last - first),
      static_cast<unsigned long long>(last), wall, wall > 0 ? steps / wall : 0,
      wall > 0 ? steps * double(bodies) / wall : 0);
  // The phases are timed only when asked (SimulationOptions::phase_times): on the GPU a
  // timed phase waits for the device, several times a step.
  if (t.timed)
    std::printf(
        "  time by phase: integrate %.2f s, broad phase %.2f s (%llu list builds), forces "
        "%.2f s, reactions and events %.2f s, output %.2f s; %llu moves rejected at "
        "membranes\n",
        t.integrate, t.broadphase, static_cast<unsigned long long>(t.rebuilds), t.forces,
        t.reactions, t.output, static_cast<unsigned long long>(simulation.rejected_moves()));
  else
    std::printf("  phases not timed; %llu list builds, %llu moves rejected at membranes\n",
                static_cast<unsigned long long>(t.rebuilds),
                static_cast<unsigned long long>(simulation.rejected_moves()));
  const FrameOutput::Times o = output.times();
  std::printf(
      "  output (%zu frames in flight): the steps waited %.2f s for the writer; writer: "
      "copy to the host %.2f s, rows %.2f s, HDF5 writes %.2f s, flushes %.2f s\n",
      frames_in_flight, o.waited, o.copy, w.rows, w.write, w.flush);
  std::printf("  backend %s; trajectory %s (%llu frames)\n",
              sim::Simulation::backend_name().c_str(), out.c_str(),
              static_cast<unsigned long long>(frames));
}

int simulate(sim::Simulation& simulation, io::H5mdWriter& writer, const model::Setup& setup,
             uint64_t bodies, const std::string& out, std::size_t frames_in_flight) {
  const uint64_t first = simulation.step(), last = setup.steps;
  const uint64_t every = std::max<uint64_t>(1, setup.output_every);
  // Steps per call between checks of Ctrl-C and of the progress display.
  const uint64_t slice = std::max<uint64_t>(1, std::min<uint64_t>(every, 50));
  Progress progress(first, last);
  FrameOutput output(writer, frames_in_flight);
  try {
    while (simulation.step() < last) {
      if (const int stop = g_stop_signal; stop != 0) {  // after the frame taken last
        output.finish();  // every frame taken is written
        std::fprintf(stderr,
                     "\nnestsim: stopped by %s at step %llu; the trajectory is complete up to "
                     "there. Continue with: nestsim run --resume %s --steps %llu\n",
                     stop == SIGTERM ? "SIGTERM" : "Ctrl-C (SIGINT)",
                     static_cast<unsigned long long>(simulation.step()), out.c_str(),
                     static_cast<unsigned long long>(last));
        writer.close();
        return 128 + stop;
      }
      const uint64_t next_frame = std::min(last, (simulation.step() / every + 1) * every);
      while (simulation.step() < next_frame) {
        simulation.run(std::min(slice, next_frame - simulation.step()));
        progress.update(simulation.step(), false);
      }
      output.write(simulation);
      progress.update(simulation.step(), true);
    }
    output.finish();
  } catch (const io::WriteError& e) {
    std::fprintf(stderr, "\nnestsim: %s. Make room, then continue with: nestsim run --resume "
                 "%s --steps %llu\n",
                 e.what(), out.c_str(), static_cast<unsigned long long>(last));
    return 1;
  }
  const uint64_t frames = writer.frames();
  const io::WriteTimes write_times = writer.times();
  writer.close();
  report(simulation, frames, write_times, output, frames_in_flight, bodies, first, last,
         progress.seconds(), out);
  return 0;
}

int fresh_run(const RunArgs& a) {
  const std::string model_path = a.model.empty() ? default_model() : a.model;
  model::Model model = load_model_with_sets(model_path, a.sets);
  if (a.has_steps) model.steps = a.steps;
  if (a.has_seed) model.seed = a.seed;
  // The output path before any work (placement can take a while).
  const std::string out = a.output.empty() ? model.output_file : a.output;
  try {
    io::check_output_path(out, a.force);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  model::Setup setup;
  try {
    setup = model::make_setup(model, [] { return g_stop_signal.load() != 0; });
  } catch (const model::PlacementStopped&) {
    const int stop = g_stop_signal.load();
    std::fprintf(stderr, "\nnestsim: stopped by %s while placing the bodies; nothing was written\n",
                 stop == SIGTERM ? "SIGTERM" : "Ctrl-C (SIGINT)");
    return 128 + stop;
  }
  if (a.collision) setup.collision = *a.collision;
  sim::SimulationOptions options;
  options.phase_times = a.phase_times;
  sim::Simulation simulation(setup, options);  // validates the initial state before any file exists
  std::fprintf(stderr, "nestsim: %s, %zu bodies, %llu steps of %g %s, %s collision, backend %s\n",
               model_path.c_str(), setup.bodies.size(),
               static_cast<unsigned long long>(setup.steps), setup.dt, setup.time_unit.c_str(),
               collision_name(setup.collision), sim::Simulation::backend_name().c_str());
  for (const auto& rule : model.reactions)  // rates given with units or as kon, converted
    if (const std::string line = model::describe_rate(rule, model); !line.empty())
      std::fprintf(stderr, "  %s\n", line.c_str());
  const bool replacing = a.force && ::access(out.c_str(), F_OK) == 0;  // a file, kept
  io::H5mdWriter writer(out, setup, NESTSIM_VERSION_STRING, a.force);
  if (replacing)
    std::fprintf(stderr,
                 "nestsim: %s is kept until this run ends; the new trajectory is written to "
                 "%s and replaces it then\n",
                 out.c_str(), writer.file_written().c_str());
  try {
    writer.write(simulation.frame());
  } catch (const io::WriteError& e) {  // a file without a frame cannot be resumed
    try {
      writer.close();  // a replacement without a frame is removed, the old file kept
    } catch (const std::exception&) {
    }
    if (!replacing) std::remove(out.c_str());
    throw std::runtime_error(std::string(e.what()) + "; removed it" +
                             (replacing ? " and kept the file it was to replace" : ""));
  }
  return simulate(simulation, writer, setup, setup.bodies.size(), out, a.frames_in_flight);
}

// The stored model (/parameters/model) must be the one that wrote the frames: the run
// computes a frame's model time as step x dt, so the last frame's time
// (/observables/model_time) must be exactly that with the stored model's dt. An edited
// model (another dt) would continue with time going backwards or jumping.
void check_model_matches_frames(const std::string& path, const io::Checkpoint& c,
                                const model::Setup& setup) {
  const double expected = double(c.frame.step) * setup.dt;
  if (c.frame.time == expected) return;
  char what[400];
  std::snprintf(what, sizeof what,
                "/parameters/model does not match the frames: its dt (%.17g) gives model "
                "time %.17g at step %llu, but /observables/model_time holds %.17g there "
                "(the stored model was edited?); it cannot be resumed",
                setup.dt, expected, static_cast<unsigned long long>(c.frame.step),
                c.frame.time);
  throw io::InputError(path, 0, what);
}

int resumed_run(const RunArgs& a) {
  const model::Resumption r = model::prepare_resume(a.resume, a.steps, a.collision);
  const io::Checkpoint& c = r.checkpoint;
  const model::Setup& setup = r.setup;
  check_model_matches_frames(a.resume, c, setup);
  if (r.repair.repaired)
    std::fprintf(stderr, "nestsim run: %s; continuing from step %llu\n",
                 io::describe_repair(a.resume, r.repair).c_str(),
                 static_cast<unsigned long long>(c.frame.step));
  sim::SimulationOptions options;
  options.phase_times = a.phase_times;
  sim::Simulation simulation(setup, options);
  simulation.restore(c.frame);
  io::H5mdWriter writer = io::H5mdWriter::append(a.resume);
  std::fprintf(stderr, "nestsim: resuming %s at step %llu, up to step %llu\n",
               a.resume.c_str(), static_cast<unsigned long long>(c.frame.step),
               static_cast<unsigned long long>(a.steps));
  return simulate(simulation, writer, setup, live_bodies(c.frame), a.resume, a.frames_in_flight);
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << kRunHelp;
    return 0;
  }
  RunArgs a;
  try {
    a = parse(args);
  } catch (const UsageError& e) {
    std::cerr << "nestsim run: " << e.what() << "\n\n" << kRunHelp;
    return 2;
  }
  const StopSignals stop_signals;
  try {
    return a.resume.empty() ? fresh_run(a) : resumed_run(a);
  } catch (const UsageError& e) {
    std::cerr << "nestsim run: " << e.what() << "\n";
    return 2;
  } catch (const io::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "nestsim run: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace nestsim::app

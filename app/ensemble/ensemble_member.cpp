#include "ensemble_member.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <sys/stat.h>

#include "ensemble/ensemble_lock.h"
#include "nestsim/io/h5md.h"
#include "nestsim/model/placement.h"
#include "nestsim/io/repair.h"
#include "nestsim/model/resume.h"
#include "nestsim/sim/simulation.h"
#include "nestsim/version.h"

namespace nestsim::app {

const char* status_name(MemberStatus s) {
  switch (s) {
    case MemberStatus::done: return "done";
    case MemberStatus::stopped: return "stopped";
    default: return "failed";
  }
}

namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The engine and the open trajectory of one member, fresh or continued.
struct Running {
  std::unique_ptr<sim::Simulation> simulation;
  std::unique_ptr<io::H5mdWriter> writer;
  uint64_t last = 0, every = 1;
  std::string how;
};

// Continues `out` when it is this member's and readable (repaired first when a kill
// damaged it); false when it must be (re)started, with r.how saying why when the file was
// damaged beyond repair. `complete` is set when it already holds the last step.
bool try_resume(const model::Model& model, const std::string& out, Running& r, bool& complete) {
  io::Repair repair;
  try {
    repair = io::repair_trajectory(out);
  } catch (const std::exception& e) {  // deterministic: a new run gives the same result
    r.how = std::string("run again from step 0: ") + e.what();
    return false;
  }
  io::Checkpoint c;
  try {
    c = io::read_last_frame(out);
  } catch (const std::exception&) {
    return false;  // killed before its first frame, or not a trajectory: start again
  }
  if (c.model_text != model.text || c.seed != model.seed) return false;
  if (c.frame.step >= model.steps) {
    complete = true;
    return true;
  }
  // What `nestsim run --resume` does: the file's model, seed, collision and rules.
  const model::Resumption resumption = model::prepare_resume(out, model.steps);
  const model::Setup& setup = resumption.setup;
  r.last = setup.steps;
  r.every = std::max<uint64_t>(1, setup.output_every);
  r.simulation = std::make_unique<sim::Simulation>(setup);
  r.simulation->restore(resumption.checkpoint.frame);
  r.writer = std::make_unique<io::H5mdWriter>(io::H5mdWriter::append(out));
  r.how = "resumed at step " + std::to_string(c.frame.step);
  if (repair.repaired) r.how += " (" + io::describe_repair(out, repair) + ")";
  return true;
}

void start_fresh(const model::Model& model, const std::string& out, Running& r) {
  io::check_output_path(out, true);
  const model::Setup setup = model::make_setup(model);
  r.last = setup.steps;
  r.every = std::max<uint64_t>(1, setup.output_every);
  r.simulation = std::make_unique<sim::Simulation>(setup);
  r.writer = std::make_unique<io::H5mdWriter>(out, setup, NESTSIM_VERSION_STRING, true);
  r.writer->write(r.simulation->frame());
  if (r.how.empty()) r.how = "run";
}

// The frame schedule of `nestsim run`: every `every` steps and the last step.
bool advance(Running& r, const std::atomic<int>& stop) {
  sim::Simulation& s = *r.simulation;
  while (s.step() < r.last) {
    if (stop.load() != 0) return false;
    const uint64_t next_frame = std::min(r.last, (s.step() / r.every + 1) * r.every);
    s.run(next_frame - s.step());
    r.writer->write(s.frame());
  }
  return true;
}

}  // namespace

MemberOutcome run_member(const MemberJob& job, const std::atomic<int>& stop) {
  const auto start = std::chrono::steady_clock::now();
  MemberOutcome outcome;
  try {
    const EnsembleLock lock = EnsembleLock::member(job.dir, job.index, job.out);
    model::Model model = load_model_with_sets(job.model_path, job.sets);
    model.seed = job.seed;
    if (job.steps) model.steps = *job.steps;
    Running r;
    bool complete = false;
    if (!(file_exists(job.out) && try_resume(model, job.out, r, complete))) {
      if (file_exists(job.out)) std::remove(job.out.c_str());
      start_fresh(model, job.out, r);
    }
    if (complete) {
      outcome.status = MemberStatus::done;
      outcome.message = "complete before this run";
    } else {
      const bool finished = advance(r, stop);
      r.writer->close();
      outcome.status = finished ? MemberStatus::done : MemberStatus::stopped;
      outcome.message = finished ? r.how
                                 : "stopped at step " + std::to_string(r.simulation->step()) +
                                       "; the same command resumes it";
    }
  } catch (const std::bad_alloc& e) {
    outcome.message = std::string("out of memory (") + e.what() + ")";
  } catch (const std::exception& e) {
    outcome.message = e.what();
  }
  outcome.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace nestsim::app

// One member of an ensemble: run, resumed or found complete, into its own trajectory
// (the writer and frame schedule of `nestsim run`, so that the file is bitwise the one
// `nestsim run --set ... --seed S` writes).
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ensemble/ensemble_spec.h"

namespace nestsim::app {

struct MemberJob {
  uint64_t index = 0;
  std::string model_path;
  std::vector<SetArg> sets;
  uint64_t seed = 0;
  std::optional<uint64_t> steps;
  std::string out;  // DIR/members/NNNN.h5
  std::string dir;  // DIR
};

enum class MemberStatus { done, failed, stopped };
const char* status_name(MemberStatus s);  // "done", "failed", "stopped"

struct MemberOutcome {
  MemberStatus status = MemberStatus::failed;
  std::string message;  // what failed, or how the member was run (fresh, resumed, ...)
  double wall = 0;      // seconds this attempt took
};

// Runs the member to its last step and never throws: a failure (a bad --set value, a
// model the engine refuses, out of memory, a full disk) is the outcome's message. An
// existing trajectory of the same member (same model text and seed) is continued from
// its last complete frame, bitwise; one that cannot be read, or belongs to another
// model, is replaced. `stop` (Ctrl-C, SIGTERM) ends the run after the next frame. The
// member's lock (ensemble_lock.h) is held throughout: while another process still writes
// the same member, this one waits for it and touches nothing.
MemberOutcome run_member(const MemberJob& job, const std::atomic<int>& stop);

}  // namespace nestsim::app

// DIR/ensemble.h5, the ensemble's index, written by one process (rank 0) and opened
// and closed for each member it records, so that it can be read while the ensemble
// runs (between two records; HDF5's file lock makes a writer wait for readers).
//
//   /                 attrs definition (EnsembleSpec::definition), creator, members,
//                     points, replicas, model_path, base_seed
//   /parameters/model the model file's text as read
//   /scan/keys[S], /scan/values[P][S]   the scan table: point p sets keys[s] = values[p][s]
//   /members/NNNN/    one group per member that ended (done, failed or stopped), attrs:
//                     index, point, replica, seed, status, message, wall_time (seconds of
//                     the last attempt), command (`nestsim run ...` that gives the same
//                     trajectory), file, parameters (KEY=VALUE of its --set edits);
//                     for a member with frames, its observables over time:
//       step[F], time[F]              int64, float64 (model time unit, attr unit)
//       kind_count[F][K]              bodies by kind (attr kinds)
//       container_count[F][K][K+1]    by the kind of the parent (last column: none)
//       membrane_count[F][K][K+1]     by the kind of the membrane holding it (last: none)
//       reactions[F][R]               events per rule in the output interval ending at
//                                     the frame (attr rules)
//
// A member is complete when its group says `done` and its trajectory exists; the rest
// are (re)run. Observables are those of the member's trajectory (nestsim/io/h5md.h),
// copied when the member ends.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ensemble/ensemble_member.h"
#include "ensemble/ensemble_spec.h"

namespace nestsim::app {

std::string index_file(const std::string& dir);  // DIR/ensemble.h5

// Creates DIR/ensemble.h5 for `spec`, or checks that the existing one is the same
// ensemble (throws std::invalid_argument saying what differs and what to do).
void prepare_index(const std::string& dir, const EnsembleSpec& spec, const model::Model& model);

// Per member: whether the index records it done with its trajectory present.
std::vector<bool> completed_members(const std::string& dir, const EnsembleSpec& spec);

// Records member `m`'s outcome and, when its trajectory has frames, its observables.
void record_member(const std::string& dir, const EnsembleSpec& spec, uint64_t member,
                   const MemberOutcome& outcome);

// What an analysis reads back of one member.
struct MemberSeries {
  uint64_t index = 0, point = 0;
  std::string status, message;
  // KIND, "KIND in PARENT", "KIND outside every compartment", "KIND on MEMBRANE",
  // "events RULE" (in the output interval ending at the frame), "events RULE since start"
  std::vector<std::string> columns;
  std::vector<double> time;                // [F]
  std::vector<std::vector<double>> values;  // [F][column]
};

struct EnsembleIndex {
  std::vector<std::string> scan_keys;
  std::vector<std::vector<std::string>> scan_values;  // [point][key]
  uint64_t members = 0, replicas = 1;
  std::string time_unit;
  std::vector<MemberSeries> ended;  // the members recorded so far, by index
};

// Reads DIR/ensemble.h5; throws std::runtime_error when it cannot.
EnsembleIndex read_index(const std::string& dir);

}  // namespace nestsim::app

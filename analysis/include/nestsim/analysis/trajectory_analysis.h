// What `nestsim analyze` computes from a trajectory (layout in nestsim/io/h5md.h), in one
// pass over its frames: body counts per kind and location, mean squared displacement
// per kind, hollow (HSX) and solid (SSX) contact counts, the run's own neighbour-list
// sizes, and the time series under /observables that are not part of the frame itself
// (reaction and event counters).
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nestsim::analysis {

// The file cannot be analysed: missing, not HDF5, not a nestsim trajectory, no frame.
// what() is the whole message, "PATH: not a nestsim trajectory (why)".
class TrajectoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TrajectoryInfo {
  std::string path;
  uint64_t frames = 0;                 // complete frames
  std::vector<std::string> kinds;      // /parameters/species_names
  std::vector<bool> compartment;       // per kind
  std::vector<double> diffusion;       // per kind, length^2 / time units
  std::array<double, 3> box{0, 0, 0};  // the box [0, box)
  int dim = 3;                         // 2 when the box has no z edge
  bool periodic = false;
  std::string length_unit, time_unit;
  std::string collision;               // /parameters/collision; empty in older files
  std::vector<std::string> reactions;  // /parameters/reaction_names, in rule order
};

// Checks the file and reads what the analysis needs besides the frames; throws
// TrajectoryError.
TrajectoryInfo read_trajectory_info(const std::string& path);

// Where a body is. Location index 0: outside every compartment; 1 + 2k: in the lumen of
// a compartment of kind k; 2 + 2k: in the membrane of a compartment of kind k.
std::size_t location_count(std::size_t kinds);
std::string location_name(std::size_t location, const std::vector<std::string>& kinds);

// One time series under /observables, [frame][column].
struct ObservableSeries {
  std::string name;  // path below /observables without "/value", e.g. "events/binding"
  std::vector<std::string> columns;  // the `labels` attribute, else "0", "1", ...
  std::vector<std::vector<double>> values;
  bool is_event_counter = false;  // name starts with events/ or reactions/, or mentions one
  // reactions (all rules) and reactions/RULE: each frame holds the events of the output
  // interval that ends there (the total is the sum over frames); other counters count
  // since step 0.
  bool per_interval = false;
};

struct FrameContacts {
  int64_t bodies = 0;  // bodies present
  int64_t hollow = 0;  // HSX pairs: touching membranes or proteins, lumens excluded
  int64_t solid = 0;   // SSX pairs: every overlap of the bounding spheres
  int64_t lists = -1;  // pairs the run's lists need at the frame (skin 0); -1 unknown
};

struct AnalysisTables {
  struct Stamp {
    uint64_t step = 0;
    double time = 0;  // model time, TrajectoryInfo::time_unit
  };
  std::vector<Stamp> frames;
  std::vector<std::vector<std::vector<int64_t>>> counts;  // [frame][kind][location]
  // Mean squared displacement from frame 0 [frame][kind] (length unit squared) over the
  // bodies of frame 0 still present, with the same kind, in every frame up to this one
  // (tracked[frame][kind] of them). Periodic jumps are unwrapped with minimum images
  // between consecutive frames, so a body must move less than half an edge per frame.
  std::vector<std::vector<double>> msd;
  std::vector<std::vector<int64_t>> tracked;
  std::vector<FrameContacts> contacts;
  std::vector<ObservableSeries> observables;  // other than the per-frame state ones
  // [frame][rule] (TrajectoryInfo::reactions): events in the output interval ending at
  // the frame.
  std::vector<std::vector<int64_t>> reaction_events;
};

// Reads every frame and observable of the trajectory; throws TrajectoryError for files
// that cannot be read, std::runtime_error for other failures.
AnalysisTables analyze_trajectory(const TrajectoryInfo& info);

}  // namespace nestsim::analysis

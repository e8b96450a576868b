// The one reader of nestsim trajectories (layout in nestsim/io/h5md.h): a file opened
// once, its layout checked when it is opened and each frame's values when the frame is
// read, before anything is sized or indexed from them, so a crafted file is refused
// with InputError (line 0) "not a nestsim trajectory: DATASET: what is wrong" and never
// makes a reader allocate without bound or read out of range. `nestsim analyze`,
// `nestsim view`, `nestsim export`, the ensemble's store, the repair, resuming a run and
// Python's nestsim.open all read through it.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nestsim/model/setup.h"

namespace nestsim::io {

// The kind table, /parameters/species_names and /parameters/kinds/*, one entry per kind.
struct TrajectoryKinds {
  std::vector<std::string> names;
  std::vector<bool> compartment, membrane;
  std::vector<double> radius, thickness, diffusion;
};

// One numeric time series below /observables, its complete frames' rows.
struct ObservableRows {
  std::string name;                 // the path below /observables without "/value"
  std::vector<std::string> labels;  // the `labels` attribute; empty when it has none
  std::size_t columns = 1;          // values per frame
  std::vector<double> values;       // [frame][column], row-major
};

class Trajectory {
 public:
  // Opens `path` and checks its layout: a regular file holding a nestsim trajectory
  // whose every dataset has the layout's type class, rank and extents. Throws
  // InputError (line 0) when it cannot be opened or is not a nestsim trajectory.
  explicit Trajectory(const std::string& path);
  Trajectory(Trajectory&&) noexcept;
  Trajectory& operator=(Trajectory&&) noexcept;
  ~Trajectory();

  const std::string& path() const;
  // Complete frames: the shortest of the per-frame series (a run killed while a frame
  // was written leaves them one frame apart).
  uint64_t frames() const;
  uint64_t slots() const;  // the slot dimension of every per-slot series

  // Frame `index` of the complete frames, its values checked (kinds in the kind table,
  // parents and membranes naming live compartments, finite numbers). reaction_events:
  // cumulative counts per rule of reaction_names(); broadphase_pairs: -1 when the file
  // does not hold it. Throws InputError when index >= frames() or the frame is damaged.
  model::Frame read_frame(uint64_t index) const;

  std::vector<int64_t> steps() const;  // [frame]: the step of each complete frame
  std::vector<double> times() const;   // [frame]: model time, in time_unit()

  const TrajectoryKinds& kinds() const;
  std::array<double, 3> box() const;  // the box [0, box); box()[2] is 0 in 2-d
  bool periodic() const;              // /particles/bodies/box boundary
  std::string length_unit() const;    // empty in files written before it was stored
  std::string time_unit() const;
  std::string collision() const;   // "hollow" or "solid"; empty in older files
  std::string model_text() const;  // /parameters/model: the model file's text
  std::string model_path() const;  // empty in older files
  std::string version() const;     // the program that wrote it; empty in older files
  uint64_t seed() const;
  // The rules whose events the file counts, in rule order; empty: none.
  const std::vector<std::string>& reaction_names() const;
  // Rule `rule`'s events in each output interval [frame] (not cumulative).
  std::vector<int64_t> reaction_events(std::size_t rule) const;

  // Every numeric `value` dataset below /observables in name order, depth first, with
  // its complete frames' rows, but for the groups named in `except` (e.g. "kind_count").
  // A series of more than 2^28 values over the complete frames is refused.
  std::vector<ObservableRows> observables(const std::vector<std::string>& except = {}) const;
  // The one series /observables/NAME/value (e.g. "kind_count"), as observables() reads
  // it; throws InputError when the file lacks it.
  ObservableRows observable(const std::string& name) const;

  // What appending frames needs beyond reading: every series chunked and growing along
  // the frames (and the slots); throws InputError otherwise.
  void check_appendable() const;

 private:
  friend struct TrajectoryFile;  // the open file, for io's repair (trajectory_series.h)
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nestsim::io

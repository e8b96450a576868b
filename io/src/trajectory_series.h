// Whole-series reads behind io::Trajectory (trajectory.h): rows of a dataset over the
// complete frames, bounded in what they allocate, and the walk of /observables.
#pragma once
#include <string>
#include <vector>

#include "h5md_layout.h"
#include "nestsim/io/trajectory.h"

namespace nestsim::io {

// The file a Trajectory holds open, its layout checked: what the repair walks and copies
// at the level of HDF5's chunks.
struct TrajectoryFile {
  static hid_t of(const Trajectory& t);
};

}  // namespace nestsim::io

namespace nestsim::io::h5md {

// The most values a whole-series read may take (2^28: 2 GiB of doubles), a bound on what
// a crafted extent can make a reader allocate.
inline constexpr hsize_t max_values = hsize_t(1) << 28;

// The first `rows` rows of `dataset` (rank >= 1, already checked), as `memory_type`,
// into `data`; `name` is the dataset's path in `file`, for the messages.
void read_rows(hid_t dataset, const std::string& file, const std::string& name, hid_t memory_type,
               hsize_t rows, void* data);

// The rows of a 1-d series over the complete frames, refused beyond max_values.
template <typename T>
std::vector<T> series_rows(hid_t dataset, const std::string& file, const std::string& name,
                           hid_t memory_type, hsize_t frames) {
  if (frames > max_values) not_nestsim(file, name + ": too many frames to read whole");
  std::vector<T> values(static_cast<std::size_t>(frames));
  read_rows(dataset, file, name, memory_type, frames, values.data());
  return values;
}

// Every numeric `value` dataset below the /observables group `group`, depth first in
// name order, its first `frames` rows, but for the groups named in `except`.
void collect_observables(hid_t group, const std::string& file, hsize_t frames,
                         const std::vector<std::string>& except, std::vector<ObservableRows>& out);

// The numeric series /observables/NAME/value of `file_id`, its first `frames` rows;
// throws InputError (line 0) when the file lacks it or it does not hold numbers.
ObservableRows read_observable(hid_t file_id, const std::string& file, const std::string& name,
                               hsize_t frames);

}  // namespace nestsim::io::h5md

// The layout of a nestsim trajectory (nestsim/io/h5md.h documents it): the paths, the
// appendable time series and the row reads and writes that the writer (h5md_writer.cpp)
// and the reader (h5md_reader.cpp) share. Internal to io.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "nestsim/io/hdf5_handle.h"
#include "nestsim/model/setup.h"

namespace nestsim::io::h5md {

using hdf5::Handle;

inline constexpr const char* bodies = "/particles/bodies";
inline constexpr const char* step_path = "/particles/bodies/position/step";
inline constexpr const char* time_path = "/particles/bodies/position/time";
inline constexpr const char* lists_path = "/observables/broadphase_pairs/value";
// H5MD's periodic images: unwrapped position = position + image * box edge. Files
// written before it was stored have none (their images read as unknown).
inline constexpr const char* image_path = "/particles/bodies/image/value";
inline constexpr const char* reaction_names_path = "/parameters/reaction_names";
// All rules' events together. MDAnalysis before 2.8 reads `value` of every group under
// /observables and refuses a file where one has none (its issue 4598).
inline constexpr const char* reactions_total_path = "/observables/reactions/value";
inline constexpr const char* collision_path = "/parameters/collision";
inline constexpr hsize_t slots_per_chunk = 1 << 15;  // chunks of at most ~1 MiB

// One appendable time series: a `value` dataset [frame][inner...].
struct Series {
  std::string path;  // of the value dataset
  hid_t memory_type = -1;
  bool per_slot = false;  // inner[0] is the slot dimension
  Handle value;
  std::vector<hsize_t> inner;
};

// Indices into series_specs(), in the order a frame is written.
namespace ts {
enum : std::size_t {
  edges,
  body_count,
  kind_count,
  container_count,
  membrane_count,
  next_id,
  model_time,
  id,
  species,
  radius,
  thickness,
  parent,
  membrane,
  position,  // position last: see header
  count
};
}  // namespace ts

struct SeriesSpec {
  const char* path;
  hid_t file_type, memory_type;
  bool per_slot;
  int64_t fill;
};

// Filled in at run time: the H5T_* globals are not constants.
std::vector<SeriesSpec> series_specs();

// The unit of the H5MD `time` datasets and the factor from model time to it. MDAnalysis
// (2.4) refuses a file whose time unit it does not know (it knows ns and s, not us or
// ms), so us and ms are written as ns; /observables/model_time keeps the exact model
// time.
std::pair<std::string, double> h5md_time_unit(const std::string& model_unit);

std::string reaction_path(const std::string& rule);
const char* collision_name(model::Collision c);

// Creates the empty time series `path` ([0][inner...]): chunked, compressed, growing along
// the frame axis (and the slot axis, inner[0], when per_slot), in its own group with the
// shared step and time linked in.
Handle create_series(hid_t f, const std::string& path, hid_t file_type, hid_t memory_type,
                     const std::vector<hsize_t>& inner, bool per_slot, int64_t fill);

// A 1-d dataset of variable-length strings.
std::vector<std::string> read_strings(hid_t file, const std::string& path);
// The rules whose counts the file holds, in rule order (none in files written before
// the counts were stored).
std::vector<std::string> reaction_names(hid_t file);
// Sum of the 1-d int64 series `dataset` over frames [0, frames).
int64_t sum_of_rows(hid_t dataset, hsize_t frames);
// Grows a dataset's frame dimension by one and writes `data` there.
void append_row(hid_t dataset, hid_t memory_type, hsize_t frame, const std::vector<hsize_t>& inner,
                const void* data);
void read_row(hid_t dataset, hid_t memory_type, hsize_t frame, void* data);

[[noreturn]] void not_nestsim(const std::string& path, const std::string& why);
// Opens `path` for reading or appending after checking it is a nestsim trajectory.
Handle open_trajectory(const std::string& path, bool write);

// The most slots a trajectory may hold: a frame's vectors are sized from the slot
// dimension, so a crafted file must not make a reader allocate without bound
// (2^28 slots: about 20 GB of frame; the largest runs hold a few million).
inline constexpr hsize_t max_slots = hsize_t(1) << 28;
// The most kinds or reaction rules a trajectory may name (tables read whole).
inline constexpr hsize_t max_table = hsize_t(1) << 20;
// The lengths a trajectory may hold (radii and box edges from min_length, coordinates
// and radii up to max_length in magnitude): inside the broad phase's range in double
// precision (1e-130 to 1e150), which analyze and a resumed run build from them.
inline constexpr double min_length = 1e-100, max_length = 1e100;
// An extent that the form of a dataset leaves free (the frame axis, the slots).
inline constexpr hsize_t any_extent = ~hsize_t(0);

// Checks that the dataset `name` of the trajectory `file` has the type class `type_class`
// (H5T_INTEGER, H5T_FLOAT or H5T_STRING) and the rank and extents `form` (any_extent:
// free), before any buffer is sized from it; returns its extents. Throws InputError
// "not a nestsim trajectory: NAME: what is wrong".
std::vector<hsize_t> check_form(hid_t dataset, const std::string& file, const std::string& name,
                                H5T_class_t type_class, const std::vector<hsize_t>& form);
// Opens the dataset `name` and checks it as check_form does.
Handle open_checked(hid_t f, const std::string& file, const std::string& name,
                    H5T_class_t type_class, const std::vector<hsize_t>& form,
                    std::vector<hsize_t>* extents = nullptr);
// A string attribute of `count` elements, checked before it is read.
std::vector<std::string> read_string_attributes(hid_t object, const std::string& file,
                                                const std::string& name, hsize_t count);

// What a failed write's system error means for the user.
std::string write_problem(int error);
std::string exists_message(const std::string& path);

}  // namespace nestsim::io::h5md

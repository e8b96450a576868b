#include "h5md_layout.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "nestsim/io/scene_csv.h"  // InputError

namespace nestsim::io::h5md {

using hdf5::check;

std::vector<SeriesSpec> series_specs() {
  return {
      {"/particles/bodies/box/edges/value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, false, 0},
      {"/observables/body_count/value", H5T_STD_I64LE, H5T_NATIVE_INT64, false, 0},
      {"/observables/kind_count/value", H5T_STD_I64LE, H5T_NATIVE_INT64, false, 0},
      {"/observables/container_count/value", H5T_STD_I64LE, H5T_NATIVE_INT64, false, 0},
      {"/observables/membrane_count/value", H5T_STD_I64LE, H5T_NATIVE_INT64, false, 0},
      {"/observables/next_id/value", H5T_STD_I64LE, H5T_NATIVE_INT64, false, 0},
      {"/observables/model_time/value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, false, 0},
      {"/particles/bodies/id/value", H5T_STD_I64LE, H5T_NATIVE_INT64, true, -1},
      {"/particles/bodies/species/value", H5T_STD_I32LE, H5T_NATIVE_INT32, true, -1},
      {"/particles/bodies/radius/value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, true, 0},
      {"/particles/bodies/thickness/value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, true, 0},
      {"/particles/bodies/parent/value", H5T_STD_I64LE, H5T_NATIVE_INT64, true, -1},
      {"/particles/bodies/membrane/value", H5T_STD_I64LE, H5T_NATIVE_INT64, true, -1},
      {"/particles/bodies/position/value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, true, 0},
  };
}

std::pair<std::string, double> h5md_time_unit(const std::string& model_unit) {
  if (model_unit == "us") return {"ns", 1e3};
  if (model_unit == "ms") return {"ns", 1e6};
  return {model_unit, 1};
}

namespace {
std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }
}  // namespace

std::string reaction_path(const std::string& rule) {
  return "/observables/reactions/" + rule + "/value";
}

const char* collision_name(sim::Collision c) {
  return c == sim::Collision::solid ? "solid" : "hollow";
}

Handle create_series(hid_t f, const std::string& path, hid_t file_type, hid_t memory_type,
                     const std::vector<hsize_t>& inner, bool per_slot, int64_t fill) {
  const std::string group = parent_of(path);
  for (std::size_t end = group.find('/', 1);; end = group.find('/', end + 1)) {
    const std::string g = group.substr(0, end);
    if (!hdf5::exists(f, g)) hdf5::create_group(f, g);
    if (end == std::string::npos) break;
  }
  std::vector<hsize_t> extent{0}, maxdims{H5S_UNLIMITED}, chunk{per_slot ? 1u : 64u};
  for (std::size_t i = 0; i < inner.size(); ++i) {
    extent.push_back(inner[i]);
    const bool slot_dim = per_slot && i == 0;
    maxdims.push_back(slot_dim ? H5S_UNLIMITED : inner[i]);
    chunk.push_back(slot_dim ? std::min(inner[i], slots_per_chunk) : inner[i]);
  }
  for (auto& c : chunk) c = std::max<hsize_t>(c, 1);
  const Handle space(H5Screate_simple(int(extent.size()), extent.data(), maxdims.data()), H5Sclose,
                     "dataspace");
  const Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "properties");
  check(H5Pset_chunk(props.get(), int(chunk.size()), chunk.data()), "chunk");
  // Per-slot series compressed (each chunk, one frame, is written once). The small
  // series stay uncompressed: their chunks of 64 frames are written again at every
  // frame, and a compressed chunk that changes size moves in the file at each rewrite,
  // which a kill during the flush can leave unreadable (io/repair.h); an uncompressed
  // chunk keeps its place and its earlier rows.
  if (per_slot) {
    check(H5Pset_shuffle(props.get()), "shuffle");
    check(H5Pset_deflate(props.get(), 4), "deflate");
  }
  if (fill != 0) {
    const int64_t fill64 = fill;
    const int32_t fill32 = int32_t(fill);
    check(H5Pset_fill_value(
              props.get(), memory_type,
              memory_type == H5T_NATIVE_INT32 ? static_cast<const void*>(&fill32) : &fill64),
          "fill value");
  }
  Handle d(
      H5Dcreate2(f, path.c_str(), file_type, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT),
      H5Dclose, "cannot create " + path);
  if (group != "/particles/bodies/position") {
    check(H5Lcreate_hard(f, step_path, f, (group + "/step").c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "step link");
    check(H5Lcreate_hard(f, time_path, f, (group + "/time").c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "time link");
  }
  return d;
}

std::vector<std::string> read_strings(hid_t file, const std::string& path) {
  const Handle d = hdf5::open_dataset(file, path);
  const std::vector<hsize_t> n = hdf5::dims(d.get());
  std::vector<char*> text(n.empty() ? 1 : std::size_t(n[0]), nullptr);
  std::vector<std::string> out;
  if (text.empty()) return out;
  const Handle type = hdf5::string_type();
  check(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()),
        "cannot read " + path);
  for (char* t : text) {
    out.emplace_back(t ? t : "");
    if (t) H5free_memory(t);
  }
  return out;
}

std::vector<std::string> reaction_names(hid_t file) {
  return hdf5::exists(file, reaction_names_path) ? read_strings(file, reaction_names_path)
                                                 : std::vector<std::string>{};
}

int64_t sum_of_rows(hid_t dataset, hsize_t frames) {
  if (frames == 0) return 0;
  std::vector<int64_t> values(frames);
  const hsize_t start = 0;
  const Handle file_space(H5Dget_space(dataset), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &frames, nullptr),
        "hyperslab");
  const Handle memory_space(H5Screate_simple(1, &frames, nullptr), H5Sclose, "dataspace");
  check(H5Dread(dataset, H5T_NATIVE_INT64, memory_space.get(), file_space.get(), H5P_DEFAULT,
                values.data()),
        "cannot read the reaction counts");
  int64_t sum = 0;
  for (int64_t v : values) sum += v;
  return sum;
}

void append_row(hid_t dataset, hid_t memory_type, hsize_t frame, const std::vector<hsize_t>& inner,
                const void* data) {
  std::vector<hsize_t> extent{frame + 1}, start{frame}, count{1};
  for (hsize_t n : inner) {
    extent.push_back(n);
    start.push_back(0);
    count.push_back(n);
  }
  check(H5Dset_extent(dataset, extent.data()), "cannot extend a time series");
  const Handle file_space(H5Dget_space(dataset), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr),
        "hyperslab");
  const Handle memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose,
                            "dataspace");
  check(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "cannot write a frame");
}

void read_row(hid_t dataset, hid_t memory_type, hsize_t frame, void* data) {
  std::vector<hsize_t> d = hdf5::dims(dataset);
  std::vector<hsize_t> start(d.size(), 0), count = d;
  start[0] = frame;
  count[0] = 1;
  const Handle file_space(H5Dget_space(dataset), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr),
        "hyperslab");
  const Handle memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose,
                            "dataspace");
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "cannot read a frame");
}

void not_nestsim(const std::string& path, const std::string& why) {
  throw InputError(path, 0, "not a nestsim trajectory: " + why);
}

Handle open_trajectory(const std::string& path, bool write) {
  hdf5::quiet();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw InputError(path, 0, "cannot open: no such file");
  if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "is a directory, not a trajectory");
  if (H5Fis_hdf5(path.c_str()) <= 0) not_nestsim(path, "not an HDF5 file");
  const hid_t id = H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0 && (hdf5::last_errno() == EAGAIN || hdf5::last_errno() == EWOULDBLOCK))
    throw InputError(path, 0,
                     write ? "open in another process (a run writing it?)"
                           : "being written by another process (HDF5 locks it); read it when "
                             "that run ends, or with HDF5_USE_FILE_LOCKING=FALSE");
  Handle file(id, H5Fclose, "cannot open " + path);
  if (!hdf5::exists(file.get(), "/h5md/creator") ||
      H5Aexists_by_name(file.get(), "/h5md/creator", "name", H5P_DEFAULT) <= 0)
    not_nestsim(path, "no /h5md/creator");
  const Handle creator = hdf5::open_group(file.get(), "/h5md/creator");
  const std::string name = hdf5::read_string_attribute(creator.get(), "name");
  if (name != "nestsim") not_nestsim(path, "written by '" + name + "'");
  for (const auto& s : series_specs())
    if (!hdf5::exists(file.get(), s.path)) not_nestsim(path, std::string("no ") + s.path);
  for (const char* p : {step_path, time_path, "/parameters/model", "/parameters/seed",
                        "/parameters/box", "/parameters/time_unit"})
    if (!hdf5::exists(file.get(), p)) not_nestsim(path, std::string("no ") + p);
  return file;
}

std::string exists_message(const std::string& path) {
  return path + " exists: refusing to overwrite it (use --force, or --resume to continue it)";
}

std::string write_problem(int error) {
  switch (error) {
    case ENOSPC:
      return "the disk is full (" + std::string(std::strerror(error)) + ")";
    case EDQUOT:
      return "the disk quota is exhausted (" + std::string(std::strerror(error)) + ")";
    case EFBIG:
      return "the file size limit is reached (" + std::string(std::strerror(error)) + ")";
    default:
      return error != 0 ? std::string(std::strerror(error)) : "an HDF5 error";
  }
}

}  // namespace nestsim::io::h5md

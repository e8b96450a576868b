#include "h5md_layout.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "nestsim/io/regular_file.h"
#include "nestsim/io/errors.h"

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

const char* collision_name(model::Collision c) {
  return c == model::Collision::solid ? "solid" : "hollow";
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
  // The small series carry HDF5's Fletcher32 checksum instead: a chunk keeps its size
  // (and its place) at every rewrite, and bytes changed since (a torn write, a damaged
  // disk) fail the read, so the repair keeps only the frames before them.
  if (per_slot) {
    check(H5Pset_shuffle(props.get()), "shuffle");
    check(H5Pset_deflate(props.get(), 4), "deflate");
  } else {
    check(H5Pset_fletcher32(props.get()), "fletcher32");
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
  const Handle stored(H5Dget_type(d.get()), H5Tclose, "dataset type");
  // The buffer holds every element: a rank above 1 or fixed-length text would overrun it.
  if (n.size() > 1 || H5Tget_class(stored.get()) != H5T_STRING ||
      H5Tis_variable_str(stored.get()) <= 0)
    throw hdf5::Error("HDF5: " + path + " is not a list of variable-length strings", 0);
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
  const hdf5::Rows rows(dataset, 0, frames);
  check(H5Dread(dataset, H5T_NATIVE_INT64, rows.memory_space.get(), rows.file_space.get(),
                H5P_DEFAULT, values.data()),
        "cannot read the reaction counts");
  // Each row is an increase (h5md.h): a negative row or a sum beyond 64 bits is a
  // damaged or crafted file, refused rather than wrapped.
  int64_t sum = 0;
  for (int64_t v : values)
    if (v < 0 || __builtin_add_overflow(sum, v, &sum))
      throw hdf5::Error("HDF5: a reaction count below 0 or a sum beyond 64 bits", 0);
  return sum;
}

void append_row(hid_t dataset, hid_t memory_type, hsize_t frame, const std::vector<hsize_t>& inner,
                const void* data) {
  std::vector<hsize_t> extent{frame + 1};
  extent.insert(extent.end(), inner.begin(), inner.end());
  check(H5Dset_extent(dataset, extent.data()), "cannot extend a time series");
  const hdf5::Rows row(dataset, frame, 1);
  check(H5Dwrite(dataset, memory_type, row.memory_space.get(), row.file_space.get(), H5P_DEFAULT,
                 data),
        "cannot write a frame");
}

void read_row(hid_t dataset, hid_t memory_type, hsize_t frame, void* data) {
  const hdf5::Rows row(dataset, frame, 1);
  check(H5Dread(dataset, memory_type, row.memory_space.get(), row.file_space.get(), H5P_DEFAULT,
                data),
        "cannot read a frame");
}

void not_nestsim(const std::string& path, const std::string& why) {
  throw InputError(path, 0, "not a nestsim trajectory: " + why);
}

Handle open_trajectory(const std::string& path, bool write) {
  hdf5::quiet();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno != ELOOP)
    throw InputError(path, 0, "cannot open: no such file");
  require_regular_file(path, "a trajectory");
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
  const std::string name =
      read_string_attributes(creator.get(), path, "/h5md/creator name", 0).at(0);
  if (name != "nestsim") not_nestsim(path, "written by '" + name + "'");
  for (const auto& s : series_specs())
    if (!hdf5::exists(file.get(), s.path)) not_nestsim(path, std::string("no ") + s.path);
  for (const char* p : {step_path, time_path, "/parameters/model", "/parameters/seed",
                        "/parameters/box", "/parameters/time_unit"})
    if (!hdf5::exists(file.get(), p)) not_nestsim(path, std::string("no ") + p);
  return file;
}

namespace {

std::string extents_text(const std::vector<hsize_t>& d) {
  if (d.empty()) return "a scalar";
  std::string t = "(";
  for (std::size_t i = 0; i < d.size(); ++i)
    t += (i ? ", " : "") + (d[i] == any_extent ? std::string("n") : std::to_string(d[i]));
  return t + ")";
}

const char* class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER:
      return "integers";
    case H5T_FLOAT:
      return "floating-point numbers";
    case H5T_STRING:
      return "strings";
    default:
      return "another type";
  }
}

}  // namespace

std::vector<hsize_t> check_form(hid_t dataset, const std::string& file, const std::string& name,
                                H5T_class_t type_class, const std::vector<hsize_t>& form) {
  const Handle type(H5Dget_type(dataset), H5Tclose, "cannot read the type of " + name);
  const H5T_class_t stored = H5Tget_class(type.get());
  if (stored != type_class)
    not_nestsim(file, name + ": holds " + class_name(stored) + ", not " + class_name(type_class));
  // Integers of up to 8 bytes convert exactly; floats of other sizes convert too.
  if (type_class == H5T_INTEGER && H5Tget_size(type.get()) > 8)
    not_nestsim(file, name + ": integers wider than 64 bits");
  const Handle space(H5Dget_space(dataset), H5Sclose, "cannot read the shape of " + name);
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL)
    not_nestsim(file, name + ": holds no data (a null dataspace)");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) not_nestsim(file, name + ": cannot read its shape");
  std::vector<hsize_t> d(std::size_t(rank), 0);
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), d.data(), nullptr);
  bool fits = d.size() == form.size();
  for (std::size_t i = 0; fits && i < d.size(); ++i)
    fits = form[i] == any_extent || form[i] == d[i];
  if (!fits)
    not_nestsim(file, name + ": shape " + extents_text(d) + ", expected " + extents_text(form));
  return d;
}

Handle open_checked(hid_t f, const std::string& file, const std::string& name,
                    H5T_class_t type_class, const std::vector<hsize_t>& form,
                    std::vector<hsize_t>* extents) {
  if (!hdf5::exists(f, name)) not_nestsim(file, "no " + name);
  if (H5Oexists_by_name(f, name.c_str(), H5P_DEFAULT) <= 0) not_nestsim(file, "no " + name);
  {
    const Handle object(H5Oopen(f, name.c_str(), H5P_DEFAULT), H5Oclose, "cannot open " + name);
    if (H5Iget_type(object.get()) != H5I_DATASET) not_nestsim(file, name + " is not a dataset");
  }
  Handle d(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose, "cannot open " + name);
  std::vector<hsize_t> e = check_form(d.get(), file, name, type_class, form);
  if (extents) *extents = std::move(e);
  return d;
}

std::vector<std::string> read_string_attributes(hid_t object, const std::string& file,
                                                const std::string& name, hsize_t count) {
  const std::size_t blank = name.rfind(' ');
  const std::string attribute = blank == std::string::npos ? name : name.substr(blank + 1);
  const Handle a(H5Aopen(object, attribute.c_str(), H5P_DEFAULT), H5Aclose, "no " + name);
  const Handle stored(H5Aget_type(a.get()), H5Tclose, "the type of " + name);
  if (H5Tget_class(stored.get()) != H5T_STRING) not_nestsim(file, name + ": not text");
  const Handle space(H5Aget_space(a.get()), H5Sclose, "the shape of " + name);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  const int rank = H5Sget_simple_extent_ndims(space.get());
  // count 0: a scalar (or one element).
  if (count == 0 ? (n != 1 || rank > 1) : (rank != 1 || n != hssize_t(count)))
    not_nestsim(file, name + ": " + std::to_string(n) + " elements, expected " +
                          std::to_string(count == 0 ? 1 : count));
  if (count == 0) return {hdf5::read_string_attribute(object, attribute)};
  if (H5Tis_variable_str(stored.get()) <= 0) not_nestsim(file, name + ": not variable-length text");
  const Handle type = hdf5::string_type();
  std::vector<char*> text(std::size_t(n), nullptr);
  check(H5Aread(a.get(), type.get(), text.data()), "cannot read " + name);
  std::vector<std::string> out;
  for (char* t : text) {
    out.emplace_back(t ? t : "");
    if (t) H5free_memory(t);
  }
  return out;
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

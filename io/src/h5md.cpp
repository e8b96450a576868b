// H5MD 1.1 trajectories (layout in nestsim/io/h5md.h).
#include "nestsim/io/h5md.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hdf5_handle.h"
#include "nestsim/io/scene_csv.h"  // InputError

namespace nestsim::io {

using hdf5::check;
using hdf5::Handle;

namespace {

constexpr const char* bodies = "/particles/bodies";
constexpr const char* step_path = "/particles/bodies/position/step";
constexpr const char* time_path = "/particles/bodies/position/time";
constexpr const char* lists_path = "/observables/broadphase_pairs/value";
// H5MD's periodic images: unwrapped position = position + image * box edge. Files
// written before it was stored have none (their images read as unknown).
constexpr const char* image_path = "/particles/bodies/image/value";
constexpr const char* reaction_names_path = "/parameters/reaction_names";
// All rules' events together. MDAnalysis before 2.8 reads `value` of every group under
// /observables and refuses a file where one has none (its issue 4598).
constexpr const char* reactions_total_path = "/observables/reactions/value";
constexpr const char* collision_path = "/parameters/collision";
constexpr hsize_t slots_per_chunk = 1 << 15;  // chunks of at most ~1 MiB

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
  edges, body_count, kind_count, container_count, membrane_count, next_id, model_time,
  id, species, radius, thickness, parent, membrane, position,  // position last: see header
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

// The unit of the H5MD `time` datasets and the factor from model time to it. MDAnalysis
// (2.4) refuses a file whose time unit it does not know (it knows ns and s, not us or
// ms), so us and ms are written as ns; /observables/model_time keeps the exact model
// time.
std::pair<std::string, double> h5md_time_unit(const std::string& model_unit) {
  if (model_unit == "us") return {"ns", 1e3};
  if (model_unit == "ms") return {"ns", 1e6};
  return {model_unit, 1};
}

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

std::string reaction_path(const std::string& rule) {
  return "/observables/reactions/" + rule + "/value";
}

const char* collision_name(sim::Collision c) {
  return c == sim::Collision::solid ? "solid" : "hollow";
}

// Creates the empty time series `path` ([0][inner...]): chunked, compressed, growing along
// the frame axis (and the slot axis, inner[0], when per_slot), in its own group with the
// shared step and time linked in.
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
  const Handle space(H5Screate_simple(int(extent.size()), extent.data(), maxdims.data()),
                     H5Sclose, "dataspace");
  const Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "properties");
  check(H5Pset_chunk(props.get(), int(chunk.size()), chunk.data()), "chunk");
  check(H5Pset_shuffle(props.get()), "shuffle");
  check(H5Pset_deflate(props.get(), 4), "deflate");
  if (fill != 0) {
    const int64_t fill64 = fill;
    const int32_t fill32 = int32_t(fill);
    check(H5Pset_fill_value(props.get(), memory_type,
                            memory_type == H5T_NATIVE_INT32 ? static_cast<const void*>(&fill32)
                                                            : &fill64),
          "fill value");
  }
  Handle d(H5Dcreate2(f, path.c_str(), file_type, space.get(), H5P_DEFAULT, props.get(),
                      H5P_DEFAULT),
           H5Dclose, "cannot create " + path);
  if (group != "/particles/bodies/position") {
    check(H5Lcreate_hard(f, step_path, f, (group + "/step").c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "step link");
    check(H5Lcreate_hard(f, time_path, f, (group + "/time").c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "time link");
  }
  return d;
}

// A 1-d dataset of variable-length strings.
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

// The rules whose counts the file holds, in rule order (none in files written before
// the counts were stored).
std::vector<std::string> reaction_names(hid_t file) {
  return hdf5::exists(file, reaction_names_path) ? read_strings(file, reaction_names_path)
                                                 : std::vector<std::string>{};
}

// Sum of the 1-d int64 series `dataset` over frames [0, frames).
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

// Grows a dataset's frame dimension by one and writes `data` there.
void append_row(hid_t dataset, hid_t memory_type, hsize_t frame,
                const std::vector<hsize_t>& inner, const void* data) {
  std::vector<hsize_t> extent{frame + 1}, start{frame}, count{1};
  for (hsize_t n : inner) {
    extent.push_back(n);
    start.push_back(0);
    count.push_back(n);
  }
  check(H5Dset_extent(dataset, extent.data()), "cannot extend a time series");
  const Handle file_space(H5Dget_space(dataset), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                            count.data(), nullptr),
        "hyperslab");
  const Handle memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr),
                            H5Sclose, "dataspace");
  check(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "cannot write a frame");
}

void read_row(hid_t dataset, hid_t memory_type, hsize_t frame, void* data) {
  std::vector<hsize_t> d = hdf5::dims(dataset);
  std::vector<hsize_t> start(d.size(), 0), count = d;
  start[0] = frame;
  count[0] = 1;
  const Handle file_space(H5Dget_space(dataset), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                            count.data(), nullptr),
        "hyperslab");
  const Handle memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr),
                            H5Sclose, "dataspace");
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "cannot read a frame");
}

[[noreturn]] void not_nestsim(const std::string& path, const std::string& why) {
  throw InputError(path, 0, "not a nestsim trajectory: " + why);
}

// Opens `path` for reading or appending after checking it is a nestsim trajectory.
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
  for (const char* p :
       {step_path, time_path, "/parameters/model", "/parameters/seed", "/parameters/box",
        "/parameters/time_unit"})
    if (!hdf5::exists(file.get(), p)) not_nestsim(path, std::string("no ") + p);
  return file;
}

}  // namespace

namespace {

// An exclusive lock on a file about to be replaced, held until it is: HDF5 locks every
// file it opens (flock), so the lock fails while any HDF5 program has it open.
class OldFileLock {
 public:
  OldFileLock() = default;
  OldFileLock(const OldFileLock&) = delete;
  OldFileLock& operator=(const OldFileLock&) = delete;
  ~OldFileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  // False when another process holds a lock on `path`; true when this one does now, or
  // the file cannot be opened to ask (then HDF5's own lock is all there is).
  bool lock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return true;
    return ::flock(fd_, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK;
  }

 private:
  int fd_ = -1;
};

std::string exists_message(const std::string& path) {
  return path + " exists: refusing to overwrite it (use --force, or --resume to continue it)";
}

// What a failed write's system error means for the user.
std::string write_problem(int error) {
  switch (error) {
    case ENOSPC: return "the disk is full (" + std::string(std::strerror(error)) + ")";
    case EDQUOT: return "the disk quota is exhausted (" + std::string(std::strerror(error)) + ")";
    case EFBIG: return "the file size limit is reached (" + std::string(std::strerror(error)) + ")";
    default: return error != 0 ? std::string(std::strerror(error)) : "an HDF5 error";
  }
}

}  // namespace

void check_output_path(const std::string& path, bool force) {
  if (path.empty()) throw std::runtime_error("the trajectory's file name is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw std::runtime_error(path + " is a directory: name a file for the trajectory (" +
                               path + (path.back() == '/' ? "" : "/") + "out.h5)");
    if (!S_ISREG(st.st_mode))
      throw std::runtime_error(path + " is not a regular file (a device, FIFO or socket): "
                                      "a trajectory is written to a regular file");
    if (!force) throw std::runtime_error(exists_message(path));
  } else if (errno != ENOENT && errno != ENOTDIR) {
    throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  // The directory the file goes into.
  const std::size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0)
    throw std::runtime_error(path + ": the directory " + dir + " does not exist (" +
                             std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode))
    throw std::runtime_error(path + ": " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error(path + ": cannot write in the directory " + dir + " (" +
                             std::strerror(errno) + ")");
}

struct H5mdWriter::Impl {
  std::string path;
  Handle file;
  Handle step, time;
  std::vector<Series> series;     // series_specs(), in its order
  Series lists;                   // /observables/broadphase_pairs
  Series image;                   // /particles/bodies/image
  std::vector<Series> reactions;  // per rule: events in the interval ending at a frame
  Series reactions_total;         // their sum, when there are rules
  std::vector<uint64_t> events;   // per rule: cumulative events at the last frame
  hsize_t frames = 0;
  hsize_t slots = 0;
  std::size_t kinds = 0;
  std::array<double, 3> box{0, 0, 0};
  int64_t last_step = -1;
  double time_scale = 1;  // H5MD time = model time * time_scale
  bool room_check = true;  // H5mdWriter::set_room_check

  static Series open_one(hid_t f, const std::string& path, hid_t memory_type, bool per_slot) {
    Series x;
    x.path = path;
    x.memory_type = memory_type;
    x.per_slot = per_slot;
    x.value = hdf5::open_dataset(f, path);
    const auto d = hdf5::dims(x.value.get());
    x.inner.assign(d.begin() + 1, d.end());
    return x;
  }

  // Opens every series; `rules` names the reaction series. The broad-phase series is
  // opened when the file has it.
  void open_series(const std::vector<SeriesSpec>& specs, const std::vector<std::string>& rules) {
    const hid_t f = file.get();
    step = hdf5::open_dataset(f, step_path);
    time = hdf5::open_dataset(f, time_path);
    series.clear();
    for (const auto& s : specs) series.push_back(open_one(f, s.path, s.memory_type, s.per_slot));
    if (hdf5::exists(f, lists_path)) lists = open_one(f, lists_path, H5T_NATIVE_INT64, false);
    if (hdf5::exists(f, image_path)) image = open_one(f, image_path, H5T_NATIVE_INT32, true);
    reactions.clear();
    if (!rules.empty()) {
      if (!hdf5::exists(f, reactions_total_path))
        not_nestsim(path, std::string("no ") + reactions_total_path);
      reactions_total = open_one(f, reactions_total_path, H5T_NATIVE_INT64, false);
    }
    for (const auto& rule : rules) {
      if (!hdf5::exists(f, reaction_path(rule))) not_nestsim(path, "no " + reaction_path(rule));
      reactions.push_back(open_one(f, reaction_path(rule), H5T_NATIVE_INT64, false));
    }
    events.assign(rules.size(), 0);
  }

  void append(const sim::Frame& frame);  // write()'s work

  // After a failed write: every series back to `keep` frames (the partly written frame
  // dropped) and the file flushed, so that it holds only complete frames. Returns
  // whether that succeeded. Each dataset is closed and opened again first: that drops
  // the chunks whose write failed from HDF5's cache, which would otherwise take them
  // for stored chunks and, shrinking the dataset, remove another chunk's index entry
  // in their place (HDF5 1.10: a complete frame read back as zeros).
  bool take_back(hsize_t keep) noexcept {
    bool ok = true;
    auto shrink = [&](Handle& d, const std::string& dataset) {
      if (!d) return;
      try {
        d.reset();
        d = hdf5::open_dataset(file.get(), dataset);
        std::vector<hsize_t> extent = hdf5::dims(d.get());
        if (extent[0] <= keep) return;
        extent[0] = keep;
        ok = H5Dset_extent(d.get(), extent.data()) >= 0 && ok;
      } catch (const std::exception&) {
        ok = false;
      }
    };
    shrink(step, step_path);
    shrink(time, time_path);
    for (auto& s : series) shrink(s.value, s.path);
    shrink(lists.value, lists.path);
    shrink(image.value, image.path);
    for (auto& s : reactions) shrink(s.value, s.path);
    shrink(reactions_total.value, reactions_total.path);
    return H5Fflush(file.get(), H5F_SCOPE_GLOBAL) >= 0 && ok;
  }

  // Throws WriteError, before anything of frame `frame` is written, when the disk or
  // the file size limit leaves less room than the frame can take: its rows
  // uncompressed and the index and header blocks that may come with them. A write that
  // fails all the same (another process filling the disk, a quota) is taken back.
  void check_room(hsize_t frame, uint64_t frame_step, uint64_t row_bytes) const {
    if (!room_check) return;
    const uint64_t need = row_bytes + row_bytes / 8 + (uint64_t(1) << 18);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return;
    int error = 0;
    uint64_t room = UINT64_MAX;
    struct statvfs fs;
    if (::statvfs(path.c_str(), &fs) == 0) {
      room = uint64_t(::geteuid() == 0 ? fs.f_bfree : fs.f_bavail) * fs.f_frsize;
      if (room < need) error = ENOSPC;
    }
    struct rlimit limit;
    if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const uint64_t below_limit =
          uint64_t(limit.rlim_cur) > uint64_t(st.st_size) ? limit.rlim_cur - st.st_size : 0;
      if (below_limit < need) {
        error = EFBIG;
        room = below_limit;
      }
    }
    if (error == 0) return;
    std::string what = path + ": cannot write frame " + std::to_string(frame) + " (step " +
                       std::to_string(frame_step) + "): " + write_problem(error) + ", " +
                       std::to_string(room / 1024) + " KiB left where a frame may need " +
                       std::to_string(need / 1024) + " KiB";
    throw WriteError(what + held_frames(frame, true), frame, last_step);
  }

  // "; the file holds frames 0-(frames - 1), ..." for the messages of a failed write.
  std::string held_frames(hsize_t frames, bool kept) const {
    std::string what = frames == 0 ? "; the file holds no frame"
                                   : "; the file holds frames 0-" + std::to_string(frames - 1) +
                                         ", complete up to step " + std::to_string(last_step);
    if (!kept) what += " (a partial frame after them is dropped when the run is resumed)";
    return what;
  }
};

H5mdWriter::H5mdWriter(const std::string& path, const sim::Setup& setup,
                       const std::string& program_version, bool replace)
    : impl_(std::make_unique<Impl>()) {
  hdf5::quiet();
  Impl& w = *impl_;
  w.path = path;
  w.slots = std::max<uint64_t>(setup.capacity, setup.bodies.size());
  if (w.slots == 0) w.slots = 1;
  w.kinds = setup.kinds.size();
  w.box = setup.box;
  std::vector<std::string> rules;
  for (const auto& r : setup.reactions) {
    if (r.name.empty() || r.name.find('/') != std::string::npos || r.name == "." ||
        std::find(rules.begin(), rules.end(), r.name) != rules.end())
      throw std::invalid_argument("H5mdWriter: reaction rule name '" + r.name +
                                  "' is empty, repeated or not an HDF5 name");
    rules.push_back(r.name);
  }
  // The file is always created new (HDF5's own truncation empties a file before it
  // finds that another process holds it locked). A file it replaces is left alone
  // until the new one is complete: the new one is made under a temporary name and
  // renamed over it, while a lock on it shows that no other process (a run writing it,
  // a reader) has it open. `made` names the file this call created, removed if the
  // set-up fails.
  std::string made;
  OldFileLock old;
  try {
    std::string name = path, target = path;  // target: a link's file, which is replaced
    if (replace && ::access(path.c_str(), F_OK) == 0) {
      if (!old.lock(path))
        throw std::runtime_error(path + " is open in another process (a run writing it?): "
                                        "not replaced");
      if (char resolved[PATH_MAX]; ::realpath(path.c_str(), resolved)) target = resolved;
      name = target + ".partial." + std::to_string(::getpid());
    }
    const hid_t id = H5Fcreate(name.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (id < 0) {
      const int error = hdf5::last_errno();
      if (error == EEXIST) throw std::runtime_error(exists_message(name));
      if (error != 0)
        throw std::runtime_error(path + ": cannot create the trajectory: " + write_problem(error));
      hdf5::fail("cannot create " + path);
    }
    made = name;
    w.file = Handle(id, H5Fclose, "cannot create " + path);
    const hid_t f = w.file.get();
    {
      const Handle h5md = hdf5::create_group(f, "/h5md");
      hdf5::write_attribute(h5md.get(), "version", std::vector<int32_t>{1, 1});
      const Handle author = hdf5::create_group(f, "/h5md/author");
      const char* user = std::getenv("USER");
      hdf5::write_attribute(author.get(), "name", user && *user ? user : "unknown");
      const Handle creator = hdf5::create_group(f, "/h5md/creator");
      hdf5::write_attribute(creator.get(), "name", "nestsim");
      hdf5::write_attribute(creator.get(), "version", program_version);
    }
    hdf5::create_group(f, "/particles");
    hdf5::create_group(f, bodies);
    {
      const Handle box = hdf5::create_group(f, "/particles/bodies/box");
      hdf5::write_attribute(box.get(), "dimension", int32_t(3));
      const std::string b = setup.boundary == sim::Boundary::periodic ? "periodic" : "none";
      hdf5::write_attribute(box.get(), "boundary", std::vector<std::string>{b, b, b});
    }
    // The shared step and time datasets.
    hdf5::create_group(f, "/particles/bodies/position");
    {
      const hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 256;
      const Handle space(H5Screate_simple(1, &zero, &unlimited), H5Sclose, "dataspace");
      const Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "properties");
      check(H5Pset_chunk(props.get(), 1, &chunk), "chunk");
      w.step = Handle(H5Dcreate2(f, step_path, H5T_STD_I64LE, space.get(), H5P_DEFAULT,
                                 props.get(), H5P_DEFAULT),
                      H5Dclose, "cannot create step");
      w.time = Handle(H5Dcreate2(f, time_path, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                                 props.get(), H5P_DEFAULT),
                      H5Dclose, "cannot create time");
      const auto [unit, scale] = h5md_time_unit(setup.time_unit);
      hdf5::write_attribute(w.time.get(), "unit", unit);
      w.time_scale = scale;
    }
    hdf5::create_group(f, "/observables");
    const hsize_t K = w.kinds;
    const std::vector<SeriesSpec> specs = series_specs();
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const SeriesSpec& s = specs[i];
      std::vector<hsize_t> inner;
      if (s.per_slot) inner.push_back(w.slots);
      if (i == ts::position) inner.push_back(3);
      // A D x D matrix (diagonal: a rectangular box); MDAnalysis reads only this form.
      if (i == ts::edges) inner = {3, 3};
      if (i == ts::kind_count) inner = {K};
      if (i == ts::container_count || i == ts::membrane_count) inner = {K, K + 1};
      const Handle d =
          create_series(f, s.path, s.file_type, s.memory_type, inner, s.per_slot, s.fill);
      if (i == ts::position || i == ts::edges || i == ts::radius || i == ts::thickness)
        hdf5::write_attribute(d.get(), "unit", setup.length_unit);
      if (i == ts::model_time) hdf5::write_attribute(d.get(), "unit", setup.time_unit);
    }
    create_series(f, lists_path, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, -1);
    create_series(f, image_path, H5T_STD_I32LE, H5T_NATIVE_INT32, {w.slots, 3}, true, 0);
    if (!rules.empty())
      create_series(f, reactions_total_path, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, 0);
    for (const auto& rule : rules)
      create_series(f, reaction_path(rule), H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, 0);
    {
      const Handle p = hdf5::create_group(f, "/parameters");
      std::vector<std::string> names;
      std::vector<int8_t> compartment, in_membrane;
      std::vector<double> r, q, diffusion;
      for (const auto& k : setup.kinds) {
        names.push_back(k.name);
        compartment.push_back(k.compartment);
        in_membrane.push_back(k.membrane);
        r.push_back(k.radius);
        q.push_back(k.thickness);
        diffusion.push_back(k.diffusion);
      }
      hdf5::write_strings(p.get(), "species_names", names);
      const Handle kinds = hdf5::create_group(p.get(), "kinds");
      hdf5::write_array(kinds.get(), "compartment", H5T_NATIVE_INT8, compartment.data(), K);
      hdf5::write_array(kinds.get(), "membrane", H5T_NATIVE_INT8, in_membrane.data(), K);
      hdf5::write_array(kinds.get(), "radius", H5T_NATIVE_DOUBLE, r.data(), K);
      hdf5::write_array(kinds.get(), "thickness", H5T_NATIVE_DOUBLE, q.data(), K);
      hdf5::write_array(kinds.get(), "diffusion", H5T_NATIVE_DOUBLE, diffusion.data(), K);
      hdf5::write_string(p.get(), "model", setup.model_text);
      hdf5::write_string(p.get(), "model_path", setup.model_path);
      hdf5::write_array(p.get(), "seed", H5T_NATIVE_UINT64, &setup.seed, 1, true);
      hdf5::write_string(p.get(), "version", program_version);
      hdf5::write_array(p.get(), "box", H5T_NATIVE_DOUBLE, setup.box.data(), 3);
      hdf5::write_string(p.get(), "length_unit", setup.length_unit);
      hdf5::write_string(p.get(), "time_unit", setup.time_unit);
      hdf5::write_string(p.get(), "collision", collision_name(setup.collision));
      if (!rules.empty()) hdf5::write_strings(p.get(), "reaction_names", rules);
    }
    w.step.reset();
    w.time.reset();
    w.open_series(specs, rules);
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "flush");
    if (made != target) {
      if (std::rename(made.c_str(), target.c_str()) != 0)
        throw std::runtime_error(path + ": cannot replace it: " + std::strerror(errno));
      made = target;
    }
  } catch (const hdf5::Error& e) {
    impl_.reset();
    if (!made.empty()) std::remove(made.c_str());
    if (e.system_errno() == 0) throw;
    throw std::runtime_error(path + ": cannot create the trajectory: " +
                             write_problem(e.system_errno()) + "; nothing was written");
  } catch (...) {
    impl_.reset();
    if (!made.empty()) std::remove(made.c_str());
    throw;
  }
}

H5mdWriter H5mdWriter::append(const std::string& path) {
  H5mdWriter writer;
  writer.impl_ = std::make_unique<Impl>();
  Impl& w = *writer.impl_;
  w.path = path;
  w.file = open_trajectory(path, true);
  const hid_t file = w.file.get();
  w.open_series(series_specs(), reaction_names(file));
  // Complete frames: the shortest series. Longer ones hold a partly written frame.
  hsize_t frames = std::min(hdf5::dims(w.step.get())[0], hdf5::dims(w.time.get())[0]);
  for (const auto& s : w.series) frames = std::min(frames, hdf5::dims(s.value.get())[0]);
  if (w.lists.value) frames = std::min(frames, hdf5::dims(w.lists.value.get())[0]);
  if (w.image.value) frames = std::min(frames, hdf5::dims(w.image.value.get())[0]);
  for (const auto& s : w.reactions) frames = std::min(frames, hdf5::dims(s.value.get())[0]);
  if (w.reactions_total.value)
    frames = std::min(frames, hdf5::dims(w.reactions_total.value.get())[0]);
  auto shrink = [&](hid_t d) {
    std::vector<hsize_t> extent = hdf5::dims(d);
    if (extent[0] == frames) return;
    extent[0] = frames;
    check(H5Dset_extent(d, extent.data()), "cannot drop a partial frame");
  };
  shrink(w.step.get());
  shrink(w.time.get());
  for (auto& s : w.series) shrink(s.value.get());
  for (auto& s : w.reactions) shrink(s.value.get());
  if (w.reactions_total.value) shrink(w.reactions_total.value.get());
  if (w.image.value) {
    shrink(w.image.value.get());
  } else {  // a file written before the images were stored: earlier frames read as 0
    const hsize_t slots = hdf5::dims(w.series[ts::id].value.get())[1];
    create_series(file, image_path, H5T_STD_I32LE, H5T_NATIVE_INT32, {slots, 3}, true, 0);
    w.image = Impl::open_one(file, image_path, H5T_NATIVE_INT32, true);
    std::vector<hsize_t> extent{frames, slots, 3};
    check(H5Dset_extent(w.image.value.get(), extent.data()), "cannot extend a time series");
  }
  if (w.lists.value) {
    shrink(w.lists.value.get());
  } else {  // a file written before the list sizes were stored: earlier frames unknown (-1)
    create_series(file, lists_path, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, -1);
    w.lists = Impl::open_one(file, lists_path, H5T_NATIVE_INT64, false);
    check(H5Dset_extent(w.lists.value.get(), &frames), "cannot extend a time series");
  }
  // The cumulative counts the next frame's interval counts are taken from.
  for (std::size_t k = 0; k < w.reactions.size(); ++k) {
    const int64_t sum = sum_of_rows(w.reactions[k].value.get(), frames);
    if (sum < 0) not_nestsim(path, w.reactions[k].path + " sums to a negative count");
    w.events[k] = uint64_t(sum);
  }
  w.frames = frames;
  w.time_scale = h5md_time_unit(hdf5::read_string(file, "/parameters/time_unit")).second;
  w.slots = w.series[ts::id].inner[0];
  w.kinds = w.series[ts::kind_count].inner[0];
  if (frames > 0) {
    int64_t step = 0;
    read_row(w.step.get(), H5T_NATIVE_INT64, frames - 1, &step);
    w.last_step = step;
    double edges[9];
    read_row(w.series[ts::edges].value.get(), H5T_NATIVE_DOUBLE, frames - 1, edges);
    w.box = {edges[0], edges[4], edges[8]};
  } else {
    const Handle box = hdf5::open_dataset(file, "/parameters/box");
    check(H5Dread(box.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.box.data()),
          "cannot read /parameters/box");
  }
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush");
  return writer;
}

H5mdWriter::H5mdWriter(H5mdWriter&&) noexcept = default;
H5mdWriter& H5mdWriter::operator=(H5mdWriter&&) noexcept = default;
H5mdWriter::~H5mdWriter() = default;

uint64_t H5mdWriter::frames() const { return impl_ ? impl_->frames : 0; }
uint64_t H5mdWriter::slots() const { return impl_ ? impl_->slots : 0; }
void H5mdWriter::set_room_check(bool on) {
  if (impl_) impl_->room_check = on;
}

void H5mdWriter::close() {
  if (!impl_) return;
  if (impl_->file) check(H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL), "flush");
  impl_.reset();
}

void H5mdWriter::write(const sim::Frame& fr) {
  if (!impl_) throw std::logic_error("H5mdWriter: write after close");
  Impl& w = *impl_;
  const hsize_t f = w.frames;
  uint64_t row_bytes = 16 * (w.reactions.size() + 2);  // the small series
  for (const auto& s : w.series) {
    uint64_t bytes = H5Tget_size(s.memory_type);
    for (std::size_t d = 0; d < s.inner.size(); ++d)
      bytes *= s.per_slot && d == 0 ? std::max<uint64_t>(s.inner[0], fr.id.size()) : s.inner[d];
    row_bytes += bytes;
  }
  row_bytes += 3 * sizeof(int32_t) * std::max<uint64_t>(w.slots, fr.id.size());  // image
  w.check_room(f, fr.step, row_bytes);
  try {
    w.append(fr);
  } catch (const hdf5::Error& e) {
    const bool kept = w.take_back(f);
    std::string what = w.path + ": cannot write frame " + std::to_string(f) + " (step " +
                       std::to_string(fr.step) + "): " + write_problem(e.system_errno());
    if (e.system_errno() == 0) what += " (" + std::string(e.what()) + ")";
    throw WriteError(what + w.held_frames(f, kept), f, w.last_step);
  }
}

void H5mdWriter::Impl::append(const sim::Frame& fr) {
  Impl& w = *this;
  const std::size_t n = fr.id.size();
  if (fr.position.size() != n || fr.kind.size() != n || fr.radius.size() != n ||
      fr.thickness.size() != n || fr.parent.size() != n || fr.membrane.size() != n)
    throw std::invalid_argument("H5mdWriter: the frame's per-slot vectors differ in size");
  if (int64_t(fr.step) <= w.last_step)
    throw std::invalid_argument("H5mdWriter: frame step " + std::to_string(fr.step) +
                                " does not follow step " + std::to_string(w.last_step));
  // Reaction events in the interval that ends at this frame (all of them at a first
  // frame that already counts some, e.g. a run continued into a new file).
  const std::size_t R = w.reactions.size();
  if (fr.reaction_events.size() != R)
    throw std::invalid_argument("H5mdWriter: the frame counts the events of " +
                                std::to_string(fr.reaction_events.size()) +
                                " reaction rules, the trajectory has " + std::to_string(R));
  std::vector<int64_t> interval_events(R);
  int64_t interval_total = 0;
  for (std::size_t k = 0; k < R; ++k) {
    if (fr.reaction_events[k] < w.events[k])
      throw std::invalid_argument("H5mdWriter: the events of reaction rule " +
                                  std::to_string(k) + " decrease from " +
                                  std::to_string(w.events[k]) + " to " +
                                  std::to_string(fr.reaction_events[k]));
    interval_events[k] = int64_t(fr.reaction_events[k] - w.events[k]);
    interval_total += interval_events[k];
  }
  if (n > w.slots) {  // more bodies than slots: grow the slot dimension
    std::vector<Series*> per_slot{&w.image};
    for (auto& s : w.series) per_slot.push_back(&s);
    for (Series* p : per_slot) {
      Series& s = *p;
      if (!s.per_slot) continue;
      s.inner[0] = n;
      std::vector<hsize_t> extent{w.frames};
      extent.insert(extent.end(), s.inner.begin(), s.inner.end());
      check(H5Dset_extent(s.value.get(), extent.data()), "cannot grow the slots");
    }
    w.slots = n;
  }
  const std::size_t S = w.slots, K = w.kinds;
  // Per-slot rows, padded with empty slots.
  std::vector<int64_t> ids(S, -1), parents(S, -1), membranes(S, -1);
  std::vector<int32_t> kinds(S, -1);
  std::vector<double> r(S, 0), q(S, 0), x(3 * S, 0);
  std::vector<int32_t> image(3 * S, 0);  // unknown images (an empty Frame::image) as 0
  std::unordered_map<int64_t, int32_t> kind_of;
  for (std::size_t s = 0; s < n; ++s) {
    ids[s] = fr.id[s];
    if (fr.id[s] < 0) continue;
    if (fr.kind[s] < 0 || std::size_t(fr.kind[s]) >= K)
      throw std::invalid_argument("H5mdWriter: slot " + std::to_string(s) + " has kind " +
                                  std::to_string(fr.kind[s]));
    kinds[s] = fr.kind[s];
    parents[s] = fr.parent[s];
    membranes[s] = fr.membrane[s];
    r[s] = fr.radius[s];
    q[s] = fr.thickness[s];
    for (int d = 0; d < 3; ++d) x[3 * s + d] = fr.position[s][d];
    if (s < fr.image.size())
      for (int d = 0; d < 3; ++d) image[3 * s + d] = fr.image[s][std::size_t(d)];
    kind_of[fr.id[s]] = fr.kind[s];
  }
  // Observables.
  int64_t count = 0;
  std::vector<int64_t> per_kind(K, 0), by_container(K * (K + 1), 0), by_membrane(K * (K + 1), 0);
  auto column = [&](int64_t body) -> std::size_t {
    if (body < 0) return K;
    const auto it = kind_of.find(body);
    if (it == kind_of.end())
      throw std::invalid_argument("H5mdWriter: a slot names body " + std::to_string(body) +
                                  " as parent or membrane, which is not in the frame");
    return std::size_t(it->second);
  };
  for (std::size_t s = 0; s < n; ++s) {
    if (ids[s] < 0) continue;
    ++count;
    ++per_kind[kinds[s]];
    ++by_container[kinds[s] * (K + 1) + column(parents[s])];
    ++by_membrane[kinds[s] * (K + 1) + column(membranes[s])];
  }
  const int64_t next = int64_t(fr.next_id);
  const int64_t step = int64_t(fr.step);
  const hsize_t f = w.frames;
  const void* rows[ts::count] = {};
  const double edges[9] = {w.box[0], 0, 0, 0, w.box[1], 0, 0, 0, w.box[2]};
  rows[ts::edges] = edges;
  rows[ts::body_count] = &count;
  rows[ts::kind_count] = per_kind.data();
  rows[ts::container_count] = by_container.data();
  rows[ts::membrane_count] = by_membrane.data();
  rows[ts::next_id] = &next;
  rows[ts::model_time] = &fr.time;
  rows[ts::id] = ids.data();
  rows[ts::species] = kinds.data();
  rows[ts::radius] = r.data();
  rows[ts::thickness] = q.data();
  rows[ts::parent] = parents.data();
  rows[ts::membrane] = membranes.data();
  rows[ts::position] = x.data();
  append_row(w.step.get(), H5T_NATIVE_INT64, f, {}, &step);
  const double h5md_time = fr.time * w.time_scale;
  append_row(w.time.get(), H5T_NATIVE_DOUBLE, f, {}, &h5md_time);
  for (std::size_t i = 0; i < ts::count; ++i)
    if (i != ts::position)
      append_row(w.series[i].value.get(), w.series[i].memory_type, f, w.series[i].inner, rows[i]);
  append_row(w.lists.value.get(), H5T_NATIVE_INT64, f, {}, &fr.broadphase_pairs);
  append_row(w.image.value.get(), H5T_NATIVE_INT32, f, w.image.inner, image.data());
  for (std::size_t k = 0; k < R; ++k)
    append_row(w.reactions[k].value.get(), H5T_NATIVE_INT64, f, {}, &interval_events[k]);
  if (R > 0) append_row(w.reactions_total.value.get(), H5T_NATIVE_INT64, f, {}, &interval_total);
  // Everything but the positions on disk first: while a full disk fails the positions,
  // they keep the frame out of every reader's count (the shortest series).
  check(H5Fflush(w.file.get(), H5F_SCOPE_GLOBAL), "flush");
  append_row(w.series[ts::position].value.get(), w.series[ts::position].memory_type, f,
             w.series[ts::position].inner, rows[ts::position]);  // last: see the header
  check(H5Fflush(w.file.get(), H5F_SCOPE_GLOBAL), "flush");
  w.frames = f + 1;
  w.last_step = step;
  w.events = fr.reaction_events;
}

namespace {

struct Reader {
  Handle file;
  hsize_t frames = 0;
  std::vector<Handle> values;
  Handle lists;                   // absent in files written before it was stored
  Handle image;                   // likewise
  std::vector<Handle> reactions;  // per rule

  explicit Reader(const std::string& path) : file(open_trajectory(path, false)) {
    const hid_t f = file.get();
    const Handle step = hdf5::open_dataset(f, step_path);
    const Handle time = hdf5::open_dataset(f, time_path);
    frames = std::min(hdf5::dims(step.get())[0], hdf5::dims(time.get())[0]);
    for (const auto& s : series_specs()) {
      values.push_back(hdf5::open_dataset(f, s.path));
      frames = std::min(frames, hdf5::dims(values.back().get())[0]);
    }
    if (hdf5::exists(f, lists_path)) {
      lists = hdf5::open_dataset(f, lists_path);
      frames = std::min(frames, hdf5::dims(lists.get())[0]);
    }
    if (hdf5::exists(f, image_path)) {
      image = hdf5::open_dataset(f, image_path);
      frames = std::min(frames, hdf5::dims(image.get())[0]);
    }
    const std::vector<std::string> rules = reaction_names(f);
    for (const auto& rule : rules) {
      if (!hdf5::exists(f, reaction_path(rule))) not_nestsim(path, "no " + reaction_path(rule));
      reactions.push_back(hdf5::open_dataset(f, reaction_path(rule)));
      frames = std::min(frames, hdf5::dims(reactions.back().get())[0]);
    }
    if (!rules.empty()) {  // the same complete frames as the writer's append() counts
      if (!hdf5::exists(f, reactions_total_path))
        not_nestsim(path, std::string("no ") + reactions_total_path);
      const Handle total = hdf5::open_dataset(f, reactions_total_path);
      frames = std::min(frames, hdf5::dims(total.get())[0]);
    }
  }

  sim::Frame frame(hsize_t index) const {
    sim::Frame fr;
    const hsize_t S = hdf5::dims(values[ts::id].get())[1];
    int64_t step = 0, next = 0;
    read_row(hdf5::open_dataset(file.get(), step_path).get(), H5T_NATIVE_INT64, index, &step);
    read_row(values[ts::model_time].get(), H5T_NATIVE_DOUBLE, index, &fr.time);
    read_row(values[ts::next_id].get(), H5T_NATIVE_INT64, index, &next);
    fr.step = uint64_t(step);
    fr.next_id = uint64_t(next);
    fr.id.resize(S);
    fr.kind.resize(S);
    fr.radius.resize(S);
    fr.thickness.resize(S);
    fr.parent.resize(S);
    fr.membrane.resize(S);
    fr.position.resize(S);
    read_row(values[ts::id].get(), H5T_NATIVE_INT64, index, fr.id.data());
    read_row(values[ts::species].get(), H5T_NATIVE_INT32, index, fr.kind.data());
    read_row(values[ts::radius].get(), H5T_NATIVE_DOUBLE, index, fr.radius.data());
    read_row(values[ts::thickness].get(), H5T_NATIVE_DOUBLE, index, fr.thickness.data());
    read_row(values[ts::parent].get(), H5T_NATIVE_INT64, index, fr.parent.data());
    read_row(values[ts::membrane].get(), H5T_NATIVE_INT64, index, fr.membrane.data());
    static_assert(sizeof(std::array<double, 3>) == 3 * sizeof(double));
    read_row(values[ts::position].get(), H5T_NATIVE_DOUBLE, index, fr.position.data());
    if (lists) read_row(lists.get(), H5T_NATIVE_INT64, index, &fr.broadphase_pairs);
    if (image) {
      fr.image.resize(S);
      static_assert(sizeof(std::array<int32_t, 3>) == 3 * sizeof(int32_t));
      read_row(image.get(), H5T_NATIVE_INT32, index, fr.image.data());
    }
    for (const Handle& r : reactions)  // cumulative: the intervals up to this frame
      fr.reaction_events.push_back(uint64_t(sum_of_rows(r.get(), index + 1)));
    return fr;
  }
};

}  // namespace

sim::Frame frame_from_setup(const sim::Setup& setup) {
  sim::Frame fr;
  fr.next_id = setup.bodies.size();
  for (std::size_t i = 0; i < setup.bodies.size(); ++i) {
    const sim::Body& b = setup.bodies[i];
    const sim::Kind& k = setup.kinds.at(b.kind);
    fr.position.push_back(b.position);
    fr.id.push_back(int64_t(i));
    fr.kind.push_back(int32_t(b.kind));
    fr.radius.push_back(k.radius);
    fr.thickness.push_back(k.thickness);
    fr.parent.push_back(b.parent);
    fr.membrane.push_back(b.membrane);
  }
  fr.reaction_events.assign(setup.reactions.size(), 0);
  return fr;
}

Checkpoint read_last_frame(const std::string& path) {
  const Reader r(path);
  if (r.frames == 0) throw InputError(path, 0, "the trajectory holds no complete frame");
  Checkpoint c;
  c.frame = r.frame(r.frames - 1);
  c.frames = r.frames;
  const hid_t f = r.file.get();
  c.model_text = hdf5::read_string(f, "/parameters/model");
  if (hdf5::exists(f, "/parameters/model_path"))
    c.model_path = hdf5::read_string(f, "/parameters/model_path");
  if (hdf5::exists(f, "/parameters/version"))
    c.version = hdf5::read_string(f, "/parameters/version");
  if (hdf5::exists(f, collision_path)) c.collision = hdf5::read_string(f, collision_path);
  c.reaction_names = reaction_names(f);
  const Handle seed = hdf5::open_dataset(f, "/parameters/seed");
  check(H5Dread(seed.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &c.seed),
        "cannot read /parameters/seed");
  return c;
}

sim::Frame read_frame(const std::string& path, uint64_t index) {
  const Reader r(path);
  if (index >= r.frames)
    throw InputError(path, 0,
                     "frame " + std::to_string(index) + " requested, the trajectory holds " +
                         std::to_string(r.frames));
  return r.frame(index);
}

}  // namespace nestsim::io

// Creating a trajectory: a new file (or one replacing a file only when complete) with
// every group, series and parameter, and no frame.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "h5md_writer_impl.h"

namespace nestsim::io {

using hdf5::check;
using namespace h5md;

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

// The rules' names, which name their series: non-empty, unique, HDF5 names.
std::vector<std::string> rule_names(const model::Setup& setup) {
  std::vector<std::string> rules;
  for (const auto& r : setup.reactions) {
    if (r.name.empty() || r.name.find('/') != std::string::npos || r.name == "." ||
        std::find(rules.begin(), rules.end(), r.name) != rules.end())
      throw std::invalid_argument("H5mdWriter: reaction rule name '" + r.name +
                                  "' is empty, repeated or not an HDF5 name");
    rules.push_back(r.name);
  }
  return rules;
}

// /h5md (version, author, creator) and the /particles/bodies groups with the box.
void write_header(hid_t f, const model::Setup& setup, const std::string& program_version) {
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
  const Handle box = hdf5::create_group(f, "/particles/bodies/box");
  hdf5::write_attribute(box.get(), "dimension", int32_t(3));
  const std::string b = setup.boundary == model::Boundary::periodic ? "periodic" : "none";
  hdf5::write_attribute(box.get(), "boundary", std::vector<std::string>{b, b, b});
}

// The empty time series of a frame (series_specs(), the lists, images and reactions).
void create_frame_series(hid_t f, const model::Setup& setup, hsize_t slots,
                         const std::vector<std::string>& rules) {
  const hsize_t K = setup.kinds.size();
  const std::vector<SeriesSpec> specs = series_specs();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const SeriesSpec& s = specs[i];
    std::vector<hsize_t> inner;
    if (s.per_slot) inner.push_back(slots);
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
  create_series(f, image_path, H5T_STD_I32LE, H5T_NATIVE_INT32, {slots, 3}, true, 0);
  if (!rules.empty())
    create_series(f, reactions_total_path, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, 0);
  for (const auto& rule : rules)
    create_series(f, reaction_path(rule), H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, 0);
}

// /parameters: the kinds, the model as read, seed, version, box, units, collision, rules.
void write_parameters(hid_t f, const model::Setup& setup, const std::string& program_version,
                      const std::vector<std::string>& rules) {
  const hsize_t K = setup.kinds.size();
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

// Creates the file `name` (exclusively: never truncates one); says why it cannot.
hid_t create_file(const std::string& path, const std::string& name) {
  const hid_t id = H5Fcreate(name.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  if (id >= 0) return id;
  const int error = hdf5::last_errno();
  if (error == EEXIST) throw std::runtime_error(exists_message(name));
  if (error != 0)
    throw std::runtime_error(path + ": cannot create the trajectory: " + write_problem(error));
  hdf5::fail("cannot create " + path);
}
}  // namespace

void check_output_path(const std::string& path, bool force) {
  if (path.empty()) throw std::runtime_error("the trajectory's file name is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw std::runtime_error(path + " is a directory: name a file for the trajectory (" + path +
                               (path.back() == '/' ? "" : "/") + "out.h5)");
    if (!S_ISREG(st.st_mode))
      throw std::runtime_error(path +
                               " is not a regular file (a device, FIFO or socket): "
                               "a trajectory is written to a regular file");
    if (!force) throw std::runtime_error(exists_message(path));
  } else if (errno != ENOENT && errno != ENOTDIR) {
    throw std::runtime_error(path + ": " + std::strerror(errno));
  } else if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && !force) {
    throw std::runtime_error(path + " is a symbolic link to a missing file: --force creates "
                                    "the file it points to");
  }
  // The directory the file goes into.
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0)
    throw std::runtime_error(path + ": the directory " + dir + " does not exist (" +
                             std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error(path + ": cannot write in the directory " + dir + " (" +
                             std::strerror(errno) + ")");
}

void H5mdWriter::Impl::create_step_and_time(const std::string& time_unit) {
  const hid_t f = file.get();
  hdf5::create_group(f, "/particles/bodies/position");
  const hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 256;
  const Handle space(H5Screate_simple(1, &zero, &unlimited), H5Sclose, "dataspace");
  const Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "properties");
  check(H5Pset_chunk(props.get(), 1, &chunk), "chunk");
  step = Handle(
      H5Dcreate2(f, step_path, H5T_STD_I64LE, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT),
      H5Dclose, "cannot create step");
  time = Handle(
      H5Dcreate2(f, time_path, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT),
      H5Dclose, "cannot create time");
  const auto [unit, scale] = h5md_time_unit(time_unit);
  hdf5::write_attribute(time.get(), "unit", unit);
  time_scale = scale;
}

// The file is always created new (HDF5's own truncation empties a file before it finds
// that another process holds it locked). A file it replaces is left alone until the run
// ends: the new one is written under a temporary name beside it (PATH.partial.PID) and
// moved over it by close() (or the destructor), once it holds a frame; a lock on the old
// file shows first that no other process (a run writing it, a reader) has it open. A
// run killed outright (kill -9, power) leaves the old file whole and the temporary.
// `made` names the file this call created, removed if the set-up fails.
H5mdWriter::H5mdWriter(const std::string& path, const model::Setup& setup,
                       const std::string& program_version, bool replace)
    : impl_(std::make_unique<Impl>()) {
  hdf5::quiet();
  Impl& w = *impl_;
  w.path = path;
  w.slots = std::max<uint64_t>(setup.capacity, setup.bodies.size());
  if (w.slots == 0) w.slots = 1;
  w.kinds = setup.kinds.size();
  w.box = setup.box;
  const std::vector<std::string> rules = rule_names(setup);
  std::string made;
  OldFileLock old;
  try {
    std::string name = path, target = path;  // target: a link's file, which is replaced
    if (replace && ::access(path.c_str(), F_OK) == 0) {
      if (!old.lock(path))
        throw std::runtime_error(path +
                                 " is open in another process (a run writing it?): "
                                 "not replaced");
      if (char resolved[PATH_MAX]; ::realpath(path.c_str(), resolved)) target = resolved;
      if (struct stat st; ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw std::runtime_error(path + " is not a regular file: not replaced by a trajectory");
      name = target + ".partial." + std::to_string(::getpid());
    } else if (struct stat link; replace && ::lstat(path.c_str(), &link) == 0 &&
                                 S_ISLNK(link.st_mode)) {
      // A link to a missing file: the trajectory is created where it points.
      char to[PATH_MAX];
      const ssize_t n = ::readlink(path.c_str(), to, sizeof to - 1);
      if (n > 0) {
        name.assign(to, std::size_t(n));
        const std::size_t slash = path.rfind('/');
        if (name[0] != '/' && slash != std::string::npos) name = path.substr(0, slash + 1) + name;
        target = name;
      }
    }
    const hid_t id = create_file(path, name);
    made = name;
    w.file = Handle(id, H5Fclose, "cannot create " + path);
    const hid_t f = w.file.get();
    write_header(f, setup, program_version);
    w.create_step_and_time(setup.time_unit);  // shared by every series
    hdf5::create_group(f, "/observables");
    create_frame_series(f, setup, w.slots, rules);
    write_parameters(f, setup, program_version, rules);
    w.step.reset();
    w.time.reset();
    w.open_series(series_specs(), rules);
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "flush");
    w.written = made;
    if (made != target) w.replaces = target;
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

}  // namespace nestsim::io

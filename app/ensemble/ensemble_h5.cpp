#include "ensemble_h5.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace nestsim::app::h5 {

namespace {

std::string hdf5_message() {
  std::string message;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &message);
  return message.empty() ? "HDF5 error" : message;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + hdf5_message());
}

void check(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
}

Hid string_type() {
  Hid t(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

hsize_t count_of(const std::vector<hsize_t>& dims) {
  hsize_t n = 1;
  for (hsize_t d : dims) n *= d;
  return n;
}

void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   hid_t type, const void* data) {
  if (exists(loc, name)) remove_link(loc, name);
  Hid space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose, name);
  Hid d(H5Dcreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Dclose, "create " + name);
  if (count_of(dims) > 0)
    check(H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write " + name);
}

Hid open_attr_space(hid_t obj, const std::string& name, Hid& attr) {
  attr = Hid(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "attribute " + name);
  return Hid(H5Aget_space(attr.get()), H5Sclose, name);
}

void write_attr_raw(hid_t obj, const std::string& name, hid_t type, hsize_t n, bool scalar,
                    const void* data) {
  if (H5Aexists(obj, name.c_str()) > 0) check(H5Adelete(obj, name.c_str()), "replace " + name);
  Hid space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose, name);
  Hid a(H5Acreate2(obj, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
        "attribute " + name);
  if (scalar || n > 0) check(H5Awrite(a.get(), type, data), "write attribute " + name);
}

}  // namespace

Hid::Hid(hid_t id, Closer close, const std::string& what) : id_(id), close_(close) {
  if (id_ < 0) fail(what);
}

Hid& Hid::operator=(Hid&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

void Hid::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = -1;
}

namespace {

// Whether another process holds HDF5's lock on `path` (HDF5 takes flock: exclusive
// while a writer has the file open), so that waiting can help; a damaged file is not.
bool locked(const std::string& path, bool write) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool busy =
      ::flock(fd, (write ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return busy;
}

}  // namespace

Hid open_file(const std::string& path, bool write, double patience) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const auto start = std::chrono::steady_clock::now();
  bool retried = false;  // once more at once when the lock was just released
  while (true) {
    const hid_t f = H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) return Hid(f, H5Fclose, path);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= patience) fail(path);
    if (!locked(path, write)) {  // not a lock: waiting does not help
      if (retried) fail(path);
      retried = true;
      continue;
    }
    retried = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Hid create_file(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  // The newest format: groups of many members are indexed (B-trees), not scanned.
  Hid access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access list");
  H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return Hid(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose,
             "create " + path);
}

bool exists(hid_t loc, const std::string& path) {
  std::size_t pos = 0;
  while (true) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (!prefix.empty() && prefix != "/" && H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0)
      return false;
    if (pos == std::string::npos) return true;
  }
}

Hid open_group(hid_t loc, const std::string& path) {
  return Hid(H5Gopen2(loc, path.c_str(), H5P_DEFAULT), H5Gclose, "group " + path);
}

Hid create_group(hid_t loc, const std::string& path) {
  return Hid(H5Gcreate2(loc, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
             "create group " + path);
}

void remove_link(hid_t loc, const std::string& path) {
  check(H5Ldelete(loc, path.c_str(), H5P_DEFAULT), "remove " + path);
}

void write_attr(hid_t obj, const std::string& name, const std::string& value) {
  const char* p = value.c_str();
  write_attr_raw(obj, name, string_type().get(), 1, true, &p);
}

void write_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> p;
  for (const auto& v : values) p.push_back(v.c_str());
  write_attr_raw(obj, name, string_type().get(), values.size(), false, p.data());
}

void write_attr(hid_t obj, const std::string& name, int64_t value) {
  write_attr_raw(obj, name, H5T_NATIVE_INT64, 1, true, &value);
}

void write_attr(hid_t obj, const std::string& name, double value) {
  write_attr_raw(obj, name, H5T_NATIVE_DOUBLE, 1, true, &value);
}

std::vector<std::string> read_strings_attr(hid_t obj, const std::string& name) {
  Hid attr;
  const Hid space = open_attr_space(obj, name, attr);
  std::vector<char*> p(std::size_t(H5Sget_simple_extent_npoints(space.get())), nullptr);
  check(H5Aread(attr.get(), string_type().get(), p.data()), "read attribute " + name);
  std::vector<std::string> out;
  for (char* s : p) {
    out.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  return out;
}

std::string read_string_attr(hid_t obj, const std::string& name) {
  const std::vector<std::string> v = read_strings_attr(obj, name);
  return v.empty() ? std::string() : v.front();
}

int64_t read_int_attr(hid_t obj, const std::string& name) {
  Hid attr;
  open_attr_space(obj, name, attr);
  int64_t v = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_INT64, &v), "read attribute " + name);
  return v;
}

double read_double_attr(hid_t obj, const std::string& name) {
  Hid attr;
  open_attr_space(obj, name, attr);
  double v = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v), "read attribute " + name);
  return v;
}

void write_ints(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                const std::vector<int64_t>& values) {
  if (count_of(dims) != values.size()) throw std::logic_error(name + ": size mismatch");
  write_dataset(loc, name, dims, H5T_NATIVE_INT64, values.data());
}

void write_doubles(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<double>& values) {
  if (count_of(dims) != values.size()) throw std::logic_error(name + ": size mismatch");
  write_dataset(loc, name, dims, H5T_NATIVE_DOUBLE, values.data());
}

void write_strings(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<std::string>& values) {
  if (count_of(dims) != values.size()) throw std::logic_error(name + ": size mismatch");
  std::vector<const char*> p;
  for (const auto& v : values) p.push_back(v.c_str());
  write_dataset(loc, name, dims, string_type().get(), p.data());
}

std::vector<double> read_doubles(hid_t loc, const std::string& name, std::vector<hsize_t>& dims) {
  Hid d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, "dataset " + name);
  Hid space(H5Dget_space(d.get()), H5Sclose, name);
  dims.assign(std::size_t(std::max(0, H5Sget_simple_extent_ndims(space.get()))), 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  std::vector<double> v(std::size_t(count_of(dims)));
  check(H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
        "read " + name);
  return v;
}

std::vector<std::string> read_strings(hid_t loc, const std::string& name,
                                      std::vector<hsize_t>& dims) {
  Hid d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, "dataset " + name);
  Hid space(H5Dget_space(d.get()), H5Sclose, name);
  dims.assign(std::size_t(std::max(0, H5Sget_simple_extent_ndims(space.get()))), 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  std::vector<char*> p(std::size_t(count_of(dims)), nullptr);
  check(H5Dread(d.get(), string_type().get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()),
        "read " + name);
  std::vector<std::string> out;
  for (char* s : p) {
    out.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  return out;
}

}  // namespace nestsim::app::h5

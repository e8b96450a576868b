#include "nestsim/io/hdf5_handle.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace nestsim::io::hdf5 {
namespace {

herr_t innermost(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err->desc) *static_cast<std::string*>(out) = err->desc;
  return 0;
}

// The first "errno = N" that HDF5's file drivers put in their messages.
herr_t system_errno(unsigned, const H5E_error2_t* err, void* out) {
  int& found = *static_cast<int*>(out);
  const char* at = err->desc ? std::strstr(err->desc, "errno = ") : nullptr;
  if (found == 0 && at) found = std::atoi(at + 8);
  return 0;
}

}  // namespace

std::string last_error() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &message);
  // One line: the sec2 driver's messages hold ctime()'s newline.
  std::string line;
  for (char c : message) {
    if (c == '\n' || c == '\r') c = ' ';
    if (c == ' ' && !line.empty() && line.back() == ' ') continue;
    line.push_back(c);
  }
  return line;
}

int last_errno() {
  int found = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, system_errno, &found);
  return found;
}

void fail(const std::string& what) {
  const std::string detail = last_error();
  throw Error("HDF5: " + what + (detail.empty() ? "" : ": " + detail), last_errno());
}

void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

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

Handle open_file(const std::string& path, bool write, double patience) {
  quiet();
  const auto start = std::chrono::steady_clock::now();
  bool retried = false;  // once more at once when the lock was just released
  while (true) {
    const hid_t f = H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) return Handle(f, H5Fclose, "cannot open " + path);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= patience) fail("cannot open " + path);
    if (!locked(path, write)) {  // not a lock: waiting does not help
      if (retried) fail("cannot open " + path);
      retried = true;
      continue;
    }
    retried = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Handle create_file(const std::string& path) {
  quiet();
  const Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access list");
  check(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST),
        "file format bounds");
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose,
                "cannot create " + path);
}

Handle open_group(hid_t loc, const std::string& path) {
  return Handle(H5Gopen2(loc, path.c_str(), H5P_DEFAULT), H5Gclose, "cannot open " + path);
}

Handle create_group(hid_t loc, const std::string& path) {
  return Handle(H5Gcreate2(loc, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Gclose, "cannot create " + path);
}

Handle open_dataset(hid_t loc, const std::string& path) {
  return Handle(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), H5Dclose, "cannot open " + path);
}

bool exists(hid_t loc, const std::string& path) {
  // H5Lexists checks only the last link: walk the path one component at a time.
  std::string prefix;
  std::istringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) {
      if (prefix.empty()) prefix = path[0] == '/' ? "/" : "";
      continue;
    }
    prefix += (prefix.empty() || prefix.back() == '/' ? "" : "/") + part;
    if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

void remove_link(hid_t loc, const std::string& path) {
  check(H5Ldelete(loc, path.c_str(), H5P_DEFAULT), "cannot remove " + path);
}

Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "string type");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "string type");
  return t;
}

void write_attribute(hid_t obj, const std::string& name, const std::string& value) {
  const Handle type = string_type();
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  const Handle a(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose, "cannot create attribute " + name);
  const char* text = value.c_str();
  check(H5Awrite(a.get(), type.get(), &text), "cannot write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  const Handle type = string_type();
  const hsize_t n = values.size();
  const Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "dataspace");
  const Handle a(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose, "cannot create attribute " + name);
  std::vector<const char*> text;
  for (const auto& v : values) text.push_back(v.c_str());
  if (!text.empty())  // HDF5 refuses a write from no buffer
    check(H5Awrite(a.get(), type.get(), text.data()), "cannot write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, const std::vector<int32_t>& values) {
  const hsize_t n = values.size();
  const Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "dataspace");
  const Handle a(H5Acreate2(obj, name.c_str(), H5T_STD_I32LE, space.get(), H5P_DEFAULT,
                            H5P_DEFAULT),
                 H5Aclose, "cannot create attribute " + name);
  check(H5Awrite(a.get(), H5T_NATIVE_INT32, values.data()), "cannot write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, int32_t value) {
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  const Handle a(H5Acreate2(obj, name.c_str(), H5T_STD_I32LE, space.get(), H5P_DEFAULT,
                            H5P_DEFAULT),
                 H5Aclose, "cannot create attribute " + name);
  check(H5Awrite(a.get(), H5T_NATIVE_INT32, &value), "cannot write attribute " + name);
}

namespace {

void write_scalar_attribute(hid_t obj, const std::string& name, hid_t type, const void* value) {
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  const Handle a(H5Acreate2(obj, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose, "cannot create attribute " + name);
  check(H5Awrite(a.get(), type, value), "cannot write attribute " + name);
}

}  // namespace

void write_attribute(hid_t obj, const std::string& name, int64_t value) {
  write_scalar_attribute(obj, name, H5T_NATIVE_INT64, &value);
}

void write_attribute(hid_t obj, const std::string& name, double value) {
  write_scalar_attribute(obj, name, H5T_NATIVE_DOUBLE, &value);
}

namespace {

// Reads a scalar string (fixed or variable length) from an attribute or dataset.
template <typename Read>
std::string read_scalar_string(hid_t stored_type, Read read, const std::string& what) {
  if (H5Tget_class(stored_type) != H5T_STRING)
    throw std::runtime_error("HDF5: " + what + " is not a string");
  if (H5Tis_variable_str(stored_type) > 0) {
    const Handle type = string_type();
    check(H5Tset_cset(type.get(), H5Tget_cset(stored_type)), "string type");
    char* text = nullptr;
    check(read(type.get(), &text), "cannot read " + what);
    std::string value = text ? text : "";
    const Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
    H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, &text);
    return value;
  }
  const std::size_t size = H5Tget_size(stored_type);
  std::vector<char> buffer(size + 1, '\0');
  const Handle type(H5Tcopy(stored_type), H5Tclose, "string type");
  check(read(type.get(), buffer.data()), "cannot read " + what);
  return std::string(buffer.data());
}

}  // namespace

std::string read_string_attribute(hid_t obj, const std::string& name) {
  const Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "no attribute " + name);
  const Handle stored(H5Aget_type(a.get()), H5Tclose, "attribute type");
  return read_scalar_string(
      stored.get(), [&](hid_t type, void* buf) { return H5Aread(a.get(), type, buf); },
      "attribute " + name);
}

std::vector<std::string> read_strings_attribute(hid_t obj, const std::string& name) {
  const Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "no attribute " + name);
  const Handle space(H5Aget_space(a.get()), H5Sclose, "the shape of attribute " + name);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) fail("the shape of attribute " + name);
  std::vector<char*> text(std::size_t(n), nullptr);
  if (!text.empty())
    check(H5Aread(a.get(), string_type().get(), text.data()), "cannot read attribute " + name);
  std::vector<std::string> out;
  for (char* t : text) {
    out.emplace_back(t ? t : "");
    H5free_memory(t);
  }
  return out;
}

namespace {

template <typename T>
T read_scalar_attribute(hid_t obj, const std::string& name, hid_t type) {
  const Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "no attribute " + name);
  T value{};
  check(H5Aread(a.get(), type, &value), "cannot read attribute " + name);
  return value;
}

}  // namespace

int64_t read_int_attribute(hid_t obj, const std::string& name) {
  return read_scalar_attribute<int64_t>(obj, name, H5T_NATIVE_INT64);
}

double read_double_attribute(hid_t obj, const std::string& name) {
  return read_scalar_attribute<double>(obj, name, H5T_NATIVE_DOUBLE);
}

void write_string(hid_t loc, const std::string& name, const std::string& value) {
  const Handle type = string_type();
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  const Handle d(H5Dcreate2(loc, name.c_str(), type.get(), space.get(), H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose, "cannot create " + name);
  const char* text = value.c_str();
  check(H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text),
        "cannot write " + name);
}

void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values) {
  const Handle type = string_type();
  const hsize_t n = values.size();
  const Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "dataspace");
  const Handle d(H5Dcreate2(loc, name.c_str(), type.get(), space.get(), H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose, "cannot create " + name);
  std::vector<const char*> text;
  for (const auto& v : values) text.push_back(v.c_str());
  check(H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()),
        "cannot write " + name);
}

std::string read_string(hid_t loc, const std::string& name) {
  const Handle d = open_dataset(loc, name);
  const Handle stored(H5Dget_type(d.get()), H5Tclose, "dataset type");
  // One string is read into one buffer: a dataset of more would overrun it.
  const Handle space(H5Dget_space(d.get()), H5Sclose, "dataspace");
  if (H5Sget_simple_extent_npoints(space.get()) != 1 ||
      H5Sget_simple_extent_ndims(space.get()) > 1)
    throw std::runtime_error("HDF5: " + name + " is not one string");
  return read_scalar_string(
      stored.get(),
      [&](hid_t type, void* buf) {
        return H5Dread(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
      },
      name);
}

void write_array(hid_t loc, const std::string& name, hid_t type, const void* data,
                 hsize_t count, bool scalar) {
  const Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr),
                     H5Sclose, "dataspace");
  const Handle d(
      H5Dcreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "cannot create " + name);
  check(H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "cannot write " + name);
}

namespace {

hsize_t count_of(const std::vector<hsize_t>& dims) {
  hsize_t n = 1;
  for (hsize_t d : dims) n *= d;
  return n;
}

void write_nd(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t type,
              const void* data, std::size_t count) {
  if (count_of(dims) != count) throw std::logic_error(name + ": size mismatch");
  const Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose,
                     "dataspace");
  const Handle d(
      H5Dcreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "cannot create " + name);
  if (count > 0)
    check(H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "cannot write " + name);
}

// Reads the whole dataset `name` as `type` into `count` values, after `dims` is set.
template <typename T>
std::vector<T> read_nd(hid_t loc, const std::string& name, hid_t type,
                       std::vector<hsize_t>& dims) {
  const Handle d = open_dataset(loc, name);
  dims = hdf5::dims(d.get());
  std::vector<T> values(std::size_t(count_of(dims)));
  if (!values.empty())
    check(H5Dread(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          "cannot read " + name);
  return values;
}

}  // namespace

void write_ints(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                const std::vector<int64_t>& values) {
  write_nd(loc, name, dims, H5T_NATIVE_INT64, values.data(), values.size());
}

void write_doubles(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<double>& values) {
  write_nd(loc, name, dims, H5T_NATIVE_DOUBLE, values.data(), values.size());
}

void write_strings(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<std::string>& values) {
  std::vector<const char*> text;
  for (const auto& v : values) text.push_back(v.c_str());
  write_nd(loc, name, dims, string_type().get(), text.data(), text.size());
}

std::vector<double> read_doubles(hid_t loc, const std::string& name, std::vector<hsize_t>& dims) {
  return read_nd<double>(loc, name, H5T_NATIVE_DOUBLE, dims);
}

std::vector<std::string> read_strings(hid_t loc, const std::string& name,
                                      std::vector<hsize_t>& dims) {
  std::vector<char*> text = read_nd<char*>(loc, name, string_type().get(), dims);
  std::vector<std::string> out;
  for (char* t : text) {
    out.emplace_back(t ? t : "");
    H5free_memory(t);
  }
  return out;
}

std::vector<hsize_t> dims(hid_t dataset) {
  const Handle space(H5Dget_space(dataset), H5Sclose, "dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail("dataspace rank");
  std::vector<hsize_t> d(rank);
  H5Sget_simple_extent_dims(space.get(), d.data(), nullptr);
  return d;
}

Rows::Rows(hid_t dataset, hsize_t first, hsize_t count) {
  std::vector<hsize_t> shape = dims(dataset), start(shape.size(), 0);
  if (shape.empty()) throw Error("HDF5: rows of a scalar dataset", 0);
  start[0] = first;
  shape[0] = count;
  file_space = Handle(H5Dget_space(dataset), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                            shape.data(), nullptr),
        "hyperslab");
  memory_space =
      Handle(H5Screate_simple(int(shape.size()), shape.data(), nullptr), H5Sclose, "dataspace");
}

}  // namespace nestsim::io::hdf5

#include "hdf5_handle.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

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

std::vector<hsize_t> dims(hid_t dataset) {
  const Handle space(H5Dget_space(dataset), H5Sclose, "dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail("dataspace rank");
  std::vector<hsize_t> d(rank);
  H5Sget_simple_extent_dims(space.get(), d.data(), nullptr);
  return d;
}

}  // namespace nestsim::io::hdf5

// The one RAII layer over the HDF5 C API, for io's trajectories and the ensemble's
// index file: one owning handle type, checked calls that throw with HDF5's own message,
// and typed helpers for files, attributes and datasets. Only code that calls HDF5
// itself includes it; io's other public headers do not.
#pragma once
#include <hdf5.h>

#include <cstdint>

#include <stdexcept>
#include <string>
#include <vector>

namespace nestsim::io::hdf5 {

// HDF5's innermost error message, on one line (HDF5 is told not to print its stack).
std::string last_error();

// The operating system's error number behind the last HDF5 error (ENOSPC, EFBIG,
// EAGAIN of a held file lock, ...), 0 when HDF5 names none.
int last_errno();

// A failed HDF5 call: what() is "HDF5: what: <HDF5's message>"; system_errno() the
// operating system's error behind it (last_errno()), 0 when none.
class Error : public std::runtime_error {
 public:
  Error(const std::string& what, int system_errno)
      : std::runtime_error(what), system_errno_(system_errno) {}
  int system_errno() const { return system_errno_; }

 private:
  int system_errno_;
};

// Throws Error("HDF5: what: <HDF5's message>").
[[noreturn]] void fail(const std::string& what);

inline herr_t check(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
  return status;
}

// Owns one hid_t and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close, const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) fail(what);
  }
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = -1;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// Turns off HDF5's printing of error stacks (the messages go into exceptions).
void quiet();

// Opens a file (read-only or read-write), retrying for `patience` seconds while another
// process holds HDF5's lock on it; any other failure throws at once.
Handle open_file(const std::string& path, bool write, double patience = 30);
// Creates (truncating) a file in the newest format: groups of many members are
// indexed (B-trees), not scanned.
Handle create_file(const std::string& path);

Handle open_group(hid_t loc, const std::string& path);
Handle create_group(hid_t loc, const std::string& path);
Handle open_dataset(hid_t loc, const std::string& path);
bool exists(hid_t loc, const std::string& path);  // every link on the path
void remove_link(hid_t loc, const std::string& path);

// A variable-length UTF-8 string type (what h5py reads back as str).
Handle string_type();

void write_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_attribute(hid_t obj, const std::string& name, const std::vector<std::string>& values);
void write_attribute(hid_t obj, const std::string& name, const std::vector<int32_t>& values);
void write_attribute(hid_t obj, const std::string& name, int32_t value);
void write_attribute(hid_t obj, const std::string& name, int64_t value);
void write_attribute(hid_t obj, const std::string& name, double value);
std::string read_string_attribute(hid_t obj, const std::string& name);
// A 1-d attribute of variable-length strings.
std::vector<std::string> read_strings_attribute(hid_t obj, const std::string& name);
int64_t read_int_attribute(hid_t obj, const std::string& name);
double read_double_attribute(hid_t obj, const std::string& name);

void write_string(hid_t loc, const std::string& name, const std::string& value);
void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values);
std::string read_string(hid_t loc, const std::string& name);

// A scalar or 1-d dataset of a native type (H5T_NATIVE_*).
void write_array(hid_t loc, const std::string& name, hid_t type, const void* data,
                 hsize_t count, bool scalar = false);

// n-d datasets, row-major `values` of prod(dims) entries (strings variable-length).
void write_ints(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                const std::vector<int64_t>& values);
void write_doubles(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<double>& values);
void write_strings(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<std::string>& values);
// A whole numeric dataset as doubles, or of variable-length strings; `dims` receives
// its dimensions.
std::vector<double> read_doubles(hid_t loc, const std::string& name, std::vector<hsize_t>& dims);
std::vector<std::string> read_strings(hid_t loc, const std::string& name,
                                      std::vector<hsize_t>& dims);

// The current dimensions of a dataset.
std::vector<hsize_t> dims(hid_t dataset);

// Rows [first, first + count) of a dataset along its first dimension (the frames), every
// other dimension whole: the selection in the file and a memory space of its shape, for
// one H5Dread or H5Dwrite.
struct Rows {
  Rows(hid_t dataset, hsize_t first, hsize_t count);
  Handle file_space, memory_space;
};

}  // namespace nestsim::io::hdf5

// The few HDF5 operations the ensemble's index file (ensemble.h5) needs: owned handles,
// string and number attributes, and n-d datasets of int64, double or strings. Every
// failure throws std::runtime_error with HDF5's message and the object's name.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nestsim::app::h5 {

class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid() = default;
  Hid(hid_t id, Closer close, const std::string& what);  // throws when id < 0
  Hid(Hid&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Hid& operator=(Hid&& o) noexcept;
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() { reset(); }
  void reset();
  hid_t get() const { return id_; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// Opens a file (read-only or read-write), retrying for `patience` seconds while another
// process holds it (HDF5's file lock); creates one with `create` (truncating).
Hid open_file(const std::string& path, bool write, double patience = 30);
Hid create_file(const std::string& path);

bool exists(hid_t loc, const std::string& path);
Hid open_group(hid_t loc, const std::string& path);
Hid create_group(hid_t loc, const std::string& path);
void remove_link(hid_t loc, const std::string& path);

void write_attr(hid_t obj, const std::string& name, const std::string& value);
void write_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values);
void write_attr(hid_t obj, const std::string& name, int64_t value);
void write_attr(hid_t obj, const std::string& name, double value);
std::string read_string_attr(hid_t obj, const std::string& name);
std::vector<std::string> read_strings_attr(hid_t obj, const std::string& name);
int64_t read_int_attr(hid_t obj, const std::string& name);
double read_double_attr(hid_t obj, const std::string& name);

// n-d datasets, row-major `values` of prod(dims) entries.
void write_ints(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                const std::vector<int64_t>& values);
void write_doubles(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<double>& values);
void write_strings(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const std::vector<std::string>& values);

// Reads a numeric dataset as doubles; `dims` receives its dimensions.
std::vector<double> read_doubles(hid_t loc, const std::string& name, std::vector<hsize_t>& dims);
std::vector<std::string> read_strings(hid_t loc, const std::string& name,
                                      std::vector<hsize_t>& dims);

}  // namespace nestsim::app::h5

// Arrays between C++ and numpy through the buffer protocol (PEP 3118), not numpy's C
// API. pybind11 releases before 2.12 (Debian 12 has 2.10) read numpy's descriptor structs
// directly, and numpy 2 changed their layout: array_t's item sizes and strides then come
// out wrong. The buffer protocol is a stable Python interface, so the module works with
// numpy 1.x and 2.x whatever pybind11 it was built with.
//
//   Outputs: HostArray owns a contiguous block; to_numpy() wraps it in a numpy array
//   without a copy (numpy.asarray on the buffer keeps the HostArray alive).
//   Inputs: DoubleArray reads a float64 buffer of any strides; the Python side converts
//   other dtypes first (numpy.ascontiguousarray(x, dtype=float64) copies nothing when x
//   already is one).
#pragma once
#include <pybind11/pybind11.h>

#include <cstring>
#include <string>
#include <vector>

#include "bindings.h"

namespace nestsim::python {

// A C-contiguous host array handed to Python.
struct HostArray {
  std::vector<unsigned char> bytes;
  std::string format;  // struct-module format of one item, e.g. "d", "q"
  py::ssize_t itemsize = 0;
  std::vector<py::ssize_t> shape;

  template <class T>
  static HostArray of(std::vector<py::ssize_t> shape) {
    HostArray a;
    a.format = py::format_descriptor<T>::format();
    a.itemsize = py::ssize_t(sizeof(T));
    py::ssize_t n = 1;
    for (py::ssize_t s : shape) n *= s;
    a.bytes.resize(std::size_t(n) * sizeof(T));
    a.shape = std::move(shape);
    return a;
  }
  template <class T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
};

// The numpy array over a HostArray (moved into Python; no copy of its bytes).
py::object to_numpy(HostArray&& array);

// A vector's values as a 1-D numpy array, or rows of 3 as an (N, 3) array.
template <class T>
py::object numpy_of(const std::vector<T>& v) {
  HostArray a = HostArray::of<T>({py::ssize_t(v.size())});
  if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), v.size() * sizeof(T));
  return to_numpy(std::move(a));
}
template <class T>
py::object numpy_of(const std::vector<std::array<T, 3>>& v) {
  HostArray a = HostArray::of<T>({py::ssize_t(v.size()), py::ssize_t(3)});
  if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), v.size() * sizeof(v[0]));
  return to_numpy(std::move(a));
}

// A float64 array read through the buffer protocol (any strides, read only).
class DoubleArray {
 public:
  // Throws std::invalid_argument naming `what` when obj is no float64 buffer.
  DoubleArray(const py::object& obj, const char* what);
  int ndim() const { return int(info_.ndim); }
  py::ssize_t shape(int d) const { return info_.shape[std::size_t(d)]; }
  std::string shape_text() const;
  double operator()(py::ssize_t i) const { return at(i * info_.strides[0]); }
  double operator()(py::ssize_t i, py::ssize_t j) const {
    return at(i * info_.strides[0] + j * info_.strides[1]);
  }

 private:
  double at(py::ssize_t offset) const {
    double v;
    std::memcpy(&v, static_cast<const char*>(info_.ptr) + offset, sizeof v);
    return v;
  }
  py::buffer_info info_;
};

// Registers nestsim._core.HostArray (the buffer behind the arrays the module returns).
void bind_host_array(py::module_& m);

}  // namespace nestsim::python

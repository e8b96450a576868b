// nestsim._core: the pieces of the module, one file each (model, simulation, pairs).
#pragma once
#include <pybind11/pybind11.h>

#include <string>

namespace nestsim::python {

namespace py = pybind11;

// Registers nestsim._core's classes and functions.
void bind_model(py::module_& m);
void bind_simulation(py::module_& m);
void bind_pairs(py::module_& m);

// A file that cannot be written (check_output_path, H5mdWriter): raised as OSError.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nestsim::python

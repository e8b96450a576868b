// nestsim._core: the pieces of the module, one file each (model, simulation, pairs).
#pragma once
#include <pybind11/pybind11.h>

#include <string>

// The headers compiled against must be those CMake configured (python/CMakeLists.txt):
// a pybind11 or Python.h from elsewhere on the include path (CPATH, a prefix shared with
// other dependencies) builds a module that loads and then crashes.
#if defined(NESTSIM_EXPECT_PYBIND11_MAJOR) &&           \
    (PYBIND11_VERSION_MAJOR != NESTSIM_EXPECT_PYBIND11_MAJOR || \
     PYBIND11_VERSION_MINOR != NESTSIM_EXPECT_PYBIND11_MINOR)
#error "pybind11's headers are not those of the pybind11 CMake found (another pybind11 on the include path, e.g. CPATH)"
#endif
#if defined(NESTSIM_EXPECT_PYTHON_MAJOR) && \
    (PY_MAJOR_VERSION != NESTSIM_EXPECT_PYTHON_MAJOR || PY_MINOR_VERSION != NESTSIM_EXPECT_PYTHON_MINOR)
#error "Python.h is not that of the configured Python_EXECUTABLE (another Python's headers on the include path)"
#endif
// pybind11 supports Python 3.12 from 2.11 on; older headers crash at the first exception.
#if PY_VERSION_HEX >= 0x030C0000 && \
    (PYBIND11_VERSION_MAJOR < 2 || (PYBIND11_VERSION_MAJOR == 2 && PYBIND11_VERSION_MINOR < 11))
#error "pybind11 older than 2.11 does not support Python 3.12 or newer"
#endif

namespace nestsim::model {
struct Frame;
}

namespace nestsim::python {

namespace py = pybind11;

// Registers nestsim._core's classes and functions.
void bind_model(py::module_& m);
void bind_simulation(py::module_& m);
void bind_replicas(py::module_& m);
void bind_pairs(py::module_& m);
void bind_trajectory(py::module_& m);

// Every slot of a frame as a dict of numpy arrays (simulation_binding.cpp).
py::dict frame_to_dict(const model::Frame& f);

// A file that cannot be written (check_output_path, H5mdWriter): raised as OSError.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nestsim::python

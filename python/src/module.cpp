// nestsim._core: the engine, the broad phase and the trajectory writer for Python. The
// package nestsim (python/nestsim/) wraps it; errors become Python exceptions carrying
// the message the command line prints.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "host_array.h"
#include "nestsim/broadphase.h"
#include "nestsim/io/h5md.h"
#include "nestsim/model/model.h"
#include "nestsim/sim/simulation.h"
#include "nestsim/version.h"

namespace nestsim::python {
namespace {

// nestsim.InputError(ValueError) with file and line; nestsim.ModelError(InputError)
// adds column and key. Created here so that the translator below can raise them.
PyObject* g_input_error = nullptr;
PyObject* g_model_error = nullptr;

void raise_located(PyObject* type, const io::InputError& e, long column, const std::string& key) {
  py::object error = py::reinterpret_borrow<py::object>(type)(e.what());
  error.attr("file") = e.file();
  error.attr("line") = e.line();
  error.attr("column") = column;
  error.attr("key") = key;
  PyErr_SetObject(type, error.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const model::ModelError& e) {
    raise_located(g_model_error, e, e.column(), e.key());
  } catch (const io::InputError& e) {
    raise_located(g_input_error, e, 0, "");
  } catch (const io::WriteError& e) {
    PyErr_SetString(PyExc_OSError, e.what());
  } catch (const OutputError& e) {
    PyErr_SetString(PyExc_OSError, e.what());
  }
}

}  // namespace
}  // namespace nestsim::python

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  using namespace nestsim::python;
  m.doc() = "nestsim's engine, broad phase and trajectory writer (use the package nestsim)";
  g_input_error = PyErr_NewExceptionWithDoc(
      "nestsim.InputError",
      "An error in an input file or text: file, line (0: the file as a whole).",
      PyExc_ValueError, nullptr);
  g_model_error = PyErr_NewExceptionWithDoc(
      "nestsim.ModelError",
      "An error in a model, located: file, line, column (1-based; 0 when unknown) and key "
      "(e.g. 'compartments.cell.radius'); str() is the command line's message.",
      g_input_error, nullptr);
  m.attr("InputError") = py::handle(g_input_error);
  m.attr("ModelError") = py::handle(g_model_error);
  py::register_exception_translator(&translate);

  m.attr("version") = NESTSIM_VERSION_STRING;
  m.def("backend", []() { return nestsim::sim::Simulation::backend_name(); },
        "The data-parallel backend: 'CPU (Thrust/OpenMP, N threads)' or 'CUDA (device)'.");
#ifdef NESTSIM_BACKEND_CUDA
  m.attr("backend_kind") = "CUDA";
#else
  m.attr("backend_kind") = "CPU";
#endif
  bind_host_array(m);
  bind_model(m);
  bind_simulation(m);
  bind_replicas(m);
  bind_pairs(m);
}

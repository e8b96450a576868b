// nestsim._core.Trajectory: io::Trajectory, the one trajectory reader, for nestsim.open
// (python/nestsim/trajectory.py); and read_frame, one frame by path.
#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>

#include "bindings.h"
#include "host_array.h"
#include "nestsim/io/errors.h"
#include "nestsim/io/trajectory.h"

namespace nestsim::python {
namespace {

// An open trajectory that Python can close before it is collected: an open file keeps
// HDF5's lock, which stops a run from writing it.
struct OpenTrajectory {
  std::optional<io::Trajectory> file;
  const io::Trajectory& get() const {
    if (!file) throw std::runtime_error("the trajectory was closed");
    return *file;
  }
};

}  // namespace

void bind_trajectory(py::module_& m) {
  py::class_<OpenTrajectory>(m, "Trajectory")
      .def(py::init([](const std::string& path) {
        OpenTrajectory t;
        py::gil_scoped_release released;
        t.file.emplace(path);
        return t;
      }))
      .def("close", [](OpenTrajectory& t) { t.file.reset(); })
      .def_property_readonly("frames", [](const OpenTrajectory& t) { return t.get().frames(); })
      .def("read_frame",
           [](const OpenTrajectory& t, uint64_t index) {
             model::Frame f;
             {
               py::gil_scoped_release released;
               f = t.get().read_frame(index);
             }
             return frame_to_dict(f);
           })
      // The last complete frame, read and checked as `nestsim run --resume` reads it.
      .def("check_last_frame",
           [](const OpenTrajectory& t) {
             const io::Trajectory& file = t.get();
             if (file.frames() == 0)
               throw io::InputError(file.path(), 0, "the trajectory holds no complete frame");
             py::gil_scoped_release released;
             file.read_frame(file.frames() - 1);
           })
      .def("steps", [](const OpenTrajectory& t) { return numpy_of(t.get().steps()); })
      .def("times", [](const OpenTrajectory& t) { return numpy_of(t.get().times()); })
      .def("kinds",
           [](const OpenTrajectory& t) {
             const io::TrajectoryKinds& k = t.get().kinds();
             py::dict d;
             d["names"] = k.names;
             d["compartment"] = std::vector<bool>(k.compartment);
             d["membrane"] = std::vector<bool>(k.membrane);
             d["radius"] = numpy_of(k.radius);
             d["thickness"] = numpy_of(k.thickness);
             d["diffusion"] = numpy_of(k.diffusion);
             return d;
           })
      .def_property_readonly("box", [](const OpenTrajectory& t) { return t.get().box(); })
      .def_property_readonly("periodic", [](const OpenTrajectory& t) { return t.get().periodic(); })
      .def_property_readonly("length_unit",
                             [](const OpenTrajectory& t) { return t.get().length_unit(); })
      .def_property_readonly("time_unit",
                             [](const OpenTrajectory& t) { return t.get().time_unit(); })
      .def_property_readonly("collision",
                             [](const OpenTrajectory& t) { return t.get().collision(); })
      .def_property_readonly("model_text",
                             [](const OpenTrajectory& t) { return t.get().model_text(); })
      .def_property_readonly("model_path",
                             [](const OpenTrajectory& t) { return t.get().model_path(); })
      .def_property_readonly("version", [](const OpenTrajectory& t) { return t.get().version(); })
      .def_property_readonly("seed", [](const OpenTrajectory& t) { return t.get().seed(); })
      .def_property_readonly("reaction_names",
                             [](const OpenTrajectory& t) { return t.get().reaction_names(); })
      .def("reaction_events", [](const OpenTrajectory& t, std::size_t rule) {
        return numpy_of(t.get().reaction_events(rule));
      });
  m.def("read_frame", [](const std::string& path, uint64_t index) {
    model::Frame f;
    {
      py::gil_scoped_release released;
      f = io::Trajectory(path).read_frame(index);
    }
    return frame_to_dict(f);
  });
}

}  // namespace nestsim::python

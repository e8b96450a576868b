// nestsim._core.Replicas: R copies of a model stepped together from Python
// (nestsim.Simulation(model, replicas=R)), side by side on host threads and, on the GPU,
// on streams of their own (nestsim/sim/replicas.h). Replica r is the run of the model
// with seed + r, bit for bit.
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "bindings.h"
#include "model_binding.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/replicas.h"

namespace nestsim::python {

namespace {

class Replicas {
 public:
  Replicas(const Model& model, std::optional<uint64_t> seed, int count,
           std::optional<std::string> collision, std::optional<uint64_t> steps, int workers)
      : model_(model.parsed) {
    if (count < 1) throw std::invalid_argument("replicas must be at least 1, not " +
                                               std::to_string(count));
    if (workers < 0) throw std::invalid_argument("workers must be 0 (the default) or more");
    if (seed) model_.seed = *seed;
    if (steps) model_.steps = *steps;
    if (collision && *collision != "solid" && *collision != "hollow")
      throw std::invalid_argument("collision must be 'hollow' or 'solid', not '" + *collision +
                                  "'");
    // Replica r: the model with seed + r, placement included (Simulation(model, seed + r)).
    std::vector<model::Setup> setups;
    model::Model copy = model_;
    for (int r = 0; r < count; ++r) {
      copy.seed = model_.seed + uint64_t(r);
      setups.push_back(model::make_setup(copy));
      if (collision)
        setups.back().collision =
            *collision == "solid" ? model::Collision::solid : model::Collision::hollow;
    }
    setup_ = setups.front();
    py::gil_scoped_release released;
    engines_ = std::make_unique<sim::Replicas>(setups, sim::SimulationOptions{}, workers);
  }

  // Advances every replica `steps` steps (default: up to the model's simulation.steps),
  // in chunks with the GIL released; Ctrl-C and `progress(step, last)` between chunks.
  void run(std::optional<uint64_t> steps, const py::object& progress) {
    const uint64_t first = step();
    const uint64_t last = steps ? first + *steps : std::max(first, model_.steps);
    const uint64_t slice = std::max<uint64_t>(1, std::min<uint64_t>(setup_.output_every, 200));
    while (step() < last) {
      const uint64_t n = std::min(slice, last - step());
      {
        py::gil_scoped_release released;
        engines_->run(n);
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!progress.is_none()) progress(step(), last);
    }
  }

  py::dict frame(int r) const {
    check_index(r);
    model::Frame f;
    {
      py::gil_scoped_release released;
      f = (*engines_)[r].frame();
    }
    return frame_to_dict(f);
  }
  py::list frames() const {
    std::vector<model::Frame> all;
    {
      py::gil_scoped_release released;
      all = engines_->frames();
    }
    py::list out;
    for (const auto& f : all) out.append(frame_to_dict(f));
    return out;
  }

  uint64_t step() const { return (*engines_)[0].step(); }
  double time() const { return (*engines_)[0].time(); }
  int size() const { return engines_->size(); }
  int workers() const { return engines_->workers(); }
  std::vector<uint64_t> rejected_moves() const {
    std::vector<uint64_t> out;
    for (int r = 0; r < size(); ++r) out.push_back((*engines_)[r].rejected_moves());
    return out;
  }
  const model::Model& model() const { return model_; }
  const model::Setup& setup() const { return setup_; }

 private:
  void check_index(int r) const {
    if (r < 0 || r >= size())
      throw py::index_error("replica " + std::to_string(r) + " of " + std::to_string(size()));
  }

  model::Model model_;
  model::Setup setup_;
  std::unique_ptr<sim::Replicas> engines_;
};

py::list names_of_kinds(const model::Setup& s) {
  py::list names;
  for (const auto& k : s.kinds) names.append(k.name);
  return names;
}

}  // namespace

void bind_replicas(py::module_& m) {
  py::class_<Replicas>(m, "Replicas")
      .def(py::init<const Model&, std::optional<uint64_t>, int, std::optional<std::string>,
                    std::optional<uint64_t>, int>(),
           py::arg("model"), py::arg("seed") = py::none(), py::arg("replicas") = 1,
           py::arg("collision") = py::none(), py::arg("steps") = py::none(),
           py::arg("workers") = 0)
      .def("run", &Replicas::run, py::arg("steps") = py::none(), py::arg("progress") = py::none())
      .def("frame", &Replicas::frame, py::arg("replica"))
      .def("frames", &Replicas::frames)
      .def_property_readonly("step", &Replicas::step)
      .def_property_readonly("time", &Replicas::time)
      .def_property_readonly("replicas", &Replicas::size)
      .def_property_readonly("workers", &Replicas::workers)
      .def_property_readonly("rejected_moves", &Replicas::rejected_moves)
      .def_property_readonly("steps", [](const Replicas& s) { return s.model().steps; })
      .def_property_readonly("seed", [](const Replicas& s) { return s.model().seed; })
      .def_property_readonly("model", [](const Replicas& s) { return Model{s.model()}; })
      .def_property_readonly("output_every",
                             [](const Replicas& s) { return s.setup().output_every; })
      .def_property_readonly("collision",
                             [](const Replicas& s) {
                               return s.setup().collision == model::Collision::solid ? "solid"
                                                                                   : "hollow";
                             })
      .def_property_readonly("kinds", [](const Replicas& s) { return names_of_kinds(s.setup()); })
      .def_property_readonly("reactions",
                             [](const Replicas& s) {
                               py::list names;
                               for (const auto& r : s.setup().reactions) names.append(r.name);
                               return names;
                             })
      .def_property_readonly("box", [](const Replicas& s) { return s.setup().box; })
      .def_property_readonly("periodic", [](const Replicas& s) {
        return s.setup().boundary == model::Boundary::periodic;
      });
}

}  // namespace nestsim::python

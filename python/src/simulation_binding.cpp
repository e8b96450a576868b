// nestsim._core.Simulation: a model's run, stepped from Python, with the trajectory
// written by the same H5MD writer and in the same frames as `nestsim run`
// (app/commands/run_command.cpp): frame 0 at the start, one at every multiple of
// simulation.output.every, and one where a run() call ends.
#include <unistd.h>

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "bindings.h"
#include "host_array.h"
#include "model_binding.h"
#include "nestsim/io/h5md.h"
#include "nestsim/model/placement.h"
#include "nestsim/io/repair.h"
#include "nestsim/sim/simulation.h"
#include "nestsim/version.h"

namespace nestsim::python {
// Every slot of a frame as numpy arrays (empty slots: id -1).
py::dict frame_to_dict(const model::Frame& f) {
  py::dict d;
  d["step"] = f.step;
  d["time"] = f.time;
  d["position"] = numpy_of(f.position);
  d["image"] = f.image.empty() ? numpy_of(std::vector<std::array<int32_t, 3>>(f.id.size(),
                                                                            {0, 0, 0}))
                               : numpy_of(f.image);
  d["id"] = numpy_of(f.id);
  d["kind"] = numpy_of(f.kind);
  d["radius"] = numpy_of(f.radius);
  d["thickness"] = numpy_of(f.thickness);
  d["parent"] = numpy_of(f.parent);
  d["membrane"] = numpy_of(f.membrane);
  d["next_id"] = f.next_id;
  d["reaction_events"] = numpy_of(f.reaction_events);
  d["broadphase_pairs"] = f.broadphase_pairs;
  return d;
}

namespace {

model::Collision parse_collision(const std::string& text) {
  if (text == "hollow") return model::Collision::hollow;
  if (text == "solid") return model::Collision::solid;
  throw std::invalid_argument("collision must be 'hollow' or 'solid', not '" + text + "'");
}

class Simulation {
 public:
  // A fresh run of `model` (run_command.cpp, fresh_run).
  Simulation(const Model& model, std::optional<uint64_t> seed, std::optional<std::string> output,
             bool force, std::optional<std::string> collision, std::optional<uint64_t> steps)
      : model_(model.parsed) {
    if (seed) model_.seed = *seed;
    if (steps) model_.steps = *steps;
    if (output) {
      if (output->empty()) throw std::invalid_argument("output: the file name is empty");
      try {
        io::check_output_path(*output, force);
      } catch (const std::runtime_error& e) {
        // The check speaks the CLI's language; here the switch is the force argument.
        std::string message = e.what();
        const std::string flag = "use --force";
        if (const auto at = message.find(flag); at != std::string::npos)
          message.replace(at, flag.size(), "use force=True");
        throw OutputError(message);
      }
    }
    setup_ = model::make_setup(model_);
    if (collision) setup_.collision = parse_collision(*collision);
    engine_ = std::make_unique<sim::Simulation>(setup_);
    if (!output) return;
    output_ = *output;
    // A file replaced stays until the writer closes with a frame (H5mdWriter): a failed
    // first frame leaves it as it was.
    const bool replacing = force && ::access(output_.c_str(), F_OK) == 0;
    writer_ = std::make_unique<io::H5mdWriter>(output_, setup_, NESTSIM_VERSION_STRING, force);
    try {
      write_frame();
    } catch (const io::WriteError& e) {  // a file without a frame cannot be resumed
      try {
        writer_->close();
      } catch (const std::exception&) {
      }
      writer_.reset();
      if (!replacing) std::remove(output_.c_str());
      throw OutputError(std::string(e.what()) + "; removed it" +
                        (replacing ? " and kept the file it was to replace" : ""));
    }
  }

  // Continues the trajectory `path` from its last frame (run_command.cpp, resumed_run),
  // repaired first when a kill damaged it (a RuntimeWarning says what was kept).
  static std::unique_ptr<Simulation> resume(const std::string& path,
                                            std::optional<std::string> collision) {
    const io::Repair repair = io::repair_trajectory(path);
    if (repair.repaired &&
        PyErr_WarnEx(PyExc_RuntimeWarning, io::describe_repair(path, repair).c_str(), 1) < 0)
      throw py::error_already_set();
    const io::Checkpoint c = io::read_last_frame(path);
    std::unique_ptr<Simulation> s(new Simulation());
    s->model_ = model::parse_model(c.model_text, c.model_path);
    s->model_.seed = c.seed;
    s->setup_ = model::make_setup(s->model_);
    if (!c.collision.empty()) {
      if (c.collision != "hollow" && c.collision != "solid")
        throw io::InputError(path, 0,
                             "/parameters/collision is '" + c.collision + "', not hollow or solid");
      const model::Collision stored = parse_collision(c.collision);
      if (collision && parse_collision(*collision) != stored)
        throw std::invalid_argument("collision '" + *collision + "': " + path +
                                    " was written with collision " + c.collision +
                                    "; resume continues with it");
      s->setup_.collision = stored;
    } else if (collision) {
      s->setup_.collision = parse_collision(*collision);
    }
    std::vector<std::string> rules;
    for (const auto& r : s->setup_.reactions) rules.push_back(r.name);
    if (rules != c.reaction_names)
      throw io::InputError(path, 0,
                           "its reaction counts (/parameters/reaction_names) do not match the "
                           "model's reaction rules (written by nestsim " +
                               c.version + "?); it cannot be resumed, run the model again");
    s->engine_ = std::make_unique<sim::Simulation>(s->setup_);
    s->engine_->restore(c.frame);
    s->writer_ = std::make_unique<io::H5mdWriter>(io::H5mdWriter::append(path));
    s->output_ = path;
    s->written_step_ = int64_t(c.frame.step);
    return s;
  }

  // Advances `steps` steps (default: up to the model's simulation.steps), in chunks with
  // the GIL released; between chunks, Ctrl-C (KeyboardInterrupt) and `progress(step,
  // last)` are served. Whatever stops the run, the trajectory ends with the state
  // reached, so that resume() continues from it.
  void run(std::optional<uint64_t> steps, const py::object& progress) {
    const uint64_t first = engine_->step();
    const uint64_t last = steps ? first + *steps : std::max(first, model_.steps);
    const uint64_t every = std::max<uint64_t>(1, setup_.output_every);
    const uint64_t slice = std::max<uint64_t>(1, std::min<uint64_t>(every, 50));
    try {
      while (engine_->step() < last) {
        const uint64_t step = engine_->step();
        const uint64_t next_frame = std::min(last, (step / every + 1) * every);
        const uint64_t n = std::min(slice, next_frame - step);
        {
          py::gil_scoped_release released;
          engine_->run(n);
          if (writer_ && engine_->step() % every == 0) write_frame();
        }
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!progress.is_none()) progress(engine_->step(), last);
      }
    } catch (const py::error_already_set&) {
      finish_frame();
      throw;
    }
    py::gil_scoped_release released;
    finish_frame();
  }

  py::dict frame() const {
    model::Frame f;
    {
      py::gil_scoped_release released;
      f = engine_->frame();
    }
    return frame_to_dict(f);
  }

  uint64_t step() const { return engine_->step(); }
  double time() const { return engine_->time(); }
  const model::Model& model() const { return model_; }
  const model::Setup& setup() const { return setup_; }
  const std::string& output() const { return output_; }
  uint64_t frames() const { return writer_ ? writer_->frames() : 0; }
  uint64_t rejected_moves() const { return engine_->rejected_moves(); }

  void close() {
    if (!writer_) return;
    finish_frame();
    writer_->close();
    writer_.reset();
  }

 private:
  Simulation() = default;

  void write_frame() {
    writer_->write(engine_->frame());
    written_step_ = int64_t(engine_->step());
  }
  // The state reached as the trajectory's last frame, unless it is there already.
  void finish_frame() {
    if (writer_ && written_step_ != int64_t(engine_->step())) write_frame();
  }

  model::Model model_;
  model::Setup setup_;
  std::unique_ptr<sim::Simulation> engine_;
  std::unique_ptr<io::H5mdWriter> writer_;
  std::string output_;
  int64_t written_step_ = -1;
};

}  // namespace

void bind_simulation(py::module_& m) {
  py::class_<Simulation>(m, "Simulation")
      .def(py::init<const Model&, std::optional<uint64_t>, std::optional<std::string>, bool,
                    std::optional<std::string>, std::optional<uint64_t>>(),
           py::arg("model"), py::arg("seed") = py::none(), py::arg("output") = py::none(),
           py::arg("force") = false, py::arg("collision") = py::none(),
           py::arg("steps") = py::none())
      .def_static("resume", &Simulation::resume, py::arg("path"),
                  py::arg("collision") = py::none())
      .def("run", &Simulation::run, py::arg("steps") = py::none(),
           py::arg("progress") = py::none())
      .def("frame", &Simulation::frame)
      .def("close", &Simulation::close)
      .def_property_readonly("step", &Simulation::step)
      .def_property_readonly("time", &Simulation::time)
      .def_property_readonly("output", &Simulation::output)
      .def_property_readonly("frames_written", &Simulation::frames)
      .def_property_readonly("rejected_moves", &Simulation::rejected_moves)
      .def_property_readonly("steps", [](const Simulation& s) { return s.model().steps; })
      .def_property_readonly("seed", [](const Simulation& s) { return s.model().seed; })
      .def_property_readonly("model", [](const Simulation& s) { return Model{s.model()}; })
      .def_property_readonly("output_every",
                             [](const Simulation& s) { return s.setup().output_every; })
      .def_property_readonly("collision",
                             [](const Simulation& s) {
                               return s.setup().collision == model::Collision::solid ? "solid"
                                                                                   : "hollow";
                             })
      .def_property_readonly("kinds",
                             [](const Simulation& s) {
                               py::list names;
                               for (const auto& k : s.setup().kinds) names.append(k.name);
                               return names;
                             })
      .def_property_readonly("compartment",
                             [](const Simulation& s) {
                               py::list flags;
                               for (const auto& k : s.setup().kinds) flags.append(k.compartment);
                               return flags;
                             })
      .def_property_readonly("reactions",
                             [](const Simulation& s) {
                               py::list names;
                               for (const auto& r : s.setup().reactions) names.append(r.name);
                               return names;
                             })
      .def_property_readonly("box", [](const Simulation& s) { return s.setup().box; })
      .def_property_readonly("periodic",
                             [](const Simulation& s) {
                               return s.setup().boundary == model::Boundary::periodic;
                             })
      .def_property_readonly("units", [](const Simulation& s) {
        return py::make_tuple(s.setup().length_unit, s.setup().time_unit);
      });
  bind_trajectory(m);
}

}  // namespace nestsim::python

// nestsim._core.Model: load, from_yaml, from_dict, set / get by dotted key, to_yaml.
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>

#include "bindings.h"
#include "model_binding.h"
#include "nestsim/model/model_edit.h"

namespace nestsim::python {
namespace {

// Python value -> YAML node. Floats keep Python's shortest round-trip spelling; numpy
// arrays and scalars go through tolist() / item().
YAML::Node to_yaml(const py::handle& value, const std::string& where) {
  if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
  if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>() ? "true" : "false");
  if (py::isinstance<py::int_>(value)) return YAML::Node(py::str(value).cast<std::string>());
  if (py::isinstance<py::float_>(value))
    return YAML::Node(py::repr(value).cast<std::string>());
  if (py::isinstance<py::str>(value)) return YAML::Node(value.cast<std::string>());
  if (py::isinstance<py::dict>(value)) {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& item : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first))
        throw py::type_error(where + ": a model's keys are strings, not " +
                             py::repr(item.first).cast<std::string>());
      const std::string key = item.first.cast<std::string>();
      map[key] = to_yaml(item.second, where.empty() ? key : where + "." + key);
    }
    return map;
  }
  if (py::hasattr(value, "tolist")) return to_yaml(value.attr("tolist")(), where);
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    YAML::Node list(YAML::NodeType::Sequence);
    list.SetStyle(YAML::EmitterStyle::Flow);
    std::size_t k = 0;
    for (const auto& item : value) {
      YAML::Node entry = to_yaml(item, where + "." + std::to_string(k++));
      if (!entry.IsScalar()) list.SetStyle(YAML::EmitterStyle::Block);
      list.push_back(entry);
    }
    return list;
  }
  throw py::type_error((where.empty() ? std::string("the model") : where) +
                       ": a model holds numbers, text, booleans, lists and dicts, not " +
                       py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>());
}

// YAML node -> Python value: plain scalars as int, float, bool or None where they read
// so, quoted ones as text.
py::object to_python(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return py::none();
    case YAML::NodeType::Sequence: {
      py::list list;
      for (const auto& entry : node) list.append(to_python(entry));
      return list;
    }
    case YAML::NodeType::Map: {
      py::dict dict;
      for (const auto& item : node) dict[py::str(item.first.Scalar())] = to_python(item.second);
      return dict;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return py::str(s);
      if (s == "true" || s == "True") return py::bool_(true);
      if (s == "false" || s == "False") return py::bool_(false);
      if (s == "~" || s == "null") return py::none();
      if (!s.empty()) {
        char* end = nullptr;
        errno = 0;
        const long long i = std::strtoll(s.c_str(), &end, 10);
        if (end == s.c_str() + s.size() && errno == 0) return py::int_(i);
        const double d = std::strtod(s.c_str(), &end);
        if (end == s.c_str() + s.size()) return py::float_(d);
      }
      return py::str(s);
    }
    default: return py::none();
  }
}

Model from_text(const std::string& text, const std::string& name) {
  return Model{model::parse_model(text, name)};
}

// Sets KEY and validates the result as a file; the model is unchanged when that throws.
// An error then is the edit's: its line in the re-emitted text would mislead, so it is
// reported at the model's name with the key it concerns and the edit.
void set_key(Model& self, const std::string& key, const py::handle& value) {
  const std::string text =
      model::set_model_value(self.parsed.text, self.parsed.path, key, to_yaml(value, key));
  try {
    self.parsed = model::parse_model(text, self.parsed.path);
  } catch (const model::ModelError& e) {
    throw model::ModelError(self.parsed.path, 0, 0, e.key(),
                            e.message() + " (after setting " + key + " = " +
                                py::repr(value).cast<std::string>() + ")");
  }
}

// A model file that cannot be read at all (missing, a directory) is a ModelError too,
// located at the file (line 0), with the same message.
Model from_file(const std::string& path) {
  try {
    return Model{model::load_model(path)};
  } catch (const model::ModelError&) {
    throw;
  } catch (const io::InputError& e) {
    const std::string what = e.what(), prefix = e.file() + ": ";
    throw model::ModelError(e.file(), 0, 0, "",
                            what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  }
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<Model>(m, "Model", R"(A model: the YAML schema of models/README.md.

Model.load(path), Model.from_yaml(text, name), Model.from_dict(dict, name) parse and
validate as `nestsim run` does (nestsim.ModelError: file, line, column, key).
model.set("simulation.dt", 0.005) or model["species.ligand.diffusion"] = 40 sets any key
by its dotted path (in a list: an index, or an entry's name, e.g.
"reactions.binding.rate"); the result is validated, and the model is kept unchanged when
it is not valid. model["key"] reads a key the text gives; to_yaml(), to_dict().)")
      .def_static("load", &from_file, py::arg("path"))
      .def_static("from_yaml", &from_text, py::arg("text"), py::arg("name") = "<string>")
      .def_static(
          "from_dict",
          [](const py::dict& d, const std::string& name) {
            return from_text(model::emit_model(to_yaml(d, "")), name);
          },
          py::arg("model"), py::arg("name") = "<dict>")
      .def(
          "set",
          &set_key,
          py::arg("key"), py::arg("value"))
      .def(
          "__setitem__",
          &set_key,
          py::arg("key"), py::arg("value"))
      .def(
          "__getitem__",
          [](const Model& self, const std::string& key) -> py::object {
            const YAML::Node node = model::get_model_value(self.parsed.text, self.parsed.path, key);
            if (!node.IsDefined()) throw py::key_error(key);
            return to_python(node);
          },
          py::arg("key"))
      .def("__repr__",
           [](const Model& self) {
             return "<nestsim.Model " + self.parsed.path + ": " +
                    std::to_string(self.parsed.kinds.size()) + " kinds, " +
                    std::to_string(self.parsed.reactions.size()) + " reactions, " +
                    std::to_string(self.parsed.steps) + " steps>";
           })
      .def(
          "get",
          [](const Model& self, const std::string& key) -> py::object {
            const YAML::Node node = model::get_model_value(self.parsed.text, self.parsed.path, key);
            if (!node.IsDefined()) throw py::key_error(key);
            return to_python(node);
          },
          py::arg("key"))
      .def("to_yaml", [](const Model& self) { return self.parsed.text; })
      .def("to_dict",
           [](const Model& self) { return to_python(YAML::Load(self.parsed.text)); })
      .def_property_readonly("name", [](const Model& self) { return self.parsed.path; })
      .def_property_readonly("steps", [](const Model& self) { return self.parsed.steps; })
      .def_property_readonly("seed", [](const Model& self) { return self.parsed.seed; })
      .def_property_readonly("dt", [](const Model& self) { return self.parsed.dt; })
      .def_property_readonly("output_every",
                             [](const Model& self) { return self.parsed.output_every; })
      .def_property_readonly("kinds", [](const Model& self) {
        py::list names;
        for (const auto& k : self.parsed.kinds) names.append(k.name);
        return names;
      })
      .def_property_readonly("reactions", [](const Model& self) {
        py::list names;
        for (const auto& r : self.parsed.reactions) names.append(r.name);
        return names;
      });
}

}  // namespace nestsim::python

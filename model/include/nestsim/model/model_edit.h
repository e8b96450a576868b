// Editing a model's YAML text by dotted key (`simulation.dt`, `species.ligand.diffusion`,
// `reactions.binding.rate`, `place.2.count`): what `import nestsim`'s Model.set does, and
// what a `--set KEY=VALUE` flag of the command line can do. The text is edited, not the
// typed Model, so that every key of the schema (models/README.md) can be set and the
// result is parsed and validated as a file is.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

namespace nestsim::model {

// Returns `text` with KEY set to `value` (a new key is added to its map; maps on the
// way are created). Each part of KEY names a key of a map; in a list, a 0-based index
// or the `name:` of an entry (reactions). The result is emitted by yaml-cpp: comments
// are not kept. Throws ModelError (file `name`, located at the node where the path
// stops, key = KEY) when a part crosses a value that is not a map or list, names no
// entry of a list, or KEY is empty; and for YAML syntax errors in `text`. The result
// is not validated: parse_model() does that.
std::string set_model_value(const std::string& text, const std::string& name,
                            const std::string& key, const YAML::Node& value);

// The same with VALUE given as YAML text ("0.005", "[1, 2, 3]", "{rate: 2}").
std::string set_model_value(const std::string& text, const std::string& name,
                            const std::string& key, const std::string& value_yaml);

// The node at KEY (a copy), or an undefined node (`!node`) when the text does not give
// it. Throws ModelError as set_model_value does when the path crosses a scalar.
YAML::Node get_model_value(const std::string& text, const std::string& name,
                           const std::string& key);

// Emits a YAML tree as model text (what Model.from_dict builds a model from).
std::string emit_model(const YAML::Node& root);

}  // namespace nestsim::model

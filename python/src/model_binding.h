// nestsim.Model: a model's YAML text and its parsed, validated form, kept together so
// that any key can be set (model_edit.h) and the result checked as a file is.
#pragma once
#include <string>

#include "nestsim/model/model.h"

namespace nestsim::python {

struct Model {
  model::Model parsed;  // parsed.text and parsed.path: the text and the name in messages
};

}  // namespace nestsim::python

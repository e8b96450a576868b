// Editing model text by dotted key (model_edit.h).
#include "nestsim/model/model_edit.h"

#include <cctype>
#include <vector>

#include "nestsim/model/model.h"

namespace nestsim::model {
namespace {

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part.push_back(c);
    }
  }
  parts.push_back(part);
  return parts;
}

[[noreturn]] void fail(const std::string& name, const YAML::Node& at, const std::string& key,
                       const std::string& what) {
  const YAML::Mark m = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  const long line = m.is_null() ? 0 : m.line + 1, column = m.is_null() ? 0 : m.column + 1;
  throw ModelError(name, line, column, key, what);
}

YAML::Node load(const std::string& text, const std::string& name) {
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    return root;
  } catch (const YAML::ParserException& e) {
    throw ModelError(name, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax: " + e.msg);
  }
}

bool is_index(const std::string& part) {
  if (part.empty()) return false;
  for (char c : part)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The entry of list `list` that `part` names: an index, or the entry whose `name:` is
// `part`. Returns an undefined node when there is none.
YAML::Node list_entry(const YAML::Node& list, const std::string& part) {
  if (is_index(part)) {
    const std::size_t index = std::stoul(part);
    return index < list.size() ? list[index] : YAML::Node(YAML::NodeType::Undefined);
  }
  for (std::size_t k = 0; k < list.size(); ++k) {
    const YAML::Node entry = list[k];
    if (entry.IsMap() && entry["name"] && entry["name"].IsScalar() &&
        entry["name"].Scalar() == part)
      return entry;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Walks KEY's `parts` from `root`. With `create` (set), missing or null map keys on the
// way become maps, and the node of the last part is returned; without (get), an
// undefined node when the text does not give the key. Nodes share the tree's data.
YAML::Node walk(YAML::Node root, const std::string& name, const std::string& key, bool create,
                const std::vector<std::string>& parts) {
  YAML::Node node = root;
  std::string path;
  for (const std::string& part : parts) {
    if (part.empty()) fail(name, node, key, "an empty part in the key");
    const std::string above = path;
    path += (path.empty() ? "" : ".") + part;
    if (node.IsSequence()) {
      YAML::Node entry = list_entry(node, part);
      if (!entry.IsDefined())
        fail(name, node, key,
             (above.empty() ? std::string("the model") : above) + " is a list of " +
                 std::to_string(node.size()) + " entries and '" + part +
                 "' is neither an index below that nor the name of an entry");
      node.reset(entry);
      continue;
    }
    if (!node.IsMap())
      fail(name, node, key,
           (above.empty() ? std::string("the model") : above) +
               " is not a map or a list: it has no '" + part + "'");
    YAML::Node child = node[part];
    if (!child.IsDefined() || (create && child.IsNull())) {
      if (!create) return YAML::Node(YAML::NodeType::Undefined);
      node[part] = YAML::Node(YAML::NodeType::Map);
    }
    YAML::Node next = node[part];
    node.reset(next);
  }
  return node;
}

}  // namespace

std::string emit_model(const YAML::Node& root) {
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string set_model_value(const std::string& text, const std::string& name,
                            const std::string& key, const YAML::Node& value) {
  if (key.empty()) throw ModelError(name, 0, 0, "", "an empty key");
  const std::vector<std::string> parts = split_key(key);
  YAML::Node root = load(text, name);
  if (!root.IsMap()) fail(name, root, key, "the model is not a map of sections");
  // The parent of the last part, then the assignment (a list entry is replaced in place).
  const std::vector<std::string> head(parts.begin(), parts.end() - 1);
  YAML::Node parent = walk(root, name, key, true, head);
  const std::string& part = parts.back();
  if (part.empty()) fail(name, parent, key, "an empty part in the key");
  const std::string above = key.substr(0, key.size() - part.size() - (head.empty() ? 0 : 1));
  if (parent.IsSequence()) {
    YAML::Node entry = list_entry(parent, part);
    if (!entry.IsDefined())
      fail(name, parent, key,
           above + " is a list of " + std::to_string(parent.size()) + " entries and '" + part +
               "' is neither an index below that nor the name of an entry");
    entry = YAML::Clone(value);
  } else {
    if (!parent.IsMap())
      fail(name, parent, key, above + " is not a map or a list: it has no '" + part + "'");
    parent[part] = YAML::Clone(value);
  }
  return emit_model(root);
}

namespace {

// A quoted scalar is text (`'0.002'` is not a number, as in the file): the tag !!str
// keeps that through the re-emitted model, where quotes are not kept.
void keep_quoted_as_text(YAML::Node node) {
  if (node.IsScalar()) {
    if (node.Tag() == "!") node.SetTag("tag:yaml.org,2002:str");
    return;
  }
  if (node.IsSequence())
    for (std::size_t k = 0; k < node.size(); ++k) keep_quoted_as_text(node[k]);
  if (node.IsMap())
    for (auto entry : node) keep_quoted_as_text(entry.second);
}

}  // namespace

std::string set_model_value(const std::string& text, const std::string& name,
                            const std::string& key, const std::string& value_yaml) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(value_yaml);
  } catch (const YAML::ParserException& e) {
    throw ModelError(name, 0, 0, key, "the value '" + io::excerpt(value_yaml) + "' is not YAML: " + e.msg);
  }
  if (documents.size() > 1)
    throw ModelError(name, 0, 0, key,
                     "the value '" + io::excerpt(value_yaml) + "' holds " +
                         std::to_string(documents.size()) + " YAML documents, not one");
  YAML::Node value = documents.empty() ? YAML::Node() : documents.front();
  keep_quoted_as_text(value);
  return set_model_value(text, name, key, value);
}

YAML::Node get_model_value(const std::string& text, const std::string& name,
                           const std::string& key) {
  if (key.empty()) throw ModelError(name, 0, 0, "", "an empty key");
  const YAML::Node root = load(text, name);
  const YAML::Node found = walk(YAML::Clone(root), name, key, false, split_key(key));
  return found.IsDefined() ? YAML::Clone(found) : YAML::Node(YAML::NodeType::Undefined);
}

}  // namespace nestsim::model

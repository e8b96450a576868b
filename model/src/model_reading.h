// Reading model files (model.cpp, model_reactions.cpp): where a YAML node is, what it
// is, and a Reader whose every error names the file, the node and the key path.
// Internal to io.
#pragma once
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nestsim/model/model.h"

namespace nestsim::model::model_reading {

inline constexpr double pi = 3.14159265358979323846;
inline constexpr double euler_gamma = 0.57721566490153286061;

// What a model may hold and still be run and written (models/README.md, "Limits").
// Kinds (compartments and species together): every frame stores two counts per pair of
// kinds (/observables/container_count and membrane_count, kinds x (kinds + 1) each);
// at 256 kinds that is 1 MB a frame, at 3,000 beyond what an HDF5 chunk can hold.
inline constexpr std::size_t max_kinds = 256;
// place: entries are placed one after another, each searching for room among the bodies
// placed before it; 100,000 entries take about 10 s, ten times as many minutes.
inline constexpr std::size_t max_place_entries = 100000;

inline Location location(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

inline std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string core = "tag:yaml.org,2002:";
      const std::string text = "'" + io::excerpt(node.Scalar()) + "'";
      if (tag == "?") return text;
      if (tag == "!") return text + " (quoted: text)";
      return text + " (tagged " + (tag.rfind(core, 0) == 0 ? "!!" + tag.substr(core.size()) : tag) +
             ")";
    }
    default:
      return "no value";
  }
}

// Whether a scalar is plain (untagged, unquoted) or explicitly tagged with one of the
// YAML core types `types` (!!int, !!float, !!bool): the explicit tag is honoured, so
// `!!str 350` is text.
inline bool typed(const YAML::Node& node, std::initializer_list<const char*> types) {
  if (node.Tag() == "?") return true;
  for (const char* t : types)
    if (node.Tag() == std::string("tag:yaml.org,2002:") + t) return true;
  return false;
}

// Reads one file's nodes; every error names the file, the node and the key path.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const Location& at, const std::string& key,
                         const std::string& what) const {
    throw ModelError(file_, at.line, at.column, key, what);
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& what) const {
    fail(location(node), key, what);
  }

  // Checks that `node` is a map whose keys are all in `allowed`, each once.
  void expect_map(const YAML::Node& node, const std::string& key,
                  const std::set<std::string>& allowed) const {
    if (!node.IsMap()) fail(node, key, "expected a map, got " + describe(node));
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const std::string name = entry.first.Scalar();
      const std::string path = (key.empty() ? "" : key + ".") + io::excerpt(name);
      if (!seen.insert(name).second) fail(entry.first, path, "duplicate key");
      if (!allowed.empty() && !allowed.count(name)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(entry.first, path, "unknown key (expected one of: " + list + ")");
      }
    }
  }

  double number(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar() || !typed(node, {"float", "int"}))
      fail(node, key, "expected a number, got " + describe(node));
    const std::string& s = node.Scalar();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
      fail(node, key, "expected a number, got " + describe(node));
    return v;
  }

  double number_at_least(const YAML::Node& node, const std::string& key, double min,
                         bool strict) const {
    const double v = number(node, key);
    if (strict ? !(v > min) : !(v >= min)) {
      std::ostringstream os;
      os << "expected a number " << (strict ? "> " : ">= ") << min << ", got '" << node.Scalar()
         << "'";
      fail(node, key, os.str());
    }
    return v;
  }

  uint64_t integer(const YAML::Node& node, const std::string& key, uint64_t min) const {
    const std::string what = "expected an integer >= " + std::to_string(min) + ", got ";
    if (!node.IsScalar() || !typed(node, {"int"})) fail(node, key, what + describe(node));
    const std::string& s = node.Scalar();
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || s[0] == '+' || *end != '\0' || errno == ERANGE || v < min)
      fail(node, key, what + describe(node));
    return v;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    if (node.IsScalar() && typed(node, {"bool"})) {
      const std::string& s = node.Scalar();
      if (s == "true") return true;
      if (s == "false") return false;
    }
    fail(node, key, "expected true or false, got " + describe(node));
  }

  std::string choice(const YAML::Node& node, const std::string& key,
                     const std::vector<std::string>& options) const {
    if (node.IsScalar())
      for (const auto& o : options)
        if (node.Scalar() == o) return o;
    std::string list;
    for (const auto& o : options) list += (list.empty() ? "" : " | ") + o;
    fail(node, key, "expected " + list + ", got " + describe(node));
  }

  std::string name(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar() || node.Scalar().empty())
      fail(node, key, "expected a name, got " + describe(node));
    return node.Scalar();
  }

  std::array<double, 3> vector3(const YAML::Node& node, const std::string& key) const {
    // A list tagged as something else (`!!map [1, 2, 3]`) is not taken for a list.
    const bool list_tag = node.Tag() == "?" || node.Tag() == "!" ||
                          node.Tag() == "tag:yaml.org,2002:seq";
    if (!node.IsSequence() || !list_tag || node.size() != 3)
      fail(node, key,
           "expected a list of 3 numbers [x, y, z], got " +
               (node.IsSequence() && !list_tag ? "a list tagged " + node.Tag() : describe(node)));
    std::array<double, 3> v{};
    for (std::size_t d = 0; d < 3; ++d) v[d] = number(node[d], key + "[" + std::to_string(d) + "]");
    return v;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};
inline bool looks_numeric(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

inline bool valid_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// The `reactions:` list (model_reactions.cpp), read where each value is; its references,
// sites and supported forms checked by check_reactions() once every kind is known
// (reaction_checks.cpp).
void read_reactions(const Reader& r, const YAML::Node& node, Model& m);
void check_reactions(const Reader& r, const Model& m, double min_box);
// The rule forms the engine supports, for messages (model_reactions.cpp).
extern const char* const rule_forms;
// The factor that turns a bimolecular rate constant in `unit` ("/M/s", "nm^3/us", ...)
// into length^3/time of `units`; 0 when `unit` is not one (model_reactions.cpp).
double rate_constant_factor(const std::string& unit, const Units& units);
// The time step against what limits it (time_step_rules.cpp: the stiffest soft contact,
// or for hard and none contacts the membranes and the periodic images, each kind at its
// time-step class), reported at `simulation.dt` with the largest dt accepted.
void check_time_step(const Reader& r, const Model& m);

}  // namespace nestsim::model::model_reading

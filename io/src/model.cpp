// Model files: YAML -> Model. Every value is checked where it is read, so that errors
// point at the exact node (line, column, key path); validate() then checks what spans
// several keys (references, sizes against the box).
#include "nestsim/io/model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace nestsim::io {
namespace {

constexpr double pi = 3.14159265358979323846;

Location location(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    default: return "no value";
  }
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
      const std::string path = key.empty() ? name : key + "." + name;
      if (!seen.insert(name).second) fail(entry.first, path, "duplicate key");
      if (!allowed.empty() && !allowed.count(name)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(entry.first, path, "unknown key (expected one of: " + list + ")");
      }
    }
  }

  double number(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar() || node.Tag() == "!")
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
      os << "expected a number " << (strict ? "> " : ">= ") << min << ", got '"
         << node.Scalar() << "'";
      fail(node, key, os.str());
    }
    return v;
  }

  uint64_t integer(const YAML::Node& node, const std::string& key, uint64_t min) const {
    const std::string what = "expected an integer >= " + std::to_string(min) + ", got ";
    if (!node.IsScalar() || node.Tag() == "!") fail(node, key, what + describe(node));
    const std::string& s = node.Scalar();
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || s[0] == '+' || *end != '\0' || errno == ERANGE ||
        v < min)
      fail(node, key, what + describe(node));
    return v;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    if (node.IsScalar() && node.Tag() != "!") {
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
    if (!node.IsSequence() || node.size() != 3)
      fail(node, key, "expected a list of 3 numbers [x, y, z], got " + describe(node));
    std::array<double, 3> v{};
    for (std::size_t d = 0; d < 3; ++d)
      v[d] = number(node[d], key + "[" + std::to_string(d) + "]");
    return v;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

void read_units(const Reader& r, const YAML::Node& node, Units& units) {
  r.expect_map(node, "units", {"length", "time"});
  if (node["length"]) units.length = r.choice(node["length"], "units.length", {"nm", "um"});
  if (node["time"])
    units.time = r.choice(node["time"], "units.time", {"ns", "us", "ms", "s"});
}

void read_box(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "box", {"size", "boundary"});
  if (!node["size"]) r.fail(node, "box.size", "missing (expected [x, y, z] lengths)");
  m.box = r.vector3(node["size"], "box.size");
  for (int d = 0; d < 3; ++d)
    if (!(m.box[d] > 0))
      r.fail(node["size"][d], "box.size[" + std::to_string(d) + "]",
             "expected a number > 0, got '" + node["size"][d].Scalar() + "'");
  if (node["boundary"])
    m.periodic =
        r.choice(node["boundary"], "box.boundary", {"periodic", "reflective"}) == "periodic";
}

void read_simulation(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "simulation", {"dt", "dt_limit", "steps", "seed", "output", "capacity"});
  if (node["dt"]) {
    m.dt = r.number_at_least(node["dt"], "simulation.dt", 0, true);
    m.dt_at = location(node["dt"]);
  }
  if (node["dt_limit"])
    m.dt_limit = r.choice(node["dt_limit"], "simulation.dt_limit", {"accurate", "stable"}) == "accurate"
                     ? sim::DtLimit::accurate
                     : sim::DtLimit::stable;
  if (node["steps"]) m.steps = r.integer(node["steps"], "simulation.steps", 0);
  if (node["seed"]) m.seed = r.integer(node["seed"], "simulation.seed", 0);
  if (node["capacity"]) m.capacity = r.integer(node["capacity"], "simulation.capacity", 1);
  if (const YAML::Node out = node["output"]) {
    r.expect_map(out, "simulation.output", {"every", "file"});
    if (out["every"])
      m.output_every = r.integer(out["every"], "simulation.output.every", 1);
    if (out["file"]) m.output_file = r.name(out["file"], "simulation.output.file");
  }
}

void read_medium(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "medium", {"temperature", "viscosity"});
  m.medium.given = true;
  if (node["temperature"])
    m.medium.temperature =
        r.number_at_least(node["temperature"], "medium.temperature", 0, true);
  if (node["viscosity"])
    m.medium.viscosity = r.number_at_least(node["viscosity"], "medium.viscosity", 0, true);
}

bool looks_numeric(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

bool valid_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

void read_kinds(const Reader& r, const YAML::Node& node, bool compartment, Model& m) {
  const std::string section = compartment ? "compartments" : "species";
  r.expect_map(node, section, {});
  for (const auto& entry : node) {
    KindSpec k;
    k.name = entry.first.Scalar();
    k.compartment = compartment;
    k.where = location(entry.first);
    const std::string key = section + "." + k.name;
    if (!valid_name(k.name))
      r.fail(entry.first, key, "a kind name is a letter or '_' then letters, digits, '_', '-'");
    if (m.find_kind(k.name))
      r.fail(entry.first, key, "a kind named '" + k.name + "' is already defined");
    const YAML::Node& v = entry.second;
    if (compartment)
      r.expect_map(v, key, {"radius", "thickness", "diffusion", "viscosity"});
    else
      r.expect_map(v, key, {"radius", "diffusion", "viscosity", "membrane"});
    if (!v["radius"]) r.fail(v, key + ".radius", "missing (expected a length > 0)");
    k.radius = r.number_at_least(v["radius"], key + ".radius", 0, true);
    if (compartment) {
      if (!v["thickness"])
        r.fail(v, key + ".thickness", "missing (expected a length > 0 and < radius)");
      k.thickness = r.number_at_least(v["thickness"], key + ".thickness", 0, true);
      if (!(k.thickness < k.radius))
        r.fail(v["thickness"], key + ".thickness",
               "expected a length < radius (" + v["radius"].Scalar() + "), got '" +
                   v["thickness"].Scalar() + "'");
    } else {
      k.thickness = k.radius;
      if (v["membrane"]) k.membrane = r.boolean(v["membrane"], key + ".membrane");
    }
    if (v["viscosity"])
      k.viscosity = r.number_at_least(v["viscosity"], key + ".viscosity", 0, true);
    if (const YAML::Node d = v["diffusion"]) {
      if (d.IsScalar() && d.Scalar() == "stokes-einstein") {
        // left unset: derived below
      } else if (d.IsScalar() && d.Tag() != "!" && looks_numeric(d.Scalar())) {
        k.diffusion = r.number_at_least(d, key + ".diffusion", 0, false);
      } else {
        r.fail(d, key + ".diffusion",
               "expected a number >= 0 or stokes-einstein, got " + describe(d));
      }
    }
    if (!k.diffusion && !m.medium.given)
      r.fail(v, key + ".diffusion",
             "missing: give a diffusion coefficient, or a `medium:` section "
             "(temperature, viscosity) to derive it by Stokes-Einstein");
    m.kinds.push_back(k);
  }
}

void read_place(const Reader& r, const YAML::Node& node, Model& m) {
  if (!node.IsSequence() || node.size() == 0)
    r.fail(node, "place", "expected a list of placements, got " + describe(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& e = node[i];
    const std::string key = "place[" + std::to_string(i) + "]";
    r.expect_map(e, key, {"compartment", "species", "count", "at", "in", "on", "outside"});
    Placement p;
    p.where = location(e);
    const bool is_compartment = bool(e["compartment"]);
    if (is_compartment == bool(e["species"]))
      r.fail(e, key, "expected exactly one of `compartment:` or `species:`");
    const std::string field = is_compartment ? "compartment" : "species";
    p.kind = r.name(e[field], key + "." + field);
    const KindSpec* kind = m.find_kind(p.kind);
    if (!kind || kind->compartment != is_compartment)
      r.fail(e[field], key + "." + field,
             "'" + p.kind + "' names no " + (is_compartment ? "compartment kind" : "species") +
                 " (defined under `" + (is_compartment ? "compartments" : "species") + ":`)");
    int regions = 0;
    for (const char* k : {"at", "in", "on", "outside"}) regions += bool(e[k]);
    if (regions != 1)
      r.fail(e, key, "expected exactly one of `at:`, `in:`, `on:`, `outside:`");
    if (e["count"]) p.count = r.integer(e["count"], key + ".count", 1);
    if (e["at"]) {
      p.region = Placement::Region::at;
      p.at = r.vector3(e["at"], key + ".at");
      if (e["count"] && p.count != 1)
        r.fail(e["count"], key + ".count", "`at:` places one body: expected count 1");
    } else {
      const char* k = e["in"] ? "in" : e["on"] ? "on" : "outside";
      p.region = e["in"]   ? Placement::Region::in
                 : e["on"] ? Placement::Region::on
                           : Placement::Region::outside;
      p.target = r.name(e[k], key + "." + k);
      const KindSpec* target = m.find_kind(p.target);
      if (!target || !target->compartment)
        r.fail(e[k], key + "." + k, "'" + p.target + "' names no compartment kind");
      bool placed_before = false;
      for (const auto& q : m.place) placed_before = placed_before || q.kind == p.target;
      if (!placed_before)
        r.fail(e[k], key + "." + k,
               "no '" + p.target + "' compartment is placed before this entry");
      if (p.region == Placement::Region::on && kind->compartment)
        r.fail(e[k], key + ".on", "compartments cannot be placed on a membrane");
      if (p.region == Placement::Region::on && !kind->membrane)
        r.fail(e[k], key + ".on",
               "species '" + p.kind + "' is not a membrane species (membrane: true)");
    }
    if (kind->membrane && p.region != Placement::Region::on)
      r.fail(e, key, "membrane species '" + p.kind + "' must be placed with `on:`");
    m.place.push_back(p);
  }
}

// --- reactions -------------------------------------------------------------------

const char* const rule_forms =
    "expected 'A -> B', 'A -> 0', 'A -> B + C', 'A + B -> C' or 'A + B -> C + D', where a "
    "term is KIND or KIND in|on|outside COMPARTMENT (at most 2 reactants and 2 products)";

std::string trim(const std::string& s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t b = 0, e = s.size();
  while (b < e && space(s[b])) ++b;
  while (e > b && space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Parses one side of a rule into `out`; returns what is wrong, or "" when it parses.
std::string parse_side(const std::string& text, bool products, std::vector<RuleTerm>& out) {
  const std::string side = trim(text);
  const char* which = products ? "products" : "reactants";
  if (side.empty())
    return products ? "nothing after '->' (write 0 for no products)" : "nothing before '->'";
  if (products && side == "0") return "";
  std::size_t start = 0;
  for (;;) {
    const std::size_t plus = side.find('+', start);
    const std::string part =
        trim(side.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (part.empty()) return std::string("an empty term among the ") + which;
    const std::vector<std::string> w = words(part);
    if (w.size() == 1 && w[0] == "0")
      return products ? "'0' (nothing) stands alone: 'A -> 0'"
                      : "'0' (nothing) can only be the products";
    RuleTerm t;
    t.kind = w[0];
    if (w.size() == 3 && (w[1] == "in" || w[1] == "on" || w[1] == "outside")) {
      t.where = w[1] == "in"   ? RuleTerm::Where::in
                : w[1] == "on" ? RuleTerm::Where::on
                               : RuleTerm::Where::outside;
      t.compartment = w[2];
    } else if (w.size() == 3) {
      return "expected in, on or outside after '" + w[0] + "', got '" + w[1] + "'";
    } else if (w.size() != 1) {
      return "'" + part + "' is not a term";
    }
    out.push_back(t);
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  if (out.size() > 2)
    return std::to_string(out.size()) + " " + which + " (at most 2)";
  return "";
}

// Parses "REACTANTS -> PRODUCTS" into `spec`; returns what is wrong, or "".
std::string parse_rule(const std::string& rule, ReactionSpec& spec) {
  const std::size_t arrow = rule.find("->");
  if (arrow == std::string::npos) return "no '->'";
  if (rule.find("->", arrow + 2) != std::string::npos) return "more than one '->'";
  spec.reactants.clear();
  spec.products.clear();
  std::string what = parse_side(rule.substr(0, arrow), false, spec.reactants);
  if (what.empty()) what = parse_side(rule.substr(arrow + 2), true, spec.products);
  return what;
}

void read_reactions(const Reader& r, const YAML::Node& node, Model& m) {
  if (!node.IsSequence())
    r.fail(node, "reactions", "expected a list of reactions, got " + describe(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& e = node[i];
    const std::string key = "reactions[" + std::to_string(i) + "]";
    r.expect_map(e, key, {"name", "rule", "rate", "radius"});
    ReactionSpec x;
    x.where = location(e);
    if (!e["name"])
      r.fail(e, key + ".name", "missing (expected a name: letters, digits, '_', '-')");
    x.name = r.name(e["name"], key + ".name");
    x.name_at = location(e["name"]);
    if (!e["rule"]) r.fail(e, key + ".rule", "missing (expected a rule such as 'A + B -> C')");
    const YAML::Node rule = e["rule"];
    if (!rule.IsScalar() || trim(rule.Scalar()).empty())
      r.fail(rule, key + ".rule", "expected a rule such as 'A + B -> C', got " + describe(rule));
    x.rule = trim(rule.Scalar());
    x.rule_at = location(rule);
    const std::string what = parse_rule(x.rule, x);
    if (!what.empty())
      r.fail(rule, key + ".rule", "malformed rule '" + x.rule + "': " + what + "; " + rule_forms);
    if (!e["rate"]) r.fail(e, key + ".rate", "missing (expected a rate >= 0, per time unit)");
    x.rate = r.number_at_least(e["rate"], key + ".rate", 0, false);
    if (e["radius"]) {
      x.radius = r.number_at_least(e["radius"], key + ".radius", 0, true);
      x.radius_at = location(e["radius"]);
    }
    m.reactions.push_back(x);  // references and supported forms: validate()
  }
}

// A rule as text for messages: as written, or spelled from its terms.
std::string rule_text(const ReactionSpec& x) {
  if (!x.rule.empty()) return x.rule;
  const auto side = [](const std::vector<RuleTerm>& terms) {
    std::string s;
    for (const auto& t : terms) {
      s += (s.empty() ? "" : " + ") + t.kind;
      if (t.where == RuleTerm::Where::in) s += " in " + t.compartment;
      if (t.where == RuleTerm::Where::on) s += " on " + t.compartment;
      if (t.where == RuleTerm::Where::outside) s += " outside " + t.compartment;
    }
    return s.empty() ? std::string("0") : s;
  };
  return side(x.reactants) + " -> " + side(x.products);
}

Location or_entry(const Location& at, const Location& entry) {
  return at.line > 0 ? at : entry;
}

// References, sites and the forms the engine supports (models/README.md, "reactions").
void check_reactions(const Reader& r, const Model& m, double min_box) {
  using Where = RuleTerm::Where;
  for (std::size_t i = 0; i < m.reactions.size(); ++i) {
    const ReactionSpec& x = m.reactions[i];
    const std::string key = "reactions[" + std::to_string(i) + "]";
    const Location at_name = or_entry(x.name_at, x.where);
    const Location at_rule = or_entry(x.rule_at, x.where);
    const std::string rule = "'" + rule_text(x) + "'";
    if (!valid_name(x.name))
      r.fail(at_name, key + ".name",
             "a reaction name is a letter or '_' then letters, digits, '_', '-', got '" +
                 x.name + "'");
    for (std::size_t j = 0; j < i; ++j)
      if (m.reactions[j].name == x.name)
        r.fail(at_name, key + ".name",
               "a reaction named '" + x.name + "' is already defined (reactions[" +
                   std::to_string(j) + "])");
    if (!(x.rate >= 0) || !std::isfinite(x.rate))
      r.fail(x.where, key + ".rate", "expected a rate >= 0 (per time unit)");
    if (x.reactants.empty() || x.reactants.size() > 2 || x.products.size() > 2)
      r.fail(at_rule, key + ".rule", "malformed rule " + rule + ": " + rule_forms);

    // Every term: its kind, its site's compartment kind, membranes.
    bool membrane_reactant = false;
    for (const auto& t : x.reactants) {
      const KindSpec* k = m.find_kind(t.kind);
      membrane_reactant = membrane_reactant || (k && k->membrane);
    }
    for (int side = 0; side < 2; ++side) {
      const bool product = side == 1;
      for (const auto& t : product ? x.products : x.reactants) {
        const KindSpec* k = m.find_kind(t.kind);
        if (!k)
          r.fail(at_rule, key + ".rule",
                 "'" + t.kind + "' in rule " + rule +
                     " names no kind (defined under `compartments:` or `species:`)");
        if (t.where != Where::any) {
          const KindSpec* c = m.find_kind(t.compartment);
          if (!c || !c->compartment)
            r.fail(at_rule, key + ".rule",
                   "'" + t.compartment + "' in rule " + rule + " names no compartment kind");
        }
        const std::string term = "'" + t.kind + "'";
        if (t.where == Where::on && k->compartment)
          r.fail(at_rule, key + ".rule",
                 "rule " + rule + ": compartment kind " + term + " cannot be on a membrane");
        if (t.where == Where::on && !k->membrane)
          r.fail(at_rule, key + ".rule",
                 "rule " + rule + ": '" + t.kind + " on " + t.compartment + "': species " +
                     term + " is not a membrane species (membrane: true)");
        if (product && k->membrane && (t.where == Where::in || t.where == Where::outside))
          r.fail(at_rule, key + ".rule",
                 "rule " + rule + ": product " + term + " is a membrane species: it goes `on` "
                 "a compartment kind, not in or outside one");
        if (product && k->membrane && t.where == Where::any && !membrane_reactant)
          r.fail(at_rule, key + ".rule",
                 "rule " + rule + ": product " + term + " is a membrane species and no "
                 "reactant is: say which membrane it goes to, '" + t.kind + " on K'");
      }
    }

    // The forms the engine supports.
    std::size_t compartments = 0;
    for (const auto& t : x.reactants) compartments += m.find_kind(t.kind)->compartment;
    bool product_compartment = false;
    for (const auto& t : x.products)
      product_compartment = product_compartment || m.find_kind(t.kind)->compartment;
    const auto is_compartment = [&](const RuleTerm& t) { return m.find_kind(t.kind)->compartment; };
    if (compartments == 2) {  // fusion
      const bool fusion = x.products.size() == 1 &&
                          (x.products[0].kind == x.reactants[0].kind ||
                           x.products[0].kind == x.reactants[1].kind) &&
                          x.products[0].where == Where::any && x.reactants[0].where == Where::any &&
                          x.reactants[1].where == Where::any;
      if (!fusion)
        r.fail(at_rule, key + ".rule",
               "rule " + rule + ": two compartment kinds react only by fusion, 'V + Y -> Y' "
               "(one product, the kind that stays; no sites: V and Y are siblings)");
    } else if (compartments == 1 && x.reactants.size() == 2) {
      const RuleTerm& c = is_compartment(x.reactants[0]) ? x.reactants[0] : x.reactants[1];
      const bool binding = x.products.size() == 1 && !product_compartment &&
                           x.products[0].where == Where::on &&
                           x.products[0].compartment == c.kind;
      if (!binding)
        r.fail(at_rule, key + ".rule",
               "rule " + rule + ": a species reacts with compartment kind '" + c.kind +
                   "' only by binding, 'S + " + c.kind + " -> S2 on " + c.kind +
                   "' (one product, a membrane species on " + c.kind + ")");
    } else if (compartments == 1) {
      r.fail(at_rule, key + ".rule",
             "rule " + rule + ": a compartment kind is a reactant only of fusion, 'V + Y -> Y'");
    } else if (product_compartment) {  // budding
      const std::string form = "budding is 'S on X -> V + S2 on V' or 'S on X -> V + S2 in V' "
                               "(S a membrane species on compartment kind X, V the new "
                               "compartment kind, S2 the species it carries)";
      if (x.reactants.size() != 1 || x.products.size() != 2 ||
          is_compartment(x.products[0]) == is_compartment(x.products[1]))
        r.fail(at_rule, key + ".rule", "rule " + rule + ": " + form);
      const RuleTerm& s0 = x.reactants[0];
      const RuleTerm& v = is_compartment(x.products[0]) ? x.products[0] : x.products[1];
      const RuleTerm& s2 = is_compartment(x.products[0]) ? x.products[1] : x.products[0];
      if (s0.where != Where::on)
        r.fail(at_rule, key + ".rule",
               "rule " + rule + ": the budding species must be on a membrane ('" + s0.kind +
                   " on X'); " + form);
      if (!(v.where == Where::any || (v.where == Where::in && v.compartment == s0.compartment)))
        r.fail(at_rule, key + ".rule",
               "rule " + rule + ": the new compartment '" + v.kind + "' buds into the lumen of '" +
                   s0.compartment + "': write it without a site; " + form);
      if (!((s2.where == Where::on || s2.where == Where::in) && s2.compartment == v.kind))
        r.fail(at_rule, key + ".rule",
               "rule " + rule + ": the carried species goes 'on " + v.kind + "' or 'in " +
                   v.kind + "'; " + form);
    }

    // The reaction radius: two reactants only.
    if (x.reactants.size() == 2 && !x.radius)
      r.fail(x.where, key + ".radius",
             "missing: a rule with two reactants needs a reaction radius (a length > 0)");
    if (x.reactants.size() == 1 && x.radius)
      r.fail(or_entry(x.radius_at, x.where), key + ".radius",
             "a rule with one reactant has no reaction radius (only A + B rules do)");
    if (x.radius) {
      const double radius = *x.radius;
      if (!(radius > 0) || !std::isfinite(radius))
        r.fail(or_entry(x.radius_at, x.where), key + ".radius", "expected a length > 0");
      if (!(2 * radius < min_box)) {
        std::ostringstream os;
        os << "reaction radius " << radius << " does not fit the box (expected 2 x radius < "
           << "the smallest edge, " << min_box << ")";
        r.fail(or_entry(x.radius_at, x.where), key + ".radius", os.str());
      }
    }
  }
}

}  // namespace

double Units::metres_per_length() const {
  if (length == "nm") return 1e-9;
  if (length == "um") return 1e-6;
  throw std::invalid_argument("unknown length unit '" + length + "'");
}

double Units::seconds_per_time() const {
  if (time == "ns") return 1e-9;
  if (time == "us") return 1e-6;
  if (time == "ms") return 1e-3;
  if (time == "s") return 1;
  throw std::invalid_argument("unknown time unit '" + time + "'");
}

const KindSpec* Model::find_kind(const std::string& name) const {
  const int i = kind_index(name);
  return i < 0 ? nullptr : &kinds[i];
}

int Model::kind_index(const std::string& name) const {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i].name == name) return static_cast<int>(i);
  return -1;
}

double stokes_einstein(double radius, double temperature, double viscosity,
                       const Units& units) {
  const double r_m = radius * units.metres_per_length();
  const double d_si = boltzmann * temperature / (6 * pi * viscosity * r_m);  // m^2/s
  const double l = units.metres_per_length();
  return d_si * units.seconds_per_time() / (l * l);
}

double diffusion_of(const KindSpec& kind, const Model& model) {
  if (kind.diffusion) return *kind.diffusion;
  return stokes_einstein(kind.radius, model.medium.temperature,
                         kind.viscosity.value_or(model.medium.viscosity), model.units);
}

Model parse_model(const std::string& text, const std::string& name) {
  const Reader r(name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    r.fail(Location{e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax: " + e.msg);
  }
  Model m;
  m.text = text;
  m.path = name;
  if (!root.IsMap()) r.fail(root, "", "expected a map of sections, got " + describe(root));
  r.expect_map(root, "",
               {"nestsim", "units", "box", "simulation", "medium", "compartments",
                "species", "interactions", "place", "reactions", "collision"});
  if (!root["nestsim"]) r.fail(root, "nestsim", "missing (expected `nestsim: 1`)");
  if (r.integer(root["nestsim"], "nestsim", 1) != 1)
    r.fail(root["nestsim"], "nestsim", "expected schema version 1, got '" +
                                           root["nestsim"].Scalar() + "'");
  if (root["units"]) read_units(r, root["units"], m.units);
  if (!root["box"]) r.fail(root, "box", "missing (expected {size: [x, y, z]})");
  read_box(r, root["box"], m);
  if (root["simulation"]) read_simulation(r, root["simulation"], m);
  if (root["medium"]) read_medium(r, root["medium"], m);
  if (root["compartments"]) read_kinds(r, root["compartments"], true, m);
  if (root["species"]) read_kinds(r, root["species"], false, m);
  if (const YAML::Node i = root["interactions"]) {
    r.expect_map(i, "interactions", {"repulsion"});
    if (i["repulsion"])
      m.repulsion = r.number_at_least(i["repulsion"], "interactions.repulsion", 0, false);
  }
  if (root["collision"])
    m.solid = r.choice(root["collision"], "collision", {"hollow", "solid"}) == "solid";
  if (!root["place"]) r.fail(root, "place", "missing (expected a list of placements)");
  read_place(r, root["place"], m);
  if (root["reactions"]) read_reactions(r, root["reactions"], m);
  validate(m);
  return m;
}

Model load_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open the model file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model(text.str(), path);
}

// The time step against the stiffest soft contact (nestsim/sim/time_step.h), reported
// at `simulation.dt` with the largest dt that the limit accepts.
void check_time_step(const Reader& r, const Model& m) {
  std::vector<sim::ContactKind> kinds;
  for (const auto& k : m.kinds) kinds.push_back({k.compartment, k.membrane, diffusion_of(k, m)});
  const double largest = sim::max_dt(kinds, m.repulsion, 1.0, m.dt_limit);
  if (m.dt <= largest) return;
  const double step = m.dt * sim::contact_rate(kinds, m.repulsion, 1.0);
  std::ostringstream os;
  os << "too large for accurate contacts: (D_a + D_b) x repulsion x dt = " << step
     << " for the fastest pair of kinds that touch softly, above "
     << sim::contact_step_limit(m.dt_limit) << "; use dt <= " << largest
     << (m.dt_limit == sim::DtLimit::accurate
             ? " (or `dt_limit: stable` to trade contact accuracy for speed, models/README.md)"
             : "");
  r.fail(m.dt_at, "simulation.dt", os.str());
}

void validate(const Model& m) {
  const Reader r(m.path);
  const Location top{};
  if (m.version != 1) r.fail(top, "nestsim", "expected schema version 1");
  try {
    m.units.metres_per_length();
    m.units.seconds_per_time();
  } catch (const std::invalid_argument& e) {
    r.fail(top, "units", e.what());
  }
  for (int d = 0; d < 3; ++d)
    if (!(m.box[d] > 0) || !std::isfinite(m.box[d]))
      r.fail(top, "box.size", "expected 3 lengths > 0");
  if (!(m.dt > 0)) r.fail(top, "simulation.dt", "expected a time > 0");
  if (m.output_every == 0) r.fail(top, "simulation.output.every", "expected an integer >= 1");
  if (m.output_file.empty()) r.fail(top, "simulation.output.file", "expected a file name");
  if (m.medium.given && !(m.medium.temperature > 0 && m.medium.viscosity > 0))
    r.fail(top, "medium", "expected temperature > 0 and viscosity > 0");
  if (!(m.repulsion >= 0)) r.fail(top, "interactions.repulsion", "expected a number >= 0");
  const double min_box = std::min({m.box[0], m.box[1], m.box[2]});
  for (const auto& k : m.kinds) {
    const std::string key = (k.compartment ? "compartments." : "species.") + k.name;
    if (!(k.radius > 0)) r.fail(k.where, key + ".radius", "expected a length > 0");
    if (k.compartment && !(k.thickness > 0 && k.thickness < k.radius))
      r.fail(k.where, key + ".thickness", "expected a length > 0 and < radius");
    if (!k.compartment && k.thickness != k.radius)
      r.fail(k.where, key + ".thickness", "a species is solid: thickness == radius");
    if (k.diffusion && !(*k.diffusion >= 0))
      r.fail(k.where, key + ".diffusion", "expected a number >= 0");
    if (!k.diffusion && !m.medium.given)
      r.fail(k.where, key + ".diffusion", "missing, and no `medium:` for Stokes-Einstein");
    if (k.viscosity && !(*k.viscosity > 0))
      r.fail(k.where, key + ".viscosity", "expected a viscosity > 0 (Pa s)");
    if (k.compartment && k.membrane)
      r.fail(k.where, key + ".membrane", "only species live in a membrane");
    // A body must fit the box; in a periodic box its minimum images must be unique.
    const bool fits = m.periodic ? 2 * k.radius < min_box : 2 * k.radius <= min_box;
    if (!fits) {
      std::ostringstream os;
      os << "radius " << k.radius << " does not fit the box (the smallest edge is " << min_box
         << (m.periodic ? "; periodic boxes need 2 r < edge)" : ")");
      r.fail(k.where, key + ".radius", os.str());
    }
  }
  if (m.place.empty()) r.fail(top, "place", "expected a list of placements");
  std::set<std::string> placed;
  for (std::size_t i = 0; i < m.place.size(); ++i) {
    const Placement& p = m.place[i];
    const std::string key = "place[" + std::to_string(i) + "]";
    const KindSpec* kind = m.find_kind(p.kind);
    if (!kind) r.fail(p.where, key, "'" + p.kind + "' names no kind");
    if (p.count == 0) r.fail(p.where, key + ".count", "expected an integer >= 1");
    if (p.region == Placement::Region::at) {
      if (p.count != 1) r.fail(p.where, key + ".count", "`at:` places one body");
    } else {
      const KindSpec* target = m.find_kind(p.target);
      if (!target || !target->compartment)
        r.fail(p.where, key, "'" + p.target + "' names no compartment kind");
      if (!placed.count(p.target))
        r.fail(p.where, key, "no '" + p.target + "' compartment is placed before this entry");
      if (p.region == Placement::Region::on && !kind->membrane)
        r.fail(p.where, key + ".on", "'" + p.kind + "' is not a membrane species");
    }
    if (kind->membrane && p.region != Placement::Region::on)
      r.fail(p.where, key, "membrane species '" + p.kind + "' must be placed with `on:`");
    placed.insert(p.kind);
  }
  check_reactions(r, m, min_box);
  check_time_step(r, m);
}

}  // namespace nestsim::io

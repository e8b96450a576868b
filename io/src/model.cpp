// Model files: YAML -> Model. Every value is checked where it is read, so that errors
// point at the exact node (line, column, key path); validate() then checks what spans
// several keys (references, sizes against the box).
#include "nestsim/io/model.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "nestsim/io/placement.h"
#include "nestsim/io/rates.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nestsim::io {
namespace {

constexpr double pi = 3.14159265358979323846;
constexpr double euler_gamma = 0.57721566490153286061;

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
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string core = "tag:yaml.org,2002:";
      const std::string text = "'" + excerpt(node.Scalar()) + "'";
      if (tag == "?") return text;
      if (tag == "!") return text + " (quoted: text)";
      return text + " (tagged " +
             (tag.rfind(core, 0) == 0 ? "!!" + tag.substr(core.size()) : tag) + ")";
    }
    default: return "no value";
  }
}

// Whether a scalar is plain (untagged, unquoted) or explicitly tagged with one of the
// YAML core types `types` (!!int, !!float, !!bool): the explicit tag is honoured, so
// `!!str 350` is text.
bool typed(const YAML::Node& node, std::initializer_list<const char*> types) {
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
      const std::string path = (key.empty() ? "" : key + ".") + excerpt(name);
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
      os << "expected a number " << (strict ? "> " : ">= ") << min << ", got '"
         << node.Scalar() << "'";
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
    if (s.empty() || s[0] == '-' || s[0] == '+' || *end != '\0' || errno == ERANGE ||
        v < min)
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
  if (node["capacity"]) {
    m.capacity = r.integer(node["capacity"], "simulation.capacity", 1);
    if (m.capacity > uint64_t(max_slots))
      r.fail(node["capacity"], "simulation.capacity",
             "at most " + std::to_string(max_slots) + " slots (2^31 - 1), got " +
                 std::to_string(m.capacity));
  }
  if (const YAML::Node out = node["output"]) {
    r.expect_map(out, "simulation.output", {"every", "file"});
    if (out["every"])
      m.output_every = r.integer(out["every"], "simulation.output.every", 1);
    if (out["file"]) m.output_file = r.name(out["file"], "simulation.output.file");
  }
}

void read_medium(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "medium",
               {"temperature", "viscosity", "membrane_viscosity", "membrane_thickness"});
  m.medium.given = true;
  if (node["temperature"])
    m.medium.temperature =
        r.number_at_least(node["temperature"], "medium.temperature", 0, true);
  if (node["viscosity"])
    m.medium.viscosity = r.number_at_least(node["viscosity"], "medium.viscosity", 0, true);
  if (node["membrane_viscosity"])
    m.medium.membrane_viscosity =
        r.number_at_least(node["membrane_viscosity"], "medium.membrane_viscosity", 0, true);
  if (node["membrane_thickness"])
    m.medium.membrane_thickness =
        r.number_at_least(node["membrane_thickness"], "medium.membrane_thickness", 0, true);
}

// What keeps Saffman-Delbrueck from giving `k` a diffusion coefficient, or "".
std::string saffman_delbruck_problem(const KindSpec& k, const Model& m) {
  const double l = m.units.metres_per_length();
  const double surface = m.medium.membrane_viscosity * m.medium.membrane_thickness_in(m.units) * l;
  if (std::log(surface / (m.medium.viscosity * k.radius * l)) - euler_gamma > 0) return "";
  std::ostringstream os;
  os << "Saffman-Delbrueck needs ln(mu_m h / (mu a)) > gamma = 0.5772, that is a radius below "
     << surface / (m.medium.viscosity * std::exp(euler_gamma)) / l << " " << m.units.length
     << " (medium.membrane_viscosity " << m.medium.membrane_viscosity
     << " Pa s, membrane_thickness " << m.medium.membrane_thickness_in(m.units) << " "
     << m.units.length << ", viscosity " << m.medium.viscosity << " Pa s); radius " << k.radius
     << " is too large for it: give diffusion as a number";
  return os.str();
}

const char* const sd_viscosity =
    "a kind's viscosity is the 3D viscosity of Stokes-Einstein; this membrane species gets "
    "Saffman-Delbrueck (medium.viscosity around the membrane, medium.membrane_viscosity, "
    "medium.membrane_thickness): leave viscosity out, or write `diffusion: stokes-einstein` "
    "to use the 3D formula with it";

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
      r.fail(entry.first, section + "." + excerpt(k.name),
             "a kind name is a letter or '_' then letters, digits, '_', '-'");
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
        k.derive = KindSpec::Derive::stokes_einstein;  // left unset: derived
      } else if (d.IsScalar() && d.Scalar() == "saffman-delbruck") {
        if (!k.membrane)
          r.fail(d, key + ".diffusion",
                 std::string("saffman-delbruck is for membrane species (membrane: true); a ") +
                     (compartment ? "compartment" : "free species") +
                     " takes stokes-einstein or a number");
        k.derive = KindSpec::Derive::saffman_delbruck;
      } else if (d.IsScalar() && d.Tag() != "!" && looks_numeric(d.Scalar())) {
        k.diffusion = r.number_at_least(d, key + ".diffusion", 0, false);
      } else {
        r.fail(d, key + ".diffusion",
               "expected a number >= 0, stokes-einstein or saffman-delbruck, got " + describe(d));
      }
    }
    if (!k.diffusion && !m.medium.given)
      r.fail(v, key + ".diffusion",
             "missing: give a diffusion coefficient, or a `medium:` section "
             "(temperature, viscosity) to derive it by Stokes-Einstein or Saffman-Delbrueck");
    if (uses_saffman_delbruck(k)) {
      if (v["viscosity"]) r.fail(v["viscosity"], key + ".viscosity", sd_viscosity);
      const std::string problem = saffman_delbruck_problem(k, m);
      if (!problem.empty())
        r.fail(v["diffusion"] ? v["diffusion"] : v, key + ".diffusion", problem);
    }
    m.kinds.push_back(k);
  }
}

void read_place(const Reader& r, const YAML::Node& node, Model& m) {
  std::set<std::string> placed;  // the kinds of the entries so far
  if (!node.IsSequence() || node.size() == 0)
    r.fail(node, "place",
           "expected a list of placements, got " + (node.IsSequence() ? "an empty list"
                                                                      : describe(node)));
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
      if (!placed.count(p.target))
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
    placed.insert(p.kind);
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

// --- rates with units (models/README.md, "Rates") ---

// Seconds per time unit; 0 for no time unit.
double seconds_per(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  return 0;
}

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

// The factor that turns a rate in `unit` ("/s", "1/s", "s^-1"; s, ms, us or ns) into
// one per model time unit; 0 when `unit` is not a rate's unit.
double per_time_factor(const std::string& unit, const Units& units) {
  const std::string u = without_spaces(unit);
  for (const char* t : {"s", "ms", "us", "ns"}) {
    const std::string time = t;
    if (u == "/" + time || u == "1/" + time || u == time + "^-1")
      return units.seconds_per_time() / seconds_per(time);
  }
  return 0;
}

// The factor that turns a bimolecular rate constant in `unit` into length^3/time of
// `units`: per molar per time ("/M/s", "1/M/s", "M^-1 s^-1") or a volume per time
// ("nm^3/us", "um^3/s", "nm^3 s^-1"); 0 when `unit` is neither.
double rate_constant_factor(const std::string& unit, const Units& units) {
  const std::string u = without_spaces(unit);
  for (const char* t : {"s", "ms", "us", "ns"}) {
    const std::string time = t;
    const double per_time = 1 / seconds_per(time);  // 1/time in 1/s
    if (u == "/M/" + time || u == "1/M/" + time || u == "M^-1" + time + "^-1")
      return per_molar_second_in_model_units(units) * per_time;
    for (const char* l : {"nm", "um"}) {
      const std::string length = l;
      if (u == length + "^3/" + time || u == length + "^3" + time + "^-1") {
        const double ratio = (length == "nm" ? 1e-9 : 1e-6) / units.metres_per_length();
        return ratio * ratio * ratio * units.seconds_per_time() * per_time;
      }
    }
  }
  return 0;
}

// "NUMBER UNIT" (spaces optional): false unless it starts with a finite number followed
// by a unit.
bool split_quantity(const std::string& text, double& value, std::string& unit) {
  const std::string s = trim(text);
  char* end = nullptr;
  errno = 0;
  value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno == ERANGE || !std::isfinite(value)) return false;
  unit = trim(std::string(end));
  return !unit.empty();
}

const char* const rate_units =
    "a number (per time unit of the model) or a number with a time unit, e.g. '0.5 /s' "
    "(/s, /ms, /us, /ns; also 1/s, s^-1)";
const char* const kon_units =
    "a number with a unit: per molar per time ('1e6 /M/s', also 'M^-1 s^-1') or a volume "
    "per time ('nm^3/us', 'um^3/s', 'nm^3/s')";

// `rate:` of reactions[i]: a bare number in model units, or a number with a time unit.
void read_rate(const Reader& r, const YAML::Node& v, const std::string& key, const Units& units,
               ReactionSpec& x) {
  x.rate_at = location(v);
  if (v.IsScalar() && v.Tag() != "!" && looks_numeric(v.Scalar())) {
    x.rate = r.number_at_least(v, key, 0, false);
    return;
  }
  double value = 0;
  std::string unit;
  if (!v.IsScalar() || !split_quantity(v.Scalar(), value, unit))
    r.fail(v, key, std::string("expected ") + rate_units + ", got " + describe(v));
  const double factor = per_time_factor(unit, units);
  if (factor == 0 && rate_constant_factor(unit, units) != 0)
    r.fail(v, key, "'" + unit + "' is the unit of a bimolecular rate constant: give it as kon: (" +
                       kon_units + "), rate: is per time");
  if (factor == 0)
    r.fail(v, key, "unknown unit '" + unit + "': expected " + rate_units);
  if (!(value >= 0)) r.fail(v, key, "expected a rate >= 0, got " + describe(v));
  x.rate = value * factor;
  x.given = value;
  x.given_unit = unit;
}

// `kon:` of reactions[i] (two reactants): a number with a rate constant's unit.
void read_kon(const Reader& r, const YAML::Node& v, const std::string& key, const Units& units,
              ReactionSpec& x) {
  x.rate_at = location(v);
  if (x.reactants.size() != 2)
    r.fail(v, key, "kon: is the rate constant of a rule with two reactants; a rule with one "
                   "reactant takes rate: (per time, e.g. '0.5 /s')");
  double value = 0;
  std::string unit;
  if (!v.IsScalar() || !split_quantity(v.Scalar(), value, unit))
    r.fail(v, key, std::string("expected ") + kon_units + ", got " + describe(v));
  const double factor = rate_constant_factor(unit, units);
  if (factor == 0 && per_time_factor(unit, units) != 0)
    r.fail(v, key, "'" + unit + "' is the unit of a rate per time: the Doi rate is given as "
                   "rate:; kon: is " + kon_units);
  if (factor == 0) r.fail(v, key, "unknown unit '" + unit + "': expected " + kon_units);
  if (!(value >= 0)) r.fail(v, key, "expected a rate constant >= 0, got " + describe(v));
  x.kon = value * factor;
  x.given = value;
  x.given_unit = unit;
}

void read_reactions(const Reader& r, const YAML::Node& node, Model& m) {
  if (!node.IsSequence())
    r.fail(node, "reactions", "expected a list of reactions, got " + describe(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& e = node[i];
    const std::string key = "reactions[" + std::to_string(i) + "]";
    r.expect_map(e, key, {"name", "rule", "rate", "kon", "radius"});
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
    if (!e["rate"] && !e["kon"])
      r.fail(e, key + ".rate",
             "missing (expected a rate >= 0, per time unit, such as 0.5 or '0.5 /s'; or for "
             "two reactants kon:, such as '1e6 /M/s')");
    if (e["rate"] && e["kon"])
      r.fail(e["kon"], key + ".kon",
             "give either rate: (the Doi rate per pair in reach) or kon: (the macroscopic rate "
             "constant, converted to a Doi rate), not both");
    if (e["rate"]) read_rate(r, e["rate"], key + ".rate", m.units, x);
    if (e["kon"]) read_kon(r, e["kon"], key + ".kon", m.units, x);
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

// A rule given by kon (read_kon): two free species, whose kon the Doi model can reach
// (Erban-Chapman, nestsim/io/rates.h).
void check_kon(const Reader& r, const Model& m, const ReactionSpec& x, const std::string& key) {
  const Location at = or_entry(x.rate_at, x.where);
  if (x.reactants.size() != 2)
    r.fail(at, key + ".kon", "kon: is the rate constant of a rule with two reactants");
  for (const auto& t : x.reactants) {
    const KindSpec* k = m.find_kind(t.kind);
    if (k->compartment)
      r.fail(at, key + ".kon",
             "kon: converts to the Doi rate of two species that react while their centres "
             "are within the reaction radius (Erban-Chapman); '" + t.kind +
                 "' is a compartment kind, which reacts across its membrane's surface "
                 "(binding, fusion), not within a ball: give the rate per pair in reach with "
                 "rate:");
    if (k->membrane)
      r.fail(at, key + ".kon",
             "kon: converts to a Doi rate for two species diffusing freely in 3D "
             "(Erban-Chapman); '" + t.kind + "' is a membrane species: it moves in 2D and its "
             "membrane hides part of the reaction ball, so no kon converts exactly: give the "
             "Doi rate with rate: (models/README.md, Rates)");
  }
  const double kon = *x.kon;
  if (!(kon >= 0) || !std::isfinite(kon))
    r.fail(at, key + ".kon", "expected a rate constant >= 0 (length^3/time)");
  const double D = reactant_diffusion(x, m), sigma = *x.radius;
  const double limit = 4 * pi * D * sigma;
  if (kon == 0 || kon < limit) return;
  const std::string& len = m.units.length;
  const std::string volume_rate = len + "^3/" + m.units.time;
  std::ostringstream os;
  os << "kon ";
  if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
  os << kon << " " << volume_rate << " is at or above the diffusion limit 4 pi D sigma = "
     << limit << " " << volume_rate;
  if (!x.given_unit.empty())
    os << " = " << limit / rate_constant_factor(x.given_unit, m.units) << " " << x.given_unit;
  os << " (D = D_A + D_B = " << D << " " << len << "^2/" << m.units.time << ", radius " << sigma
     << " " << len << "): no Doi rate reaches it; lower kon, or raise the radius or the "
     << "reactants' diffusion coefficients";
  r.fail(at, key + ".kon", os.str());
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
    if (!x.kon && (!(x.rate >= 0) || !std::isfinite(x.rate)))
      r.fail(or_entry(x.rate_at, x.where), key + ".rate", "expected a rate >= 0 (per time unit)");
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
    if (x.kon) check_kon(r, m, x, key);
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

double Medium::membrane_thickness_in(const Units& units) const {
  return membrane_thickness ? *membrane_thickness : 4e-9 / units.metres_per_length();
}

double saffman_delbruck(double radius, double temperature, double viscosity,
                        double membrane_viscosity, double membrane_thickness,
                        const Units& units) {
  const double l = units.metres_per_length();
  const double surface = membrane_viscosity * membrane_thickness * l;  // mu_m h, Pa s m
  const double log_term = std::log(surface / (viscosity * radius * l)) - euler_gamma;
  if (!(log_term > 0))
    throw std::domain_error("Saffman-Delbrueck: ln(mu_m h / (mu a)) - gamma <= 0");
  const double d_si = boltzmann * temperature / (4 * pi * surface) * log_term;  // m^2/s
  return d_si * units.seconds_per_time() / (l * l);
}

bool uses_saffman_delbruck(const KindSpec& kind) {
  if (kind.diffusion || kind.compartment) return false;
  return kind.derive == KindSpec::Derive::saffman_delbruck ||
         (kind.derive == KindSpec::Derive::automatic && kind.membrane);
}

double diffusion_of(const KindSpec& kind, const Model& model) {
  if (kind.diffusion) return *kind.diffusion;
  if (uses_saffman_delbruck(kind))
    return saffman_delbruck(kind.radius, model.medium.temperature, model.medium.viscosity,
                            model.medium.membrane_viscosity,
                            model.medium.membrane_thickness_in(model.units), model.units);
  return stokes_einstein(kind.radius, model.medium.temperature,
                         kind.viscosity.value_or(model.medium.viscosity), model.units);
}

double reactant_diffusion(const ReactionSpec& reaction, const Model& model) {
  if (reaction.reactants.size() != 2) return 0;
  double d = 0;
  for (const auto& t : reaction.reactants) {
    const KindSpec* k = model.find_kind(t.kind);
    if (!k) throw std::invalid_argument("reaction '" + reaction.name + "': no kind '" + t.kind + "'");
    d += diffusion_of(*k, model);
  }
  return d;
}

double reaction_rate(const ReactionSpec& reaction, const Model& model) {
  if (!reaction.kon) return reaction.rate;
  return doi_rate_from_kon(*reaction.kon, reactant_diffusion(reaction, model),
                           reaction.radius.value_or(0));
}

std::string describe_rate(const ReactionSpec& x, const Model& m) {
  if (!x.kon && x.given_unit.empty()) return "";
  const std::string& len = m.units.length;
  const std::string& time = m.units.time;
  std::ostringstream os;
  os << x.name << ": ";
  if (x.kon) {
    os << "kon ";
    if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
    os << *x.kon << " " << len << "^3/" << time << " -> Doi rate " << reaction_rate(x, m)
       << " /" << time << " at radius " << x.radius.value_or(0) << " " << len
       << " (D_A + D_B = " << reactant_diffusion(x, m) << " " << len << "^2/" << time << ")";
  } else {
    os << "rate " << x.given << " " << x.given_unit << " = " << x.rate << " /" << time;
    if (x.reactants.size() == 2)
      os << " (Doi rate at radius " << x.radius.value_or(0) << " " << len << ")";
  }
  return os.str();
}

Model parse_model(const std::string& text, const std::string& name) {
  const Reader r(name);
  YAML::Node root;
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(text);  // every one parsed
    for (std::size_t d = 1; d < documents.size(); ++d)  // an empty one after --- is harmless
      if (!documents[d].IsNull())
        r.fail(documents[d], "", "a second YAML document (after ---): a model file holds one");
    if (!documents.empty()) root = documents[0];
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own message: "bad file"
    r.fail(Location{e.mark.line + 1, e.mark.column + 1}, "",
           "YAML: lists and maps nested more than " + std::to_string(e.depth()) +
               " deep (a model nests a few levels)");
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
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw InputError(path, 0, "is a directory, not a model file");
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
  if (m.medium.given &&
      !(m.medium.membrane_viscosity > 0 && std::isfinite(m.medium.membrane_viscosity) &&
        m.medium.membrane_thickness_in(m.units) > 0 &&
        std::isfinite(m.medium.membrane_thickness_in(m.units))))
    r.fail(top, "medium", "expected membrane_viscosity > 0 and membrane_thickness > 0");
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
    if (!k.diffusion && k.derive == KindSpec::Derive::saffman_delbruck && !k.membrane)
      r.fail(k.where, key + ".diffusion", "saffman-delbruck is for membrane species (membrane: true)");
    if (m.medium.given && uses_saffman_delbruck(k)) {
      if (k.viscosity) r.fail(k.where, key + ".viscosity", sd_viscosity);
      const std::string problem = saffman_delbruck_problem(k, m);
      if (!problem.empty()) r.fail(k.where, key + ".diffusion", problem);
    }
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

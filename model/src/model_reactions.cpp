// The reactions of a model file as read: rules as text ("A + B -> C on K") and rates
// with units. Their checks against the kinds and the run are in reaction_checks.cpp.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "model_reading.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/rates.h"

namespace nestsim::model::model_reading {

// --- reactions -------------------------------------------------------------------

const char* const rule_forms =
    "expected 'A -> B', 'A -> 0', 'A -> B + C', 'A + B -> C', 'A + B -> C + D' or the "
    "reversible 'A + B <-> C', where a term is KIND or KIND in|on|outside COMPARTMENT (at "
    "most 2 reactants and 2 products)";

namespace {

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
  if (out.size() > 2) return std::to_string(out.size()) + " " + which + " (at most 2)";
  return "";
}

// Parses "REACTANTS -> PRODUCTS" (or "REACTANTS <-> PRODUCTS", then `reversible`) into
// `spec`; returns what is wrong, or "".
std::string parse_rule(const std::string& rule, ReactionSpec& spec, bool& reversible) {
  const std::size_t arrow = rule.find("->");
  if (arrow == std::string::npos) return "no '->'";
  if (rule.find("->", arrow + 2) != std::string::npos) return "more than one '->'";
  reversible = arrow > 0 && rule[arrow - 1] == '<';
  const std::size_t left_end = reversible ? arrow - 1 : arrow;
  spec.reactants.clear();
  spec.products.clear();
  std::string what = parse_side(rule.substr(0, left_end), false, spec.reactants);
  if (what.empty()) what = parse_side(rule.substr(arrow + 2), true, spec.products);
  if (what.empty() && reversible && spec.products.empty()) return "'<->' needs products (not 0)";
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

}  // namespace

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

namespace {

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
    r.fail(v, key,
           "'" + unit + "' is the unit of a bimolecular rate constant: give it as kon: (" +
               kon_units + "), rate: is per time");
  if (factor == 0) r.fail(v, key, "unknown unit '" + unit + "': expected " + rate_units);
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
    r.fail(v, key,
           "kon: is the rate constant of a rule with two reactants; a rule with one "
           "reactant takes rate: (per time, e.g. '0.5 /s')");
  double value = 0;
  std::string unit;
  if (!v.IsScalar() || !split_quantity(v.Scalar(), value, unit))
    r.fail(v, key, std::string("expected ") + kon_units + ", got " + describe(v));
  const double factor = rate_constant_factor(unit, units);
  if (factor == 0 && per_time_factor(unit, units) != 0)
    r.fail(v, key,
           "'" + unit +
               "' is the unit of a rate per time: the Doi rate is given as "
               "rate:; kon: is " +
               kon_units);
  if (factor == 0) r.fail(v, key, "unknown unit '" + unit + "': expected " + kon_units);
  if (!(value >= 0)) r.fail(v, key, "expected a rate constant >= 0, got " + describe(v));
  x.kon = value * factor;
  x.given = value;
  x.given_unit = unit;
}

// `koff:` of a reversible rule: a rate per time, with a unit or in model units.
void read_koff(const Reader& r, const YAML::Node& v, const std::string& key, const Units& units,
               ReactionSpec& reverse) {
  ReactionSpec x;
  read_rate(r, v, key, units, x);
  reverse.koff = x.rate;
  reverse.rate = x.rate;
  reverse.given = x.given;
  reverse.given_unit = x.given_unit;
  reverse.rate_at = x.rate_at;
}

// "A + B -> C" or "C -> A + B" spelled from the terms of a reversible rule (no sites).
std::string spelled(const std::vector<RuleTerm>& from, const std::vector<RuleTerm>& to) {
  const auto side = [](const std::vector<RuleTerm>& terms) {
    std::string s;
    for (const auto& t : terms) s += (s.empty() ? "" : " + ") + t.kind;
    return s;
  };
  return side(from) + " -> " + side(to);
}

}  // namespace

void read_reactions(const Reader& r, const YAML::Node& node, Model& m) {
  if (!node.IsSequence())
    r.fail(node, "reactions", "expected a list of reactions, got " + describe(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& e = node[i];
    const std::string key = "reactions[" + std::to_string(i) + "]";
    r.expect_map(e, key, {"name", "rule", "rate", "kon", "koff", "radius"});
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
    bool reversible = false;
    const std::string what = parse_rule(x.rule, x, reversible);
    if (!what.empty())
      r.fail(rule, key + ".rule", "malformed rule '" + io::excerpt(x.rule) + "': " + what + "; " + rule_forms);
    if (reversible) {
      // "A + B <-> C": two free species and their complex, kon and koff (models/README.md,
      // "Reversible rules"); read as the forward rule and its reverse.
      if (x.reactants.size() != 2 || x.products.size() != 1)
        r.fail(rule, key + ".rule",
               "a reversible rule is 'A + B <-> C' (two reactants, one product), got '" +
                   io::excerpt(x.rule) + "'");
      for (const auto* side : {&x.reactants, &x.products})
        for (const auto& t : *side)
          if (t.where != RuleTerm::Where::any)
            r.fail(rule, key + ".rule",
                   "a reversible rule 'A + B <-> C' takes kinds without sites (in, on, outside), "
                   "got '" + io::excerpt(x.rule) + "'");
      if (e["rate"])
        r.fail(e["rate"], key + ".rate",
               "a reversible rule takes kon: (the macroscopic rate constant, e.g. '1e8 /M/s') "
               "and koff: (per time, e.g. '1e4 /s'), not rate:");
      if (!e["kon"])
        r.fail(e, key + ".kon", "missing: a reversible rule 'A + B <-> C' needs kon: (e.g. '1e8 /M/s')");
      if (!e["koff"])
        r.fail(e, key + ".koff", "missing: a reversible rule 'A + B <-> C' needs koff: (e.g. '1e4 /s')");
    } else if (e["koff"]) {
      r.fail(e["koff"], key + ".koff",
             "koff: is the dissociation rate of a reversible rule 'A + B <-> C' (with kon:); "
             "rule '" + io::excerpt(x.rule) + "' is one-way: give its rate with rate: or kon:");
    }
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
    if (!reversible) {
      m.reactions.push_back(x);  // references and supported forms: validate()
      continue;
    }
    ReactionSpec back;
    back.name = x.name + "_reverse";
    back.rule = spelled(x.products, x.reactants);
    back.reactants = x.products;
    back.products = x.reactants;
    back.where = x.where;
    back.name_at = x.name_at;
    back.rule_at = x.rule_at;
    back.forward = int(m.reactions.size());
    read_koff(r, e["koff"], key + ".koff", m.units, back);
    m.reactions.push_back(x);
    m.reactions.push_back(back);
  }
}

}  // namespace nestsim::model::model_reading

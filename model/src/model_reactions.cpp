// The reactions of a model file: rules as text ("A + B -> C on K"), rates with units,
// and the checks of references, sites and the forms the engine supports.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model_reading.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/rates.h"

namespace nestsim::model::model_reading {

namespace {

// --- reactions -------------------------------------------------------------------

const char* const rule_forms =
    "expected 'A -> B', 'A -> 0', 'A -> B + C', 'A + B -> C', 'A + B -> C + D' or the "
    "reversible 'A + B <-> C', where a term is KIND or KIND in|on|outside COMPARTMENT (at "
    "most 2 reactants and 2 products)";

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

namespace {

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

Location or_entry(const Location& at, const Location& entry) { return at.line > 0 ? at : entry; }

// kon of a binding onto a membrane, "S + K -> S2 on K" (nestsim/model/kon_calibration.h):
// below the diffusion limit 4 pi D R of K's contact sphere, and a probability per step
// p <= 1 that holds it at simulation.dt, or the largest dt at which one does.
void check_binding_kon(const Reader& r, const Model& m, const ReactionSpec& x, const std::string& key,
                       const Location& at, double contact) {
  const double kon = *x.kon, D = reactant_diffusion(x, m), h = *x.radius;
  const std::string& len = m.units.length;
  const std::string volume_rate = len + "^3/" + m.units.time;
  std::ostringstream os;
  os << "kon ";
  if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
  os << kon << " " << volume_rate << " of binding onto the membrane (D = D_S + D_K = " << D << " " << len
     << "^2/" << m.units.time << ", contact radius r_K + r_S = " << contact << " " << len << ", radius " << h
     << " " << len << ")";
  const double limit = 4 * pi * D * contact;
  if (!(kon < limit)) {
    os << " is at or above the diffusion limit 4 pi D (r_K + r_S) = " << limit << " " << volume_rate;
    if (!x.given_unit.empty())
      os << " = " << limit / rate_constant_factor(x.given_unit, m.units) << " " << x.given_unit;
    os << ": no binding probability reaches it; lower kon";
    r.fail(at, key + ".kon", os.str());
  }
  if (!(m.dt > 0) || !std::isfinite(m.dt)) return;  // simulation.dt is refused on its own
  double largest = 0, most = 0;
  try {
    most = membrane_binding_rate(1, D, m.dt, contact, h);
    if (kon <= most) return;
    largest = largest_dt_for_binding(kon, D, contact, h);
  } catch (const std::exception& e) {
    r.fail(at, key + ".kon", std::string("kon cannot be held: ") + e.what());
  }
  os << " is above " << most << " " << volume_rate << ", the rate when every S in reach binds at every "
     << "step of simulation.dt " << m.dt << " " << m.units.time << " (a step of sqrt(2 D dt) = "
     << std::sqrt(2 * D * m.dt) << " " << len << " against the reach, radius " << h << " " << len << ")";
  if (largest > 0)
    os << ": simulation.dt is too large; the largest dt is " << largest << " " << m.units.time
       << " (or raise radius)";
  else
    os << ": no dt holds it; raise radius";
  r.fail(at, key + ".kon", os.str());
}

// A rule given by kon (read_kon): two free species, whose kon holds at the run's dt for
// its contact model (nestsim/model/kon_calibration.h), or the largest dt that holds it.
void check_kon(const Reader& r, const Model& m, const ReactionSpec& x, const std::string& key,
               double min_box) {
  const Location at = or_entry(x.rate_at, x.where);
  if (x.reactants.size() != 2)
    r.fail(at, key + ".kon", "kon: is the rate constant of a rule with two reactants");
  double contact = 0;
  const bool binding = is_membrane_binding(x, m, &contact);
  for (const auto& t : x.reactants) {
    const KindSpec* k = m.find_kind(t.kind);
    if (k->compartment && !binding)
      r.fail(at, key + ".kon",
             "kon: converts to the rate of two species that react within the reaction "
             "radius, or of a species binding onto a compartment's membrane ('S + K -> S2 on "
             "K'); '" + t.kind + "' is a compartment kind in a rule between compartments "
             "(fusion), which reacts across two surfaces: give the rate per pair in reach "
             "with rate:");
    if (k->membrane)
      r.fail(at, key + ".kon",
             "kon: converts to a Doi rate for two species diffusing freely in 3D "
             "(Erban-Chapman); '" +
                 t.kind +
                 "' is a membrane species: it moves in 2D and its "
                 "membrane hides part of the reaction ball, so no kon converts exactly: give the "
                 "Doi rate with rate: (models/README.md, Rates)");
  }
  const double kon = *x.kon;
  if (!(kon >= 0) || !std::isfinite(kon))
    r.fail(at, key + ".kon", "expected a rate constant >= 0 (length^3/time)");
  if (kon == 0) return;
  const double D = reactant_diffusion(x, m), sigma = *x.radius;
  const std::string& len = m.units.length;
  const std::string volume_rate = len + "^3/" + m.units.time;
  const auto given = [&](std::ostringstream& os) {
    os << "kon ";
    if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
    os << kon << " " << volume_rate;
  };
  if (binding) {
    check_binding_kon(r, m, x, key, at, contact);
    return;
  }
  if (m.contacts == Contacts::soft) {
    // The Doi model with the soft repulsion (nestsim/model/kon_calibration.h): below the
    // diffusion limit, and a step probability lambda dt small enough to hold it.
    const double limit = 4 * pi * D * sigma;
    if (!(kon < limit)) {
      std::ostringstream os;
      given(os);
      os << " is at or above the diffusion limit 4 pi D sigma = " << limit << " " << volume_rate;
      if (!x.given_unit.empty())
        os << " = " << limit / rate_constant_factor(x.given_unit, m.units) << " " << x.given_unit;
      os << " (D = D_A + D_B = " << D << " " << len << "^2/" << m.units.time << ", radius " << sigma
         << " " << len << "): no Doi rate reaches it; lower kon, or raise the radius or the "
         << "reactants' diffusion coefficients";
      r.fail(at, key + ".kon", os.str());
    }
  }
  if (!(m.dt > 0) || !std::isfinite(m.dt)) return;  // simulation.dt is refused on its own
  double largest = 0;
  try {
    largest = largest_dt_for_kon(x, m, min_box);
  } catch (const std::exception& e) {
    r.fail(at, key + ".kon", std::string("kon cannot be held: ") + e.what());
  }
  if (m.dt <= largest) return;
  std::ostringstream os;
  given(os);
  if (m.contacts == Contacts::soft)
    os << " needs the Doi rate " << calibrate_rule(x, m).rate << " /" << m.units.time
       << " (soft contacts, radius " << sigma << " " << len << "), whose probability per step "
       << "lambda dt must stay <= " << kMaxDoiStepProbability << " to hold kon: simulation.dt "
       << m.dt << " " << m.units.time << " is too large; the largest dt is " << largest << " "
       << m.units.time;
  else if (largest > 0)
    os << " needs the binding radius " << andrews_bray_binding_radius(kon, D, m.dt) << " " << len
       << " at simulation.dt " << m.dt << " " << m.units.time
       << " (Andrews-Bray), whose ball does not fit the box (2 x radius < " << min_box << " "
       << len << "); the largest dt is " << largest << " " << m.units.time;
  else
    os << " needs a binding radius of at least kon / (4 pi D) = " << kon / (4 * pi * D) << " " << len
       << " at any dt (D = D_A + D_B = " << D << " " << len << "^2/" << m.units.time
       << "; Andrews-Bray), whose ball does not fit the box (2 x radius < " << min_box << " "
       << len << "): no dt holds it; lower kon, or raise the reactants' diffusion coefficients";
  r.fail(at, key + ".kon", os.str());
}

// The reverse of a reversible rule (its forward rule checked by check_kon): koff >= 0,
// and an unbinding probability per step q < 1 that holds K = kon / koff at the run's dt
// (nestsim/model/kon_calibration.h), or the largest dt below which one does.
void check_koff(const Reader& r, const Model& m, const ReactionSpec& x, const std::string& key) {
  const Location at = or_entry(x.rate_at, x.where);
  const double koff = x.koff.value_or(0);
  if (!(koff >= 0) || !std::isfinite(koff)) r.fail(at, key + ".koff", "expected a rate >= 0 (per time)");
  const ReactionSpec& forward = m.reactions[std::size_t(x.forward)];
  if (!(forward.kon.value_or(0) > 0) && koff > 0)
    r.fail(at, key + ".koff", "a reversible rule with koff > 0 needs kon > 0 (K = kon / koff)");
  if (koff == 0 || !(m.dt > 0) || !std::isfinite(m.dt)) return;
  double q = 0, largest = 0;
  try {
    q = unbinding_step_probability(x, m);
    largest = largest_dt_for_koff(x, m);
  } catch (const std::exception& e) {
    r.fail(at, key + ".koff", std::string("koff cannot be held: ") + e.what());
  }
  if (q < 1) return;
  std::ostringstream os;
  os << "koff ";
  if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
  os << koff << " /" << m.units.time << " with kon " << *forward.kon << " " << m.units.length << "^3/"
     << m.units.time << " needs an unbinding probability per step q = p V koff / kon = " << q
     << " >= 1 at simulation.dt " << m.dt << " " << m.units.time
     << " (K = kon / koff held by detailed balance, models/README.md \"Reversible rules\")";
  if (largest > 0)
    os << ": simulation.dt is too large; the largest dt is " << largest << " " << m.units.time;
  else
    os << ": no dt holds it; lower koff or raise kon";
  r.fail(at, key + ".koff", os.str());
}

// The key path of rule i: its entry in the file (a reversible rule's reverse follows its
// forward rule in m.reactions, and is the entry's koff:).
std::string entry_key(const Model& m, std::size_t i) {
  std::size_t entry = 0;
  for (std::size_t j = 0; j < i; ++j) entry += m.reactions[j].forward < 0;
  if (m.reactions[i].forward >= 0) --entry;
  return "reactions[" + std::to_string(entry) + "]";
}

// One rule being checked: where its name, rule and entry are, for the messages.
struct RuleCheck {
  const Reader& r;
  const Model& m;
  const ReactionSpec& x;
  std::size_t i;
  std::string key;
  Location at_name, at_rule;
  std::string rule;

  RuleCheck(const Reader& reader, const Model& model, std::size_t index)
      : r(reader),
        m(model),
        x(model.reactions[index]),
        i(index),
        key(entry_key(model, index)),
        at_name(or_entry(x.name_at, x.where)),
        at_rule(or_entry(x.rule_at, x.where)),
        rule("'" + rule_text(x) + "'") {}

  // A valid, unique name; a rate; one or two reactants, at most two products.
  void name_and_rate() const {
    if (!valid_name(x.name))
      r.fail(at_name, key + ".name",
             "a reaction name is a letter or '_' then letters, digits, '_', '-', got '" +
                 io::excerpt(x.name) + "'");  // control characters escaped: one line
    for (std::size_t j = 0; j < i; ++j)
      if (m.reactions[j].name == x.name)
        r.fail(at_name, key + ".name",
               "a reaction named '" + x.name + "' is already defined (reactions[" +
                   std::to_string(j) + "])");
    if (!x.kon && (!(x.rate >= 0) || !std::isfinite(x.rate)))
      r.fail(or_entry(x.rate_at, x.where), key + ".rate", "expected a rate >= 0 (per time unit)");
    if (x.reactants.empty() || x.reactants.size() > 2 || x.products.size() > 2)
      r.fail(at_rule, key + ".rule", "malformed rule " + rule + ": " + rule_forms);
  }

  // Every term: its kind, its site's compartment kind, membranes.
  void terms() const {
    using Where = RuleTerm::Where;
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
                 "rule " + rule + ": '" + t.kind + " on " + t.compartment + "': species " + term +
                     " is not a membrane species (membrane: true)");
        if (product && k->membrane && (t.where == Where::in || t.where == Where::outside))
          r.fail(at_rule, key + ".rule",
                 "rule " + rule + ": product " + term +
                     " is a membrane species: it goes `on` "
                     "a compartment kind, not in or outside one");
        if (product && k->membrane && t.where == Where::any && !membrane_reactant)
          r.fail(at_rule, key + ".rule",
                 "rule " + rule + ": product " + term +
                     " is a membrane species and no "
                     "reactant is: say which membrane it goes to, '" +
                     t.kind + " on K'");
      }
    }
  }

  // The forms the engine supports: fusion, binding, budding, species only.
  void form() const {
    using Where = RuleTerm::Where;
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
               "rule " + rule +
                   ": two compartment kinds react only by fusion, 'V + Y -> Y' "
                   "(one product, the kind that stays; no sites: V and Y are siblings)");
    } else if (compartments == 1 && x.reactants.size() == 2) {
      const RuleTerm& c = is_compartment(x.reactants[0]) ? x.reactants[0] : x.reactants[1];
      const bool binding = x.products.size() == 1 && !product_compartment &&
                           x.products[0].where == Where::on && x.products[0].compartment == c.kind;
      if (!binding)
        r.fail(at_rule, key + ".rule",
               "rule " + rule + ": a species reacts with compartment kind '" + c.kind +
                   "' only by binding, 'S + " + c.kind + " -> S2 on " + c.kind +
                   "' (one product, a membrane species on " + c.kind + ")");
    } else if (compartments == 1) {
      r.fail(at_rule, key + ".rule",
             "rule " + rule + ": a compartment kind is a reactant only of fusion, 'V + Y -> Y'");
    } else if (product_compartment) {  // budding
      const std::string form =
          "budding is 'S on X -> V + S2 on V' or 'S on X -> V + S2 in V' "
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
               "rule " + rule + ": the carried species goes 'on " + v.kind + "' or 'in " + v.kind +
                   "'; " + form);
    }
  }

  // The reaction radius: two reactants only, and it fits the box.
  void radius(double min_box) const {
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
};

}  // namespace

// References, sites and the forms the engine supports (models/README.md, "reactions").
void check_reactions(const Reader& r, const Model& m, double min_box) {
  for (std::size_t i = 0; i < m.reactions.size(); ++i) {
    const RuleCheck c(r, m, i);
    c.name_and_rate();
    c.terms();
    c.form();
    c.radius(min_box);
    if (c.x.kon) check_kon(r, m, c.x, c.key, min_box);
    if (c.x.forward >= 0) check_koff(r, m, c.x, c.key);
  }
}

}  // namespace nestsim::model::model_reading

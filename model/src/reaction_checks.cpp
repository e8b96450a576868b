// The checks of a model's reactions once every kind is known: references, sites, the
// forms the engine supports, and kon and koff against the run's dt
// (nestsim/model/kon_calibration.h).
#include <cmath>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "model_reading.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/rates.h"

namespace nestsim::model::model_reading {

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

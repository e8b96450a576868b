#include "reactions/rules.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "host_slots.h"

namespace nestsim::sim::detail {

namespace {

using Where = model::Site::Where;
constexpr uint8_t kWhereAny = uint8_t(Where::any), kWhereIn = uint8_t(Where::in),
                  kWhereOn = uint8_t(Where::on), kWhereOutside = uint8_t(Where::outside);

KindTable kind_table(const model::Setup& s) {
  KindTable t;
  for (const model::Kind& k : s.kinds) {
    t.radius.push_back(k.radius);
    t.thickness.push_back(k.compartment ? k.thickness : k.radius);
    t.diffusion.push_back(k.diffusion);
    t.compartment.push_back(k.compartment ? 1 : 0);
    t.membrane.push_back(k.membrane ? 1 : 0);
  }
  return t;
}

// One rule being compiled: its name for messages, the kinds, and the reach it needs.
struct RuleCompiler {
  const model::Setup& s;
  const KindTable& kt;
  std::vector<double>& reach;
  std::string who;

  bool is_comp(int32_t kind) const { return kt.compartment[std::size_t(kind)] != 0; }
  double radius(int32_t kind) const { return kt.radius[std::size_t(kind)]; }
  double thickness(int32_t kind) const { return kt.thickness[std::size_t(kind)]; }
  void need(int32_t a, double extra_a, int32_t b, double extra_b) {
    if (a >= 0) reach[std::size_t(a)] = std::max(reach[std::size_t(a)], extra_a);
    if (b >= 0) reach[std::size_t(b)] = std::max(reach[std::size_t(b)], extra_b);
  }

  void term(const model::Term& t, int32_t& kind, uint8_t& where, int32_t& comp) const {
    const std::size_t K = s.kinds.size();
    if (t.kind >= K) invalid(who + "kind out of range");
    kind = int32_t(t.kind);
    where = uint8_t(t.site.where);
    comp = t.site.where == Where::any ? -1 : int32_t(t.site.compartment);
    if (comp >= int32_t(K) || (comp >= 0 && !s.kinds[std::size_t(comp)].compartment))
      invalid(who + "a site names no compartment kind");
  }

  // Budding: "S on X -> V + S' on V" or "S on X -> V + S' in V" (V first).
  void check_budding(const DeviceRule& d) const {
    if (!is_comp(d.product[0]) || is_comp(d.product[1]))
      invalid(who + "budding makes one compartment V and one species: \"S on X -> V + S' on V\"");
    if (d.reactant_where[0] != kWhereOn || !kt.membrane[std::size_t(d.reactant[0])])
      invalid(who + "budding starts from a membrane species on a compartment: \"S on X -> ...\"");
    if (!(d.product_where[0] == kWhereAny ||
          (d.product_where[0] == kWhereIn && d.product_compartment[0] == d.reactant_compartment[0])))
      invalid(who + "the new compartment buds into X's lumen: write it without a site (or \"in X\")");
    const bool onv = d.product_where[1] == kWhereOn, inv = d.product_where[1] == kWhereIn;
    if (!(onv || inv) || d.product_compartment[1] != d.product[0])
      invalid(who + "the species goes with the new compartment: \"S' on V\" or \"S' in V\"");
    if (onv != (kt.membrane[std::size_t(d.product[1])] != 0))
      invalid(who + "\"on V\" needs a membrane species, \"in V\" a free one");
    if (!(radius(d.product[0]) - 0.5 * thickness(d.product[0]) > 0))
      invalid(who + "the bud's mid-surface radius must be > 0");
  }

  // Two reactants: fusion, binding, or two species (Doi); the reach each needs.
  void two_reactants(DeviceRule& d, const model::Reaction& rule) {
    const bool c0 = is_comp(d.reactant[0]), c1 = is_comp(d.reactant[1]);
    if (!(rule.radius > 0)) invalid(who + "two reactants need a reaction radius > 0");
    if (c0 && c1) {  // fusion: "V + Y -> Y"
      d.fusion = true;
      if (d.products != 1 || d.product[0] != d.reactant[1] || d.product_where[0] != kWhereAny ||
          d.reactant_where[0] != kWhereAny || d.reactant_where[1] != kWhereAny)
        invalid(who + "two compartments react only by fusion, \"V + Y -> Y\" (Y stays, no sites)");
      need(d.reactant[0], 0.5 * rule.radius, d.reactant[1], 0.5 * rule.radius);
    } else if (c0) {
      invalid(who + "write the species first (\"S + K -> S' on K\")");
    } else if (c1) {  // binding
      d.binding = true;
      if (d.products != 1 || d.product_where[0] != kWhereOn || d.product_compartment[0] != d.reactant[1])
        invalid(who + "a species and a compartment kind K react only as binding, \"S + K -> S' on K\"");
      // The species' ball within the radius of the membrane's wall (its inner surface
      // from the lumen, its outer surface from outside): all of the reach on the species.
      need(d.reactant[0], rule.radius, -1, 0);
    } else {
      const double gap = rule.radius - radius(d.reactant[0]) - radius(d.reactant[1]);
      need(d.reactant[0], 0.5 * gap, d.reactant[1], 0.5 * gap);
    }
  }

  bool restructures(const DeviceRule& d) const {
    bool r = d.binding || d.fusion || (d.products == 2 && d.reactants == 1);
    for (int k = 0; k < d.products; ++k) {
      if (d.product_where[k] != kWhereAny) r = true;
      const int from = std::min(k, d.reactants - 1);
      if (radius(d.product[k]) > radius(d.reactant[from])) r = true;
      if (d.reactants == 2 && radius(d.product[k]) > std::min(radius(d.reactant[0]), radius(d.reactant[1])))
        r = true;
    }
    return r;
  }

  // A -> B + C (species): the spread of the products. Detailed balance of the Doi model
  // with a reverse rule B + C -> A of radius R needs C uniform in the ball of radius R
  // around B (then A + B <-> C reaches K = lambda (4/3 pi R^3) / k_back); with no
  // reverse rule, the ball of the contact distance r_B + r_C.
  void spread(DeviceRule& d, const model::Reaction& rule) {
    d.spread = radius(d.product[0]) + radius(d.product[1]);
    for (const model::Reaction& back : s.reactions)
      if (back.reactants.size() == 2 && back.products.size() == 1 &&
          back.products[0].kind == uint32_t(d.reactant[0]) &&
          ((back.reactants[0].kind == uint32_t(d.product[0]) && back.reactants[1].kind == uint32_t(d.product[1])) ||
           (back.reactants[0].kind == uint32_t(d.product[1]) && back.reactants[1].kind == uint32_t(d.product[0]))))
        d.spread = back.radius;
    if (rule.equilibrium_products) {
      d.equilibrium_spread = true;
      if (s.contacts == model::Contacts::soft) {
        d.spread_contact = radius(d.product[0]) + radius(d.product[1]);
        d.spread_repulsion = s.repulsion;
      }
    }
    // clear_at: compartments whose ball meets a product's ball within the spread.
    const double rp = std::max(radius(d.product[0]), radius(d.product[1]));
    need(d.reactant[0], d.spread + rp - radius(d.reactant[0]), -1, 0);
  }

  // A release from K's membrane ("in K" / "outside K"): the product's ball just off the
  // wall, up to q_K / 2 + r_p from the reactant; clear_at looks for compartments meeting
  // that ball.
  void release_reach(const DeviceRule& d) {
    for (int k = 0; k < d.products; ++k) {
      const uint8_t w = d.product_where[k];
      if ((w == kWhereIn || w == kWhereOutside) && d.product_compartment[k] >= 0)
        need(d.reactant[0], 2 * radius(d.product[k]) + 0.5 * thickness(d.product_compartment[k]) -
                                radius(d.reactant[0]), -1, 0);
    }
  }

  DeviceRule compile(const model::Reaction& rule) {
    DeviceRule d;
    d.reactants = int(rule.reactants.size());
    d.products = int(rule.products.size());
    if (d.reactants < 1 || d.reactants > 2 || d.products > 2)
      invalid(who + "needs 1 or 2 reactants and at most 2 products");
    if (!(rule.rate >= 0)) invalid(who + "rate must be >= 0");
    for (int k = 0; k < d.reactants; ++k)
      term(rule.reactants[std::size_t(k)], d.reactant[k], d.reactant_where[k], d.reactant_compartment[k]);
    for (int k = 0; k < d.products; ++k)
      term(rule.products[std::size_t(k)], d.product[k], d.product_where[k], d.product_compartment[k]);
    d.rate = rule.rate;
    d.radius = rule.radius;
    d.probability = -std::expm1(-rule.rate * s.dt);
    const bool c0 = is_comp(d.reactant[0]), c1 = d.reactants == 2 && is_comp(d.reactant[1]);
    if (d.reactants == 1 && c0) invalid(who + "a compartment is a reactant only of fusion (\"V + Y -> Y\")");
    d.bud = d.reactants == 1 && d.products == 2 && (is_comp(d.product[0]) || is_comp(d.product[1]));
    if (d.bud) {
      check_budding(d);
    } else {
      for (int k = 0; k < d.products; ++k)
        if (is_comp(d.product[k]) && !(c0 && c1))
          invalid(who + "a compartment is a product only of budding or fusion");
    }
    if (d.reactants == 2) two_reactants(d, rule);
    if (d.reactants == 1 && d.products == 2 && !d.bud) spread(d, rule);
    if (d.reactants == 1 && !d.bud) release_reach(d);
    return d;
  }
};

}  // namespace

RuleTable compile_rules(const model::Setup& s) {
  if (s.reactions.size() > std::size_t(kMaxRules))
    invalid("at most " + std::to_string(kMaxRules) + " reaction rules");
  RuleTable t;
  t.kinds = kind_table(s);
  t.reach.assign(s.kinds.size(), 0.0);
  for (const model::Reaction& rule : s.reactions) {
    RuleCompiler c{s, t.kinds, t.reach, "reaction '" + rule.name + "': "};
    const DeviceRule d = c.compile(rule);
    t.pair_rules = t.pair_rules || d.reactants == 2;
    t.fusion_rules = t.fusion_rules || d.fusion;
    t.bud_rules = t.bud_rules || d.bud;
    t.restructures.push_back(c.restructures(d));
    t.rules.push_back(d);
  }
  return t;
}

}  // namespace nestsim::sim::detail

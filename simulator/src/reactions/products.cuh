// Where the products of a reaction go, and whether they fit there (models/README.md
// documents the decisions; reaction_view.cuh outlines a step's reactions).
#pragma once
#include <cmath>
#include <cstdint>

#include "reactions/reaction_view.cuh"

namespace nestsim::sim::detail {

// Where a product goes: the compartment (slot) whose lumen or membrane takes it.
struct Placement {
  bool ok = false;
  int32_t parent = -1, membrane = -1;
  bool moves = false;   // to `to`
  double to[3] = {0, 0, 0};
};

// The compartment of kind k that binds or holds body i, nearest first (-1 none).
NESTSIM_HD inline int32_t holder_of_kind(const ReactionView& r, uint32_t i, int32_t k) {
  if (r.v.membrane[i] >= 0 && r.kind[r.v.membrane[i]] == k) return r.v.membrane[i];
  for (int32_t p = r.v.parent[i], d = 0; p >= 0 && d < kMaxDepth; p = r.v.parent[p], ++d)
    if (r.kind[p] == k) return p;
  return -1;
}

// The point at distance `at` from compartment c's centre on the ray through body i.
NESTSIM_HD inline void on_ray(const ReactionView& r, uint32_t c, uint32_t i, double at, double* out) {
  double d[3];
  r.v.delta(r.v.x, i, c, d);
  double n = std::sqrt(r.v.norm2(d));
  if (!(n > 0)) {
    d[0] = 1;
    d[1] = d[2] = 0;
    n = 1;
  }
  double p[3] = {0, 0, 0};
  NESTSIM_AXES(k, r.v.dim) p[k] = r.v.x[k][c] + d[k] / n * at;
  r.v.wrap(p);
  NESTSIM_UNROLL for (int k = 0; k < 3; ++k) out[k] = p[k];
}

// May a free body of radius rp be at point p: its ball wholly in `parent`'s lumen and
// off every compartment in body i's neighbour list that is a child of `parent` (other
// than `except`)? The lists reach every compartment such a ball can meet (setup_rules
// extends the reactant's reach by the spread and the product's size).
NESTSIM_HD inline bool clear_at(const ReactionView& r, uint32_t i, const double* p, double rp,
                                int32_t parent, int32_t except) {
  const auto d2 = [&](uint32_t c) {
    double s = 0;
    NESTSIM_AXES(k, r.v.dim) {
      const double d = minimum_image(p[k] - r.v.x[k][c], r.v.space.edge[k], r.v.space.inv_edge[k]);
      s += d * d;
    }
    return s;
  };
  if (parent >= 0) {
    const double room = r.v.lumen(uint32_t(parent)) - rp;
    if (!(room >= 0 && d2(uint32_t(parent)) <= room * room)) return false;
  }
  for (uint64_t e = r.v.nbr_offsets[i]; e < r.v.nbr_offsets[i + 1]; ++e) {
    const uint32_t c = r.v.nbrs[e];
    if (int32_t(c) == except || r.v.empty(c) || !r.v.compartment[c] || r.v.parent[c] != parent) continue;
    const double need = r.v.radius[c] + rp;
    if (d2(c) < need * need) return false;
  }
  return true;
}

// Product p of rule `rule` replacing body i (a one-reactant rule, or the species of a
// binding rule with compartment `partner`).
NESTSIM_HD inline Placement place_product(const ReactionView& r, uint32_t i, const DeviceRule& rule,
                                          int p, int32_t partner) {
  Placement out;
  const int32_t kind = rule.product[p];
  const bool membrane_species = r.kind_membrane[kind] != 0;
  const uint8_t where = rule.product_where[p];
  const int32_t m = r.v.membrane[i];
  if (rule.binding) {  // onto the partner's membrane
    if (!membrane_species) return out;
    out.ok = true;
    out.membrane = partner;
    out.parent = r.v.parent[partner];
    out.moves = true;
    on_ray(r, uint32_t(partner), i, r.v.mid(uint32_t(partner)), out.to);
    return out;
  }
  if (where == kAny || (where == kIn && m < 0 && r.v.parent[i] >= 0 &&
                        r.kind[r.v.parent[i]] == rule.product_compartment[p])) {
    out.ok = membrane_species == (m >= 0);
    out.parent = r.v.parent[i];
    out.membrane = m;
    return out;
  }
  const int32_t c = holder_of_kind(r, i, rule.product_compartment[p]);
  if (c < 0) return out;
  if (where == kOn) {
    if (!membrane_species) return out;
    out.ok = true;
    out.membrane = c;
    out.parent = r.v.parent[c];
    if (m != c) {
      out.moves = true;
      on_ray(r, uint32_t(c), i, r.v.mid(uint32_t(c)), out.to);
    }
    return out;
  }
  // in K / outside K: only a release from K's own membrane, the product's ball just off
  // the wall on that side (a relative 1e-9 from touching, so rounding cannot put it in).
  if (membrane_species || m != c) return out;
  const double rp = r.kind_radius[kind];
  const double at = where == kIn ? (r.v.lumen(uint32_t(c)) - rp) * (1 - 1e-9)
                                 : (r.v.radius[c] + rp) * (1 + 1e-9);
  if (!(at >= 0)) return out;
  out.moves = true;
  on_ray(r, uint32_t(c), i, at, out.to);
  out.parent = where == kIn ? c : r.v.parent[c];
  out.membrane = -1;
  out.ok = clear_at(r, i, out.to, rp, out.parent, c);
  return out;
}

// The words of attempt `attempt` >= 1 of body i's spread point (distinct from every
// stream of random_words: purpose byte 0x10 + attempt).
NESTSIM_HD inline Philox4x32 spread_words(const ReactionView& r, uint32_t i, uint32_t attempt) {
  const uint64_t id = uint64_t(r.v.id[i]);
  const Philox4x32 counter{{uint32_t(r.v.step), uint32_t(r.v.step >> 32), uint32_t(id),
                            ((0x10u + attempt) << 24) | uint32_t((id >> 32) & 0xFFFFFFu)}};
  return philox4x32_10(counter, uint32_t(r.v.seed), uint32_t(r.v.seed >> 32));
}

// Tries of a weighted spread point (rule.spread_repulsion > 0) before the last draw is
// taken as it is: the acceptance is V_eff / V_ball (0.2 for a ball of the contact
// distance at repulsion 10 and radii 2.5), so the last is reached with probability
// 0.8^64 ~ 1e-6.
constexpr uint32_t kSpreadTries = 64;

// A -> B + C of a free body i: B keeps i's place, C goes to a point uniform in the ball
// of radius rule.spread around it (Philox words of purpose `event`), or, for a rule with
// equilibrium_spread under soft contacts, a point of that ball with density e^{-U(r)}
// (rejection: attempt k's words from spread_words), which must lie in the same
// compartment (clear_at; the lists reach that far, setup_rules). Is there a spread point
// (free reactant, products that stay where i is)? Then `out` holds it.
NESTSIM_HD inline bool spread_point(const ReactionView& r, uint32_t i, const DeviceRule& rule,
                                    double* out) {
  if (!(rule.products == 2 && rule.spread > 0 && r.v.membrane[i] < 0)) return false;
  Philox4x32 w = random_words(r.v.seed, r.v.step, uint64_t(r.v.id[i]), RandomPurpose::event);
  double u[3] = {0, 0, 0};
  double len = 0;
  for (uint32_t attempt = 1;; ++attempt) {
    const double phi = 6.283185307179586 * uniform_open(w.v[0]);
    if (r.v.dim == 3) {
      const double z = 2.0 * uniform_open(w.v[1]) - 1.0, rho = std::sqrt(1.0 - z * z);
      u[0] = rho * std::cos(phi);
      u[1] = rho * std::sin(phi);
      u[2] = z;
    } else {
      u[0] = std::cos(phi);
      u[1] = std::sin(phi);
    }
    len = rule.spread * (r.v.dim == 3 ? std::cbrt(uniform_open(w.v[2]))
                                      : std::sqrt(uniform_open(w.v[2])));
    if (!(rule.spread_repulsion > 0) || attempt >= kSpreadTries) break;
    const double gap = rule.spread_contact - len;
    if (!(gap > 0) || uniform_open(w.v[3]) < std::exp(-0.5 * rule.spread_repulsion * gap * gap)) break;
    w = spread_words(r, i, attempt);
  }
  double p[3] = {r.v.x[0][i], r.v.x[1][i], r.v.x[2][i]};
  NESTSIM_AXES(k, r.v.dim) p[k] += len * u[k];
  r.v.wrap(p);
  NESTSIM_UNROLL for (int k = 0; k < 3; ++k) out[k] = p[k];
  return true;
}

// Under hard contacts, is a ball of kind `kind`, radius rp at p clear of every species
// in body i's neighbour list that it excludes (other than i)? The lists reach them
// (setup_rules extends the reactant's reach by the spread and the product's size).
NESTSIM_HD inline bool clear_of_species(const ReactionView& r, uint32_t i, const double* p, double rp,
                                        int32_t kind) {
  for (uint64_t e = r.v.nbr_offsets[i]; e < r.v.nbr_offsets[i + 1]; ++e) {
    const uint32_t c = r.v.nbrs[e];
    if (c == i || r.v.empty(c) || r.v.compartment[c]) continue;
    if (r.v.contact_exempt && r.v.contact_exempt[uint32_t(kind) * r.v.kinds + uint32_t(r.kind[c])]) continue;
    double s = 0;
    NESTSIM_AXES(k, r.v.dim) {
      const double d = minimum_image(p[k] - r.v.x[k][c], r.v.space.edge[k], r.v.space.inv_edge[k]);
      s += d * d;
    }
    const double need = r.v.radius[c] + rp;
    if (s < need * need) return false;
  }
  return true;
}

// Does a bud of rule `rule` from body i fit geometrically (V smaller than X's lumen)?
NESTSIM_HD inline bool bud_fits(const ReactionView& r, uint32_t i, const DeviceRule& rule) {
  const int32_t x = r.v.membrane[i];
  if (x < 0) return false;
  const int32_t vk = rule.product[0];
  const bool cargo_fits = rule.product_where[1] != kIn ||
                          r.kind_radius[vk] - r.kind_thickness[vk] >= r.kind_radius[rule.product[1]];
  return r.v.lumen(uint32_t(x)) - r.kind_radius[vk] >= 0 &&
         r.kind_radius[vk] - 0.5 * r.kind_thickness[vk] > 0 && cargo_fits;
}

// Can every product of a one-reactant rule be placed?
NESTSIM_HD inline bool bud_fits(const ReactionView& r, uint32_t i, const DeviceRule& rule);
NESTSIM_HD inline bool placeable(const ReactionView& r, uint32_t i, const DeviceRule& rule) {
  if (rule.bud) return bud_fits(r, i, rule);
  bool moves = false;
  for (int p = 0; p < rule.products; ++p) {
    const Placement pl = place_product(r, i, rule, p, -1);
    if (!pl.ok) return false;
    moves = moves || pl.moves;
  }
  // A free product that stays at i's place must fit there when it is larger than i.
  if (r.v.membrane[i] < 0) {
    const double here[3] = {r.v.x[0][i], r.v.x[1][i], r.v.x[2][i]};
    for (int p = 0; p < rule.products; ++p) {
      const double rp = r.kind_radius[rule.product[p]];
      if (rp > r.v.radius[i] && !clear_at(r, i, here, rp, r.v.parent[i], -1)) return false;
    }
  }
  double at[3];
  if (!moves && spread_point(r, i, rule, at)) {
    const double rp = r.kind_radius[rule.product[1]];
    if (r.v.reflective && r.v.parent[i] < 0)
      NESTSIM_AXES(k, r.v.dim) if (!(at[k] >= rp && at[k] <= r.v.box[k] - rp)) return false;
    if (rule.equilibrium_spread && r.v.contacts == 1 && !clear_of_species(r, i, at, rp, rule.product[1]))
      return false;
    return clear_at(r, i, at, rp, r.v.parent[i], -1);
  }
  return true;
}

// Turns slot s into a body of `kind` at placement `pl` (id unchanged).
NESTSIM_HD inline void become(const ReactionView& r, uint32_t s, int32_t kind, const Placement& pl) {
  r.kind[s] = kind;
  r.radius[s] = r.kind_radius[kind];
  r.thickness[s] = r.kind_thickness[kind];
  r.diffusion[s] = r.kind_diffusion[kind];
  r.compartment[s] = r.kind_compartment[kind];
  r.parent[s] = pl.parent;
  r.membrane[s] = pl.membrane;
  if (pl.moves) NESTSIM_UNROLL for (int k = 0; k < 3; ++k) r.v.x[k][s] = pl.to[k];
}

NESTSIM_HD inline void remove_body(const ReactionView& r, uint32_t s) {
  r.id[s] = -1;
  r.kind[s] = -1;
  r.parent[s] = -1;
  r.membrane[s] = -1;
}

}  // namespace nestsim::sim::detail

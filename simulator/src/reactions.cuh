// Reactions on the device, after the moves of a step (simulation.cu drives it):
//   UniCandidates   one thread per body: the one-reactant rules that match its kind and
//                   site fire together with probability 1 - exp(-sum(rate) dt); one of
//                   them is chosen with probability rate / sum(rate);
//   PairCandidates  one thread per neighbour-list entry (i < j): two-reactant rules
//                   (Doi model: within the reaction radius, probability 1 - exp(-rate
//                   dt) per step), appended to a candidate buffer;
//   Claim           every candidate claims its reactants with a random 64-bit priority
//                   (atomic max): 32 random bits above a tag that is unique among the
//                   events competing for that body (0 for its own one-reactant event,
//                   partner slot + 1 for a pair), so the maximum is unique;
//   Execute         an event whose priority is the maximum at each of its reactants
//                   happens; the others do not (they may fire in a later step).
// A body reacts at most once per step; which of several candidate events happens is
// decided by the random priorities (no bias by slot or order), and everything is keyed
// by (seed, step, ids), so a run is deterministic for its seed.
//
// Products (decisions documented in models/README.md): the first product takes the
// slot and id of the first reactant (a body changing state keeps its identity), the
// second product the second reactant's, or a new slot and a new id when the rule has
// one reactant; reactants without a product are removed (id -1). A product with site
// `any` takes the location (lumen or membrane) of the reactant it replaces, or, when
// one reactant is bound and the product is a membrane species, that membrane; `on K`
// binds it to the compartment of kind K that holds (or binds) the reactant, nearest
// first, at the point of K's mid-surface on the ray from K's centre; `in K` from a body
// on K's membrane releases it just inside, `outside K` just outside (by the product's
// radius, when that stays clear of other compartments).
#pragma once
#include <cmath>
#include <cstdint>

#include "dynamics.cuh"

namespace nestsim::sim::detail {

// A rule as the device sees it (kinds and sites resolved to integers).
struct DeviceRule {
  int32_t reactant[2] = {-1, -1};
  uint8_t reactant_where[2] = {0, 0};
  int32_t reactant_compartment[2] = {-1, -1};
  int32_t product[2] = {-1, -1};
  uint8_t product_where[2] = {0, 0};
  int32_t product_compartment[2] = {-1, -1};
  int reactants = 0, products = 0;
  bool binding = false;  // species + compartment kind -> species on that compartment
  bool bud = false;      // S on X -> V + S' on V | in V (reactant 0; product 0 is V)
  bool fusion = false;   // V + Y -> Y: compartment V merges into compartment Y
  double probability = 0;  // 1 - exp(-rate dt)
  double rate = 0;
  double radius = 0;
  double spread = 0;  // A -> B + C of a free A: C uniform in the ball of this radius around B
};

constexpr int kMaxRules = 64;
constexpr uint8_t kAny = 0, kIn = 1, kOn = 2, kOutside = 3;

struct ReactionView {
  SlotView v;
  const DeviceRule* rules = nullptr;
  int rule_count = 0;
  int32_t* kind = nullptr;          // per slot, mutable (conversions)
  const double* kind_radius = nullptr;     // per kind
  const double* kind_thickness = nullptr;  // per kind
  const double* kind_diffusion = nullptr;  // per kind
  const uint8_t* kind_compartment = nullptr;
  const uint8_t* kind_membrane = nullptr;
  unsigned long long* claim = nullptr;  // per slot, 0 = none
  int32_t* uni_rule = nullptr;          // per slot, -1 none
  // Pair candidates: (slot a, slot b, rule), appended.
  uint32_t* pair_a = nullptr;
  uint32_t* pair_b = nullptr;
  int32_t* pair_rule = nullptr;
  unsigned long long* pair_count = nullptr;  // one counter
  uint64_t pair_capacity = 0;
  const uint32_t* nbr_row = nullptr;
  // Mutable views of the slot arrays that events change.
  int64_t* id = nullptr;
  int32_t* parent = nullptr;
  int32_t* membrane = nullptr;
  double* radius = nullptr;
  double* thickness = nullptr;
  double* diffusion = nullptr;
  uint8_t* compartment = nullptr;
  // Births: per slot 0/1, scanned into ranks; the free slots before this step's events.
  uint32_t* birth = nullptr;
  const uint32_t* birth_rank = nullptr;
  const uint32_t* free_slots = nullptr;
  uint64_t next_id = 0;
  unsigned long long* events = nullptr;  // per rule, cumulative
  int32_t* fuse_into = nullptr;          // per slot: a fusion's V -> its Y (-1 none)

  // Does body i (a live slot) satisfy a reactant's site?
  NESTSIM_HD bool at_site(uint32_t i, uint8_t where, int32_t comp_kind) const {
    const int32_t m = v.membrane[i];
    switch (where) {
      case kIn: return m < 0 && v.parent[i] >= 0 && kind[v.parent[i]] == comp_kind;
      case kOn: return m >= 0 && kind[m] == comp_kind;
      case kOutside: {
        if (m >= 0 && kind[m] == comp_kind) return false;
        for (int32_t p = v.parent[i], d = 0; p >= 0 && d < kMaxDepth; p = v.parent[p], ++d)
          if (kind[p] == comp_kind) return false;
        return true;
      }
      default: return true;
    }
  }
  NESTSIM_HD bool eligible(uint32_t i, int k) const;  // a one-reactant rule k for body i
  NESTSIM_HD bool matches(uint32_t i, const DeviceRule& r, int k) const {
    return kind[i] == r.reactant[k] && at_site(i, r.reactant_where[k], r.reactant_compartment[k]);
  }
};

NESTSIM_HD inline bool placeable(const ReactionView& r, uint32_t i, const DeviceRule& rule);
NESTSIM_HD inline bool ReactionView::eligible(uint32_t i, int k) const {
  return rules[k].reactants == 1 && matches(i, rules[k], 0) && placeable(*this, i, rules[k]);
}

// Random words for a pair (symmetric in the ids): the words of the smaller id, used as
// the key of a second Philox round over the larger id.
NESTSIM_HD inline Philox4x32 pair_words(uint64_t seed, uint64_t step, uint64_t a, uint64_t b) {
  const uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
  const Philox4x32 k = random_words(seed, step, lo, RandomPurpose::reaction);
  const Philox4x32 counter{{uint32_t(hi), uint32_t(hi >> 32), 0x9E3779B9u, 0x7F4A7C15u}};
  return philox4x32_10(counter, k.v[0], k.v[1]);
}

struct UniCandidates {
  ReactionView r;
  NESTSIM_HD void operator()(uint32_t i) const {
    r.uni_rule[i] = -1;
    r.claim[i] = 0;
    if (r.v.empty(i)) return;
    double total = 0;
    for (int k = 0; k < r.rule_count; ++k)
      if (r.eligible(i, k)) total += r.rules[k].rate;
    if (!(total > 0)) return;
    const Philox4x32 w = random_words(r.v.seed, r.v.step, uint64_t(r.v.id[i]), RandomPurpose::reaction);
    const double p = 1.0 - std::exp(-total * r.v.dt);
    if (!(uniform_open(w.v[0]) < p)) return;
    double pick = uniform_open(w.v[1]) * total;
    int chosen = -1;
    for (int k = 0; k < r.rule_count; ++k)
      if (r.eligible(i, k)) {
        chosen = k;
        pick -= r.rules[k].rate;
        if (pick < 0) break;
      }
    r.uni_rule[i] = chosen;
    r.claim[i] = (unsigned long long)(w.v[2]) << 32;  // tag 0: its own event
  }
};

// The distance of a pair for rule k: centre distance (two species) or the species'
// distance from the compartment's mid-surface (binding).
struct PairCandidates {
  ReactionView r;
  NESTSIM_HD void operator()(uint64_t e) const {
    const uint32_t i = r.nbr_row[e], j = r.v.nbrs[e];
    if (!(i < j) || r.v.empty(i) || r.v.empty(j)) return;
    double d[3];
    r.v.delta(r.v.x, i, j, d);
    const double dist = std::sqrt(r.v.norm2(d));
    for (int k = 0; k < r.rule_count; ++k) {
      const DeviceRule& rule = r.rules[k];
      if (rule.reactants != 2) continue;
      for (int order = 0; order < 2; ++order) {
        const uint32_t a = order ? j : i, b = order ? i : j;  // a plays reactant 0
        if (!r.matches(a, rule, 0) || !r.matches(b, rule, 1)) continue;
        double gap = dist;
        if (rule.fusion) {
          // Siblings outside each other; the gap between their outer surfaces. Of two
          // compartments of one kind, the larger (then the lower id) stays.
          if (r.v.parent[a] != r.v.parent[b] || r.v.membrane[a] >= 0 || r.v.membrane[b] >= 0)
            continue;
          if (rule.reactant[0] == rule.reactant[1] &&
              !(r.v.radius[b] > r.v.radius[a] || (r.v.radius[b] == r.v.radius[a] && r.v.id[b] < r.v.id[a])))
            continue;
          gap = dist - r.v.radius[a] - r.v.radius[b];
        } else if (rule.binding) {
          // a species, b a compartment: a free body inside b's lumen or beside b; the gap
          // between its ball and the membrane's wall that faces it.
          if (r.v.membrane[a] >= 0) continue;
          if (r.v.parent[a] == int32_t(b))
            gap = r.v.lumen(b) - dist - r.v.radius[a];
          else if (r.v.parent[a] == r.v.parent[b])
            gap = dist - r.v.radius[b] - r.v.radius[a];
          else
            continue;
        }
        if (!(gap <= rule.radius)) continue;
        const Philox4x32 w = pair_words(r.v.seed, r.v.step, uint64_t(r.v.id[a]) * kMaxRules + uint64_t(k),
                                        uint64_t(r.v.id[b]) * kMaxRules + uint64_t(k));
        if (!(uniform_open(w.v[0]) < rule.probability)) continue;
        const unsigned long long slot = atomic_fetch_add(r.pair_count, 1ull);
        if (slot < r.pair_capacity) {
          r.pair_a[slot] = a;
          r.pair_b[slot] = b;
          r.pair_rule[slot] = k;
        }
        break;  // one candidate per rule and pair
      }
    }
  }
};

// The priority of a pair candidate at reactant `self` (partner `other`).
NESTSIM_HD inline unsigned long long pair_priority(const ReactionView& r, uint32_t a, uint32_t b,
                                                   int rule, uint32_t other) {
  const Philox4x32 w = pair_words(r.v.seed, r.v.step, uint64_t(r.v.id[a]) * kMaxRules + uint64_t(rule),
                                  uint64_t(r.v.id[b]) * kMaxRules + uint64_t(rule));
  return ((unsigned long long)(w.v[1]) << 32) | (unsigned long long)(other + 1u);
}

struct ClaimPairs {
  ReactionView r;
  NESTSIM_HD void operator()(uint64_t c) const {
    const uint32_t a = r.pair_a[c], b = r.pair_b[c];
    const int k = r.pair_rule[c];
    atomic_fetch_max(&r.claim[a], pair_priority(r, a, b, k, b));
    if (!r.rules[k].binding) atomic_fetch_max(&r.claim[b], pair_priority(r, a, b, k, a));
  }
};

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

// A -> B + C of a free body i: B keeps i's place, C goes to a point uniform in the ball
// of radius rule.spread around it (Philox words of purpose `event`), which must lie in the
// same compartment (clear_at; the lists reach that far, setup_rules). Is there a spread
// point (free reactant, products that stay where i is)? Then `out` holds it.
NESTSIM_HD inline bool spread_point(const ReactionView& r, uint32_t i, const DeviceRule& rule,
                                    double* out) {
  if (!(rule.products == 2 && rule.spread > 0 && r.v.membrane[i] < 0)) return false;
  const Philox4x32 w = random_words(r.v.seed, r.v.step, uint64_t(r.v.id[i]), RandomPurpose::event);
  double u[3] = {0, 0, 0};
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
  const double len = rule.spread * (r.v.dim == 3 ? std::cbrt(uniform_open(w.v[2]))
                                                 : std::sqrt(uniform_open(w.v[2])));
  double p[3] = {r.v.x[0][i], r.v.x[1][i], r.v.x[2][i]};
  NESTSIM_AXES(k, r.v.dim) p[k] += len * u[k];
  r.v.wrap(p);
  NESTSIM_UNROLL for (int k = 0; k < 3; ++k) out[k] = p[k];
  return true;
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

// One-reactant winners: counts births first (ExecuteUni runs after the scan).
struct UniWinner {
  ReactionView r;
  NESTSIM_HD bool wins(uint32_t i) const {
    if (r.uni_rule[i] < 0) return false;
    const Philox4x32 w = random_words(r.v.seed, r.v.step, uint64_t(r.v.id[i]), RandomPurpose::reaction);
    return r.claim[i] == ((unsigned long long)(w.v[2]) << 32);
  }
  NESTSIM_HD void operator()(uint32_t i) const {
    if (!wins(i)) r.uni_rule[i] = -1;
    r.birth[i] = (r.uni_rule[i] >= 0 && r.rules[r.uni_rule[i]].products == 2 &&
                  !r.rules[r.uni_rule[i]].bud) ? 1u : 0u;
  }
};

struct ExecuteUni {
  ReactionView r;
  NESTSIM_HD void operator()(uint32_t i) const {
    const int k = r.uni_rule[i];
    if (k < 0) return;
    const DeviceRule& rule = r.rules[k];
    if (rule.bud) return;  // the bud phase (compartment events, below)
    atomic_fetch_add(&r.events[k], 1ull);
    if (rule.products == 0) {
      remove_body(r, i);
      return;
    }
    const Placement p0 = place_product(r, i, rule, 0, -1);
    if (rule.products == 2) {
      Placement p1 = place_product(r, i, rule, 1, -1);
      const uint32_t s = r.free_slots[r.birth_rank[i]];
      NESTSIM_UNROLL for (int a = 0; a < 3; ++a) r.v.x[a][s] = r.v.x[a][i];
      if (!p0.moves && !p1.moves && spread_point(r, i, rule, p1.to)) p1.moves = true;
      r.id[s] = int64_t(r.next_id + r.birth_rank[i]);
      become(r, s, rule.product[1], p1);
    }
    become(r, i, rule.product[0], p0);
  }
};

struct ExecutePairs {
  ReactionView r;
  NESTSIM_HD void operator()(uint64_t c) const {
    const uint32_t a = r.pair_a[c], b = r.pair_b[c];
    const int k = r.pair_rule[c];
    const DeviceRule& rule = r.rules[k];
    if (r.claim[a] != pair_priority(r, a, b, k, b)) return;
    if (!rule.binding && r.claim[b] != pair_priority(r, a, b, k, a)) return;
    if (rule.fusion) {  // the fusion phase (compartment events, below)
      r.fuse_into[a] = int32_t(b);
      return;
    }
    if (rule.binding) {
      const Placement pl = place_product(r, a, rule, 0, int32_t(b));
      if (!pl.ok) return;
      atomic_fetch_add(&r.events[k], 1ull);
      become(r, a, rule.product[0], pl);
      return;
    }
    // Two species: product p goes to the slot whose location suits it (a membrane
    // species to a bound reactant, a free species to a free one), the first product
    // first; a reactant left without a product is removed.
    Placement at[2];
    const uint32_t slot[2] = {a, b};
    for (int s = 0; s < 2; ++s) {
      at[s].ok = true;
      at[s].parent = r.v.parent[slot[s]];
      at[s].membrane = r.v.membrane[slot[s]];
    }
    int target[2] = {-1, -1};
    bool used[2] = {false, false};
    for (int p = 0; p < rule.products; ++p) {
      const bool wants_membrane = r.kind_membrane[rule.product[p]] != 0;
      for (int s = 0; s < 2; ++s)
        if (!used[s] && (at[s].membrane >= 0) == wants_membrane) {
          target[p] = s;
          used[s] = true;
          break;
        }
      if (target[p] < 0) return;  // no slot suits the product: the event cannot happen
    }
    atomic_fetch_add(&r.events[k], 1ull);
    for (int p = 0; p < rule.products; ++p) become(r, slot[target[p]], rule.product[p], at[target[p]]);
    for (int s = 0; s < 2; ++s)
      if (!used[s]) remove_body(r, slot[s]);
  }
};

// ---------------------------------------------------------------------------------------
// Compartment events: budding and fusion. They are rare and change the nesting,
// so each step's candidates (after the claims, and after the other events of the step
// have been executed) are checked exactly against every body (one thread per body, a
// loop over the few candidates), not through the lists. The invariants of dynamics.cuh,
// (A) inside the parent's mid-surface and (B) outside sibling compartments' mid-surface
// balls, hold after every event:
//
// Budding, "S on X -> V + S' on V" (or "... + S' in V"): a new compartment V is born in
// X's lumen, touching X's inner surface where S sits: its centre on the ray from X's
// centre through S, at l_X - r_V (l = r - q, the lumen radius), so (A) holds by
// construction. S' goes onto V's membrane facing X's (or to V's centre, "in V").
// Proteins of X's lumen inside V's mid-surface ball are pushed out of it (PushPlan). It
// happens only when no compartment of X is in the way (B), every push lands in a valid
// place, and V's ball is clear of every other bud in X this step with a higher priority
// (the claim's random bits): no bias by slot or order.
//
// Fusion, "V + Y -> Y": sibling compartments V and Y whose outer surfaces are within the
// rule's radius merge: V disappears, Y's lumen volume grows by V's (l_Y'^3 = l_Y^3 +
// l_V^3, thickness and diffusion of Y unchanged), V's lumen contents move into Y as one
// rigid group (V's lumen ball translated to the "ghost" inside Y's new lumen, touching
// its inner surface on the side facing V), and V's membrane-bound bodies move to Y's
// membrane (projected onto its new mid-surface along the ray from Y's centre). It
// happens only when Y's grown ball is clear of its siblings (their grown balls when they
// fuse too), stays wholly in its parent's lumen (and the box when reflective), the ghost
// ball is clear of Y's compartments (their grown balls), and, when V carries
// compartments, of Y's free proteins (which would otherwise end inside them).
// ---------------------------------------------------------------------------------------

// Squared minimum-image distance from point p to slot j's centre.
NESTSIM_HD inline double point_dist2(const SlotView& v, const double* p, uint32_t j) {
  double s = 0;
  NESTSIM_AXES(k, v.dim) {
    const double d = minimum_image(p[k] - v.x[k][j], v.space.edge[k], v.space.inv_edge[k]);
    s += d * d;
  }
  return s;
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

// The candidate events of one phase, in slot order (a compaction of per-slot marks).
struct EventList {
  uint32_t count = 0;
  const uint32_t* slot = nullptr;  // fusion: V; budding: the reactant
  int32_t* target = nullptr;       // fusion: Y; budding: X
  int32_t* rule = nullptr;
  double* centre[3] = {nullptr, nullptr, nullptr};  // fusion: ghost; budding: V's centre
  double* mid = nullptr;      // fusion: Y's new mid-surface radius; budding: V's radius
  double* aux = nullptr;      // fusion: V's lumen radius (the ghost ball)
  // Fusion: Y's free proteins that meet the ghost ball, and V's compartments (counts).
  uint32_t* ghost_proteins = nullptr;
  uint32_t* ghost_children = nullptr;
  unsigned long long* blocked = nullptr;
  int32_t* ev_v = nullptr;    // per slot: the fusion whose V it is (-1)
  int32_t* ev_y = nullptr;    // per slot: the fusion whose Y it is (-1)
};

// Fusion: V's and Y's per-slot marks, Y's new size, the ghost centre, the parent test.
struct FusionSetup {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t c) const {
    const uint32_t a = e.slot[c];
    const int32_t b = r.fuse_into[a];
    e.target[c] = b;
    e.ev_v[a] = int32_t(c);
    e.ev_y[b] = int32_t(c);
    const double lv = r.v.lumen(a), ly = r.v.lumen(uint32_t(b));
    const double l_new = std::cbrt(ly * ly * ly + lv * lv * lv);
    const double m_new = l_new + 0.5 * r.v.thickness[b];
    const double r_new = l_new + r.v.thickness[b];
    e.mid[c] = m_new;
    e.aux[c] = lv;
    e.ghost_proteins[c] = 0;
    e.ghost_children[c] = 0;
    bool bad = !(l_new >= lv);
    // The ghost: V's lumen ball inside Y's new lumen, on the side facing V.
    double p[3];
    on_ray(r, uint32_t(b), a, l_new - lv, p);
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) e.centre[k][c] = p[k];
    const int32_t P = r.v.parent[b];
    if (P >= 0) {
      double d[3];
      r.v.delta(r.v.x, uint32_t(b), uint32_t(P), d);
      if (!(std::sqrt(r.v.norm2(d)) + r_new <= r.v.lumen(uint32_t(P)))) bad = true;
    } else if (r.v.reflective) {
      NESTSIM_AXES(k, r.v.dim)
        if (!(r.v.x[k][b] - r_new >= 0 && r.v.x[k][b] + r_new <= r.v.box[k])) bad = true;
    }
    e.blocked[c] = bad ? 1ull : 0ull;
  }
};

// Y's outer radius after fusion c.
NESTSIM_HD inline double grown_radius(const ReactionView& r, const EventList& e, uint32_t c) {
  return e.mid[c] + 0.5 * r.v.thickness[e.target[c]];
}

// The ball that free body j occupies after this step's fusions (its grown ball when it
// is a Y).
NESTSIM_HD inline double grown_ball(const ReactionView& r, const EventList& e, uint32_t j) {
  const int32_t c = r.v.compartment[j] ? e.ev_y[j] : -1;
  return c >= 0 ? grown_radius(r, e, uint32_t(c)) : r.v.radius[j];
}

// One thread per body j: blocks every fusion that j is in the way of.
struct FusionCheck {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t j) const {
    if (r.v.empty(j) || r.v.membrane[j] >= 0) return;
    const int32_t pj = r.v.parent[j];
    for (uint32_t c = 0; c < e.count; ++c) {
      const uint32_t a = e.slot[c];
      const int32_t b = e.target[c];
      if (j == a || int32_t(j) == b) continue;
      if (pj == r.v.parent[b]) {  // a sibling of Y: outside Y's grown ball
        const double need = grown_radius(r, e, c) + grown_ball(r, e, j);
        double d[3];
        r.v.delta(r.v.x, j, uint32_t(b), d);
        if (r.v.norm2(d) < need * need) atomic_fetch_max(&e.blocked[c], 1ull);
      } else if (pj == b) {  // in Y: a compartment clear of the ghost; proteins counted
        const double need = e.aux[c] + grown_ball(r, e, j);
        const double g[3] = {e.centre[0][c], e.centre[1][c], e.centre[2][c]};
        if (point_dist2(r.v, g, j) < need * need) {
          if (r.v.compartment[j])
            atomic_fetch_max(&e.blocked[c], 1ull);
          else
            atomic_fetch_add(&e.ghost_proteins[c], 1u);
        }
      } else if (pj == int32_t(a) && r.v.compartment[j]) {  // a compartment V carries
        atomic_fetch_add(&e.ghost_children[c], 1u);
      }
    }
  }
};

// One thread per fusion: Y's proteins in the ghost would end inside V's compartments.
struct FusionGhost {
  EventList e;
  NESTSIM_HD void operator()(uint32_t c) const {
    if (e.ghost_proteins[c] > 0 && e.ghost_children[c] > 0) e.blocked[c] = 1ull;
  }
};

// The displacement that this step's fusions give body j: the sum over the fused
// compartments in its carrier chain of (ghost - V's centre).
NESTSIM_HD inline void fusion_shift(const ReactionView& r, const EventList& e, uint32_t j, double* t) {
  t[0] = t[1] = t[2] = 0;
  int32_t p = r.v.membrane[j] >= 0 ? r.v.membrane[j] : r.v.parent[j];
  for (int d = 0; p >= 0 && d < kMaxDepth; ++d, p = r.v.parent[p]) {
    const int32_t c = e.ev_v[p];
    if (c >= 0 && !e.blocked[c]) {
      double g[3] = {e.centre[0][c], e.centre[1][c], e.centre[2][c]};
      NESTSIM_AXES(k, r.v.dim)
        t[k] += minimum_image(g[k] - r.v.x[k][p], r.v.space.edge[k], r.v.space.inv_edge[k]);
    }
  }
}

// One thread per body: its position after the fusions, into x_next (positions only;
// FusionApply changes the fields afterwards).
struct FusionMove {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t j) const {
    double p[3] = {r.v.x[0][j], r.v.x[1][j], r.v.x[2][j]};
    if (!r.v.empty(j)) {
      double t[3];
      fusion_shift(r, e, j, t);
      NESTSIM_AXES(k, r.v.dim) p[k] += t[k];
      // A body bound to a fused V or to a growing Y: onto Y's new mid-surface.
      const int32_t m = r.v.membrane[j];
      int32_t c = -1;
      if (m >= 0 && e.ev_v[m] >= 0 && !e.blocked[e.ev_v[m]]) c = e.ev_v[m];
      if (m >= 0 && e.ev_y[m] >= 0 && !e.blocked[e.ev_y[m]]) c = e.ev_y[m];
      if (c >= 0) {
        const uint32_t y = uint32_t(e.target[c]);
        double ty[3];
        fusion_shift(r, e, y, ty);
        double d[3] = {0, 0, 0}, n2 = 0;
        NESTSIM_AXES(k, r.v.dim) {
          d[k] = minimum_image(p[k] - (r.v.x[k][y] + ty[k]), r.v.space.edge[k], r.v.space.inv_edge[k]);
          n2 += d[k] * d[k];
        }
        double n = std::sqrt(n2);
        if (!(n > 0)) {
          d[0] = 1;
          d[1] = d[2] = 0;
          n = 1;
        }
        NESTSIM_AXES(k, r.v.dim) p[k] = r.v.x[k][y] + ty[k] + d[k] / n * e.mid[c];
      }
      r.v.wrap(p);
    }
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) r.v.x_next[k][j] = p[k];
  }
};

// One thread per body: the nesting after the fusions (after FusionMove's swap). Two
// passes: lumens, removals and sizes first; then the bound bodies, whose parent is their
// membrane's (new) parent.
struct FusionApplyLumen {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t j) const {
    if (r.v.empty(j) || r.membrane[j] >= 0) return;
    const int32_t cv = e.ev_v[j], cy = e.ev_y[j];
    if (cv >= 0 && !e.blocked[cv]) {
      remove_body(r, j);
      return;
    }
    if (cy >= 0 && !e.blocked[cy]) r.radius[j] = e.mid[cy] + 0.5 * r.v.thickness[j];
    const int32_t p = r.parent[j];
    if (p >= 0) {
      const int32_t c = e.ev_v[p];
      if (c >= 0 && !e.blocked[c]) r.parent[j] = e.target[c];
    }
  }
};

struct FusionApplyMembrane {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t j) const {
    if (r.v.empty(j) || r.membrane[j] < 0) return;
    const int32_t c = e.ev_v[r.membrane[j]];
    if (c >= 0 && !e.blocked[c]) r.membrane[j] = e.target[c];
    r.parent[j] = r.parent[r.membrane[j]];
  }
};

// After a fusion phase: counts and clears the marks.
struct FusionDone {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t c) const {
    if (!e.blocked[c]) atomic_fetch_add(&r.events[e.rule[c]], 1ull);
    e.ev_v[e.slot[c]] = -1;
    e.ev_y[e.target[c]] = -1;
    r.fuse_into[e.slot[c]] = -1;
  }
};

// Budding: is the reactant still where the rule wants it (a fusion of this step may have
// moved it to another membrane)? Then V's centre and size.
struct BudSetup {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t c) const {
    const uint32_t i = e.slot[c];
    const int k = r.uni_rule[i];
    e.rule[c] = k;
    const DeviceRule& rule = r.rules[k];
    const bool ok = !r.v.empty(i) && r.matches(i, rule, 0) && bud_fits(r, i, rule);
    e.blocked[c] = ok ? 0ull : 1ull;
    if (!ok) {
      e.target[c] = -1;
      return;
    }
    const uint32_t x = uint32_t(r.v.membrane[i]);
    const int32_t vk = rule.product[0];
    e.target[c] = int32_t(x);
    e.mid[c] = r.kind_radius[vk];
    double p[3];
    on_ray(r, x, i, r.v.lumen(x) - r.kind_radius[vk], p);
    NESTSIM_UNROLL for (int a = 0; a < 3; ++a) e.centre[a][c] = p[a];
  }
};

// Budding in a crowded lumen: the free proteins of X whose balls meet a bud's ball are
// pushed radially out of it, to touch the bud's outer surface (the forming membrane
// sweeps them aside), when their ball there lies wholly in X's lumen, off every other
// bud candidate's ball and off every compartment of X. A protein meeting two buds
// blocks both; compartments in the way block.
struct PushView {
  uint32_t* count = nullptr;  // per slot: the buds whose ball holds it
  int32_t* by = nullptr;      // per slot: that bud, when there is one
  const uint32_t* list = nullptr;  // the proteins to push, compacted
  uint32_t n = 0;
};

// Does bud c's ball, grown by s, hold body j's centre (s = r_j: do their balls meet)?
NESTSIM_HD inline bool in_bud(const ReactionView& r, const EventList& e, uint32_t c, uint32_t j,
                              double s) {
  const double need = e.mid[c] + s;
  const double p[3] = {e.centre[0][c], e.centre[1][c], e.centre[2][c]};
  return point_dist2(r.v, p, j) < need * need;
}

// One thread per body j: compartments in a bud's way block it; proteins are counted for
// a push.
struct BudCheck {
  ReactionView r;
  EventList e;
  PushView push;
  NESTSIM_HD void operator()(uint32_t j) const {
    if (r.v.empty(j) || r.v.membrane[j] >= 0) return;
    const int32_t pj = r.v.parent[j];
    if (pj < 0) return;
    for (uint32_t c = 0; c < e.count; ++c) {
      if (e.target[c] != pj || e.slot[c] == j) continue;
      if (r.v.compartment[j]) {
        if (in_bud(r, e, c, j, r.v.radius[j])) atomic_fetch_max(&e.blocked[c], 1ull);
      } else if (in_bud(r, e, c, j, r.v.radius[j])) {
        atomic_fetch_add(&push.count[j], 1u);
        push.by[j] = int32_t(c);  // read only when the count is 1: then the one writer
      }
    }
  }
};

// One thread per body: a protein in two buds blocks both; else its destination (into
// x_next) is checked against X's mid-surface and the other buds' balls.
struct PushPlan {
  ReactionView r;
  EventList e;
  PushView push;
  NESTSIM_HD void operator()(uint32_t j) const {
    const uint32_t n = push.count[j];
    if (n == 0) return;
    if (n > 1) {
      for (uint32_t c = 0; c < e.count; ++c)
        if (e.target[c] == r.v.parent[j] && e.slot[c] != j && in_bud(r, e, c, j, r.v.radius[j]))
          atomic_fetch_max(&e.blocked[c], 1ull);
      return;
    }
    const uint32_t c = uint32_t(push.by[j]);
    const int32_t vk = r.rules[e.rule[c]].product[0];
    const double g[3] = {e.centre[0][c], e.centre[1][c], e.centre[2][c]};
    double d[3] = {0, 0, 0}, n2 = 0;
    NESTSIM_AXES(k, r.v.dim) {
      d[k] = minimum_image(r.v.x[k][j] - g[k], r.v.space.edge[k], r.v.space.inv_edge[k]);
      n2 += d[k] * d[k];
    }
    double len = std::sqrt(n2);
    if (!(len > 0)) {
      d[0] = 1;
      d[1] = d[2] = 0;
      len = 1;
    }
    // The bud touches X's inner surface; a protein between it and the wall is swept
    // inwards: the outward component of its direction (along X's centre -> bud) flips.
    const uint32_t x = uint32_t(e.target[c]);
    double out[3] = {0, 0, 0}, oo = 0, dn = 0;
    NESTSIM_AXES(k, r.v.dim) {
      out[k] = minimum_image(g[k] - r.v.x[k][x], r.v.space.edge[k], r.v.space.inv_edge[k]);
      oo += out[k] * out[k];
    }
    if (oo > 0) {
      NESTSIM_AXES(k, r.v.dim) dn += d[k] * out[k];
      if (dn > 0) NESTSIM_AXES(k, r.v.dim) d[k] -= 2 * dn / oo * out[k];
    }
    double to[3] = {g[0], g[1], g[2]};
    const double at = r.kind_radius[vk] + r.v.radius[j];
    NESTSIM_AXES(k, r.v.dim) to[k] += d[k] / len * at;
    r.v.wrap(to);
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) r.v.x_next[k][j] = to[k];
    bool ok = true;
    const double room = r.v.lumen(x) - r.v.radius[j];
    if (!(room >= 0 && point_dist2(r.v, to, x) <= room * room)) ok = false;
    for (uint32_t o = 0; ok && o < e.count; ++o) {
      if (o == c || e.target[o] != e.target[c]) continue;
      const double need = e.mid[o] + r.v.radius[j];
      double s2 = 0;
      NESTSIM_AXES(k, r.v.dim) {
        const double dd = minimum_image(to[k] - e.centre[k][o], r.v.space.edge[k], r.v.space.inv_edge[k]);
        s2 += dd * dd;
      }
      if (s2 < need * need) ok = false;
    }
    if (!ok) atomic_fetch_max(&e.blocked[c], 1ull);
  }
};

// One thread per body k: a compartment of X that a pushed protein's destination falls
// into blocks that push's bud.
struct PushCheck {
  ReactionView r;
  EventList e;
  PushView push;
  NESTSIM_HD void operator()(uint32_t k) const {
    if (r.v.empty(k) || !r.v.compartment[k] || r.v.membrane[k] >= 0) return;
    for (uint32_t q = 0; q < push.n; ++q) {
      const uint32_t j = push.list[q];
      const uint32_t c = uint32_t(push.by[j]);
      if (r.v.parent[k] != e.target[c]) continue;
      const double to[3] = {r.v.x_next[0][j], r.v.x_next[1][j], r.v.x_next[2][j]};
      const double m = r.v.radius[k] + r.v.radius[j];
      if (point_dist2(r.v, to, k) < m * m) atomic_fetch_max(&e.blocked[c], 1ull);
    }
  }
};

// The pushes of the buds that happen; every count back to 0.
struct PushApply {
  ReactionView r;
  EventList e;
  PushView push;
  const uint32_t* fits = nullptr;
  NESTSIM_HD void operator()(uint32_t q) const {
    const uint32_t j = push.list[q];
    if (fits[push.by[j]])
      NESTSIM_UNROLL for (int k = 0; k < 3; ++k) r.v.x[k][j] = r.v.x_next[k][j];
  }
};

// Buds in one X whose balls overlap: the one with the higher priority (its claim's
// random bits; then the lower slot) goes ahead. Reads the environment verdicts of
// BudCheck, writes its own into `fits` (1: the bud happens).
struct BudPairs {
  ReactionView r;
  EventList e;
  uint32_t* fits = nullptr;
  NESTSIM_HD void operator()(uint32_t c) const {
    bool ok = !e.blocked[c];
    const uint32_t i = e.slot[c];
    for (uint32_t o = 0; ok && o < e.count; ++o) {
      if (o == c || e.target[o] != e.target[c]) continue;
      const uint32_t j = e.slot[o];
      if (!(r.claim[j] > r.claim[i] || (r.claim[j] == r.claim[i] && j < i))) continue;
      const double need = e.mid[c] + e.mid[o];
      double s = 0;
      NESTSIM_AXES(k, r.v.dim) {
        const double d = minimum_image(e.centre[k][c] - e.centre[k][o], r.v.space.edge[k],
                                       r.v.space.inv_edge[k]);
        s += d * d;
      }
      if (s < need * need) ok = false;
    }
    fits[c] = ok ? 1u : 0u;
  }
};

// The buds that fit: V born in a free slot (ranks by a scan of `fits`), the reactant
// onto V's membrane or into its lumen.
struct BudExecute {
  ReactionView r;
  EventList e;
  const uint32_t* fits = nullptr;
  const uint32_t* rank = nullptr;
  NESTSIM_HD void operator()(uint32_t c) const {
    if (!fits[c]) return;
    const uint32_t i = e.slot[c];
    const int k = e.rule[c];
    const DeviceRule& rule = r.rules[k];
    const uint32_t s = r.free_slots[rank[c]];
    const int32_t x = e.target[c];
    Placement pv;
    pv.ok = true;
    pv.parent = x;
    pv.moves = true;
    NESTSIM_UNROLL for (int a = 0; a < 3; ++a) pv.to[a] = e.centre[a][c];
    r.id[s] = int64_t(r.next_id + rank[c]);
    become(r, s, rule.product[0], pv);
    Placement pi;
    pi.ok = true;
    pi.moves = true;
    if (rule.product_where[1] == kIn) {
      pi.parent = int32_t(s);
      NESTSIM_UNROLL for (int a = 0; a < 3; ++a) pi.to[a] = e.centre[a][c];
    } else {
      pi.parent = x;
      pi.membrane = int32_t(s);
      on_ray(r, s, i, r.kind_radius[rule.product[0]] - 0.5 * r.kind_thickness[rule.product[0]], pi.to);
    }
    become(r, i, rule.product[1], pi);
    atomic_fetch_add(&r.events[k], 1ull);
  }
};

}  // namespace nestsim::sim::detail

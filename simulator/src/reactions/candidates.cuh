// The candidate reactions of a step and their claims on their reactants (one- and
// two-reactant rules; the outline is in reaction_view.cuh).
#pragma once
#include <cstdint>

#include "nestsim/sim/philox.h"
#include "reactions/products.cuh"

namespace nestsim::sim::detail {

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

}  // namespace nestsim::sim::detail

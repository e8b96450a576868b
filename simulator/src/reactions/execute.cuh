// The reactions that won their claims, executed: products placed, bodies born in free
// slots or removed.
#pragma once
#include <cstdint>

#include "reactions/candidates.cuh"

namespace nestsim::sim::detail {

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

}  // namespace nestsim::sim::detail

// Budding, "S on X -> V + S' on V", as device functors (budding.cu drives them;
// event_list.cuh states what a bud does and when it may happen).
#pragma once
#include <cmath>
#include <cstdint>

#include "events/pushing.cuh"

namespace nestsim::sim::detail {

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

// Budding in a crowded lumen: the proteins a bud's ball meets are pushed aside.
#pragma once
#include <cstdint>

#include "events/event_list.cuh"

namespace nestsim::sim::detail {

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

}  // namespace nestsim::sim::detail

// Fusion, "V + Y -> Y", as device functors (fusion.cu drives them; event_list.cuh
// states what a fusion does and when it may happen).
#pragma once
#include <cmath>
#include <cstdint>

#include "events/event_list.cuh"

namespace nestsim::sim::detail {

// The rule of each fusion: the winning pair candidate that marked it.
struct RuleOfFusion {
  ReactionView r;
  EventList e;
  NESTSIM_HD void operator()(uint32_t c) const {
    const uint32_t a = e.slot[c];
    const int32_t b = r.fuse_into[a];
    for (int k = 0; k < r.rule_count; ++k)
      if (r.rules[k].fusion && r.claim[a] == pair_priority(r, a, uint32_t(b), k, uint32_t(b))) {
        e.rule[c] = k;
        return;
      }
    e.rule[c] = 0;
  }
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

}  // namespace nestsim::sim::detail

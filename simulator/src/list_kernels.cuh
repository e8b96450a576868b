// Device functors of the neighbour lists (neighbour_lists.cu): the compaction of list
// entries, the entries Accept needs, and the bound that decides a rebuild.
#pragma once
#include <cmath>
#include <cstdint>

#include "near_image.cuh"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

// Entries that Accept needs: a free body i and a free sibling j, one of them a
// compartment. Depends only on id, parent, membrane, compartment (fixed between builds).
// A kernel of its own: computed inside the scan that compacts them, these chains of
// dependent loads made the scan 26 us (the physiological model on an H200) against 5 + 5.
struct MarkSibling {
  SlotView v;
  const uint32_t* row = nullptr;
  uint8_t* mark = nullptr;
  NESTSIM_HD void operator()(uint64_t e) const {
    const uint32_t i = row[e], j = v.nbrs[e];
    const bool keep = !v.empty(i) && !v.empty(j) && v.membrane[i] < 0 && v.membrane[j] < 0 &&
                      v.parent[i] == v.parent[j] && (v.compartment[i] || v.compartment[j]);
    mark[e] = keep ? 1 : 0;
  }
};

// The kept entries (pos: the exclusive scan of MarkSibling's marks) into sibs and sib_rows; the
// first thread writes their number.
struct ScatterSiblings {
  const uint64_t* pos = nullptr;
  uint64_t count = 0;
  const uint32_t* nbrs = nullptr;
  const uint32_t* row = nullptr;
  uint32_t* sibs = nullptr;
  uint32_t* sib_rows = nullptr;
  uint64_t* total = nullptr;
  NESTSIM_HD void operator()(uint64_t e) const {
    if (e == 0) *total = pos[count];
    if (pos[e + 1] == pos[e]) return;
    sibs[pos[e]] = nbrs[e];
    sib_rows[pos[e]] = row[e];
  }
};

// Compaction by an exclusive scan `pos` of the marks (pos[e + 1] > pos[e]: kept).
struct ScatterKept {
  const uint64_t* pos = nullptr;
  const uint32_t* in = nullptr;
  uint32_t* out = nullptr;
  NESTSIM_HD void operator()(uint64_t e) const {
    if (pos[e + 1] != pos[e]) out[pos[e]] = in[e];
  }
};
struct RowStart {
  const uint64_t* pos = nullptr;
  const uint64_t* offsets = nullptr;
  uint64_t* out = nullptr;
  NESTSIM_HD void operator()(uint32_t i) const { out[i] = pos[offsets[i]]; }
};

// Each body's margin: how far it may move from where the lists were built before they
// may miss a pair. The lists search every body with its radius grown by its kind's
// reaction reach plus its margin (a hollow body's thickness by twice that, as the finder
// grows it by a skin), so two bodies that each moved at most their margin still have
// every pair they could touch or react in listed. A fixed skin gives every body half of
// it. The automatic margin scales with how far the body can move in a step: `scale`
// times sqrt(2 K D dt) (K its time-step class) summed over the body and its carriers (the bound of BoundOfBody adds
// their moves too), at least `floor_sd` of the fastest such length, so slow and resting
// bodies have short lists and the fast ones the room for several steps. When
// `move_pad` is set (lists rebuilt because the proposed moves outran the last ones), a
// margin is at least the body's proposed step: the new lists hold for this step's moves.
struct ListBodies {
  SlotView v;
  const double* reach = nullptr;  // per kind; null: none
  double uniform = 0;             // > 0: every margin (half a fixed skin)
  double scale = 0, root_2dt = 0, floor_sd = 0;
  bool move_pad = false;
  bool none = false;          // no margins (the reach alone); `margin` is not written
  double* margin = nullptr;
  double* r_out = nullptr;
  double* q_out = nullptr;
  NESTSIM_HD double length(const double* const* m, uint32_t i) const {
    double s = 0;
    NESTSIM_AXES(k, v.dim) s += m[k][i] * m[k][i];
    return std::sqrt(s);
  }
  // D of body i times its time-step class: its moves' variance is 2 K D dt.
  NESTSIM_HD double class_diffusion(uint32_t i) const {
    return v.kind_step ? v.diffusion[i] * double(v.step_class(i)) : v.diffusion[i];
  }
  NESTSIM_HD double margin_of(uint32_t i) const {
    if (uniform > 0) return uniform;
    double roots = std::sqrt(class_diffusion(i));
    int32_t c = v.carrier(i);
    for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
      roots += std::sqrt(class_diffusion(uint32_t(c)));
    const double sd = root_2dt * roots;
    double m = scale * (sd > floor_sd ? sd : floor_sd);
    if (move_pad) {
      double step = length(v.move, i);
      c = v.carrier(i);
      for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
        step += length(v.move, uint32_t(c));
      step = step * (1.0 + 1e-9) + 1e-300;  // above the bound's rounding
      if (step > m) m = step;
    }
    return m;
  }
  NESTSIM_HD void operator()(uint32_t i) const {
    const double m = none || v.empty(i) ? 0.0 : margin_of(i);
    const double e = (reach && v.kind[i] >= 0 ? reach[v.kind[i]] : 0.0) + m;
    const double r = v.radius[i] + e;
    double q = v.thickness[i] >= v.radius[i] ? r : v.thickness[i] + 2 * e;
    if (q > r) q = r;
    if (!none) margin[i] = m;
    r_out[i] = r;
    q_out[i] = q;
  }
};

// Bounds used to decide a rebuild: the largest excess of a body's possible distance from
// where the lists were built after this step (whatever is accepted) over its margin
// (> 0: the lists may miss a pair), and the largest step.
struct StepBound {
  double excess = -1e308;  // none: the identity of the maximum
  double step = 0;
};
struct MaxStepBound {
  NESTSIM_HD StepBound operator()(const StepBound& a, const StepBound& b) const {
    return {a.excess > b.excess ? a.excess : b.excess, a.step > b.step ? a.step : b.step};
  }
};
struct BoundOfBody {
  SlotView v;
  const double* margin = nullptr;  // per slot, from the last build
  NESTSIM_HD double length(const double* const* m, uint32_t i) const {
    double s = 0;
    NESTSIM_AXES(k, v.dim) s += m[k][i] * m[k][i];
    return std::sqrt(s);
  }
  NESTSIM_HD StepBound operator()(uint32_t i) const {
    if (v.empty(i)) return StepBound{};
    double step = length(v.move, i);
    int32_t c = v.carrier(i);
    for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
      step += length(v.move, uint32_t(c));
    double d[3];
    d[0] = d[1] = d[2] = 0;
    NESTSIM_AXES(k, v.dim)
      d[k] = near_minimum_image(v.x[k][i] - v.x_built[k][i], v.space.edge[k], v.space.inv_edge[k]);
    return {(std::sqrt(v.norm2(d)) + step) - margin[i], step};
  }
};

}  // namespace nestsim::sim::detail

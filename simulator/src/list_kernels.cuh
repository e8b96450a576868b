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

// Bounds used to decide a rebuild: the largest possible distance of a body from where
// the lists were built after this step (whatever is accepted), and the largest step.
struct StepBound {
  double from_built = 0;
  double step = 0;
};
struct MaxStepBound {
  NESTSIM_HD StepBound operator()(const StepBound& a, const StepBound& b) const {
    return {a.from_built > b.from_built ? a.from_built : b.from_built,
            a.step > b.step ? a.step : b.step};
  }
};
struct BoundOfBody {
  SlotView v;
  NESTSIM_HD double length(const double* const* m, uint32_t i) const {
    double s = 0;
    NESTSIM_AXES(k, v.dim) s += m[k][i] * m[k][i];
    return std::sqrt(s);
  }
  NESTSIM_HD StepBound operator()(uint32_t i) const {
    if (v.empty(i)) return {0, 0};
    double step = length(v.move, i);
    int32_t c = v.carrier(i);
    for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
      step += length(v.move, uint32_t(c));
    double d[3];
    d[0] = d[1] = d[2] = 0;
    NESTSIM_AXES(k, v.dim)
      d[k] = near_minimum_image(v.x[k][i] - v.x_built[k][i], v.space.edge[k], v.space.inv_edge[k]);
    return {std::sqrt(v.norm2(d)) + step, step};
  }
};

}  // namespace nestsim::sim::detail

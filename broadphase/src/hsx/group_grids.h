// One grid per group of levels, all in one table (one sort for all groups;
// docs/performance.md, "All groups of levels in one sort"): cells of the level
// base's cell fraction times the group's top diameter d; members have radius <= d / 2.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/cell_records.cuh"
#include "common/extent.cuh"
#include "common/grid_choice.cuh"
#include "hsx/group_plan.h"
#include "hsx/task_size.h"
#include "nestsim/broadphase.h"

namespace nestsim::detail {

struct GroupGrids {
  std::vector<GroupGrid> grids;
  LevelToGroup to_group{0, 0};
  uint64_t items = 0;  // large items (large body, smaller group)
  double shared = 0;   // lower bound of the pairs that share a cell, over the groups
                       // (groups that may hold shell cells left out)
  bool shell_gate = false;  // some group may hold shell cells (GroupGrid::shell_gate)
};

// Whether a group's cells are checked for shell cells (hsx/shell_cells.cuh; HsxTuning's
// shell_* fields): hollow bodies, a dense grid, members spanning several levels (nested
// shells' radii spread), and crowded buckets on average.
inline bool shell_gate(const HsxTuning& t, bool hollow, const GridSpec& grid, int levels,
                       double members, double buckets) {
  return hollow && t.shell_min_bodies > 0 && grid.dense && levels >= t.shell_min_levels &&
         members >= double(t.shell_min_bodies) && members >= t.shell_min_occupancy * buckets;
}

// The groups' grids over n bodies with extent `bounds` at level base `base`: cells,
// buckets, task sizes, the larger-side rule, and each group's first large item.
inline GroupGrids group_grids(const LevelBase& base, const Extent& bounds, const Domain& dom,
                              int dim, uint32_t n, const Tuning& t, bool hollow) {
  const std::vector<Group>& groups = base.groups;
  GroupGrids out;
  out.grids.resize(groups.size());
  out.to_group = LevelToGroup{0, static_cast<uint8_t>(groups.size() - 1)};
  int first_level = 0;  // the lowest level of the next group
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups[k];
    GroupGrid& grid = out.grids[k];
    grid.begin = g.begin;
    grid.end = g.end;
    grid.brute = g.brute;
    if (g.brute) {
      grid.grid = single_cell_grid(dom, dim);
      continue;
    }
    out.to_group.tops |= uint64_t(1) << g.top_level;
    const double d = std::ldexp(base.d0, g.top_level);
    grid.grid = make_grid(dom, dim, d * base.cell_fraction, bounds.centre_lo, bounds.centre_hi);
    const double ns = double(g.end - g.begin);
    const double cells =
        choose_buckets(grid.grid, g.end - g.begin, t.cell_sort.dense_cells_per_body);
    grid.task = task_size_for(t.hsx, ns, cells, n);
    grid.reach = 0.5 * d;
    int levels = 0;  // non-empty levels in the group
    for (int l = first_level; l <= g.top_level; ++l) levels += base.histogram[l] ? 1 : 0;
    first_level = g.top_level + 1;
    grid.shell_gate = shell_gate(t.hsx, hollow, grid.grid, levels, ns, cells) ? 1 : 0;
    out.shell_gate = out.shell_gate || grid.shell_gate;
    // Cauchy-Schwarz: ns bodies in `cells` cells share a cell in >= ns (ns / cells - 1) / 2
    // pairs.
    if (!grid.shell_gate) out.shared += ns * std::max(0.0, ns / cells - 1.0) / 2.0;
    grid.larger_side = t.hsx.larger_side_levels > 0 && levels >= t.hsx.larger_side_levels &&
                       ns <= t.hsx.larger_side_per_cell * cells;
    grid.item_base = out.items;
    out.items += n - g.end;
  }
  for (GroupGrid& grid : out.grids)
    if (grid.brute) grid.item_base = out.items;  // owns no item
  return out;
}

}  // namespace nestsim::detail

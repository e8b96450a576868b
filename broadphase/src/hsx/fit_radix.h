// Cells grown a little so that the radix sort into cells needs one pass fewer.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/buffers.cuh"
#include "common/cell_records.cuh"
#include "common/grid_choice.cuh"
#include "hsx/group_plan.h"
#include "hsx/task_size.h"

namespace nestsim::detail {

// The GPU's radix sort into cells sorts the bucket numbers on the tables' bits, 8 per
// onesweep pass (sorted_grid.cuh, radix_sort_buckets): tables just above a multiple of 8
// bits pay a whole pass more (1e7 bodies: ~18M buckets, 25 bits, 4 passes). There the
// largest dense group's cells grow a little, by at most ~10% per axis (a third fewer
// cells), until all tables fit the multiple below of t.hsx.fit_radix_bits bits
// (docs/performance.md, "One radix pass fewer into cells at 1e7"). The group's task size
// and larger-side rule follow its new cells.
inline void fit_radix_passes(std::vector<GroupGrid>& grids, const std::vector<Group>& groups,
                             const Domain& dom, const Extent& bounds, double d0,
                             double cell_fraction, int dim, uint32_t n, const Tuning& t) {
  const int pass_bits = t.hsx.fit_radix_bits;
  uint64_t table = 0;
  std::size_t big = grids.size();
  for (std::size_t k = 0; k < grids.size(); ++k) {
    table += grids[k].grid.table_size;
    if (!grids[k].brute && grids[k].grid.dense &&
        (big == grids.size() || grids[k].grid.table_size > grids[big].grid.table_size))
      big = k;
  }
  const int bits = detail::radix_bits(table);  // as radix_sort_buckets sorts them
  // Sorted in ceil(bits / pass_bits) passes; one fewer fits `target` bits.
  const int target = (bits + pass_bits - 1) / pass_bits * pass_bits - pass_bits;
  if (big == grids.size() || target < 1) return;
  const uint64_t fit = uint64_t(1) << target;
  if (double(table) > 1.35 * double(fit)) return;
  detail::GroupGrid& g = grids[big];
  const uint64_t others = table - g.grid.table_size;
  if (others >= fit) return;
  const uint64_t want = fit - others;  // buckets left for the group
  const double ns = double(g.end - g.begin);
  double width = std::ldexp(d0, groups[big].top_level) * cell_fraction;
  double scale = std::pow(double(g.grid.table_size) / double(want), 1.0 / dim);
  for (int i = 0; i < 32 && scale < 1.12; ++i, scale *= 1.004) {
    detail::GridSpec grid =
        detail::make_grid(dom, dim, width * scale, bounds.centre_lo, bounds.centre_hi);
    const double cells =
        detail::choose_buckets(grid, g.end - g.begin, t.cell_sort.dense_cells_per_body);
    if (!grid.dense || grid.table_size > want) continue;
    g.grid = grid;
    g.task = task_size_for(t.hsx, ns, cells, n);
    g.larger_side = g.larger_side && ns <= t.hsx.larger_side_per_cell * cells;
    return;
  }
}

}  // namespace nestsim::detail

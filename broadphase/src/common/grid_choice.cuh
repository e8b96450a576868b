// A grid's cells over the space and its buckets (dense or hashed).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/grid.cuh"
#include "nestsim/broadphase.h"

namespace nestsim::detail {

// Cells of width >= `width` over [lo, hi] per axis (open), or over the periodic box;
// at most 2^20 cells per axis.
inline GridSpec make_grid(const Domain& dom, int dim, double width, const double* lo,
                          const double* hi) {
  GridSpec g;
  g.dim = dim;
  g.periodic = dom.periodic;
  width = std::max(width, 1e-300);
  for (int a = 0; a < dim; ++a) {
    if (dom.periodic) {
      const double fit = std::floor(dom.size[a] / width);
      g.n[a] = static_cast<long long>(std::clamp(fit, 1.0, double(1 << 20)));
      g.origin[a] = dom.lo[a];
      g.width[a] = dom.size[a] / double(g.n[a]);
    } else {
      g.origin[a] = lo[a];
      g.width[a] = std::max(width, (hi[a] - lo[a]) * 0x1p-20);
      g.n[a] = static_cast<long long>(std::floor((hi[a] - lo[a]) / g.width[a])) + 1;
    }
    g.inv_width[a] = 1.0 / g.width[a];
  }
  g.set_float_copies();
  return g;
}

// Buckets for `count` bodies in `grid`: one per cell when there are at most 16 cells per
// body (dense: a run of cells along x is one bucket range), otherwise a hash table of
// about 2 count buckets (sparse scenes; exact through the cell check of the pair steps,
// but one look-up per cell). Why 16: at 3e6 bodies, phi 0.1, the bottom group needs 6
// cells per member, where hashed walks cost 2.6x the dense ones on the H100
// (docs/performance.md, "Dense cell tables up to 16 cells per body"); a dense table costs
// 4 bytes per cell and two streaming passes (tuning.h,
// CellSortTuning::dense_cells_per_body). Returns the number of cells.
inline double choose_buckets(GridSpec& grid, uint32_t count, double per_body) {
  double cells = 1;
  for (int a = 0; a < grid.dim; ++a) cells *= double(grid.n[a]);
  // At most 2^30 dense buckets (4 GB): the shared table must stay below 2^32 buckets.
  if (cells <= per_body * count + 1024.0 && cells <= double(uint64_t(1) << 30)) {
    grid.dense = true;
    grid.table_size = static_cast<uint64_t>(cells);
  } else {
    grid.dense = false;
    int bits = 10;
    while ((uint64_t(1) << bits) < 2ull * count) ++bits;
    grid.table_size = uint64_t(1) << bits;
    grid.hash_shift = 64 - bits;
  }
  return cells;
}

// A grid of one cell (the brute-force group: its bodies are only sorted together).
inline GridSpec single_cell_grid(const Domain& dom, int dim) {
  GridSpec g;
  g.dim = dim;
  g.periodic = dom.periodic;
  return g;
}

}  // namespace nestsim::detail

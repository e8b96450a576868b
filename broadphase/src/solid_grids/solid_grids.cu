// The solid-sphere baseline grids (solid_grids.cuh): grid_uniform and grid_aabb.
//
// grid_uniform, in the style of fast fixed-radius nearest neighbours:
//  1. cell width d = largest diameter + rounding pad (>= the reach of every pair);
//  2. the bodies sorted by the cell of their centre (SortedGrid of common/sorted_grid.cuh,
//     counting or radix sort, as HSX sorts its groups of levels);
//  3. each body tests the later bodies of its 27 (9 in 2D) neighbouring cells
//     (MoorePairs, moore_pairs.cuh).
// grid_aabb, in the style of chrono::collide's multi-cell AABB grid:
//  1. cell width from the mean diameter, doubled while the bodies' boxes would take more
//     than kEntriesPerBody cells per body on average (so radii spanning 1e-3..1e3 do not
//     explode the entry list; no fixed cap on the grid itself);
//  2. per body its cell intervals and entry count; count -> scan -> fill of (cell,
//     body) entries; entries sorted by cell;
//  3. per entry, the later entries of its cell; a pair counts only in the first cell
//     both boxes share (shared_first), so each pair is found exactly once, also in
//     periodic boxes of fewer than 3 cells per axis.
// Both apply the exact test to every candidate; cell keys are linear cell indices (up
// to 2^20 cells per axis), so neither needs a table of all cells.
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/extent.cuh"
#include "solid_grids/moore_pairs.cuh"
#include "solid_grids/solid_grids.cuh"

namespace nestsim::detail {
namespace {

// Average cells per body the AABB grid may take before its cells are made wider.
constexpr double kEntriesPerBody2 = 16.0;
constexpr double kEntriesPerBody3 = 32.0;

}  // namespace

template <class Real>
template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
uint64_t SolidGrids<Real>::emit_pairs(Index items, bool count_only,
                                      thrust::device_vector<uint64_t>& keys, Args... args) {
  ensure_size(counts_, std::size_t(items) + 1);
  PairSink sink;
  sink.counts = raw(counts_);
  for_each_index(items, Step<Real, Dim, false>{args..., sink});
  const uint64_t total = scan_counts(thrust::device, counts_, offsets_, items);
  if (count_only || total == 0) return total;
  ensure_size(keys, total);
  sink.offsets = raw(offsets_);
  sink.out = raw(keys);
  for_each_index(items, Step<Real, Dim, true>{args..., sink});
  return total;
}

template <class Real>
uint64_t SolidGrids<Real>::uniform(const BroadphaseOptions& options,
                                   const BodyArrays<Real>& bodies, uint32_t n,
                                   const Space<Real>& space, bool count_only,
                                   thrust::device_vector<uint64_t>& keys) {
  if (n < 2) return 0;
  return options.domain.dim == 3 ? uniform_dim<3>(options, bodies, n, space, count_only, keys)
                                 : uniform_dim<2>(options, bodies, n, space, count_only, keys);
}

template <class Real>
uint64_t SolidGrids<Real>::aabb(const BroadphaseOptions& options, const BodyArrays<Real>& bodies,
                                uint32_t n, const Space<Real>& space, bool count_only,
                                thrust::device_vector<uint64_t>& keys) {
  if (n < 2) return 0;
  return options.domain.dim == 3 ? aabb_dim<3>(options, bodies, n, space, count_only, keys)
                                 : aabb_dim<2>(options, bodies, n, space, count_only, keys);
}

template <class Real>
template <int Dim>
uint64_t SolidGrids<Real>::uniform_dim(const BroadphaseOptions& options,
                                       const BodyArrays<Real>& bodies, uint32_t n,
                                       const Space<Real>& space, bool count_only,
                                       thrust::device_vector<uint64_t>& keys) {
  const Extent e = extent_of<Real>(thrust::device, bodies, n, Dim);
  const double pad = rounding_pad<Real>(e, options.domain, Dim);
  // Every pair lies within r_i + r_j <= 2 rmax < d: in the Moore neighbourhood.
  GridSpec grid = make_grid(options.domain, Dim, 2.0 * e.rmax + pad, e.centre_lo, e.centre_hi);
  choose_buckets(grid, n, options.tuning.cell_sort.dense_cells_per_body);

  // Sort by cell (one group), then the Moore-neighbourhood search.
  std::vector<GroupGrid> groups(1);
  groups[0].grid = grid;
  groups[0].end = n;
  const SortedBodies<Real> s =
      sorted_.template build<Dim>(thrust::device, groups, nullptr, LevelToGroup{}, bodies, n,
                                  radix_grid_sort(options, n), options.tuning.cell_sort);
  return emit_pairs<MoorePairs, Dim>(n, count_only, keys, s, space);
}

template <class Real>
template <int Dim>
uint64_t SolidGrids<Real>::aabb_dim(const BroadphaseOptions& options,
                                    const BodyArrays<Real>& bodies, uint32_t n,
                                    const Space<Real>& space, bool count_only,
                                    thrust::device_vector<uint64_t>& keys) {
  const Extent e = extent_of<Real>(thrust::device, bodies, n, Dim);
  const double pad = rounding_pad<Real>(e, options.domain, Dim);
  double lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = e.box_lo[a] - pad;
    hi[a] = e.box_hi[a] + pad;
  }
  // Cell width: the mean diameter, doubled while the entries would exceed the budget.
  const double budget = (Dim == 3 ? kEntriesPerBody3 : kEntriesPerBody2) * double(n) + 4096.0;
  double width = 2.0 * e.rsum / double(n) + pad;
  GridSpec grid;
  for (;;) {
    grid = make_grid(options.domain, Dim, width, lo, hi);
    const uint64_t entries = thrust::transform_reduce(
        thrust::device, thrust::counting_iterator<uint32_t>(0),
        thrust::counting_iterator<uint32_t>(n), AabbEntryCount<Real, Dim>{grid, pad, bodies},
        uint64_t(0), thrust::plus<uint64_t>());
    bool single = true;  // one cell per axis: cannot get coarser
    for (int a = 0; a < Dim; ++a) single = single && grid.n[a] == 1;
    if (double(entries) <= budget || single) break;
    width *= 2.0;
  }

  // Cell intervals and entry counts per body -> offsets -> entries -> sorted by cell.
  AabbCells cells;
  cells.grid = grid;
  cells.pad = pad;
  for (int a = 0; a < 3; ++a) {
    ensure_size(start_[a], a < Dim ? n : 1);
    ensure_size(length_[a], a < Dim ? n : 1);
    cells.start[a] = raw(start_[a]);
    cells.length[a] = raw(length_[a]);
  }
  ensure_size(entry_count_, std::size_t(n) + 1);
  for_each_index(n, AabbRanges<Real, Dim>{cells, bodies, raw(entry_count_)});
  const uint64_t entries = scan_counts(thrust::device, entry_count_, entry_offset_, n);
  ensure_size(entry_key_, entries);
  ensure_size(entry_body_, entries);
  for_each_index(n, AabbFill<Dim>{cells, raw(entry_offset_), raw(entry_key_), raw(entry_body_)});
  thrust::sort_by_key(thrust::device, entry_key_.begin(), entry_key_.begin() + entries,
                      entry_body_.begin());

  return emit_pairs<AabbCellPairs, Dim>(entries, count_only, keys, cells, bodies, space,
                                        static_cast<const uint64_t*>(raw(entry_key_)),
                                        static_cast<const uint32_t*>(raw(entry_body_)), entries);
}

#if defined(NESTSIM_FAMILY_REAL)  // one precision per compile (broadphase/CMakeLists.txt)
template class SolidGrids<NESTSIM_FAMILY_REAL>;
#else
template class SolidGrids<float>;
template class SolidGrids<double>;
#endif

}  // namespace nestsim::detail

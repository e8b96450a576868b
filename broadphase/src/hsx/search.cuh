// HSX's find (Algorithm 1 of the HSX paper, sections 3-4): the plan on the host between
// the level histogram and the sort, then every group's pairs in one pass.
#pragma once
#include <thrust/fill.h>
#include <thrust/scan.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "common/nvtx.h"
#include "hsx/fit_radix.h"
#include "hsx/group_grids.h"
#include "hsx/group_plan.h"
#include "nestsim/device/exec.cuh"
#include "pair_finder_state.cuh"

namespace nestsim::detail {

// Refuses bodies outside the range the grids support (broadphase.h, check_supported),
// where cells' numbers could leave 64 bits and pairs be lost in silence.
// Broadphase::upload refuses them first; this guards PairFinder's own callers.
template <class Real>
void check_grid_range(const detail::Extent& e, const Domain& dom, int dim) {
  const double limit = max_extent<Real>();
  bool inside = e.absmax <= limit && e.rmax <= limit;
  for (int a = 0; a < dim && dom.periodic; ++a)
    inside = inside && dom.size[a] <= limit && dom.size[a] >= kMinEdgePerReach * e.rmax &&
             e.absmax <= std::fabs(dom.lo[a]) + kMaxEdgesFromBox * dom.size[a];
  if (inside) return;
  char what[256];
  std::snprintf(what, sizeof what,
                "hsx: bodies outside the supported range (|coordinates|, radius + skin and box "
                "edges up to %g; periodic edges at least 2^-30 of the largest radius + skin, "
                "coordinates within 2^30 edges of the box)",
                limit);
  throw std::invalid_argument(what);
}

}  // namespace nestsim::detail

namespace nestsim::device {

template <class Real>
template <int Dim>
void PairFinder<Real>::State::hsx(const BroadphaseOptions& options, const BodyArrays<Real>& in,
                                  uint32_t n) {
  // All pairs instead of the grid: few bodies, or (below) crowded cells.
  const double small_n =
      options.hsx_small_n >= 0 ? double(options.hsx_small_n) : tuning.hsx.small_n;
  if (double(n) <= small_n) {
    all_pairs<Dim>(in, n);
    return;
  }
  detail::Range range("broadphase/hsx/plan");
  // Algorithm 1 line 1 (the bounds, d0, the pad), the natural levels and their histogram.
  const Domain& dom = options.domain;
  const LevelPlan plan = levels.plan_levels(in, n, detail::pad_space(dom, Dim), stage, alloc);
  detail::check_grid_range<Real>(plan.bounds, dom, Dim);
  const detail::LevelBase base = detail::choose_level_base(tuning.hsx, plan, Dim, n);
  if (base.phase != 0)  // the natural levels were written for phase 0
    for_each_index(n, detail::Relevel<Real>{in.radius, plan.pad, base.d0,
                                            raw(levels.natural)});
  detail::GroupGrids g = detail::group_grids(base, plan.bounds, dom, Dim, n, tuning,
                                             options.overlap != Overlap::solid);
  // Crowded cells: when the pairs that share a cell, times the grid's cost per candidate
  // relative to one test of the all-pairs pass, exceed the n (n - 1) / 2 tests of that
  // pass, the grid cannot win (a pile of bodies in one cell). Groups that may hold shell
  // cells do not count: those walk crowded cells of near-concentric shells
  // sub-quadratically (hsx/shell_cells.cuh). Only in the automatic mode.
  if (options.hsx_small_n < 0 &&
      tuning.hsx.grid_test_cost * g.shared > double(n) * double(n - 1) / 2.0) {
    all_pairs<Dim>(in, n);
    return;
  }
  const bool radix = detail::radix_grid_sort(options, n);
  if (radix && tuning.hsx.fit_radix_bits > 0)
    detail::fit_radix_passes(g.grids, base.groups, dom, plan.bounds, base.d0, base.cell_fraction,
                             Dim, n, tuning);
  groups_pass<Dim>(g.grids, g.to_group, in, n, plan.pad, g.items, radix);
}

template <class Real>
template <int Dim>
void PairFinder<Real>::State::groups_pass(std::vector<detail::GroupGrid>& groups,
                                          detail::LevelToGroup to_group,
                                          const BodyArrays<Real>& in,
                                          uint32_t n, double pad, uint64_t items,
                                          bool radix) {
  detail::GroupedView<Real> v;
  {
    detail::Range range("broadphase/hsx/sort into cells");
    // The bucket table beside the gather (the CPU's SideStream runs it in order).
    v.s = sorted.template build<Dim>(detail::policy(alloc), groups, raw(levels.natural),
                                     to_group, in, n, radix, tuning.cell_sort,
                                     tuning.hsx.table_beside ? &side_stream : nullptr);
  }
  v.space = space;
  v.group_count = uint32_t(groups.size());
  v.pad = pad;
  {
    detail::Range range("broadphase/hsx/shell cells");
    shells.slack = 2.0 * pad;  // as GroupedView::shell_cut widens the walkers' windows
    if (shells.prepare(detail::policy(alloc), groups, raw(sorted.groups), v.s, space,
                       raw(sorted.sorted_record), tuning.hsx)) {
      v.shell_cell = raw(shells.cells);
      v.shell_offset = shells.offset;
      v.shell_key = raw(shells.keys);
      v.shell_first = shells.first;
      v.shell_fine_key = raw(shells.fine_keys);
      if (shells.block_shift >= 0) {
        v.shell_block = raw(shells.blocks);
        v.shell_fanout = raw(shells.fanout);
        v.shell_fine = raw(shells.fine);
        v.shell_fine_shift = shells.fine_shift;
        v.shell_block_shift = shells.block_shift;
        v.shell_block_walker = tuning.hsx.shell_block_walker;
      }
    }
  }
  // Small-small pairs of every group, and the large-small pairs: items (large body,
  // smaller group) -> tasks -> their walk. On the GPU with the warp's tests, the large
  // items' work runs on a side stream of higher priority, beside the small-small walk
  // (docs/performance.md, "The large bodies' work beside the small-small walk"): its
  // chain of short kernels (tasks, scans, owners) and the two walks' tails overlap
  // instead of following each other.
  v.items = items;
  const bool large = items > 0;
  bool side = false;
#if defined(NESTSIM_BACKEND_CUDA)
  side = large && fused && tuning.hsx.warp_tests && tuning.hsx.large_beside;
#endif
  // The buffers first: a new buffer's zero fill runs on the default stream.
  if (large && task_capacity == 0) task_capacity = 2 * items + 1024;  // the first guess
  const uint64_t tasks = task_capacity;
  // The task total stays on the device (no read-back; docs/performance.md, "The
  // read-backs' gaps"): the owners' table and the walk cover task_capacity tasks, those
  // past the total return at once, and find() reads the total with the pair count
  // (total[1]); a total beyond the capacity grows it and runs the call again, as the pair
  // buffer does.
  const bool owners = large && double(items) >= tuning.hsx.task_owners_min_items &&
                      items < (uint64_t(1) << 32) && tasks < (uint64_t(1) << 32);
  if (large) {
    ensure_size(task_count, std::size_t(items));
    ensure_size(task_start, std::size_t(items) + 1);
    if (owners) ensure_size(task_owner, std::size_t(tasks));
  }
  auto on_large = [&](auto&& run) {  // a Thrust call for the large items' work
#if defined(NESTSIM_BACKEND_CUDA)
    if (side) {
      run(thrust::cuda::par_nosync(side_alloc).on(side_stream.stream()));
      return;
    }
#endif
    run(detail::policy(alloc));
  };
  detail::Range range("broadphase/hsx/pairs");
  if (side) side_stream.fork();
  if (large)  // first: its blocks start before the walk's
    on_large([&](const auto& exec) {
      detail::for_each_index_on(exec, items,
                                detail::GroupLargeTasks<Real, Dim>{v, raw(task_count)});
    });
  const bool shell_walks = v.shell_cell != nullptr;  // only then the walks' shell code
  if (shell_walks)
    emit_walk_pairs<detail::GroupSmallShellPairs, Dim>(false, n, v);
  else
    emit_walk_pairs<detail::GroupSmallPairs, Dim>(false, n, v);
  if (!large) return;
  on_large([&](const auto& exec) {
    detail::scan_counts_async(exec, task_count, task_start, items);
    detail::for_each_index_on(exec, 1, AddTotal{raw(total) + 1, raw(task_start) + items});
  });
  v.task_start = raw(task_start);
  if (owners) {
    on_large([&](const auto& exec) {
      thrust::fill_n(exec, task_owner.begin(), tasks, uint64_t(0));
      detail::for_each_index_on(exec, uint32_t(items),
                                detail::MarkTaskOwners{raw(task_start), tasks, raw(task_owner)});
      thrust::inclusive_scan(exec, task_owner.begin(), task_owner.begin() + tasks,
                             task_owner.begin(), MaxOf{});
    });
    v.task_owner = raw(task_owner);
  }
  if (shell_walks)
    emit_walk_pairs<detail::GroupLargeShellPairs, Dim>(side, tasks, v);
  else
    emit_walk_pairs<detail::GroupLargePairs, Dim>(side, tasks, v);
  if (side) side_stream.join();
}

}  // namespace nestsim::device

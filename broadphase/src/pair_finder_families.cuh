// The kernel families of the device broad phase that its orchestration (pair_finder.cu,
// hsx/search.cuh) calls, as declarations: each holds its buffers (the base class) and
// declares the entry point that launches its kernels, which hides the base's template
// and is defined in the family's own .cu with explicit instantiations for the precisions
// (and dimensions) that run. The orchestration's compile thus instantiates none of their
// kernels, and an edit to one family recompiles that family alone.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "common/buffers.cuh"
#include "common/host_stage.cuh"
#include "common/side_stream.cuh"
#include "common/sorted_grid.cuh"
#include "hsx/level_plan.cuh"
#include "hsx/shell_cells.cuh"
#include "nestsim/device/exec.cuh"

namespace nestsim::detail {

// The Thrust policy of the broad phase's default stream (exec.cuh, policy()): the
// policy the families below are instantiated for.
using DefaultPolicy = decltype(policy(std::declval<CachingAllocator&>()));

// The natural levels and their histogram (hsx/level_plan.cuh); hsx/levels.cu.
template <class Real>
struct LevelsFamily : LevelPlanner<Real> {
  LevelPlan plan_levels(const BodyArrays<Real>& in, uint32_t n, const PadSpace& space,
                        HostStage& stage, CachingAllocator& alloc);
};

// The bodies sorted into the groups' grids (common/sorted_grid.cuh); hsx/cell_sort.cu.
template <class Real>
struct CellSortFamily : SortedGrid<Real> {
  template <int Dim, class Policy>
  SortedBodies<Real> build(const Policy& exec, std::vector<GroupGrid>& host, const uint8_t* level,
                           LevelToGroup to_group, const BodyArrays<Real>& bodies, uint32_t n,
                           bool radix, const CellSortTuning& tuning, SideStream* side);
};

// The crowded cells of near-concentric shells (hsx/shell_cells.cuh); hsx/shell_cells.cu.
template <class Real>
struct ShellCellsFamily : ShellCells<Real> {
  template <class Policy>
  bool prepare(const Policy& exec, const std::vector<GroupGrid>& host, GroupGrid* groups,
               const SortedBodies<Real>& s, const Space<Real>& space, BodyRecord<Real>* records,
               const HsxTuning& t);
};

}  // namespace nestsim::detail

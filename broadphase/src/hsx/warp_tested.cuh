// The GPU's fused HSX walks with the warp sharing its work (warp_tested_items).
#pragma once
#include <cstdint>
#include <stdexcept>

#include "common/fused_pass.cuh"
#include "hsx/walks.cuh"
#include "nestsim/device/check.cuh"
#include "nestsim/tuning.h"

namespace nestsim::detail {

#if defined(NESTSIM_BACKEND_CUDA)
// Threads per block of warp_tested_items: 256 as for_each_bounded, 128 for double
// bodies, whose WarpShared would exceed the 48 KB of static shared memory of a block
// (the same warps per SM: twice the blocks).
template <class Real>
constexpr uint32_t kWarpBlockThreads = sizeof(Real) == 4 ? detail::kBoundedThreads
                                                         : detail::kBoundedThreads / 2;
// Resident blocks of 256 threads per SM asked of warp_tested_items (the register
// budget: 65536 / (256 k); 2, 3 and 5 are slower than 4 on the H100; docs/performance.md,
// "Four resident blocks per SM").
constexpr int kWalkMinBlocks = kPairMinBlocks;

// The fused pair pass of the HSX walks with the warp sharing its work (warp_ranges.cuh,
// WarpRanges; docs/performance.md, "Each warp's candidates tested by all its lanes" and
// "The warp walks its lanes' columns together"): each lane plans its item's walk; the
// columns of dense windows (`defer`) are numbered across the warp and each lane walks
// every 32nd of them (walk_warp_column); the bucket ranges kept on the way are numbered
// likewise and each lane tests every 32nd candidate against its owner's fields.
template <class Real, class Step, class Index>
__global__ void __launch_bounds__(kWarpBlockThreads<Real>,
                                  kWalkMinBlocks* detail::kBoundedThreads / kWarpBlockThreads<Real>)
    warp_tested_items(Index n, Step step, uint32_t slots, bool defer) {
  __shared__ detail::WarpShared<Real> shared[kWarpBlockThreads<Real> / 32];
  detail::WarpShared<Real>& w = shared[threadIdx.x >> 5];
  const Index i = Index(blockIdx.x) * kWarpBlockThreads<Real> + Index(threadIdx.x);
  const detail::AtomicEmitter e{step.sink};
  detail::WarpRanges<Real> ranges{&w, threadIdx.x & 31u, slots};
  ranges.defer = defer;
  if (i < n) step.walk_with(i, e, ranges);
  if (defer) {
    const uint32_t lane = detail::lane_now(0);  // read again: not kept live across the walk
    const uint32_t columns = ranges.columns;
    const uint32_t end = detail::warp_inclusive_sum(columns, lane);
    const uint32_t total = __shfl_sync(0xffffffffu, end, 31);
    if (total > 0) {
      w.offset[lane] = end - columns;
      __syncwarp();
      // Column j belongs to the last lane whose offset is <= j.
      for (uint32_t j = lane; j < total; j += 32) {
        const uint32_t l = detail::warp_lane_of(w.offset, j);
        detail::walk_warp_column<Real, Step::dim>(step.v.s, step.v.space, w, ranges, e, l,
                                                  j - w.offset[l]);
      }
      __syncwarp();  // the offsets are numbered again below
    }
  }
  const uint32_t lane = detail::lane_now(0);
  const uint32_t end = detail::warp_inclusive_sum(ranges.sum, lane);
  const uint32_t total = __shfl_sync(0xffffffffu, end, 31);
  w.offset[lane] = end - ranges.sum;
  __syncwarp();
  for (uint32_t j = lane; j < total; j += 32) {
    uint32_t owner = 0;
    const uint32_t t = detail::warp_candidate(w, j, owner);
    detail::test_for_owner(step.v.s, step.v.space, w.owner[owner], t, e);
  }
}

template <class Real, class Step, class Index>
void launch_warp_tested(Index n, const Step& step, cudaStream_t stream, const HsxTuning& t) {
  constexpr uint32_t threads = kWarpBlockThreads<Real>;
  const uint64_t blocks = (uint64_t(n) + threads - 1) / threads;
  if (blocks >= (uint64_t(1) << 31))
    throw std::length_error("nestsim: too many items for one launch");
  warp_tested_items<Real>
      <<<unsigned(blocks), threads, 0, stream>>>(n, step, t.warp_slots, t.warp_columns);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}

#endif

}  // namespace nestsim::detail

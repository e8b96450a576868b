// The index loops of the device steps: generic (for_each_index), and bounded to a
// register budget for the heavy pair steps (for_each_bounded); warp sums.
#pragma once
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>
#include <stdexcept>

#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"

namespace nestsim::detail {

// f(i) for i in [0, n), on the default stream (nosync) or with the given policy (a
// stream of its own: SideStream); on the CPU through on_items_on (exec.cuh): teams that
// follow the free cores, the calling thread alone below serial_items().
template <class Policy, class F, class Index>
void for_each_index_on(const Policy& exec, Index n, F f) {
  if (n == 0) return;
  on_items_on(exec, uint64_t(n), [&](const auto& e) {
    thrust::for_each_n(e, thrust::counting_iterator<Index>(0), n, f);
  });
}
// On the default stream: on the GPU through launch_items (exec.cuh), one item per thread.
template <class F, class Index>
void for_each_index(Index n, F f) {
#if defined(NESTSIM_BACKEND_CUDA)
  launch_items(n, f);
#else
  for_each_index_on(nosync(), n, f);
#endif
}


#if defined(NESTSIM_BACKEND_CUDA)
constexpr int kBoundedThreads = 256;

template <int MinBlocks, class F, class Index>
__global__ void __launch_bounds__(kBoundedThreads, MinBlocks) bounded_items(Index n, F f) {
  const Index i = Index(blockIdx.x) * kBoundedThreads + Index(threadIdx.x);
  if (i < n) f(i);
}
#endif

// The index loop for the heavy pair steps: on the GPU one item per thread, with at
// least MinBlocks blocks of 256 threads resident per SM, which caps the registers at
// 65536 / (256 MinBlocks) (thrust's loop gives the pair walks 80 registers and 37.5%
// occupancy; docs/performance.md, "Four resident blocks per SM"). On the CPU the generic
// loop.
template <int MinBlocks, class F, class Index>
void for_each_bounded(Index n, F f) {
#if defined(NESTSIM_BACKEND_CUDA)
  if (n == 0) return;
  const uint64_t blocks = (uint64_t(n) + kBoundedThreads - 1) / kBoundedThreads;
  if (blocks >= (uint64_t(1) << 31))
    throw std::length_error("nestsim: too many items for one launch");
  bounded_items<MinBlocks><<<unsigned(blocks), kBoundedThreads>>>(n, f);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
#else
  for_each_index(n, f);
#endif
}

#if defined(NESTSIM_BACKEND_CUDA)
// Inclusive sum of v over the warp's lanes (every lane of the warp calls it).
__device__ inline uint32_t warp_inclusive_sum(uint32_t v, uint32_t lane) {
  for (uint32_t d = 1; d < 32; d <<= 1) {
    const uint32_t below = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += below;
  }
  return v;
}
#endif

}  // namespace nestsim::detail

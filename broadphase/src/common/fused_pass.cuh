// The launches of the pair steps: bounded on the GPU, chunks into per-thread vectors
// on the CPU (the fused pass).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/loops.cuh"
#include "common/pair_sink.cuh"

namespace nestsim::detail {

// Resident blocks of 256 threads per SM asked of the fused pair steps on the GPU
// (loops.cuh, for_each_bounded; docs/performance.md, "Four resident blocks per SM"). A
// launch bound, so a compile-time constant.
constexpr int kPairMinBlocks = 4;
template <class F, class Index>
void launch_pair_step(Index n, F f) {
  for_each_bounded<kPairMinBlocks>(n, f);
}


#if !defined(NESTSIM_BACKEND_CUDA)
// The fused pair pass on the CPU (20-28% faster on 2 cores; docs/performance.md, "The
// CPU's fused pair pass"): instead of count -> scan -> write, which walks every item that
// has pairs twice, chunks of items walk once into a vector of their own and append it
// after the running total with one atomic add per chunk (GPU: one per warp,
// pair_sink.cuh, run_pair_step). Places depend on timing; HSX sorts the pairs afterwards.
constexpr uint64_t kFusedChunk = 512;

struct VectorEmitter {
  std::vector<uint64_t>& pairs;
  void emit(uint32_t a, uint32_t b) { pairs.push_back(device::pair_key(a, b)); }
};

template <class Step, class Index>
struct FusedChunk {
  Step step;
  Index items;
  PairSink sink;
  void operator()(uint64_t chunk) const {
    thread_local std::vector<uint64_t> pairs;  // one per thread, kept across chunks and calls
    pairs.clear();
    VectorEmitter e{pairs};
    const uint64_t first = chunk * kFusedChunk;
    const uint64_t last = std::min<uint64_t>(first + kFusedChunk, uint64_t(items));
    for (uint64_t i = first; i < last; ++i) step.walk(Index(i), e);
    if (pairs.empty()) return;
    const uint64_t place = detail::reserve_places(sink.total, pairs.size());
    for (std::size_t k = 0; k < pairs.size() && place + k < sink.capacity; ++k)
      sink.out[place + k] = pairs[k];
  }
};
#endif

}  // namespace nestsim::detail

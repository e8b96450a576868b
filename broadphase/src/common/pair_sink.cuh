// Where a pair step puts its pairs (PairSink) and how one item's step runs in the
// counting, writing or fused pass (run_pair_step); the exact test, equation (3).
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#endif
#include "nestsim/device/pair_finder.cuh"
#include "nestsim/predicates.h"

namespace nestsim::detail {

// Where a pair step puts its result. Two ways, chosen per find():
//  - count -> scan -> write (section 4.2): the counting pass stores each item's count,
//    the writing pass its pairs at `offsets` (plus `base`, a running total on the
//    device, so that the steps of one find() append to one buffer without the host
//    learning each step's total);
//  - fused (`total` set; the CUDA backend's HSX): one pass; each item keeps its first
//    kPairBuffer pairs in a local buffer, reserves its place with one atomic add per
//    warp on `total`, and copies them out (or, with more pairs, walks again writing).
//    Places depend on timing; the final sort makes the output deterministic.
// A pair whose place is at or beyond `capacity` is dropped: the caller sees the total
// exceed the capacity, grows the buffer and runs again.
template <bool Write>
struct PairEmitter {
  uint64_t* out;
  uint64_t next;
  uint64_t capacity;
  NESTSIM_HD void emit(uint32_t a, uint32_t b) {
    if (Write && next < capacity) out[next] = device::pair_key(a, b);
    ++next;
  }
};

constexpr uint32_t kPairBuffer = 8;

struct BufferEmitter {
  uint64_t buffer[kPairBuffer];
  uint64_t next = 0;
  NESTSIM_HD void emit(uint32_t a, uint32_t b) {
    if (next < kPairBuffer) buffer[next] = device::pair_key(a, b);
    ++next;
  }
};

// Reserves `count` places after *total; returns the first. On the GPU the threads of a
// warp that reserve together add once (coalesced group scan).
NESTSIM_HD inline uint64_t reserve_places(unsigned long long* total, uint64_t count) {
#if defined(__CUDA_ARCH__)
  namespace cg = cooperative_groups;
  const cg::coalesced_group g = cg::coalesced_threads();
  const unsigned long long mine = count;
  const unsigned long long before = cg::exclusive_scan(g, mine);
  unsigned long long first = 0;
  if (g.thread_rank() == g.size() - 1) first = atomicAdd(total, before + mine);
  first = g.shfl(first, g.size() - 1);
  return first + before;
#else
  return atomic_fetch_add(total, static_cast<unsigned long long>(count));
#endif
}

struct PairSink {
  uint64_t* counts = nullptr;         // counting pass
  const uint64_t* offsets = nullptr;  // writing pass: items + 1 entries
  uint64_t* out = nullptr;            // writing pass, fused pass
  const uint64_t* base = nullptr;     // writing pass, optional
  unsigned long long* total = nullptr;  // fused pass
  uint64_t capacity = ~uint64_t(0);

  // Writing pass: true when the item found no pair in the counting pass.
  NESTSIM_HD bool nothing_at(uint64_t item) const { return offsets[item + 1] == offsets[item]; }
  template <bool Write>
  NESTSIM_HD PairEmitter<Write> emitter(uint64_t item) const {
    return PairEmitter<Write>{out, Write ? (base ? *base : 0) + offsets[item] : 0, capacity};
  }
};

// Runs step.walk(item, emitter) in the pass the sink and Write ask for.
template <bool Write, class Step, class Index>
NESTSIM_HD inline void run_pair_step(const Step& step, Index item, const PairSink& sink) {
  if (Write) {
    if (sink.nothing_at(item)) return;
    PairEmitter<true> e = sink.template emitter<true>(item);
    step.walk(item, e);
    return;
  }
  if (!sink.total) {
    PairEmitter<false> e{nullptr, 0, 0};
    step.walk(item, e);
    sink.counts[item] = e.next;
    return;
  }
  BufferEmitter e;
  step.walk(item, e);
  if (e.next == 0) return;
  const uint64_t first = reserve_places(sink.total, e.next);
  if (first >= sink.capacity) return;  // counting only, or the buffer is full
  if (e.next <= kPairBuffer) {
    for (uint64_t k = 0; k < e.next; ++k)
      if (first + k < sink.capacity) sink.out[first + k] = e.buffer[k];
  } else {
    PairEmitter<true> w{sink.out, first, sink.capacity};
    step.walk(item, w);
  }
}

// The exact test, equation (3); solid mode reaches here with thickness == radius.
template <class Real>
NESTSIM_HD inline bool exact_pair(const Space<Real>& space, const Real* pa, Real ra, Real qa,
                                  const Real* pb, Real rb, Real qb) {
  return hsx_intersect(space.distance2(pa, pb), ra, qa, rb, qb);
}

}  // namespace nestsim::detail

// The GPU's fused pair pass with each warp's candidates tested by all its lanes: the
// ranges and deferred columns a lane keeps in shared memory, and their numbering.
#pragma once
#include <cstdint>

#include "common/test_against.cuh"

namespace nestsim::detail {

// The GPU's fused pair pass with the candidates tested by the whole warp
// (docs/performance.md, "Each warp's candidates tested by all its lanes"). A walk's
// bucket ranges differ in number and length from lane to lane, so a warp whose lanes each
// test their own ranges runs with a few lanes active (measured: 10.7 of 32 in the
// small-small walk, 3 in its candidate loop). Here each lane walks its own window but
// keeps its first kWarpSlots non-empty ranges in shared memory (later ones, and the cells
// of hashed grids, it tests itself); then the warp numbers all the kept candidates and
// each lane tests every 32nd of them, against the owner's fields, also kept in shared
// memory.
constexpr uint32_t kWarpSlots = 8;

template <class Real>
struct WarpOwner {  // what a candidate is tested against
  Real pa[3], ra, qa;
  uint32_t id, self, only_smaller;
};

// A window's dense columns, deferred by the walk of one lane so that the whole warp
// walks them (docs/performance.md, "The warp walks its lanes' columns together"): the
// plan's cells (unwrapped; a dense table has fewer
// than 2^31 cells on each axis), the reach, and columns [c0, c0 + columns) of it.
template <class Real>
struct ColumnJob {
  int32_t lo[3], hi[3];
  Real outer, inner;
  uint32_t first;    // candidates from this sorted position on
  uint32_t group;    // the group whose grid the columns are in
  uint32_t c0, columns;
  uint32_t own;      // the owner's cell (dense: below 2^31) for the row skip; ~0: no skip
};
constexpr uint32_t kNoRowSkip = ~uint32_t(0);

template <class Real>
struct WarpShared {  // one warp's shared memory; slot arrays [slot][lane]: no bank conflicts
  WarpOwner<Real> owner[32];
  uint32_t begin[kWarpSlots][32];  // first sorted position of a range
  uint32_t end_sum[kWarpSlots][32];  // the lane's candidates up to the end of this range
  uint8_t slot_owner[kWarpSlots][32];  // the lane whose body the range is tested against
  uint32_t offset[32];  // the lane's first candidate (or column) in the warp's numbering
  ColumnJob<Real> job[32];
};

template <class Test, class Real>
struct RangeSlots;

// The wrapper a walk calls with its TestAgainst: records the owner, returns the
// collector of its ranges.
// The calling thread's lane, read from the special register at each use: a volatile
// read that the compiler neither hoists nor keeps, so that the lane is not one more
// value live across the whole walk, which would be spilled to the stack
// (docs/performance.md, "Two values fewer in the walks' stack frame").
NESTSIM_HD inline uint32_t lane_now(uint32_t host_lane) {
#if defined(__CUDA_ARCH__)
  (void)host_lane;
  uint32_t l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
#else
  return host_lane;
#endif
}

template <class Real>
struct WarpRanges {
  WarpShared<Real>* w;
  uint32_t lane;  // lane_now(lane): the lane
  uint32_t limit = kWarpSlots;  // ranges kept at most (fewer: the tests' overflow case)
  bool defer = true;   // dense windows' columns deferred to the warp (walk_warp_column)
  uint32_t count = 0;  // ranges kept
  uint32_t sum = 0;    // their candidates
  uint32_t columns = 0;  // columns deferred (w->job[lane])
  // Keeps the range [t, end) of candidates for the body of lane `owner`; false when the
  // slots are full (the caller tests it).
  NESTSIM_HD bool keep(uint32_t t, uint32_t end, uint32_t owner) {
    // 32 lanes' sums stay below 2^32 (a direct walk may cover a whole group).
    if (count >= limit || end - t > (uint32_t(1) << 26)) return false;
    sum += end - t;
    const uint32_t me = lane_now(lane);
    w->begin[count][me] = t;
    w->end_sum[count][me] = sum;
    w->slot_owner[count][me] = uint8_t(owner);
    ++count;
    return true;
  }
  // Defers columns [c0, c0 + n) of plan p (dense grid of group `group`).
  template <class T>
  NESTSIM_HD void defer_columns(const LargePlan& p, T outer, T inner, uint32_t first,
                                uint32_t group, uint64_t c0, uint64_t n, uint32_t own) {
    ColumnJob<Real>& j = w->job[lane_now(lane)];
    for (int a = 0; a < 3; ++a) {
      j.lo[a] = int32_t(p.lo[a]);
      j.hi[a] = int32_t(p.hi[a]);
    }
    j.outer = outer;
    j.inner = inner;
    j.first = first;
    j.group = group;
    j.c0 = uint32_t(c0);
    j.columns = uint32_t(n);
    j.own = own;
    columns = uint32_t(n);
  }
  template <class Test>
  NESTSIM_HD RangeSlots<Test, Real> operator()(Test& test) {
    WarpOwner<Real>& o = w->owner[lane_now(lane)];
    for (int a = 0; a < 3; ++a) o.pa[a] = test.pa[a];
    o.ra = test.ra;
    o.qa = test.qa;
    o.id = test.id_a;
    o.self = test.self;
    o.only_smaller = Test::only_smaller ? 1u : 0u;
    return RangeSlots<Test, Real>{test, *this};
  }
};

template <class Test, class Real>
struct RangeSlots {
  Test& test;
  WarpRanges<Real>& slots;
  NESTSIM_HD void operator()(uint32_t t) { test(t); }  // hashed cells: tested here
  NESTSIM_HD void range(uint32_t t, uint32_t end) {
    if (!slots.keep(t, end, lane_now(slots.lane))) test.range(t, end);
  }
  // Whether the walk hands the columns of a dense window to the warp (defer_columns).
  // (A dense table below 2^30 cells: its cells and keys fit ColumnJob's 32 bits; at
  // most 2^26 columns per lane: the warp's sum of them fits 32 bits.)
  NESTSIM_HD bool defers(const GridSpec& g, uint64_t columns) const {
    return slots.defer && g.dense && g.table_size < (uint64_t(1) << 30) &&
           columns <= (uint64_t(1) << 26);
  }
  template <class T>
  NESTSIM_HD void defer_columns(const LargePlan& p, T outer, T inner, uint32_t first,
                                uint32_t group, uint64_t c0, uint64_t n, uint32_t own) {
    slots.defer_columns(p, outer, inner, first, group, c0, n, own);
  }
};

// Appends each pair at once, one atomic per group of lanes that emit together.
struct AtomicEmitter {
  unsigned long long* total;
  uint64_t* out;
  uint64_t capacity;
  NESTSIM_HD explicit AtomicEmitter(const PairSink& sink)
      : total(sink.total), out(sink.out), capacity(sink.capacity) {}
  NESTSIM_HD void emit(uint32_t a, uint32_t b) const {
    const uint64_t place = reserve_places(total, 1);
    if (place < capacity) out[place] = device::pair_key(a, b);
  }
};

// The warp's kept candidates, numbered lane by lane: candidate j belongs to the last
// lane whose offset is <= j (lanes without candidates share the next lane's offset, so
// the last such lane has some), then to the first of its ranges whose running sum
// exceeds j's rank in the lane.
// The last lane whose offset is <= j, by a 5-step search (offsets ascend with the lane);
// numbers candidates here and deferred columns in warp_tested_items.
NESTSIM_HD inline uint32_t warp_lane_of(const uint32_t* offset, uint32_t j) {
  uint32_t l = 0;
  for (uint32_t step = 16; step; step >>= 1)
    if (offset[l + step] <= j) l += step;
  return l;
}
template <class Real>
NESTSIM_HD inline uint32_t warp_candidate(const WarpShared<Real>& w, uint32_t j, uint32_t& owner) {
  const uint32_t l = warp_lane_of(w.offset, j);
  const uint32_t rank = j - w.offset[l];
  uint32_t k = 0;
  while (w.end_sum[k][l] <= rank) ++k;
  owner = w.slot_owner[k][l];
  return w.begin[k][l] + rank - (k ? w.end_sum[k - 1][l] : 0u);
}

// Candidate t (sorted position) against its owner's fields: TestAgainst's test, with
// the larger-side filter as the owner's flag.
template <class Real, class Emitter>
NESTSIM_HD inline void test_for_owner(const SortedBodies<Real>& s, const Space<Real>& space,
                                      const WarpOwner<Real>& o, uint32_t t, Emitter& e) {
  Real pb[3] = {0, 0, 0};
  const Real rb = s.load(t, pb);
  if (o.only_smaller && larger_side_skips(rb, o.ra, t, o.self)) return;
  if (exact_pair(space, o.pa, o.ra, o.qa, pb, rb, s.thickness(t))) e.emit(o.id, s.id(t));
}

}  // namespace nestsim::detail

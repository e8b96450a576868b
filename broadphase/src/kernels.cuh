// Functors of the broad phase: one per step of Algorithm 1 of the HSX paper (Köster,
// Perumalla, Uhrmacher 2017; docs/design.md), each run by one
// thrust::for_each over bodies, cells or tasks. Every pair step comes in a counting
// and a writing flavour (section 4.2: count -> prefix sum -> write).
#pragma once
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#endif

#include "grid.cuh"
#include "nestsim/device/pair_finder.cuh"
#include "nestsim/device/pairwise.cuh"
#include "nestsim/predicates.h"

namespace nestsim::detail {

// Bodies in structure-of-arrays form with their original ids.
template <class Real>
struct BodyArrays {
  const Real* pos[3] = {nullptr, nullptr, nullptr};
  const Real* radius = nullptr;
  const Real* thickness = nullptr;
  const uint32_t* id = nullptr;  // nullptr: id == index

  NESTSIM_HD uint32_t id_of(uint32_t k) const { return id ? id[k] : k; }
  NESTSIM_HD void load(uint32_t k, int dim, Real* p) const {
    NESTSIM_AXES(a, dim) p[a] = pos[a][k];
  }
};

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

// ---------------------------------------------------------------------------------
// Brute force: item i tests every j in (i, end). The reference, and the last step of
// the HSX algorithm when few large bodies remain (section 5.8).
template <class Real, int Dim, bool Write>
struct BrutePairs {
  BodyArrays<Real> bodies;
  Space<Real> space;
  uint32_t begin, end;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t item) const { run_pair_step<Write>(*this, item, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t item, Emitter& e) const {
    const uint32_t i = begin + item;
    Real pi[3] = {0, 0, 0}, pj[3] = {0, 0, 0};
    bodies.load(i, Dim, pi);
    const Real ri = bodies.radius[i], qi = bodies.thickness[i];
    const uint32_t id_i = bodies.id_of(i);
    for (uint32_t j = i + 1; j < end; ++j) {
      bodies.load(j, Dim, pj);
      if (exact_pair(space, pi, ri, qi, pj, bodies.radius[j], bodies.thickness[j]))
        e.emit(id_i, bodies.id_of(j));
    }
  }
};

// All pairs by the balanced circular schedule (pairwise seed, section IV, Algorithm 4;
// device::CircularSchedule): item i tests body i against (i + s) mod n for
// s = 1 .. steps(i, n), the same work for every item. HSX's path for small n on the CPU
// (BroadphaseOptions::hsx_small_n; the GPU's is tiled, pair_finder.cu); bodies in index
// order.
template <class Real, int Dim, bool Write>
struct CircularPairs {
  BodyArrays<Real> bodies;
  Space<Real> space;
  uint32_t n;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t item) const { run_pair_step<Write>(*this, item, sink); }

  template <class Emitter>
  struct Test {  // the schedule's visitor: the exact test, i's fields loaded once
    const CircularPairs& step;
    Emitter& e;
    Real pi[3], ri, qi;
    NESTSIM_HD void operator()(uint32_t i, uint32_t j) {
      Real pj[3] = {0, 0, 0};
      step.bodies.load(j, Dim, pj);
      if (exact_pair(step.space, pi, ri, qi, pj, step.bodies.radius[j], step.bodies.thickness[j]))
        e.emit(i, j);
    }
  };
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t i, Emitter& e) const {
    Test<Emitter> test{*this, e, {0, 0, 0}, bodies.radius[i], bodies.thickness[i]};
    bodies.load(i, Dim, test.pi);
    device::CircularSchedule{n}.visit(i, test);
  }
};

// ---------------------------------------------------------------------------------
// A small body's centre and radius in one aligned load (16 bytes in float): the pair
// steps read them for every candidate (docs/perf-log.md, "HSX without host round
// trips").
template <class Real>
struct alignas(4 * sizeof(Real)) PackedBody {
  Real x, y, z, r;  // z = 0 in 2D
};

// The cell grid of one or more groups of levels, in one table: every body sorted by
// (group, bucket) (device_util.cuh, SortedGrid). HSX puts each group of levels in its
// own grid, all sorted at once with one pair pass for all groups (cheaper than a sort and
// a pass per level; docs/perf-log.md, "all groups of levels in one counting sort");
// grid_uniform has one group.
struct GroupGrid {
  GridSpec grid;
  uint64_t bucket_base = 0;      // the group's first bucket in the shared table
  uint64_t item_base = 0;        // its first large item (large body, this group)
  uint32_t begin = 0, end = 0;   // its bodies, in sorted order
  double reach = 0;              // bound on a member's radius (d / 2)
  int brute = 0;                 // members tested all against all (section 5.8)
  int larger_side = 0;           // small-small pairs found from the larger member
  TaskSize task;                 // work of one large-body task in this group's grid
};

// The group of a level: groups are runs of levels in order, so it is the number of
// group tops below the level (the brute-force group, always last, has no top bit),
// capped at the last group. A bit mask instead of a table: a table indexed per body
// would sit in each GPU thread's local memory.
struct LevelToGroup {
  uint64_t tops = 0;  // bit k: level k is the top of a (non-brute) group
  uint8_t last = 0;   // index of the last group
  NESTSIM_HD uint8_t operator()(uint8_t level) const {
    const uint64_t below = tops & ((uint64_t(1) << level) - 1);
#if defined(__CUDA_ARCH__)
    const int g = __popcll(below);
#else
    const int g = __builtin_popcountll(below);
#endif
    return static_cast<uint8_t>(g < last ? g : last);
  }
};

// A body as the sort moves it and the pair steps read it: what they test, and its cell
// key, in one aligned record (32 bytes in float: one memory sector), written in the
// caller's order by BinGroups and placed (counting sort) or gathered (radix sort) into
// sorted order, where the walks read it: a candidate's centre, radius, thickness and id
// in one sector (docs/perf-log.md, "records, bounded launches" and "records read in
// place").
template <class Real>
struct alignas(8 * sizeof(Real)) BodyRecord {
  PackedBody<Real> packed;
  Real thickness;
  uint32_t id;
  uint64_t key;  // linear cell index in its group's grid
};

// Bodies sorted by (group, bucket), as the pair steps read them.
template <class Real>
struct SortedBodies {
  const GroupGrid* groups = nullptr;
  uint32_t group_count = 1;
  const BodyRecord<Real>* record = nullptr;  // in sorted order
  const uint32_t* bucket_start = nullptr;    // shared table, table size + 1 entries

  NESTSIM_HD Real load(uint32_t t, Real* p) const {
    const PackedBody<Real> b = record[t].packed;
    p[0] = b.x;
    p[1] = b.y;
    p[2] = b.z;
    return b.r;
  }
  NESTSIM_HD Real thickness(uint32_t t) const { return record[t].thickness; }
  NESTSIM_HD uint32_t id(uint32_t t) const { return record[t].id; }  // in the caller's order
  NESTSIM_HD uint64_t key(uint32_t t) const { return record[t].key; }
  // The group of sorted position t: the first whose range ends after it.
  NESTSIM_HD uint32_t group(uint32_t t) const {
    uint32_t g = 0;
    while (g + 1 < group_count && t >= groups[g].end) ++g;
    return g;
  }
};

// Visits the bodies of a run of cells along axis 0 of a group's grid (cells c[1..]
// fixed, wrapped; [lo, hi] unwrapped), from sorted position `first` on: one bucket
// range per piece when the grid is dense (consecutive x cells are consecutive buckets),
// else one hashed look-up per cell with the cell check.
template <class Real, class Body>
NESTSIM_HD inline void for_each_in_run(const SortedBodies<Real>& s, const GroupGrid& grp,
                                       const long long* c, long long lo, long long hi,
                                       uint32_t first, Body& body) {
  const GridSpec& g = grp.grid;
  const uint32_t* start = s.bucket_start + grp.bucket_base;
  if (g.dense) {
    struct Piece {
      const GridSpec& g;
      const uint32_t* start;
      const long long* c;
      uint32_t first;
      Body& body;
      NESTSIM_HD void operator()(long long a, long long b) {
        const long long row[3] = {0, c[1], c[2]};
        const uint64_t base = g.linear(row);
        uint32_t t = start[base + uint64_t(a)];
        const uint32_t t_end = start[base + uint64_t(b) + 1];
        if (t < first) t = first;
        if (t < t_end) body.range(t, t_end);
      }
    } piece{g, start, c, first, body};
    for_each_run_piece(g, lo, hi, piece);
    return;
  }
  long long cell[3] = {0, c[1], c[2]};
  for (long long x = lo; x <= hi; ++x) {
    cell[0] = g.home(x, 0);
    const uint64_t lin = g.linear(cell);
    const uint64_t bucket = g.bucket(lin);
    uint32_t t = start[bucket];
    const uint32_t t_end = start[bucket + 1];
    if (t < first) t = first;
    for (; t < t_end; ++t)
      if (s.key(t) == lin) body(t);
  }
}

// Section 4.1, step 2, for all groups at once: each body finds its group (from its
// natural level), the cell of its centre in that group's grid, and (counting sort) a
// rank in its bucket; bucket_count == nullptr for the radix sort, which needs no rank.
template <class Real, int Dim>
struct BinGroups {
  const GroupGrid* groups;
  const uint8_t* level;  // natural level per body; nullptr: one group
  LevelToGroup to_group;
  BodyArrays<Real> bodies;
  uint32_t* bucket_count;
  uint32_t* bucket_of;
  uint32_t* rank;
  BodyRecord<Real>* record;

  NESTSIM_HD void operator()(uint32_t k) const {
    const uint8_t g = level ? to_group(level[k]) : uint8_t(0);
    const GridSpec& grid = groups[g].grid;
    Real p[3] = {0, 0, 0};
    bodies.load(k, Dim, p);
    long long c[3] = {0, 0, 0};
    NESTSIM_UNROLL for (int a = 0; a < Dim; ++a)
      c[a] = grid.home(grid.raw_coord(double(p[a]), a), a);
    const uint64_t lin = grid.linear(c);
    const uint32_t b = static_cast<uint32_t>(groups[g].bucket_base + grid.bucket(lin));
    record[k] = BodyRecord<Real>{PackedBody<Real>{p[0], p[1], p[2], bodies.radius[k]},
                                 bodies.thickness[k], bodies.id_of(k), lin};
    bucket_of[k] = b;
    if (bucket_count) rank[k] = atomic_fetch_add(&bucket_count[b], 1u);  // else radix-sorted
  }
};

// Section 4.1, step 4 (counting sort): each body's record goes to its place, bucket
// start + rank: one coalesced read and one scattered sector write per body. Building
// the record here from the caller's arrays instead (no record in the caller's order)
// is slower on the H100 (place 71 -> 93 us at 1e6, bin 41 -> 26 us; docs/perf-log.md,
// "records placed from the caller's arrays rejected").
template <class Real>
struct PlaceSorted {
  const uint32_t* bucket_of;
  const uint32_t* rank;
  const uint32_t* bucket_start;
  const BodyRecord<Real>* record;
  BodyRecord<Real>* sorted;
  NESTSIM_HD void operator()(uint32_t k) const {
    sorted[bucket_start[bucket_of[k]] + rank[k]] = record[k];
  }
};

// PlaceSorted's destinations as a permutation, source_of[position] = body, for
// GatherSorted: 4-byte scatters and a gather of records instead of 32-byte scatters
// (docs/perf-log.md, "the counting sort's records moved by a gather").
struct PlaceSources {
  const uint32_t* bucket_of;
  const uint32_t* rank;
  const uint32_t* bucket_start;
  uint32_t* source_of;
  NESTSIM_HD void operator()(uint32_t k) const {
    source_of[bucket_start[bucket_of[k]] + rank[k]] = k;
  }
};

// The radix sort's bucket table in one pass over the sorted buckets (one pass instead of
// a zero fill, marked ends and a running maximum over the table; docs/perf-log.md, "the
// bucket table"): entry b is the first sorted position whose bucket is >= b, so position
// i (0 <= i <= n) writes the entries from the previous position's bucket + 1 to its own
// (position n: to the table's end), each entry once. A run longer than `long_run` entries
// (an empty stretch of cells) is recorded in `runs` instead, for the GPU's
// long_bucket_runs (the CPU sets no limit): no thread writes more than long_run entries.
// `runs` has room for every such run ((table + 1) / (long_run + 1) + 1 entries);
// *run_count is zeroed before.
struct BucketRun {
  uint32_t first, last, position;  // entries [first, last] start at `position`
};
struct BucketRunStarts {
  const uint32_t* sorted_bucket;
  uint32_t n;
  uint32_t table;  // buckets (the table has table + 1 entries)
  uint32_t long_run;
  uint32_t* bucket_start;
  BucketRun* runs;
  uint32_t* run_count;
  // The entries position i writes itself, from `first` on.
  NESTSIM_HD uint32_t entries(uint32_t i, uint32_t& first) const {
    first = i == 0 ? 0u : sorted_bucket[i - 1] + 1;
    const uint32_t last = i == n ? table : sorted_bucket[i];
    if (last < first) return 0;
    if (last - first >= long_run) {
      runs[atomic_fetch_add(run_count, 1u)] = BucketRun{first, last, i};
      return 0;
    }
    return last - first + 1;
  }
  NESTSIM_HD void operator()(uint64_t i) const {
    uint32_t first = 0;
    const uint32_t count = entries(uint32_t(i), first);
    for (uint32_t k = 0; k < count; ++k) bucket_start[first + k] = uint32_t(i);
  }
};

// The radix sort's step 4: each sorted place gathers its body's record.
template <class Real>
struct GatherSorted {
  const BodyRecord<Real>* record;
  const uint32_t* source_of;
  BodyRecord<Real>* sorted;
  NESTSIM_HD void operator()(uint32_t dst) const { sorted[dst] = record[source_of[dst]]; }
};

// The larger-side rule's filter: body a (radius ra, sorted position self) skips a
// partner larger than itself and, among equal radii, one sorted before it.
template <class Real>
NESTSIM_HD inline bool larger_side_skips(Real rb, Real ra, uint32_t t, uint32_t self) {
  return rb > ra || (rb == ra && t <= self);
}

// The exact test of sorted body t against a fixed body a, emitting (id_a, id[t]).
// OnlySmaller: a tests only partners no larger than itself, ties only those sorted
// after it (GroupSmallPairs, larger side); a parameter, not a flag, so that the other
// walks test nothing more per candidate (measured on the CPU; docs/perf-log.md).

template <class Real, class Emitter, bool OnlySmaller = false>
struct TestAgainst {
  static constexpr bool only_smaller = OnlySmaller;
  const SortedBodies<Real>& s;
  const Space<Real>& space;
  Real pa[3], ra, qa;
  uint32_t id_a;
  Emitter& e;
  // No periodic axis (set once per walk): the distance needs no minimum image.
  bool open = space.edge[0] == Real(0) && space.edge[1] == Real(0) && space.edge[2] == Real(0);
  uint32_t self = 0;  // a's sorted position (OnlySmaller)
  NESTSIM_HD void operator()(uint32_t t) {
    Real pb[3] = {0, 0, 0};
    const Real rb = s.load(t, pb);
    if constexpr (OnlySmaller) {
      if (larger_side_skips(rb, ra, t, self)) return;
    }
#if !defined(__CUDA_ARCH__)
    // The CPU's hot loop (docs/perf-log.md, "CPU: the candidate test"): without the
    // per-axis dimension and periodic branches of Space::distance2. The same sums in the
    // same order: z is 0 for both bodies in 2D, and adding a square of +0 changes nothing.
    if (open) {
      const Real dx = sub_rn(pa[0], pb[0]), dy = sub_rn(pa[1], pb[1]), dz = sub_rn(pa[2], pb[2]);
      const Real d2 = add_rn(add_rn(mul_rn(dx, dx), mul_rn(dy, dy)), mul_rn(dz, dz));
      if (hsx_intersect(d2, ra, qa, rb, s.thickness(t))) e.emit(id_a, s.id(t));
      return;
    }
#endif
    if (exact_pair(space, pa, ra, qa, pb, rb, s.thickness(t))) e.emit(id_a, s.id(t));
  }
  // Sorted positions [t, end) of one bucket range.
  NESTSIM_HD void range(uint32_t t, uint32_t end) {
    for (; t < end; ++t) (*this)(t);
  }
  // A walk that tests its own candidates walks its own columns (WarpRanges defers them).
  NESTSIM_HD bool defers(const GridSpec&, uint64_t) const { return false; }
  template <class T>
  NESTSIM_HD void defer_columns(const LargePlan&, T, T, uint32_t, uint32_t, uint64_t, uint64_t,
                                uint32_t) {}
};

// The walks' candidate consumer as it is: each walk tests its own candidates (the CPU's
// fused chunks, and the GPU with NESTSIM_HSX_WARP_TESTS=0). The GPU's warp-tested pass
// wraps it instead (WarpRanges: ranges collected, tested by the whole warp).
struct OwnTests {
  template <class Test>
  NESTSIM_HD Test& operator()(Test& test) const {
    return test;
  }
};

// ---------------------------------------------------------------------------------
// The GPU's fused pair pass with the candidates tested by the whole warp
// (docs/perf-log.md, "each warp's candidates tested by all its lanes"). A walk's bucket
// ranges differ in number and length from lane to lane, so a warp whose lanes each test
// their own ranges runs with a few lanes active (measured: 10.7 of 32 in the small-small
// walk, 3 in its candidate loop). Here each lane walks its own window but keeps its first
// kWarpSlots non-empty ranges in shared memory (later ones, and the cells of hashed
// grids, it tests itself); then the warp numbers all the kept candidates and each lane
// tests every 32nd of them, against the owner's fields, also kept in shared memory.
constexpr uint32_t kWarpSlots = 8;

template <class Real>
struct WarpOwner {  // what a candidate is tested against
  Real pa[3], ra, qa;
  uint32_t id, self, only_smaller;
};

// A window's dense columns, deferred by the walk of one lane so that the whole warp
// walks them (docs/perf-log.md, "the warp walks its lanes' columns together"): the plan's
// cells (unwrapped; a dense table has fewer
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
// (docs/perf-log.md, "two values fewer in the walks' stack frame").
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

// The solid uniform grid's step (grid_uniform, solid_grids.cu; in the style of fast
// fixed-radius nearest neighbours): pairs from the Moore neighbourhood (27 cells in
// 3D, 9 in 2D) of one group whose cell width bounds every pair's reach; each pair
// once, from the body that comes first in bucket order.
template <class Real, int Dim, bool Write>
struct MoorePairs {
  SortedBodies<Real> s;
  Space<Real> space;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t a) const { run_pair_step<Write>(*this, a, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t a, Emitter& e) const {
    const GroupGrid& grp = s.groups[0];
    const GridSpec& g = grp.grid;
    TestAgainst<Real, Emitter> test{s, space, {0, 0, 0}, 0, s.thickness(a), s.id(a), e};
    test.ra = s.load(a, test.pa);
    long long c[3] = {0, 0, 0};
    NESTSIM_AXES(d, Dim) c[d] = g.home(g.raw_coord(double(test.pa[d]), d), d);
    // In a periodic box of fewer than 3 cells on an axis, offsets -1 and +1 reach the
    // same cell: visit each distinct cell once.
    int off_lo[3] = {0, 0, 0}, off_hi[3] = {0, 0, 0};
    NESTSIM_UNROLL for (int d = 0; d < Dim; ++d) {
      off_lo[d] = (g.periodic && g.n[d] < 3) ? 0 : -1;
      off_hi[d] = (g.periodic && g.n[d] == 1) ? 0 : 1;
    }
    long long nc[3] = {0, 0, 0};
    for (int oz = off_lo[2]; oz <= off_hi[2]; ++oz) {
      for (int oy = off_lo[1]; oy <= off_hi[1]; ++oy) {
        const int off[3] = {0, oy, oz};
        bool inside = true;
        NESTSIM_UNROLL for (int d = 1; d < Dim; ++d) {
          nc[d] = g.neighbor(c[d] + off[d], d);
          inside = inside && nc[d] >= 0;
        }
        if (!inside) continue;
        long long lo = c[0] + off_lo[0], hi = c[0] + off_hi[0];
        if (!g.periodic) {
          lo = lo < 0 ? 0 : lo;
          hi = hi > g.n[0] - 1 ? g.n[0] - 1 : hi;
        }
        for_each_in_run(s, grp, nc, lo, hi, a + 1, test);
      }
    }
  }
};

// HSX over all groups of levels at once (docs/perf-log.md, "all groups of levels in one
// counting sort").
template <class Real>
struct GroupedView {
  SortedBodies<Real> s;
  Space<Real> space;
  uint32_t group_count = 0;
  double pad = 0;  // rounding allowance (device_util.cuh, rounding_pad)
  const uint64_t* task_start = nullptr;  // large items + 1 offsets
  // Per task, (its item's first task << 32) | its item (MarkTaskOwners); or null.
  const uint64_t* task_owner = nullptr;
  uint64_t items = 0;                    // large items (large body, smaller group)

  // The group of large item k: the last with item_base <= k (groups without large
  // bodies share the next group's base and are skipped), and the body.
  NESTSIM_HD uint32_t item_group(uint64_t k) const {
    uint32_t g = group_count - 1;
    while (g > 0 && s.groups[g].item_base > k) --g;
    return g;
  }
};

// How far from a body of radius r the centres of its partners in group grp can lie: r
// plus the bound on a member's radius plus the rounding pad, in the bodies' precision.
// One function for the counting of a large body's tasks and their walk, which must plan
// the same window.
template <class Real>
NESTSIM_HD inline Real window_outer(Real r, const GroupGrid& grp, double pad) {
  return r + Real(grp.reach + pad);
}

// Visits the cells of a group's grid that hold the centres of all bodies of that
// group within `outer` of x, less those wholly inside the ball of radius `inner`:
// column by column (grid.cuh, visit_rim_column), or every member from `first` on when
// the window wraps a periodic box or has more columns than the group has bodies.
template <class Real, int Dim, class Test>
struct WindowVisitor {
  const SortedBodies<Real>& s;
  const GroupGrid& grp;
  uint32_t first;
  Test& test;
  NESTSIM_HD void operator()(const long long* c, long long lo, long long hi) {
    for_each_in_run(s, grp, c, lo, hi, first, test);
  }
};

// Algorithm 1 line 6 with a tighter window: small body a tests the later members of
// its group whose centres may lie within r_a + reach (the bound on a member's radius)
// instead of the whole Moore neighbourhood; the window's columns are cut to that
// sphere (as the rim walk of section 4.3 does). Each pair once, from the body that
// comes first in sorted order: both centres lie in each other's window.
// In a group whose radii span several levels (GroupGrid::larger_side), each pair is
// found from its larger member instead (ties: the one sorted first), whose partners'
// centres lie within 2 r_a: a window that shrinks with a's own radius rather than
// spanning the group's largest, at the price of the row skip (docs/perf-log.md, "walk
// geometry in float, task owners, the larger-side rule").
template <class Real, int Dim, bool Write>
struct GroupSmallPairs {
  static constexpr int dim = Dim;
  GroupedView<Real> v;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t a) const { run_pair_step<Write>(*this, a, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t a, Emitter& e) const {
    OwnTests own;
    walk_with(a, e, own);
  }
  // wrap(test) gives the consumer of the walk's candidates (OwnTests, WarpRanges).
  template <class Emitter, class Wrap>
  NESTSIM_HD void walk_with(uint32_t a, Emitter& e, Wrap& wrap) const {
    const GroupGrid& grp = v.s.groups[v.s.group(a)];
    if (!grp.brute && grp.larger_side)
      walk_rule<true>(a, grp, e, wrap);
    else
      walk_rule<false>(a, grp, e, wrap);
  }
  // One rule's walk. Larger: the partners no larger than a anywhere in its window of
  // 2 r_a; else the members sorted after a within r_a + reach.
  template <bool Larger, class Emitter, class Wrap>
  NESTSIM_HD void walk_rule(uint32_t a, const GroupGrid& grp, Emitter& e, Wrap& wrap) const {
    const SortedBodies<Real>& s = v.s;
    TestAgainst<Real, Emitter, Larger> test{s, v.space, {0, 0, 0}, 0, s.thickness(a), s.id(a), e};
    test.ra = s.load(a, test.pa);
    test.self = a;
    auto&& body = wrap(test);
    using Body = std::remove_reference_t<decltype(body)>;
    const uint32_t first = Larger ? grp.begin : a + 1;
    if (!grp.brute) {
      // The window's geometry in the bodies' precision (grid.cuh, GridSpec::coord).
      const Real* x = test.pa;
      const Real outer = Larger ? test.ra + test.ra + Real(v.pad)  // partners: r_b <= r_a
                                : window_outer(test.ra, grp, v.pad);
      const LargePlan p = plan_large<Dim>(grp.grid, x, outer, grp.end - grp.begin, grp.task);
      if (!p.direct) {
        const uint64_t own = Larger ? 0 : s.key(a);
        // Sorted order: in a dense grid the rows before a's own hold only bodies sorted
        // before a; skipped whole where they are the window's first columns, else column
        // by column (grid.cuh, rows_before).
        const RowSkip skip = Larger ? RowSkip{} : rows_before<Dim>(grp.grid, p, own);
        // The cell the remaining columns are checked against, or none (one value live
        // in the loop below, not two).
        const uint64_t check = skip.per_column ? own : ~uint64_t(0);
        if (body.defers(grp.grid, p.columns)) {  // the warp walks them (walk_warp_column)
          // (A deferring grid has fewer than 2^30 cells: no cell's low 32 bits are
          // kNoRowSkip.)
          body.defer_columns(p, outer, Real(0), first, uint32_t(&grp - s.groups), skip.columns,
                             p.columns - skip.columns, uint32_t(check));
          return;
        }
        WindowVisitor<Real, Dim, Body> visit{s, grp, first, body};
        ColumnCursor<Dim> col =
            skip.columns ? ColumnCursor<Dim>(p, skip.columns) : ColumnCursor<Dim>(p);
        for (uint64_t column = skip.columns; column < p.columns; ++column, col.next(p)) {
          if (check != ~uint64_t(0) && row_before<Dim>(grp.grid, col.c, check)) continue;
          visit_rim_column<Dim>(grp.grid, p, col.c, x, outer, Real(0), visit);
        }
        return;
      }
    }
    if (first < grp.end) body.range(first, grp.end);
  }
};

// Section 4.3, step 1: how many tasks large item k (body l, smaller group g) needs.
template <class Real, int Dim>
struct GroupLargeTasks {
  GroupedView<Real> v;
  uint64_t* tasks;

  NESTSIM_HD void operator()(uint64_t k) const {
    const GroupGrid& grp = v.s.groups[v.item_group(k)];
    const uint32_t l = grp.end + uint32_t(k - grp.item_base);
    Real x[3] = {0, 0, 0};
    const Real r = v.s.load(l, x);
    tasks[k] = plan_large<Dim>(grp.grid, x, window_outer(r, grp, v.pad), grp.end - grp.begin,
                               grp.task).tasks;
  }
};

// Each task's item without a binary search per task (docs/perf-log.md, "task owners"):
// the first task of every item that has tasks marks (first task << 32) | item in a zeroed
// array, and an inclusive maximum scan then fills each run of tasks with it (first tasks
// and items ascend together): a task learns its rank in its item without reading
// task_start. The table holds `capacity` (< 2^32) tasks (the total is not read back,
// which would stall the host; docs/perf-log.md, "the read-backs' gaps"): tasks past it
// get no owner, and find() runs again with a larger table.
struct MarkTaskOwners {
  const uint64_t* task_start;
  uint64_t capacity;
  uint64_t* owner;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint64_t first = task_start[k];
    if (task_start[k + 1] > first && first < capacity) owner[first] = (first << 32) | k;
  }
};

// Algorithm 1 lines 7-8, section 4.3 steps 2-4: task t of large item (l, g) visits one
// column of l's rim cells in group g's grid (or one chunk of g's bodies in direct mode).
template <class Real, int Dim, bool Write>
struct GroupLargePairs {
  static constexpr int dim = Dim;
  GroupedView<Real> v;
  PairSink sink;

  NESTSIM_HD void operator()(uint64_t t) const { run_pair_step<Write>(*this, t, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint64_t t, Emitter& e) const {
    OwnTests own;
    walk_with(t, e, own);
  }
  template <class Emitter, class Wrap>
  NESTSIM_HD void walk_with(uint64_t t, Emitter& e, Wrap& wrap) const {
    // Launched over the task capacity: the tasks past the total (on the device) have
    // nothing to do.
    if (t >= v.task_start[v.items]) return;
    // The item that owns task t: last k with task_start[k] <= t.
    uint64_t lo = 0, hi = v.items;  // task_start[lo] <= t < task_start[hi]
    uint64_t local = 0;             // t's rank among lo's tasks
    if (v.task_owner) {
      const uint64_t owner = v.task_owner[t];
      lo = owner & 0xffffffffu;
      local = t - (owner >> 32);
    } else {
      while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (v.task_start[mid] <= t) lo = mid; else hi = mid;
      }
      local = t - v.task_start[lo];
    }
    const SortedBodies<Real>& s = v.s;
    const GroupGrid& grp = s.groups[v.item_group(lo)];
    const uint32_t l = grp.end + uint32_t(lo - grp.item_base);
    TestAgainst<Real, Emitter> test{s, v.space, {0, 0, 0}, 0, s.thickness(l), s.id(l), e};
    test.ra = s.load(l, test.pa);
    auto&& body = wrap(test);
    using Body = std::remove_reference_t<decltype(body)>;
    const Real* x = test.pa;
    const Real outer = window_outer(test.ra, grp, v.pad);  // as GroupLargeTasks planned it
    const LargePlan plan = plan_large<Dim>(grp.grid, x, outer, grp.end - grp.begin, grp.task);
    if (plan.direct) {
      const uint64_t first = grp.begin + local * grp.task.direct_chunk;
      const uint64_t last = first + grp.task.direct_chunk < grp.end
                                ? first + grp.task.direct_chunk
                                : grp.end;
      if (first < last) body.range(uint32_t(first), uint32_t(last));
      return;
    }
    const Real inner = test.ra - test.qa - Real(grp.reach + v.pad);
    WindowVisitor<Real, Dim, Body> visit{s, grp, 0u, body};
    const uint64_t first = local * grp.task.columns;
    const uint64_t last =
        first + grp.task.columns < plan.columns ? first + grp.task.columns : plan.columns;
    if (body.defers(grp.grid, last - first)) {  // the warp walks them (walk_warp_column)
      body.defer_columns(plan, outer, inner, 0u, uint32_t(&grp - s.groups), first, last - first,
                         kNoRowSkip);
      return;
    }
    ColumnCursor<Dim> col(plan, first);
    for (uint64_t column = first; column < last; ++column, col.next(plan))
      visit_rim_column<Dim>(grp.grid, plan, col.c, x, outer, inner, visit);
  }
};

// Column k of the columns that lane `owner` deferred (ColumnJob), walked by lane `me`:
// the column's runs of cells as the owner's walk would visit them (ColumnCursor,
// row_before, visit_rim_column), their bucket ranges kept for the owner in me's slots,
// or tested at once when those are full.
template <class Real, int Dim, class Emitter>
NESTSIM_HD inline void walk_warp_column(const SortedBodies<Real>& s, const Space<Real>& space,
                                        WarpShared<Real>& w, WarpRanges<Real>& me,
                                        Emitter& e, uint32_t owner, uint32_t k) {
  const ColumnJob<Real>& job = w.job[owner];
  const WarpOwner<Real>& o = w.owner[owner];
  const GroupGrid& grp = s.groups[job.group];
  LargePlan p;
  NESTSIM_UNROLL for (int a = 0; a < 3; ++a) {
    p.lo[a] = job.lo[a];
    p.hi[a] = job.hi[a];
  }
  const uint32_t column = job.c0 + k;
  const uint32_t across = uint32_t(job.hi[1] - job.lo[1] + 1);
  long long c[3] = {0, 0, 0};
  c[1] = job.lo[1] + int32_t(column % across);
  if (Dim == 3) c[2] = job.lo[2] + int32_t(column / across);
  if (job.own != kNoRowSkip && row_before<Dim>(grp.grid, c, job.own)) return;
  struct Keep {
    const SortedBodies<Real>& s;
    const Space<Real>& space;
    const WarpOwner<Real>& o;
    WarpRanges<Real>& me;
    Emitter& e;
    uint32_t owner;
    NESTSIM_HD void operator()(uint32_t t) { test_for_owner(s, space, o, t, e); }
    NESTSIM_HD void range(uint32_t t, uint32_t end) {
      if (me.keep(t, end, owner)) return;
      for (; t < end; ++t) test_for_owner(s, space, o, t, e);
    }
  } keep{s, space, o, me, e, owner};
  WindowVisitor<Real, Dim, Keep> visit{s, grp, job.first, keep};
  visit_rim_column<Dim>(grp.grid, p, c, o.pa, job.outer, job.inner, visit);
}

}  // namespace nestsim::detail

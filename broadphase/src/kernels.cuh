// Functors of the broad phase: one per step of Algorithm 1 of the HSX paper
// (../shared/seeds/hsx-nested-hollow-sphere-intersection.txt), each run by one
// thrust::for_each over bodies, cells or tasks. Every pair step comes in a counting
// and a writing flavour (section 4.2: count -> prefix sum -> write).
#pragma once
#include <cstdint>

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
// steps read them for every candidate (bench/NOTES.md v5).
template <class Real>
struct alignas(4 * sizeof(Real)) PackedBody {
  Real x, y, z, r;  // z = 0 in 2D
};

// One level of the grid.
template <class Real>
struct LevelView {
  GridSpec grid;
  Space<Real> space;
  const PackedBody<Real>* small_packed = nullptr;  // centre and radius, sorted by bucket
  BodyArrays<Real> small;              // thickness and id of the same (pos, radius unused)
  const uint64_t* small_key = nullptr; // linear cell index of each sorted small body
  uint32_t small_count = 0;
  const uint32_t* bucket_start = nullptr;  // table_size + 1 offsets into small
  BodyArrays<Real> large;              // the bodies still large at this level
  uint32_t large_count = 0;
  const uint64_t* task_start = nullptr;    // large_count + 1 offsets
  TaskSize task_size;
  double small_reach = 0;  // bound on a small body's radius (d / 2)
  double pad = 0;          // rounding allowance, see PairFinder::State::plan()

  NESTSIM_HD Real load_small(uint32_t t, Real* p) const {
    const PackedBody<Real> b = small_packed[t];
    p[0] = b.x;
    p[1] = b.y;
    p[2] = b.z;
    return b.r;
  }
  NESTSIM_HD void cell_of(const double* x, long long* c) const {
    c[2] = 0;
    NESTSIM_AXES(a, grid.dim) c[a] = grid.home(grid.raw_coord(x[a], a), a);
  }
  NESTSIM_HD double large_outer(Real r) const { return double(r) + small_reach + pad; }
  NESTSIM_HD double large_inner(Real r, Real q) const {
    return double(r) - double(q) - small_reach - pad;
  }
};

// Visits the small bodies of a run of cells along axis 0 (cells c[1..] fixed, wrapped;
// [lo, hi] unwrapped): one bucket range per piece when the grid is dense (consecutive x
// cells are consecutive buckets), else one hashed look-up per cell with the cell check.
template <class Real, class Body>
NESTSIM_HD inline void for_each_small_in_run(const LevelView<Real>& v, const long long* c,
                                             long long lo, long long hi, uint32_t first,
                                             Body& body) {
  const GridSpec& g = v.grid;
  if (g.dense) {
    struct Piece {
      const LevelView<Real>& v;
      const long long* c;
      uint32_t first;
      Body& body;
      NESTSIM_HD void operator()(long long a, long long b) {
        const long long row[3] = {0, c[1], c[2]};
        const uint64_t base = v.grid.linear(row);
        uint32_t t = v.bucket_start[base + uint64_t(a)];
        const uint32_t t_end = v.bucket_start[base + uint64_t(b) + 1];
        if (t < first) t = first;
        for (; t < t_end; ++t) body(t);
      }
    } piece{v, c, first, body};
    for_each_run_piece(g, lo, hi, piece);
    return;
  }
  long long cell[3] = {0, c[1], c[2]};
  for (long long x = lo; x <= hi; ++x) {
    cell[0] = g.home(x, 0);
    const uint64_t lin = g.linear(cell);
    const uint64_t bucket = g.bucket(lin);
    uint32_t t = v.bucket_start[bucket];
    const uint32_t t_end = v.bucket_start[bucket + 1];
    if (t < first) t = first;
    for (; t < t_end; ++t)
      if (v.small_key[t] == lin) body(t);
  }
}

// Section 4.1, step 2: each small body finds its cell and takes a rank in its bucket.
template <class Real, int Dim>
struct BinSmall {
  GridSpec grid;
  BodyArrays<Real> bodies;  // the level's small bodies in group order
  uint32_t* bucket_count;
  uint32_t* bucket_of;
  uint32_t* rank;
  uint64_t* key;

  NESTSIM_HD void operator()(uint32_t k) const {
    long long c[3] = {0, 0, 0};
    NESTSIM_UNROLL for (int a = 0; a < Dim; ++a) c[a] = grid.home(grid.raw_coord(double(bodies.pos[a][k]), a), a);
    const uint64_t lin = grid.linear(c);
    const uint32_t b = static_cast<uint32_t>(grid.bucket(lin));
    key[k] = lin;
    bucket_of[k] = b;
    rank[k] = atomic_fetch_add(&bucket_count[b], 1u);
  }
};

// Section 4.1, step 4, in two passes: each body writes its index at its place (bucket
// start + rank), then each place gathers its body. One scattered 4-byte write per body
// instead of seven scattered fields, which on the GPU cost a sector fill each.
struct PlaceSmall {
  const uint32_t* bucket_of;
  const uint32_t* rank;
  const uint32_t* bucket_start;
  uint32_t* source_of;
  NESTSIM_HD void operator()(uint32_t k) const {
    source_of[bucket_start[bucket_of[k]] + rank[k]] = k;
  }
};

template <class Real, int Dim>
struct GatherSmall {
  BodyArrays<Real> from;
  const uint64_t* key;
  const uint32_t* source_of;
  PackedBody<Real>* packed;
  Real* thickness;
  uint32_t* id;
  uint64_t* sorted_key;

  NESTSIM_HD void operator()(uint32_t dst) const {
    const uint32_t k = source_of[dst];
    packed[dst] = PackedBody<Real>{from.pos[0][k], from.pos[1][k],
                                   Dim == 3 ? from.pos[2][k] : Real(0), from.radius[k]};
    thickness[dst] = from.thickness[k];
    id[dst] = from.id_of(k);
    sorted_key[dst] = key[k];
  }
};

// Algorithm 1 line 6: small-small pairs from the Moore neighbourhood (27 cells in 3D,
// 9 in 2D); each pair once, from the body that comes first in bucket order.
template <class Real, int Dim, bool Write>
struct SmallPairs {
  LevelView<Real> v;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t a) const { run_pair_step<Write>(*this, a, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t a, Emitter& e) const {
    const GridSpec& g = v.grid;
    Real pa[3] = {0, 0, 0};
    const Real ra = v.load_small(a, pa), qa = v.small.thickness[a];
    const uint32_t id_a = v.small.id[a];
    double x[3] = {double(pa[0]), double(pa[1]), double(pa[2])};
    long long c[3];
    v.cell_of(x, c);
    // In a periodic box of fewer than 3 cells on an axis, offsets -1 and +1 reach the
    // same cell: visit each distinct cell once.
    int off_lo[3] = {0, 0, 0}, off_hi[3] = {0, 0, 0};
    NESTSIM_UNROLL for (int d = 0; d < Dim; ++d) {
      off_lo[d] = (g.periodic && g.n[d] < 3) ? 0 : -1;
      off_hi[d] = (g.periodic && g.n[d] == 1) ? 0 : 1;
    }
    struct Test {
      const LevelView<Real>& v;
      const Real* pa;
      Real ra, qa;
      uint32_t id_a;
      Emitter& e;
      NESTSIM_HD void operator()(uint32_t t) {
        Real pb[3] = {0, 0, 0};
        const Real rb = v.load_small(t, pb);
        if (exact_pair(v.space, pa, ra, qa, pb, rb, v.small.thickness[t]))
          e.emit(id_a, v.small.id[t]);
      }
    } test{v, pa, ra, qa, id_a, e};
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
        // Each pair once: from the body that comes first in bucket order.
        for_each_small_in_run(v, nc, lo, hi, a + 1, test);
      }
    }
  }
};

// Section 4.3, step 1: how many tasks each large body needs at this level.
template <class Real, int Dim>
struct CountLargeTasks {
  LevelView<Real> v;
  uint64_t* tasks;

  NESTSIM_HD void operator()(uint32_t l) const {
    double x[3] = {0, 0, 0};
    NESTSIM_UNROLL for (int a = 0; a < Dim; ++a) x[a] = double(v.large.pos[a][l]);
    tasks[l] = plan_large<Dim>(v.grid, x, v.large_outer(v.large.radius[l]), v.small_count,
                               v.task_size).tasks;
  }
};

template <class Real, int Dim, class Emitter>
struct RimVisitor {
  const LevelView<Real>* v;
  const Real* pl;
  Real rl, ql;
  uint32_t id_l;
  Emitter* e;

  NESTSIM_HD void operator()(uint32_t t) {
    Real ps[3] = {0, 0, 0};
    const Real rs = v->load_small(t, ps);
    if (exact_pair(v->space, ps, rs, v->small.thickness[t], pl, rl, ql))
      e->emit(v->small.id[t], id_l);
  }
  NESTSIM_HD void operator()(const long long* c, long long lo, long long hi) {
    for_each_small_in_run(*v, c, lo, hi, 0u, *this);
  }
};

// Algorithm 1 lines 7-8, section 4.3 steps 2-4: task t of large body l visits one
// column of its rim cells (or one chunk of small bodies in direct mode).
template <class Real, int Dim, bool Write>
struct LargePairs {
  LevelView<Real> v;
  PairSink sink;

  NESTSIM_HD void operator()(uint64_t t) const { run_pair_step<Write>(*this, t, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint64_t t, Emitter& e) const {
    // The large body that owns task t: last l with task_start[l] <= t.
    uint32_t lo = 0, hi = v.large_count;  // task_start[lo] <= t < task_start[hi]
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (v.task_start[mid] <= t) lo = mid; else hi = mid;
    }
    const uint32_t l = lo;
    const uint64_t local = t - v.task_start[l];
    Real pl[3] = {0, 0, 0};
    v.large.load(l, Dim, pl);
    const Real rl = v.large.radius[l], ql = v.large.thickness[l];
    double x[3] = {double(pl[0]), double(pl[1]), double(pl[2])};
    const double outer = v.large_outer(rl);
    const LargePlan plan = plan_large<Dim>(v.grid, x, outer, v.small_count, v.task_size);
    RimVisitor<Real, Dim, Emitter> visit{&v, pl, rl, ql, v.large.id[l], &e};
    if (plan.direct) {
      Real ps[3] = {0, 0, 0};
      const uint64_t first = local * v.task_size.direct_chunk;
      uint64_t last = first + v.task_size.direct_chunk;
      if (last > v.small_count) last = v.small_count;
      for (uint64_t s = first; s < last; ++s) {
        const Real rs = v.load_small(uint32_t(s), ps);
        if (exact_pair(v.space, ps, rs, v.small.thickness[s], pl, rl, ql))
          e.emit(v.small.id[s], visit.id_l);
      }
    } else {
      const double inner = v.large_inner(rl, ql);
      const uint64_t first = local * v.task_size.columns;
      const uint64_t last =
          first + v.task_size.columns < plan.columns ? first + v.task_size.columns : plan.columns;
      for (uint64_t column = first; column < last; ++column)
        visit_rim_column<Dim>(v.grid, plan, column, x, outer, inner, visit);
    }
  }
};

}  // namespace nestsim::detail

// Solid-sphere baseline broad phases (docs/design.md, "The broad phase (HSX)": the
// baselines stay in the product), behind the same PairFinder interface as HSX:
//  - grid_uniform: a uniform grid in the style of fast fixed-radius nearest neighbours:
//    cell width >= the largest diameter, each body binned in the one cell of its centre
//    (counting sort), candidates from the 27-cell (9 in 2D) Moore neighbourhood;
//  - grid_aabb: a multi-cell AABB grid in the style of chrono::collide: cell width from
//    the mean diameter, each body entered in every cell its bounding box touches,
//    candidates per cell, each pair reported only from one cell (the first cell shared
//    by both boxes, see shared_first()).
// Both run the exact test (exact_pair, equation 3; solid mode has thickness == radius)
// on every candidate, so they report SSX pairs in solid mode and HSX pairs in hollow
// mode. Needs Thrust; compiled by nvcc or as C++ (CPU backend).
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>

#include "common/buffers.cuh"
#include "common/cell_records.cuh"
#include "common/grid_choice.cuh"
#include "common/loops.cuh"
#include "common/pair_sink.cuh"
#include "common/sorted_grid.cuh"
#include "common/test_against.cuh"
#include "nestsim/broadphase.h"

namespace nestsim::detail {

// ---------------------------------------------------------------------------------
// AABB grid geometry. On axis a, the cells a body's box [x - reach, x + reach] touches
// are the cyclic interval {start, start + 1, ..., start + length - 1} (mod n on a
// periodic axis; a box as wide as the box of the space takes every cell once, so small
// periodic grids hold no duplicate entries).
NESTSIM_HD inline void aabb_axis_cells(const GridSpec& g, double x, double reach, int a,
                                       uint32_t& start, uint32_t& length) {
  long long lo = g.raw_coord(x - reach, a), hi = g.raw_coord(x + reach, a);
  if (g.periodic) {
    if (hi - lo + 1 >= g.n[a]) {
      start = 0;
      length = uint32_t(g.n[a]);
    } else {
      start = uint32_t(g.home(lo, a));
      length = uint32_t(hi - lo + 1);
    }
    return;
  }
  lo = lo < 0 ? 0 : (lo >= g.n[a] ? g.n[a] - 1 : lo);
  hi = hi < 0 ? 0 : (hi >= g.n[a] ? g.n[a] - 1 : hi);
  start = uint32_t(lo);
  length = uint32_t(hi - lo + 1);
}

// Whether cell c lies in the (cyclic) interval [start, start + length).
NESTSIM_HD inline bool in_cells(long long c, uint32_t start, uint32_t length, long long n,
                                bool periodic) {
  long long d = c - (long long)start;
  if (periodic) {
    d %= n;
    if (d < 0) d += n;
  }
  return d >= 0 && d < (long long)length;
}

// The one cell on an axis from which a pair is reported: the first shared cell, that is
// the start of one interval when it lies in the other (two intervals meet iff one's
// start lies in the other); the smaller if both do, so that the choice is symmetric in
// the two bodies. On an open axis this is the cell of the lower corner of the two
// boxes' intersection. -1 when the intervals do not meet.
NESTSIM_HD inline long long shared_first(uint32_t si, uint32_t li, uint32_t sj, uint32_t lj,
                                         long long n, bool periodic) {
  long long first = -1;
  if (in_cells(sj, si, li, n, periodic)) first = sj;
  if (in_cells(si, sj, lj, n, periodic) && (first < 0 || (long long)si < first)) first = si;
  return first;
}

struct AabbCells {
  GridSpec grid;
  double pad = 0;  // added to every box, see SolidGrids::plan()
  uint32_t* start[3] = {nullptr, nullptr, nullptr};
  uint32_t* length[3] = {nullptr, nullptr, nullptr};
};

// Per body: its cell intervals and the number of cells (entries) it takes.
template <class Real, int Dim>
struct AabbRanges {
  AabbCells cells;
  BodyArrays<Real> bodies;
  uint64_t* entries;

  NESTSIM_HD void operator()(uint32_t b) const {
    uint64_t count = 1;
    const double reach = double(bodies.radius[b]) + cells.pad;
    NESTSIM_UNROLL for (int a = 0; a < Dim; ++a) {
      uint32_t s, l;
      aabb_axis_cells(cells.grid, double(bodies.pos[a][b]), reach, a, s, l);
      cells.start[a][b] = s;
      cells.length[a][b] = l;
      count *= l;
    }
    entries[b] = count;
  }
};

// The entry count of body b alone, for the width search (no stores).
template <class Real, int Dim>
struct AabbEntryCount {
  GridSpec grid;
  double pad;
  BodyArrays<Real> bodies;

  NESTSIM_HD uint64_t operator()(uint32_t b) const {
    uint64_t count = 1;
    const double reach = double(bodies.radius[b]) + pad;
    NESTSIM_UNROLL for (int a = 0; a < Dim; ++a) {
      uint32_t s, l;
      aabb_axis_cells(grid, double(bodies.pos[a][b]), reach, a, s, l);
      count *= l;
    }
    return count;
  }
};

// Enters body b in every cell of its box: (linear cell index, body) at its offset.
template <int Dim>
struct AabbFill {
  AabbCells cells;
  const uint64_t* offsets;
  uint64_t* cell_key;
  uint32_t* body;

  NESTSIM_HD void operator()(uint32_t b) const {
    const GridSpec& g = cells.grid;
    uint32_t s[3] = {0, 0, 0}, l[3] = {1, 1, 1};
    NESTSIM_UNROLL for (int a = 0; a < Dim; ++a) {
      s[a] = cells.start[a][b];
      l[a] = cells.length[a][b];
    }
    uint64_t out = offsets[b];
    long long c[3] = {0, 0, 0};
    for (uint32_t k2 = 0; k2 < l[2]; ++k2) {
      c[2] = Dim == 3 ? g.neighbour(s[2] + k2, 2) : 0;
      for (uint32_t k1 = 0; k1 < l[1]; ++k1) {
        c[1] = g.neighbour(s[1] + k1, 1);
        for (uint32_t k0 = 0; k0 < l[0]; ++k0) {
          c[0] = g.neighbour(s[0] + k0, 0);
          cell_key[out] = g.linear(c);
          body[out] = b;
          ++out;
        }
      }
    }
  }
};

// Entry e (cell entries sorted by cell) pairs its body with the bodies of the later
// entries of the same cell; the pair counts only in the first shared cell on every axis.
template <class Real, int Dim, bool Write>
struct AabbCellPairs {
  AabbCells cells;
  BodyArrays<Real> bodies;
  Space<Real> space;
  const uint64_t* cell_key;
  const uint32_t* body;
  uint64_t entries;
  PairSink sink;

  NESTSIM_HD void operator()(uint64_t e) const {
    const GridSpec& g = cells.grid;
    const uint64_t key = cell_key[e];
    long long c[3];
    c[0] = (long long)(key % uint64_t(g.n[0]));
    c[1] = (long long)((key / uint64_t(g.n[0])) % uint64_t(g.n[1]));
    c[2] = (long long)(key / (uint64_t(g.n[0]) * uint64_t(g.n[1])));
    const uint32_t i = body[e];
    Real pi[3] = {0, 0, 0}, pj[3] = {0, 0, 0};
    bodies.load(i, Dim, pi);
    const Real ri = bodies.radius[i], qi = bodies.thickness[i];
    PairEmitter<Write> emitter = sink.template emitter<Write>(e);
    for (uint64_t f = e + 1; f < entries && cell_key[f] == key; ++f) {
      const uint32_t j = body[f];
      bool first = true;
      for (int a = 0; a < Dim && first; ++a)
        first = shared_first(cells.start[a][i], cells.length[a][i], cells.start[a][j],
                             cells.length[a][j], g.n[a], g.periodic) == c[a];
      if (!first) continue;
      bodies.load(j, Dim, pj);
      if (exact_pair(space, pi, ri, qi, pj, bodies.radius[j], bodies.thickness[j]))
        emitter.emit(bodies.id_of(i), bodies.id_of(j));
    }
    if (!Write) sink.counts[e] = emitter.next;
  }
};

// ---------------------------------------------------------------------------------
// The two baselines with their scratch buffers, reused across calls.
template <class Real>
class SolidGrids {
 public:
  // Each finds the pairs among bodies [0, n) (effective radii already applied); unless
  // count_only, writes their keys, unsorted, to keys[0 .. count). Returns the count.
  uint64_t uniform(const BroadphaseOptions& options, const BodyArrays<Real>& bodies, uint32_t n,
                   const Space<Real>& space, bool count_only,
                   thrust::device_vector<uint64_t>& keys);
  uint64_t aabb(const BroadphaseOptions& options, const BodyArrays<Real>& bodies, uint32_t n,
                const Space<Real>& space, bool count_only, thrust::device_vector<uint64_t>& keys);

 private:
  template <int Dim>
  uint64_t uniform_dim(const BroadphaseOptions&, const BodyArrays<Real>&, uint32_t,
                       const Space<Real>&, bool, thrust::device_vector<uint64_t>&);
  template <int Dim>
  uint64_t aabb_dim(const BroadphaseOptions&, const BodyArrays<Real>&, uint32_t,
                    const Space<Real>&, bool, thrust::device_vector<uint64_t>&);
  template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
  uint64_t emit_pairs(Index items, bool count_only, thrust::device_vector<uint64_t>& keys,
                      Args... args);

  // uniform grid
  SortedGrid<Real> sorted_;  // grid_uniform's cell-sorted bodies
  // AABB grid
  thrust::device_vector<uint32_t> start_[3], length_[3], entry_body_;
  thrust::device_vector<uint64_t> entry_count_, entry_offset_, entry_key_;
  // pair assembly
  thrust::device_vector<uint64_t> counts_, offsets_;
};

extern template class SolidGrids<float>;
extern template class SolidGrids<double>;

}  // namespace nestsim::detail

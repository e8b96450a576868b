// The uniform grid of one level of the HSX algorithm (the HSX paper, docs/design.md:
// Algorithm 1 line 5 and section 4.1), with the
// geometry that the large bodies need to find their rim cells (section 4.3).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "nestsim/hd.h"

namespace nestsim::detail {

// Cell geometry is computed in double on every backend, whatever the body precision;
// the exact pair test (predicates.h) runs in the body precision.
struct GridSpec {
  int dim = 3;
  bool periodic = false;
  bool dense = true;        // bucket == linear cell index; otherwise a hash of it
  double origin[3] = {0, 0, 0};
  double width[3] = {1, 1, 1};  // cell width per axis, >= the level width d
  double inv_width[3] = {1, 1, 1};  // 1 / width: cells found by a product, not a division
  long long n[3] = {1, 1, 1};   // cells per axis (n[2] == 1 in 2D)
  uint64_t table_size = 1;      // number of buckets
  int hash_shift = 0;           // 64 - log2(table_size) when hashed
  // origin, width and inv_width rounded to float once (set_float_copies), for the walks
  // of float bodies: the same values as a conversion at each use, without the
  // conversions (docs/performance.md, "Window geometry in float").
  float origin_f[3] = {0, 0, 0};
  float width_f[3] = {1, 1, 1};
  float inv_width_f[3] = {1, 1, 1};
  void set_float_copies() {
    for (int a = 0; a < 3; ++a) {
      origin_f[a] = float(origin[a]);
      width_f[a] = float(width[a]);
      inv_width_f[a] = float(inv_width[a]);
    }
  }
  // origin, width and inverse width of axis a in the arithmetic T.
  template <class T>
  NESTSIM_HD T origin_as(int a) const {
    if constexpr (std::is_same_v<T, float>) return origin_f[a]; else return T(origin[a]);
  }
  template <class T>
  NESTSIM_HD T width_as(int a) const {
    if constexpr (std::is_same_v<T, float>) return width_f[a]; else return T(width[a]);
  }
  template <class T>
  NESTSIM_HD T inv_width_as(int a) const {
    if constexpr (std::is_same_v<T, float>) return inv_width_f[a]; else return T(inv_width[a]);
  }

  // Unwrapped cell coordinate of a position on axis a. A product by the inverse width
  // instead of a division (a few dozen instructions in double on the GPU;
  // docs/performance.md, "No divisions in the walks"): exact pairs need only that it is
  // monotone in x, which rounding preserves, and that a cell's edges are right to within
  // the rounding pad, which exceeds its error of an ulp or two by orders of magnitude
  // (extent.cuh, rounding_pad).
  // T: the arithmetic. Bodies are placed in their cells in double (raw_coord); the HSX
  // walks compute their windows in the bodies' precision (float on the GPU's usual path:
  // fewer instructions, docs/performance.md, "Window geometry in float"): a window needs
  // only to cover its cells to within the rounding pad, which the few ulps of float
  // rounding are far inside.
  template <class T>
  NESTSIM_HD long long coord(T x, int a) const {
    using std::floor;
    return static_cast<long long>(floor((x - origin_as<T>(a)) * inv_width_as<T>(a)));
  }
  NESTSIM_HD long long raw_coord(double x, int a) const { return coord<double>(x, a); }
  // Wraps a coordinate into [0, n) on a periodic axis: one addition for the usual case
  // of a window's cell next to the box (a 64-bit remainder costs dozens of instructions).
  NESTSIM_HD long long wrap(long long c, int a) const {
    if (c >= 0 && c < n[a]) return c;
    if (c < 0 && c >= -n[a]) return c + n[a];
    if (c >= n[a] && c < 2 * n[a]) return c - n[a];
    c %= n[a];
    return c < 0 ? c + n[a] : c;
  }
  // Wraps (periodic) or clamps (open) a coordinate into [0, n).
  NESTSIM_HD NESTSIM_HOST_INLINE long long home(long long c, int a) const {
    if (periodic) return wrap(c, a);
    return c < 0 ? 0 : (c >= n[a] ? n[a] - 1 : c);
  }
  // Wraps a neighbour coordinate; -1 when it falls off an open grid.
  NESTSIM_HD long long neighbour(long long c, int a) const {
    if (periodic) return wrap(c, a);
    return (c < 0 || c >= n[a]) ? -1 : c;
  }
  NESTSIM_HD uint64_t linear(const long long* c) const {
    return uint64_t(c[0]) + uint64_t(n[0]) * (uint64_t(c[1]) + uint64_t(n[1]) * uint64_t(c[2]));
  }
  NESTSIM_HD uint64_t bucket(uint64_t key) const {
    return dense ? key : (key * 0x9E3779B97F4A7C15ull) >> hash_shift;
  }
  // Lower and upper edge of cell c (unwrapped) on axis a.
  template <class T>
  NESTSIM_HD T edge_lo(long long c, int a) const { return origin_as<T>(a) + T(c) * width_as<T>(a); }
  template <class T>
  NESTSIM_HD T edge_hi(long long c, int a) const {
    return origin_as<T>(a) + T(c + 1) * width_as<T>(a);
  }
};

// What a large body does at one level (section 4.3): the window of cells its outer
// sphere can reach, and whether it walks the rim cells of that window column by
// column, or (when that would visit more cells than there are small bodies, or when
// its window wraps a periodic box) tests the small bodies directly.
struct LargePlan {
  bool direct = false;
  long long lo[3] = {0, 0, 0};
  long long hi[3] = {-1, -1, -1};
  uint64_t columns = 0;
  uint64_t tasks = 0;
};

// How much one task of a large body does: bodies tested by one direct task, rim
// columns walked by one column task. Small tasks on the GPU, where a task is one
// thread's chain of dependent loads and parallelism hides their latency; larger ones on
// the CPU, where each task pays the owner search and plan (docs/performance.md,
// "Task size per group").
struct TaskSize {
  uint32_t direct_chunk = 128;
  uint32_t columns = 8;
};

// T: the arithmetic of the window (GridSpec::coord). The counting and the walking of a
// large body's tasks must call it with the same T and the same x and reach: the
// task count follows from the columns.
template <int Dim, class T>
NESTSIM_HD NESTSIM_HOST_INLINE inline LargePlan plan_large(const GridSpec& g, const T* x,
                                                           T reach, uint32_t small_count,
                                                           TaskSize size) {
  LargePlan p;
  bool wraps = false, misses = false;
  NESTSIM_UNROLL for (int a = 0; a < Dim; ++a) {
    p.lo[a] = g.coord(x[a] - reach, a);
    p.hi[a] = g.coord(x[a] + reach, a);
    if (g.periodic) {
      if (p.hi[a] - p.lo[a] + 1 > g.n[a]) wraps = true;
    } else {
      if (p.lo[a] < 0) p.lo[a] = 0;
      if (p.hi[a] > g.n[a] - 1) p.hi[a] = g.n[a] - 1;
      if (p.lo[a] > p.hi[a]) misses = true;  // the window misses the grid: no small body near
    }
  }
  // One return (an early return from the unrolled loop above puts the plan in the GPU
  // walks' stack frame); a plan that misses has no columns and no tasks.
  if (misses) {
    p = LargePlan{};
  } else {
    uint64_t columns = 1;
    NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) columns *= uint64_t(p.hi[a] - p.lo[a] + 1);
    p.columns = columns;
    // A column costs at least two cell look-ups; a direct task tests direct_chunk bodies.
    if (wraps || 2 * columns >= small_count) {
      p.direct = true;
      p.tasks = (small_count + size.direct_chunk - 1) / size.direct_chunk;
    } else {
      p.tasks = (columns + size.columns - 1) / size.columns;
    }
  }
  return p;
}

// Splits a run of cells [lo, hi] on axis 0 (unwrapped, at most n[0] long) into at most
// two pieces of wrapped coordinates and calls piece(a, b) for each.
template <class Piece>
NESTSIM_HD inline void for_each_run_piece(const GridSpec& g, long long lo, long long hi,
                                          Piece& piece) {
  if (lo > hi) return;
  if (!g.periodic) {
    piece(lo, hi);
    return;
  }
  const long long a = g.home(lo, 0), b = a + (hi - lo);
  if (b < g.n[0]) {
    piece(a, b);
  } else {
    piece(a, g.n[0] - 1);
    piece(0, b - g.n[0]);
  }
}

// The columns of a plan's window in order (axis 1 fastest): the cells on axes
// 1..Dim-1, unwrapped. Stepping costs a compare; only a start inside the window
// divides.
template <int Dim>
struct ColumnCursor {
  long long c[3] = {0, 0, 0};
  NESTSIM_HD explicit ColumnCursor(const LargePlan& p) {
    NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) c[a] = p.lo[a];
  }
  NESTSIM_HD ColumnCursor(const LargePlan& p, uint64_t column) {
    NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) {
      const uint64_t extent = uint64_t(p.hi[a] - p.lo[a] + 1);
      c[a] = p.lo[a] + static_cast<long long>(column % extent);
      column /= extent;
    }
  }
  NESTSIM_HD void next(const LargePlan& p) {
    NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) {
      if (++c[a] <= p.hi[a]) return;
      c[a] = p.lo[a];
    }
  }
};

// True when the column's cells (c, unwrapped) come before the row of the cell with
// linear index `own` in the order of a dense grid's buckets: every body there is sorted
// before every body of own's row. The row's first cell is n[0] (c[2] n[1] + c[1]), and
// own's row starts at own less own's coordinate on axis 0, which is below n[0].
template <int Dim>
NESTSIM_HD inline bool row_before(const GridSpec& g, const long long* c, uint64_t own) {
  long long row[3] = {0, 0, 0};
  NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) row[a] = g.home(c[a], a);
  return g.linear(row) + uint64_t(g.n[0]) <= own;
}

// The rows before the row of cell `own` (row_before) that the sorted-order rule skips
// whole, in a dense grid: `columns`, how many of plan p's first columns (ColumnCursor
// order) lie in them, and `per_column`, whether the caller must still check row_before
// on each column after those. When the window's rows lie inside the grid on axes 1..
// (an open grid after plan_large's clamp, or a periodic window that does not cross the
// box's edge), rows ascend with the column (c[1] + n[1] c[2] < own's row), so the
// columns before own's row are exactly that prefix and none follows it: the walks start
// after it (about half of a small window's columns) and check nothing per column. A
// window that wraps gets no prefix and a check per column. A hashed grid has no row
// order: nothing to skip, nothing to check.
struct RowSkip {
  uint64_t columns = 0;
  bool per_column = false;
};
template <int Dim>
NESTSIM_HD inline RowSkip rows_before(const GridSpec& g, const LargePlan& p, uint64_t own) {
  RowSkip r;
  if (!g.dense) return r;
  NESTSIM_UNROLL for (int a = 1; a < Dim; ++a)
    if (p.lo[a] < 0 || p.hi[a] >= g.n[a]) r.per_column = true;
  if (r.per_column) return r;
  // own's row, n[1] c[2] + c[1] (32-bit divisions where they suffice: dense tables on
  // the GPU's walks are far below 2^32 cells).
  const uint64_t n0 = uint64_t(g.n[0]), n1 = uint64_t(g.n[1]);
  const bool narrow = own <= 0xffffffffull && n0 <= 0xffffffffull && n1 <= 0xffffffffull;
  const uint64_t row = narrow ? uint64_t(uint32_t(own) / uint32_t(n0)) : own / n0;
  const long long across = p.hi[1] - p.lo[1] + 1;
  auto clamp = [](long long v, long long hi) { return v < 0 ? 0 : (v > hi ? hi : v); };
  if (Dim == 2) {
    r.columns = uint64_t(clamp(static_cast<long long>(row) - p.lo[1], across));
    return r;
  }
  const uint64_t z = narrow ? uint64_t(uint32_t(row) / uint32_t(n1)) : row / n1;
  const long long oz = static_cast<long long>(z), oy = static_cast<long long>(row - z * n1);
  const long long depth = p.hi[2] - p.lo[2] + 1;
  long long before = clamp(oz - p.lo[2], depth) * across;  // whole rows of lower c[2]
  if (oz >= p.lo[2] && oz <= p.hi[2]) before += clamp(oy - p.lo[1], across);
  r.columns = uint64_t(before);
  return r;
}

// Calls visit(c, lo, hi) for the runs of cells along axis 0 that the shell wall of a
// large body can reach in the column cu (ColumnCursor) of plan p (c[1..] wrapped,
// [lo, hi] unwrapped on axis 0): the cells within `outer` of the centre x, less those
// wholly inside the ball of radius `inner` (the part of the lumen where every small
// body is contained, equation 1). At most two runs.
//
// T: the arithmetic (GridSpec::coord). Rounding only widens or narrows the runs by far
// less than the rounding pad that outer and inner include; near a column's edge, where
// the square roots cancel, the pad's margin holds in squared form: outer^2 - hmin2
// exceeds the true squared reach of any candidate by about 2 outer pad, and pad is at
// least 64 ulps of 2 rmax (extent.cuh, rounding_pad), so dozens of ulps of outer^2,
// against the few of this rounding (the same for inner).
template <int Dim, class T, class Visit>
NESTSIM_HD NESTSIM_HOST_INLINE inline void visit_rim_column(const GridSpec& g, const LargePlan& p,
                                                            const long long* cu, const T* x,
                                                            T outer, T inner, Visit& visit) {
  using std::ceil;
  using std::fabs;
  using std::floor;
  using std::sqrt;
  constexpr int run = 0;
  long long c[3] = {0, 0, 0};
  T hmin2 = 0, hmax2 = 0;
  NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) {
    c[a] = cu[a];
    const T b0 = g.edge_lo<T>(c[a], a), b1 = g.edge_hi<T>(c[a], a);
    const T dmin = x[a] < b0 ? b0 - x[a] : (x[a] > b1 ? x[a] - b1 : T(0));
    const T dmax = fabs(x[a] - b0) > fabs(x[a] - b1) ? fabs(x[a] - b0) : fabs(x[a] - b1);
    hmin2 += dmin * dmin;
    hmax2 += dmax * dmax;
  }
  if (hmin2 > outer * outer) return;
  const T reach = sqrt(outer * outer - hmin2);
  long long lo = g.coord(x[run] - reach, run), hi = g.coord(x[run] + reach, run);
  if (lo < p.lo[run]) lo = p.lo[run];
  if (hi > p.hi[run]) hi = p.hi[run];
  // Cells [ex_lo, ex_hi] lie wholly inside the inner ball: skipped.
  long long ex_lo = hi + 1, ex_hi = hi;
  if (inner > T(0) && hmax2 < inner * inner) {
    const T depth = sqrt(inner * inner - hmax2);
    const T o = g.origin_as<T>(run), w = g.inv_width_as<T>(run);
    ex_lo = static_cast<long long>(floor((x[run] - depth - o) * w)) + 1;
    ex_hi = static_cast<long long>(ceil((x[run] + depth - o) * w)) - 2;
    if (ex_lo > ex_hi) {
      ex_lo = hi + 1;
      ex_hi = hi;
    }
  }
  NESTSIM_UNROLL for (int a = 1; a < Dim; ++a) c[a] = g.home(c[a], a);
  visit(c, lo, ex_lo - 1 < hi ? ex_lo - 1 : hi);
  visit(c, ex_hi + 1 > lo ? ex_hi + 1 : lo, hi);
}

}  // namespace nestsim::detail

// Crowded cells of near-concentric shells (nested vesicles: endosomes in endosomes,
// concentric shells): their centres fall in one cell of one group, where every walk
// would test every member. Such a cell is searched along the distance from a few
// anchors c instead (centres of its largest members, one per stack of shells).
//
// A body (centre x, radius r, lumen l = r - q) at distance rho = |x - c| from c has its
// wall within the distances [max(0, rho - r, l - rho), rho + r] from c: its radial
// interval K. Two bodies that intersect by the exact test (predicates.h, equations
// (1)-(3): d <= r_i + r_j, d >= l_j - r_i, d >= l_i - r_j) have overlapping radial
// intervals, by the triangle inequality |rho_i - rho_j| <= d <= rho_i + rho_j:
//   rho_i - r_i <= rho_j + r_j,   l_i - rho_i <= rho_j + r_j   (and with i, j swapped).
// Each member goes with the anchor that gives it the thinnest interval. A shell cell
// keeps the members of each anchor sorted by the start of K, those whose K is wider than
// the cell's cap w (a large body far from every anchor) last, and a walk that reaches
// the cell tests, per anchor, only the members whose K can meet its own (K_lo in
// [K_lo,x - w, K_hi,x]: binary searches) and the wide ones, whatever the walker (a
// member, a neighbour, a large body's rim walk). Nested shells have K = [l - rho,
// r + rho] about their stack's anchor, as thin as their walls when their centres are
// close; small bodies have K = [rho - r, rho + r] about any anchor, as thin as they are:
// output-sensitive where the members' intervals are thin against their spread.
//
// The anchors, greedily: the largest member; then, up to kShellAnchors, the largest
// member that no anchor yet serves (its interval about each is wider than a quarter of
// its radius plus its wall) among those at least kShellAnchorSize times the first's
// radius or kShellContainer times the cell's smallest (a compartment that holds many of
// the small bodies: a lysosome among the ILVs beside a stack). More anchors cost every
// walker a search each; smaller stacks' shells fall among the wide members.
// A small body's interval is 2 r wide about every anchor: it goes with the nearest, so
// that an anchor's hull stays as tight as its own compartment, and a walker far from it
// (a large shell of the next stack) skips its members whole.
//
// c, rho and K in double; the walker's interval is widened by two rounding pads
// (extent.cuh, rounding_pad: one bounds every rounding of the exact test, as the grid's
// windows use it; the other the double arithmetic here), so that it holds every pair the
// exact test accepts: the pairs stay exactly those of brute force.
// Periodic axes: rho is the minimum-image distance (a metric on the torus, as the exact
// test's distance).
//
// Which cells: HsxTuning's shell_* fields. The groups that may hold one are chosen on the
// host (group_grids.h, GroupGrid::shell_gate); their cells are reduced on the device,
// which marks the shell cells (and GroupGrid::shells) without a read-back of the choice.
#pragma once
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/logical.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/copy.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/buffers.cuh"
#include "common/cell_records.cuh"
#include "common/loops.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/predicates.h"
#include "nestsim/tuning.h"

namespace nestsim::detail {

constexpr uint32_t kShellAnchors = 16;

// A cell as the walks see it: its anchors, and the cap w on its sorted members' interval
// widths (w < 0: an ordinary cell, walked whole).
struct ShellCell {
  double centre[kShellAnchors][3];
  double lo[kShellAnchors], hi[kShellAnchors];  // the hull of each anchor's intervals
  uint32_t anchors;
  double largest;   // the first anchor's radius
  double smallest;  // the cell's smallest member's radius
  double cap;
};

// A member's interval wider than kShellWide times the cell's mean width is "wide": sorted
// after the others of its anchor and tested by every walker (by Markov's inequality at
// most a quarter of the members). A member is served by an anchor when its interval
// about it is at most kShellServed times its radius plus its wall.
constexpr double kShellWide = 4.0;
constexpr double kShellServed = 0.25;
constexpr double kShellAnchorSize = 1.0 / 16;
constexpr double kShellContainer = 8;
// Anchors whose intervals for a body are equally wide within kShellTie of their ends (a
// small body's, 2 r about every anchor): the body goes with the nearest.
constexpr double kShellTie = 0x1p-40;

// The sort key's low half in a shell cell: anchor << 29 | the interval's start
// (shell_order >> kOrderShift), or kShellWideLow for a wide member.
constexpr int kAnchorShift = 28;
constexpr int kOrderShift = 32 - kAnchorShift;
static_assert(kShellAnchors <= (1u << kOrderShift), "anchor numbers fit the key's top bits");
constexpr uint32_t kShellWideLow = (1u << kAnchorShift) - 1;
constexpr uint32_t kShellOrderMax = 0x7f800000u >> kOrderShift;  // +inf's

// Whether a group's cells are checked: gated on the host, and a dense grid (a cell's
// number is its bucket; fit_radix_passes may have hashed the table since).
NESTSIM_HD inline bool gated(const GroupGrid& g) { return g.shell_gate && g.grid.dense; }

// Not NaN, not infinite.
NESTSIM_HD inline bool finite(double v) { return v - v == 0; }

// The order of interval starts in a shell cell, and what the walks search: the value
// rounded to float (rounding is monotone), non-positive and NaN values as 0, by its bits
// (ordered as the values for non-negative floats): a >= b implies shell_order(a) >=
// shell_order(b), all that the cut needs.
NESTSIM_HD inline uint32_t shell_order(double v) {
  if (!(v > 0)) return 0u;
  if (v >= double(FLT_MAX)) return 0x7f800000u;  // +inf, above every finite float
  const float f = float(v);
  uint32_t bits = 0;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

// The radial interval [lo, hi] of a body (x, r, q) about c.
struct RadialInterval {
  double lo, hi;
};
template <class Real>
NESTSIM_HD inline RadialInterval radial_interval(const Space<Real>& space, const Real* x, Real r,
                                                 Real q, const double* c) {
  using std::sqrt;
  double d2 = 0;
  for (int a = 0; a < space.dim; ++a) {
    const double d =
        minimum_image(double(x[a]) - c[a], double(space.edge[a]), double(space.inv_edge[a]));
    d2 += d * d;
  }
  const double rho = sqrt(d2), rr = double(r), lumen = double(r) - double(q);
  double lo = rho - rr;
  if (lumen - rho > lo) lo = lumen - rho;
  if (!(lo > 0)) lo = 0;
  return {lo, rho + rr};
}

// The anchor of a cell's first `anchors` whose interval for (x, r, q) is thinnest (ties:
// the first), and that interval.
struct Anchored {
  uint32_t anchor;
  RadialInterval k;
};
template <class Real>
NESTSIM_HD inline Anchored best_anchor(const Space<Real>& space, const Real* x, Real r, Real q,
                                       const ShellCell& c, uint32_t anchors) {
  Anchored best{0, radial_interval(space, x, r, q, c.centre[0])};
  for (uint32_t a = 1; a < anchors; ++a) {
    const RadialInterval k = radial_interval(space, x, r, q, c.centre[a]);
    const double width = k.hi - k.lo, best_width = best.k.hi - best.k.lo;
    const double tie = kShellTie * (k.hi + best.k.hi);
    if (width < best_width - tie || (width <= best_width + tie && k.lo < best.k.lo))
      best = {a, k};
  }
  return best;
}

// Cell k before the reductions: no anchor, not a shell cell (the other fields are written
// as anchors are found; a whole-record fill would write every anchor's slots).
struct ClearShellCell {
  ShellCell* cells;
  NESTSIM_HD void operator()(uint64_t k) const {
    cells[k].anchors = 0;
    cells[k].cap = -1;
  }
};

// Sorted position t's cell, tagged with its group (group << 56 | cell): the reductions'
// key.
template <class Real>
struct ShellKeyOf {
  SortedBodies<Real> s;
  NESTSIM_HD uint64_t operator()(uint32_t t) const {
    return (uint64_t(s.group(t)) << 56) | s.key(t);
  }
};

// Anchor reductions: each cell's largest member that its first `anchor` anchors do not
// serve (r = -1: none; ties: the lowest centre, so that the choice does not depend on
// the order of the reduction). Whether a member is served is kept per member (MarkServed
// after each anchor): one interval per member and anchor, not one per earlier anchor.
template <class Real>
struct Largest {
  double r;
  Real x[3];
  double smallest;  // the smallest radius among the members reduced
  uint32_t members;  // how many
};
template <class Real>
struct UnservedOf {
  SortedBodies<Real> s;
  const ShellCell* cells;  // by global bucket - offset
  uint64_t offset;
  uint32_t anchor;
  const uint8_t* served;   // by sorted position - first
  uint32_t first;
  NESTSIM_HD Largest<Real> operator()(uint32_t t) const {
    Largest<Real> out{-1.0, {Real(0), Real(0), Real(0)}, DBL_MAX, 0};
    const GroupGrid& g = s.groups[s.group(t)];
    if (!gated(g)) return out;
    out.members = 1;
    const Real r = s.load(t, out.x);
    out.smallest = double(r);
    const ShellCell& c = cells[g.bucket_base + s.key(t) - offset];
    if (c.anchors < anchor) return out;  // the cell found none before: none now
    if (anchor > 0 && !(double(r) >= kShellAnchorSize * c.largest) &&
        !(double(r) > 0 && double(r) >= kShellContainer * c.smallest))
      return out;
    if (served[t - first]) return out;
    out.r = double(r);
    return out;
  }
};
// After anchor `anchor` was set: the members of its cell that it serves (its interval
// about them at most kShellServed times their radius plus their wall).
template <class Real>
struct MarkServed {
  SortedBodies<Real> s;
  Space<Real> space;
  const ShellCell* cells;
  uint64_t offset;
  uint32_t anchor;
  uint8_t* served;
  uint32_t first;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint32_t t = first + k;
    const GroupGrid& g = s.groups[s.group(t)];
    if (!gated(g) || served[k]) return;
    const ShellCell& c = cells[g.bucket_base + s.key(t) - offset];
    if (c.anchors <= anchor) return;
    Real x[3] = {0, 0, 0};
    const Real r = s.load(t, x);
    const Real q = s.thickness(t);
    const RadialInterval i = radial_interval(space, x, r, q, c.centre[anchor]);
    if (i.hi - i.lo <= kShellServed * double(r) + double(q)) served[k] = 1;
  }
};
template <class Real>
struct LargerOf {
  NESTSIM_HD Largest<Real> operator()(const Largest<Real>& a, const Largest<Real>& b) const {
    Largest<Real> out = a;
    if (a.r != b.r) {
      if (!(a.r > b.r)) out = b;
    } else {
      for (int k = 0; k < 3; ++k)
        if (a.x[k] != b.x[k]) {
          if (b.x[k] < a.x[k]) out = b;
          break;
        }
    }
    out.smallest = b.smallest < a.smallest ? b.smallest : a.smallest;
    out.members = a.members + b.members;
    return out;
  }
};
// Whether a cell's reduction gives it anchor `anchor`: a finite member, and members
// enough (shell_min_bodies for the first, as a shell cell needs; kShellPerAnchor per
// anchor for the others, whose searches every walker pays).
constexpr uint32_t kShellPerAnchor = 16;
template <class Real>
struct HasAnchor {
  uint32_t min_members;
  NESTSIM_HD bool operator()(const Largest<Real>& l) const {
    return l.r >= 0 && finite(l.r) && finite(double(l.x[0])) && finite(double(l.x[1])) &&
           finite(double(l.x[2])) && l.members >= min_members;
  }
};
inline uint32_t anchor_members(uint32_t anchor, uint32_t min_bodies) {
  const uint32_t per = kShellPerAnchor * (anchor + 1);
  return anchor == 0 || per < min_bodies ? (min_bodies > 0 ? min_bodies : 1) : per;
}
// Cell k's anchor `anchor` (the reduction's member), where it found one.
template <class Real>
struct SetAnchor {
  const GroupGrid* groups;
  const uint64_t* keys;
  const Largest<Real>* largest;
  ShellCell* cells;
  uint64_t offset;
  uint32_t anchor;
  uint32_t min_members;
  NESTSIM_HD void operator()(uint32_t k) const {
    const GroupGrid& g = groups[keys[k] >> 56];
    if (!gated(g) || !HasAnchor<Real>{min_members}(largest[k])) return;
    ShellCell& c = cells[g.bucket_base + (keys[k] & ((uint64_t(1) << 56) - 1)) - offset];
    if (c.anchors != anchor) return;
    for (int a = 0; a < 3; ++a) c.centre[anchor][a] = double(largest[k].x[a]);
    c.lo[anchor] = DBL_MAX;  // no members until SetHull: skipped by every walker
    c.hi[anchor] = -DBL_MAX;
    if (anchor == 0) {
      c.largest = largest[k].r;
      c.smallest = largest[k].smallest;
    }
    c.anchors = anchor + 1;
  }
};

// The spread reduction: count and widths summed of each cell's members' intervals about
// their anchors, and per anchor its members' count and starts' range.
struct Spread {
  uint32_t count;
  double width;
  uint32_t n[kShellAnchors];
  float lo_min[kShellAnchors], lo_max[kShellAnchors];  // rounded: a heuristic's inputs
};
NESTSIM_HD inline Spread no_spread() {
  Spread out{};
  out.count = 1;
  for (uint32_t a = 0; a < kShellAnchors; ++a) {
    out.lo_min[a] = FLT_MAX;
    out.lo_max[a] = -FLT_MAX;
  }
  return out;
}
template <class Real>
struct SpreadOf {
  SortedBodies<Real> s;
  Space<Real> space;
  const ShellCell* cells;
  uint64_t offset;
  NESTSIM_HD Spread operator()(uint32_t t) const {
    Spread out = no_spread();
    const GroupGrid& g = s.groups[s.group(t)];
    if (!gated(g)) return out;
    const ShellCell& c = cells[g.bucket_base + s.key(t) - offset];
    if (c.anchors == 0) return out;
    Real x[3] = {0, 0, 0};
    const Real r = s.load(t, x);
    const Anchored b = best_anchor(space, x, r, s.thickness(t), c, c.anchors);
    out.width = b.k.hi - b.k.lo;
    out.n[b.anchor] = 1;
    out.lo_min[b.anchor] = out.lo_max[b.anchor] = float(b.k.lo < FLT_MAX ? b.k.lo : FLT_MAX);
    return out;
  }
};
struct MergeSpread {
  NESTSIM_HD Spread operator()(const Spread& a, const Spread& b) const {
    Spread out;
    out.count = a.count + b.count;
    out.width = a.width + b.width;
    for (uint32_t k = 0; k < kShellAnchors; ++k) {
      out.n[k] = a.n[k] + b.n[k];
      out.lo_min[k] = b.lo_min[k] < a.lo_min[k] ? b.lo_min[k] : a.lo_min[k];
      out.lo_max[k] = b.lo_max[k] > a.lo_max[k] ? b.lo_max[k] : a.lo_max[k];
    }
    return out;
  }
};

// Cell k is a shell cell when its group is gated, it has an anchor and at least
// min_bodies members, and the members a walker keeps among those of its own anchor
// (twice the cap, kShellWide mean widths, over the spread of that anchor's starts),
// summed over the anchors weighted by their members, are at most max_overlap of the
// cell: sum_a n_a^2 min(1, 2 cap / spread_a) <= max_overlap n^2 (with one anchor:
// 2 cap <= max_overlap spread). Walkers from other anchors' compartments, which skip
// most anchors whole, are not counted.
struct MarkShellCells {
  GroupGrid* groups;
  const uint64_t* keys;
  const Spread* spread;
  ShellCell* cells;
  uint64_t offset;
  uint32_t min_bodies;
  double max_overlap;
  NESTSIM_HD void operator()(uint32_t k) const {
    GroupGrid& g = groups[keys[k] >> 56];
    const Spread& sp = spread[k];
    if (!gated(g) || sp.count < min_bodies) return;
    ShellCell& c = cells[g.bucket_base + (keys[k] & ((uint64_t(1) << 56) - 1)) - offset];
    const double cap = kShellWide * sp.width / double(sp.count);
    if (c.anchors == 0 || !finite(cap)) return;
    double kept = 0;
    for (uint32_t a = 0; a < c.anchors; ++a) {
      const double n = double(sp.n[a]), range = double(sp.lo_max[a]) - double(sp.lo_min[a]);
      const double share = range > 0 && 2.0 * cap < range ? 2.0 * cap / range : 1.0;
      kept += n * n * share;
    }
    const double all = double(sp.count);
    if (!(kept <= max_overlap * all * all)) return;
    c.cap = cap;
    g.shells = 1;  // every writer writes the same value
  }
};

// The sort key of sorted position t: (global bucket << 32) | its low half in a shell
// cell (anchor, interval start or wide), 0 elsewhere. Buckets keep their order (within a
// bucket no walk depends on it).
template <class Real>
struct ShellSortKey {
  SortedBodies<Real> s;
  Space<Real> space;
  const ShellCell* cells;
  uint64_t offset;
  uint32_t first;
  uint64_t* keys;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint32_t t = first + k;
    const GroupGrid& g = s.groups[s.group(t)];
    const uint64_t bucket = g.bucket_base + g.grid.bucket(s.key(t));
    uint32_t low = 0;
    if (gated(g)) {
      const ShellCell& c = cells[bucket - offset];  // dense: bucket == cell
      if (c.cap >= 0) {
        Real x[3] = {0, 0, 0};
        const Real r = s.load(t, x);
        const Anchored b = best_anchor(space, x, r, s.thickness(t), c, c.anchors);
        low = (b.anchor << kAnchorShift) |
              (b.k.hi - b.k.lo > c.cap ? kShellWideLow : shell_order(b.k.lo) >> kOrderShift);
      }
    }
    keys[k] = (bucket << 32) | low;
  }
};

// After the sort: each anchor's hull of intervals, reduced by (bucket, anchor) (the sort
// key >> kAnchorShift), so that a walker skips an anchor whose members' intervals all
// miss its own without a search.
template <class Real>
struct HullOf {
  SortedBodies<Real> s;
  Space<Real> space;
  const ShellCell* cells;
  uint64_t offset;
  uint32_t first;
  const uint64_t* keys;
  NESTSIM_HD RadialInterval operator()(uint32_t k) const {
    const uint32_t t = first + k;
    const ShellCell& c = cells[(keys[k] >> 32) - offset];
    if (!(c.cap >= 0)) return {0, 0};  // keys[k] > 0 only in shell cells
    Real x[3] = {0, 0, 0};
    const Real r = s.load(t, x);
    return radial_interval(space, x, r, s.thickness(t),
                           c.centre[uint32_t(keys[k]) >> kAnchorShift]);
  }
};
struct HullKey {
  const uint64_t* keys;
  NESTSIM_HD uint64_t operator()(uint32_t k) const { return keys[k] >> kAnchorShift; }
};
struct MergeHull {
  NESTSIM_HD RadialInterval operator()(const RadialInterval& a, const RadialInterval& b) const {
    return {b.lo < a.lo ? b.lo : a.lo, b.hi > a.hi ? b.hi : a.hi};
  }
};
struct SetHull {
  const uint64_t* hull_keys;  // bucket << 3 | anchor
  const RadialInterval* hull;
  ShellCell* cells;
  uint64_t offset;
  uint64_t cell_count;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint64_t bucket = hull_keys[k] >> kOrderShift;
    if (bucket < offset || bucket - offset >= cell_count) return;  // ungated groups between
    ShellCell& c = cells[bucket - offset];
    if (!(c.cap >= 0)) return;
    const uint32_t a = uint32_t(hull_keys[k] & ((1u << kOrderShift) - 1));
    c.lo[a] = hull[k].lo;
    c.hi[a] = hull[k].hi;
  }
};

// A walk's candidates (WindowVisitor's bucket ranges, a direct range) cut where they
// cross a shell cell of the group: the members whose intervals cannot meet the walker's
// are left out. Wraps the walk's own consumer (TestAgainst, WarpRanges); a shell group's
// walk tests its own columns (no deferral to the warp).
template <class Real, class Body>
struct ShellCut {
  const SortedBodies<Real>& s;
  const GroupGrid& grp;
  const ShellCell* cells;  // the group's, indexed by cell
  const uint64_t* keys;    // the sort keys, indexed by sorted position - key_first
  uint32_t key_first;
  const Space<Real>& space;
  double slack;            // two rounding pads
  const Real* x;           // the walker: centre, radius, thickness
  Real r, q;
  Body& body;

  NESTSIM_HD void operator()(uint32_t t) { body(t); }  // hashed cells: no shell cells
  NESTSIM_HD bool defers(const GridSpec&, uint64_t) const { return false; }
  template <class T>
  NESTSIM_HD void defer_columns(const LargePlan&, T, T, uint32_t, uint32_t, uint64_t, uint64_t,
                                uint32_t) {}

  // Sorted positions [t, end) of the group, cell by cell (a dense grid: the record's key
  // is its bucket): runs of ordinary cells passed on whole, shell cells cut.
  NESTSIM_HD void range(uint32_t t, uint32_t end) {
    const uint32_t* start = s.bucket_start + grp.bucket_base;
    uint32_t run = t;  // the pending run of ordinary cells
    while (t < end) {
      const uint64_t cell = s.key(t);
      const uint32_t cell_end = start[cell + 1] < end ? start[cell + 1] : end;
      const ShellCell& c = cells[cell];
      if (c.cap >= 0) {
        if (run < t) body.range(run, t);
        for (uint32_t a = 0; a < c.anchors; ++a)
          cut(c, a, start[cell], start[cell + 1], t, cell_end);
        run = cell_end;
      }
      t = cell_end;
    }
    if (run < end) body.range(run, end);
  }

  // Anchor a's members of cell [cs, ce) within [t, end) whose intervals may meet the
  // walker's: starts in [K_lo - cap, K_hi] (widened by the slack), and the wide ones.
  NESTSIM_HD void cut(const ShellCell& c, uint32_t a, uint32_t cs, uint32_t ce, uint32_t t,
                      uint32_t end) {
    const RadialInterval k = radial_interval(space, x, r, q, c.centre[a]);
    if (c.lo[a] > k.hi + slack || c.hi[a] < k.lo - slack) return;  // none can meet it
    const double hi = k.hi + slack;
    const uint32_t base = a << kAnchorShift;
    const uint32_t key_lo = base | (shell_order(k.lo - c.cap - slack) >> kOrderShift);
    const uint32_t key_hi = base | (hi == hi ? shell_order(hi) >> kOrderShift : kShellOrderMax);
    const uint32_t from = first_above(cs, ce, key_lo, true);
    const uint32_t to = first_above(from, ce, key_hi, false);
    const uint32_t wide = first_above(to, ce, base | kShellOrderMax, false);
    const uint32_t next = a + 1 < kShellAnchors
                              ? first_above(wide, ce, (a + 1) << kAnchorShift, true)
                              : ce;
    emit(from, to, t, end);
    emit(wide, next, t, end);
  }
  NESTSIM_HD void emit(uint32_t from, uint32_t to, uint32_t t, uint32_t end) {
    if (from < t) from = t;
    if (to > end) to = end;
    if (from < to) body.range(from, to);
  }
  // The first position in [lo, hi) whose key's low half is >= key (at_least) or > key.
  NESTSIM_HD uint32_t first_above(uint32_t lo, uint32_t hi, uint32_t key, bool at_least) const {
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      const uint32_t k = uint32_t(keys[mid - key_first]);
      if (at_least ? k < key : k <= key) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
};

// The shell cells of one find(): its buffers kept across calls.
template <class Real>
struct ShellCells {
  thrust::device_vector<ShellCell> cells;
  thrust::device_vector<uint64_t> keys, segment_keys;
  thrust::device_vector<Largest<Real>> largest;
  thrust::device_vector<Spread> spread;
  thrust::device_vector<RadialInterval> hull;
  thrust::device_vector<uint32_t> order;               // the sort's permutation
  thrust::device_vector<uint8_t> served;               // MarkServed's, by position - first
  thrust::device_vector<BodyRecord<Real>> moved;       // the records in their new order
  uint64_t offset = 0;   // global bucket of cells[0]
  uint32_t first = 0;    // sorted position of keys[0]

  // After the sort into cells: the gated groups' cells given anchors, reduced and marked,
  // their members sorted by (bucket, anchor, interval start) in place. Returns false
  // (nothing to do) without a gated group. `records` is the sorted records' buffer
  // behind s.
  template <class Policy>
  bool prepare(const Policy& exec, const std::vector<GroupGrid>& host, GroupGrid* groups,
               const SortedBodies<Real>& s, const Space<Real>& space, BodyRecord<Real>* records,
               const HsxTuning& t) {
    uint32_t last = 0;
    uint64_t bucket_lo = ~uint64_t(0), bucket_hi = 0;
    first = ~0u;
    for (const GroupGrid& g : host) {
      if (!gated(g) || g.end == g.begin) continue;
      first = g.begin < first ? g.begin : first;
      last = g.end > last ? g.end : last;
      bucket_lo = g.bucket_base < bucket_lo ? g.bucket_base : bucket_lo;
      const uint64_t top = g.bucket_base + g.grid.table_size;
      bucket_hi = top > bucket_hi ? top : bucket_hi;
    }
    if (first >= last) return false;
    const uint32_t count = last - first;
    offset = bucket_lo;
    ensure_size(cells, std::size_t(bucket_hi - bucket_lo));
    for_each_index(uint64_t(bucket_hi - bucket_lo), ClearShellCell{raw(cells)});
    ensure_size(keys, count);
    ensure_size(segment_keys, count);
    ensure_size(largest, count);
    ensure_size(spread, count);
    ensure_size(hull, count);
    ensure_size(served, count);
    thrust::fill_n(exec, served.begin(), count, uint8_t(0));
    const thrust::counting_iterator<uint32_t> at(first);
    const auto cell_of = thrust::make_transform_iterator(at, ShellKeyOf<Real>{s});
    uint32_t segments = 0;
    for (uint32_t a = 0; a < kShellAnchors; ++a) {
      const auto ends = thrust::reduce_by_key(
          exec, cell_of, cell_of + count,
          thrust::make_transform_iterator(
              at, UnservedOf<Real>{s, raw(cells), offset, a, raw(served), first}),
          segment_keys.begin(), largest.begin(), thrust::equal_to<uint64_t>(), LargerOf<Real>());
      segments = uint32_t(ends.first - segment_keys.begin());
      const uint32_t min_members = anchor_members(a, t.shell_min_bodies);
      if (!thrust::any_of(exec, largest.begin(), largest.begin() + segments,
                          HasAnchor<Real>{min_members}))
        break;
      for_each_index(segments, SetAnchor<Real>{groups, raw(segment_keys), raw(largest),
                                               raw(cells), offset, a, min_members});
      if (a + 1 < kShellAnchors)
        for_each_index(count,
                       MarkServed<Real>{s, space, raw(cells), offset, a, raw(served), first});
    }
    thrust::reduce_by_key(
        exec, cell_of, cell_of + count,
        thrust::make_transform_iterator(at, SpreadOf<Real>{s, space, raw(cells), offset}),
        segment_keys.begin(), spread.begin(), thrust::equal_to<uint64_t>(), MergeSpread());
    for_each_index(segments, MarkShellCells{groups, raw(segment_keys), raw(spread), raw(cells),
                                            offset, t.shell_min_bodies, t.shell_max_overlap});
    for_each_index(count, ShellSortKey<Real>{s, space, raw(cells), offset, first, raw(keys)});
    // The records follow a permutation (4-byte values in the sort, one gather of records):
    // no temporary array of the over-aligned records.
    ensure_size(order, count);
    ensure_size(moved, count);
    thrust::sequence(exec, order.begin(), order.begin() + count, first);
#if defined(NESTSIM_BACKEND_CUDA)
    thrust::sort_by_key(exec, keys.begin(), keys.begin() + count, order.begin());
#else  // OpenMP's merges allocate inside their parallel region: not from `exec`'s cache
    thrust::sort_by_key(nosync(), keys.begin(), keys.begin() + count, order.begin());
#endif
    for_each_index(count, GatherSorted<Real>{records, raw(order), raw(moved)});
    thrust::copy_n(exec, moved.begin(), count, thrust::device_pointer_cast(records + first));
    const thrust::counting_iterator<uint32_t> from(0);
    const auto hull_key = thrust::make_transform_iterator(from, HullKey{raw(keys)});
    const auto hull_ends = thrust::reduce_by_key(
        exec, hull_key, hull_key + count,
        thrust::make_transform_iterator(
            from, HullOf<Real>{s, space, raw(cells), offset, first, raw(keys)}),
        segment_keys.begin(), hull.begin(), thrust::equal_to<uint64_t>(), MergeHull());
    for_each_index(uint32_t(hull_ends.first - segment_keys.begin()),
                   SetHull{raw(segment_keys), raw(hull), raw(cells), offset,
                           bucket_hi - bucket_lo});
    return true;
  }
};

}  // namespace nestsim::detail

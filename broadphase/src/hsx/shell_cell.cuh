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
// the cell's cap w (a large body far from every anchor) after them, and a walk that
// reaches the cell tests, per anchor, only the members whose K can meet its own (K_lo in
// [K_lo,x - w, K_hi,x]: binary searches) and the wide ones, whatever the walker (a
// member, a neighbour, a large body's rim walk). Nested shells have K = [l - rho,
// r + rho] about their stack's anchor, as thin as their walls when their centres are
// close: output-sensitive where the members' intervals are thin against their spread.
// Small bodies that do not surround their anchor (rho >= r: K = [rho - r, rho + r], the
// ILVs of a lysosome) go last, in the order of a fine grid about their anchor (cells of
// HsxTuning::shell_fine_width mean diameters of the cell's small members, row by row: a
// radial cut would keep a spherical slab of such a cloud, hundreds of ILVs per ILV). A
// walker whose window of partners' centres spans few rows of that grid (an ILV) takes
// each row's run of fine cells by a search in the fine keys; a wider one (a shell) tests
// the small part through three levels of boxes (ShellBlock: blocks of kShellFanout
// blocks, of shell_block members, of a quarter block).
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
  // Each anchor's members: sorted positions [begin, end), the wide ones from `wide` on,
  // the small ones in space order from `small` on (the walks' searches run within an
  // anchor's part of the cell, not the whole cell).
  uint32_t begin[kShellAnchors], wide[kShellAnchors], small[kShellAnchors], end[kShellAnchors];
  double small_radius[kShellAnchors];  // the largest radius of each anchor's small members
  uint32_t anchors;
  double largest;   // the first anchor's radius
  double smallest;  // the cell's smallest member's radius
  double cap;
  double fine_scale;  // 1 / the width of the small members' fine cells (fine_code)
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

// The sort key's low half in a shell cell: anchor << kAnchorShift | the interval's start
// (shell_order >> kOrderShift), kShellWideLow for a wide member, kShellSmallLow for a
// small one (whose order within the anchor is its fine key, fine_code).
constexpr int kAnchorShift = 28;
constexpr int kOrderShift = 32 - kAnchorShift;
static_assert(kShellAnchors <= (1u << kOrderShift), "anchor numbers fit the key's top bits");
constexpr uint32_t kShellPartMask = (1u << kAnchorShift) - 1;  // the low half less the anchor
constexpr uint32_t kShellSmallLow = kShellPartMask;
constexpr uint32_t kShellWideLow = kShellPartMask - 1;
constexpr uint32_t kShellOrderMax = 0x7f800000u >> kOrderShift;  // +inf's
static_assert(kShellOrderMax < kShellWideLow, "interval starts sort before the wide members");
// A level-2 box covers kShellFanout blocks (ShellBlock).
constexpr uint32_t kShellFanout = 16;
constexpr int kShellFanoutShift = 4;
static_assert(kShellFanout == 1u << kShellFanoutShift, "the fan-out is a power of 2");
// A fine block (the small members' third level of boxes) is a block / 2^kShellFineShift.
constexpr int kShellFineShift = 2;
// A walker searches the small part by rows of fine cells when its rows, each costing
// about kShellRowCost candidates' tests (two galloping searches), are fewer than the
// part's members / kShellRowCost; else by boxes.
constexpr uint32_t kShellRowCost = 8;
// Fine cells: kFineBits an axis (biased by half the range), at least a cell's width /
// 2^kFineMinCells wide, so that every member's index lies inside the range.
constexpr int kFineBits = 21;
constexpr uint32_t kFineMax = (1u << kFineBits) - 1;
constexpr double kFineBias = double(1u << (kFineBits - 1));
constexpr int kFineMinCells = kFineBits - 2;

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
// The squared distance rho^2 of x from c (the minimum image on periodic axes), and the
// interval from it.
template <class Real>
NESTSIM_HD inline double radial_distance2(const Space<Real>& space, const Real* x,
                                          const double* c) {
  double d2 = 0;
  for (int a = 0; a < space.dim; ++a) {
    const double d =
        minimum_image(double(x[a]) - c[a], double(space.edge[a]), double(space.inv_edge[a]));
    d2 += d * d;
  }
  return d2;
}
template <class Real>
NESTSIM_HD inline RadialInterval radial_interval_of(double d2, Real r, Real q) {
  using std::sqrt;
  const double rho = sqrt(d2), rr = double(r), lumen = double(r) - double(q);
  double lo = rho - rr;
  if (lumen - rho > lo) lo = lumen - rho;
  if (!(lo > 0)) lo = 0;
  return {lo, rho + rr};
}
template <class Real>
NESTSIM_HD inline RadialInterval radial_interval(const Space<Real>& space, const Real* x, Real r,
                                                 Real q, const double* c) {
  return radial_interval_of(radial_distance2(space, x, c), r, q);
}

// The part of its anchor's members that a member with interval k about that anchor
// (radius r) sorts into: the wide ones (k wider than the cell's cap), the small ones
// (rho >= r, so that k = [rho - r, rho + r]: it does not surround the anchor; and at most
// a fine cell across, as every walker's window in the fine grid spans the part's largest
// radius: a lysosome beside a stack's anchor stays out), else the interval's start.
NESTSIM_HD inline uint32_t shell_part(const RadialInterval& k, double r, double cap,
                                      double fine_scale) {
  if (k.hi - k.lo > cap) return kShellWideLow;
  if (k.hi >= 2.0 * r && 2.0 * r * fine_scale <= 1.0) return kShellSmallLow;
  return shell_order(k.lo) >> kOrderShift;
}

// The fine grid of a shell cell's small members about their anchor c, cells 1 / scale
// wide: the index of offset d (minimum image) along an axis, floor(d scale) + kFineBias
// clamped to [0, kFineMax] (monotone in d, NaN: 0), and a centre's key, row by row (axis
// 0 fastest; axes past the space's dim 0).
NESTSIM_HD inline uint32_t fine_index(double u) {
  using std::floor;
  const double f = floor(u) + kFineBias;
  return f > 0 ? (f < double(kFineMax) ? uint32_t(f) : kFineMax) : 0u;  // NaN: 0
}
NESTSIM_HD inline uint64_t fine_key(uint64_t i0, uint64_t i1, uint64_t i2) {
  return (i2 << (2 * kFineBits)) | (i1 << kFineBits) | i0;
}
template <class Real>
NESTSIM_HD inline uint64_t fine_code(const Space<Real>& space, const Real* x, const double* c,
                                     double scale) {
  uint32_t i[3] = {0, 0, 0};
  for (int a = 0; a < space.dim; ++a)
    i[a] = fine_index(scale * minimum_image(double(x[a]) - c[a], double(space.edge[a]),
                                            double(space.inv_edge[a])));
  return fine_key(i[0], i[1], i[2]);
}

// A block of a shell cell's sorted members (HsxTuning::shell_block of them; a quarter
// block or kShellFanout blocks at the small members' other levels; aligned in the sorted
// order from the first member of a checked group): the box of their centres and their
// largest radius. Walker (x, r, q) and member (y, r_b, q_b) intersect by the exact test
// only where |x - y| <= r + r_b and |x - y| >= (r - q) - r_b (predicates.h, equations
// (1)-(2)); with d_min and d_max the walker's nearest and farthest distance to the box
// (minimum image on periodic axes: the circle's distance obeys the triangle inequality
// about the box's centre), a block holds no partner when d_min > r + R or
// d_max < (r - q) - R. The slack (two rounding pads) keeps every pair the exact test
// accepts.
template <class Real>
struct ShellBlock {
  Real lo[3], hi[3];
  Real radius;  // the largest member's
};
template <class Real>
NESTSIM_HD inline bool block_may_meet(const Space<Real>& space, const ShellBlock<Real>& b,
                                      const Real* x, Real r, Real q, double slack) {
  double near2 = 0, far2 = 0;
  for (int a = 0; a < space.dim; ++a) {
    const double half = 0.5 * (double(b.hi[a]) - double(b.lo[a]));
    const double centre = 0.5 * (double(b.lo[a]) + double(b.hi[a]));
    double d = minimum_image(double(x[a]) - centre, double(space.edge[a]),
                             double(space.inv_edge[a]));
    d = d < 0 ? -d : d;
    const double near = d > half ? d - half : 0;
    double far = d + half;
    if (space.edge[a] > Real(0) && far > 0.5 * double(space.edge[a]))
      far = 0.5 * double(space.edge[a]);
    near2 += near * near;
    far2 += far * far;
  }
  const double reach = double(r) + double(b.radius) + slack;
  if (near2 > reach * reach) return false;  // NaN compares false: kept
  const double lumen = double(r) - double(q) - double(b.radius) - slack;
  if (lumen > 0 && far2 < lumen * lumen) return false;
  return true;
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

}  // namespace nestsim::detail

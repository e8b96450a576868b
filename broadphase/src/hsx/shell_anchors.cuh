// The preparation of shell cells (shell_cell.cuh) on the device, as ShellCells::prepare
// runs it: the anchor reductions, the spread of each cell's intervals and the shell-cell
// test, the sort key of the members, and each anchor's hull of intervals.
#pragma once
#include "shell_cell.cuh"

namespace nestsim::detail {

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
    c.begin[anchor] = c.wide[anchor] = c.small[anchor] = c.end[anchor] = 0;
    c.small_radius[anchor] = 0;
    if (anchor == 0) {
      c.largest = largest[k].r;
      c.smallest = largest[k].smallest;
    }
    c.anchors = anchor + 1;
  }
};

// The spread reduction: count and widths summed of each cell's members' intervals about
// their anchors, per anchor the count and starts' range of its members that surround it
// (those searched by their intervals), and the count and radii summed of the members
// that do not (the small part, searched in fine cells sized by their mean).
struct Spread {
  uint32_t count;
  double width;
  uint32_t small;
  double small_radii;
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
    if (b.k.hi >= 2.0 * double(r)) {  // searched in the fine grid, not by its interval
      out.small = 1;
      out.small_radii = double(r);
      return out;
    }
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
    out.small = a.small + b.small;
    out.small_radii = a.small_radii + b.small_radii;
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
// 2 cap <= max_overlap spread). n_a and the spreads count only the members searched by
// their intervals: the small ones (SpreadOf) are searched in the fine grid, where a
// walker keeps its own fine cells, not a slab of the cloud (counted, a lysosome's ILVs
// about their lysosome would leave its cell ordinary, every ILV testing every other:
// docs/performance.md, "Small members out of the shell-cell criterion"). Walkers from
// other anchors' compartments, which skip most anchors whole, are not counted. A shell cell's fine cells: fine_width mean
// diameters of its small members plus half the walks' slack (which widens every window:
// with float coordinates of 1e5 it is several diameters), at least the cell's widest
// axis / 2^kFineMinCells.
struct MarkShellCells {
  GroupGrid* groups;
  const uint64_t* keys;
  const Spread* spread;
  ShellCell* cells;
  uint64_t offset;
  uint32_t min_bodies;
  double max_overlap;
  double fine_width;
  double slack;
  double fine_min_cells;
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
    double width = sp.small > 0 ? fine_width * 2.0 * sp.small_radii / double(sp.small) : 0;
    width += 0.5 * slack;
    if (fine_min_cells > 0 && 2 * sp.small >= sp.count) {
      // Mostly small members: the fine grid must cut the cell finer than its group's grid.
      double narrowest = g.grid.width[0];
      for (int a = 1; a < g.grid.dim; ++a)
        narrowest = g.grid.width[a] < narrowest ? g.grid.width[a] : narrowest;
      if (!(width * fine_min_cells <= narrowest)) return;  // NaN: ordinary
    }
    for (int a = 0; a < g.grid.dim; ++a) {
      const double least = g.grid.width[a] * (1.0 / double(1u << kFineMinCells));
      width = width > least ? width : least;  // NaN: the least
    }
    c.fine_scale = 1.0 / width;
    c.cap = cap;
    g.shells = 1;  // every writer writes the same value
  }
};

// The sort key of sorted position t: (global bucket << 32) | its low half in a shell
// cell (anchor, then interval start, wide or small: shell_part), 0 elsewhere. Buckets
// keep their order (within a bucket no walk depends on it); a small part's order is its
// fine keys' (FineKey, sorted first).
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
        low = (b.anchor << kAnchorShift) | shell_part(b.k, double(r), c.cap, c.fine_scale);
      }
    }
    keys[k] = (bucket << 32) | low;
  }
};

// Whether a sort key is a small member's (ShellSortKey): their fine keys are then sorted
// first (FineKey), and the sort by keys keeps their order.
struct IsSmallKey {
  NESTSIM_HD bool operator()(uint64_t key) const {
    return (uint32_t(key) & kShellPartMask) == kShellSmallLow;
  }
};
// Position k's fine key about its anchor (fine_code) for a small member, 0 for the
// others: before the sort (its order) and after it (what the walks search; the same
// records, the same keys).
template <class Real>
struct FineKey {
  SortedBodies<Real> s;
  Space<Real> space;
  const ShellCell* cells;
  uint64_t offset;
  uint32_t first;
  const uint64_t* keys;
  uint64_t* out;
  NESTSIM_HD void operator()(uint32_t k) const {
    out[k] = 0;
    if (!IsSmallKey{}(keys[k])) return;
    const ShellCell& c = cells[(keys[k] >> 32) - offset];
    Real x[3] = {0, 0, 0};
    s.load(first + k, x);
    out[k] = fine_code(space, x, c.centre[uint32_t(keys[k]) >> kAnchorShift], c.fine_scale);
  }
};
// out[k] = keys[order[k] - first]: the sort keys in the fine keys' permutation.
struct GatherKeys {
  const uint64_t* keys;
  const uint32_t* order;
  uint32_t first;
  uint64_t* out;
  NESTSIM_HD void operator()(uint32_t k) const { out[k] = keys[order[k] - first]; }
};

// After the sort: each anchor's hull of intervals and its members' sorted positions,
// reduced by (bucket, anchor) (the sort key >> kAnchorShift), so that a walker skips an
// anchor whose members' intervals all miss its own without a search, and searches only
// the anchor's own positions.
struct HullSpan {
  RadialInterval k;
  double small_r;  // the largest radius among the small members
  // wide, small: the first wide (small) member's position, or ~0u: none
  uint32_t begin, wide, small, end;
};
template <class Real>
struct HullOf {
  SortedBodies<Real> s;
  Space<Real> space;
  const ShellCell* cells;
  uint64_t offset;
  uint32_t first;
  const uint64_t* keys;
  NESTSIM_HD HullSpan operator()(uint32_t k) const {
    const uint32_t t = first + k;
    const ShellCell& c = cells[(keys[k] >> 32) - offset];
    if (!(c.cap >= 0)) return {{0, 0}, 0, t, ~0u, ~0u, t + 1};  // keys[k] > 0 only in shell cells
    Real x[3] = {0, 0, 0};
    const Real r = s.load(t, x);
    const uint32_t low = uint32_t(keys[k]);
    const uint32_t part = low & kShellPartMask;
    const bool small = part == kShellSmallLow;
    return {radial_interval(space, x, r, s.thickness(t), c.centre[low >> kAnchorShift]),
            small ? double(r) : 0.0, t, part == kShellWideLow ? t : ~0u, small ? t : ~0u,
            t + 1};
  }
};
struct HullKey {
  const uint64_t* keys;
  NESTSIM_HD uint64_t operator()(uint32_t k) const { return keys[k] >> kAnchorShift; }
};
struct MergeHull {
  NESTSIM_HD HullSpan operator()(const HullSpan& a, const HullSpan& b) const {
    return {{b.k.lo < a.k.lo ? b.k.lo : a.k.lo, b.k.hi > a.k.hi ? b.k.hi : a.k.hi},
            b.small_r > a.small_r ? b.small_r : a.small_r,
            b.begin < a.begin ? b.begin : a.begin,
            b.wide < a.wide ? b.wide : a.wide,
            b.small < a.small ? b.small : a.small,
            b.end > a.end ? b.end : a.end};
  }
};
struct SetHull {
  const uint64_t* hull_keys;  // bucket << kOrderShift | anchor
  const HullSpan* hull;
  ShellCell* cells;
  uint64_t offset;
  uint64_t cell_count;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint64_t bucket = hull_keys[k] >> kOrderShift;
    if (bucket < offset || bucket - offset >= cell_count) return;  // ungated groups between
    ShellCell& c = cells[bucket - offset];
    if (!(c.cap >= 0)) return;
    const uint32_t a = uint32_t(hull_keys[k] & ((1u << kOrderShift) - 1));
    const HullSpan& h = hull[k];
    c.lo[a] = h.k.lo;
    c.hi[a] = h.k.hi;
    c.begin[a] = h.begin;
    c.end[a] = h.end;
    c.small[a] = h.small < h.end ? h.small : h.end;
    c.wide[a] = h.wide < c.small[a] ? h.wide : c.small[a];
    c.small_radius[a] = h.small_r;
  }
};

// Block k's box and largest radius (ShellBlock), over sorted positions
// [first + k 2^shift, first + (k + 1) 2^shift) cut at first + count.
template <class Real>
struct BlockBounds {
  SortedBodies<Real> s;
  uint32_t first, count;
  int shift;
  ShellBlock<Real>* blocks;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint32_t from = first + (k << shift);
    const uint32_t span = count - (k << shift);
    const uint32_t to = from + (span < (1u << shift) ? span : (1u << shift));
    ShellBlock<Real> b;
    Real x[3] = {0, 0, 0};
    b.radius = s.load(from, x);
    for (int a = 0; a < 3; ++a) b.lo[a] = b.hi[a] = x[a];
    for (uint32_t t = from + 1; t < to; ++t) {
      const Real r = s.load(t, x);
      b.radius = r > b.radius ? r : b.radius;
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = x[a] < b.lo[a] ? x[a] : b.lo[a];
        b.hi[a] = x[a] > b.hi[a] ? x[a] : b.hi[a];
      }
    }
    blocks[k] = b;
  }
};
// Box k of the level above: the union of boxes [k 2^shift, (k + 1) 2^shift) cut at
// `count`.
template <class Real>
struct MergeBounds {
  const ShellBlock<Real>* blocks;
  uint32_t count;
  int shift;
  ShellBlock<Real>* out;
  NESTSIM_HD void operator()(uint32_t k) const {
    const uint32_t from = k << shift;
    const uint32_t to = count - from < (1u << shift) ? count : from + (1u << shift);
    ShellBlock<Real> b = blocks[from];
    for (uint32_t j = from + 1; j < to; ++j) {
      const ShellBlock<Real>& o = blocks[j];
      b.radius = o.radius > b.radius ? o.radius : b.radius;
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = o.lo[a] < b.lo[a] ? o.lo[a] : b.lo[a];
        b.hi[a] = o.hi[a] > b.hi[a] ? o.hi[a] : b.hi[a];
      }
    }
    out[k] = b;
  }
};

}  // namespace nestsim::detail

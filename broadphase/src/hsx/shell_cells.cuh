// Shell cells in a find (shell_cell.cuh says what they are): a walk's candidates cut
// where they cross one (ShellCut), and the buffers and steps that make them
// (ShellCells::prepare, with the functors of shell_anchors.cuh).
#pragma once
#include <thrust/transform_reduce.h>

#include "shell_anchors.cuh"

namespace nestsim::detail {

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
  const ShellBlock<Real>* blocks;  // by (sorted position - key_first) >> block_shift; or null
  const ShellBlock<Real>* fanout;  // by (sorted position - key_first) >> fanout_shift
  const ShellBlock<Real>* fine;    // by (sorted position - key_first) >> fine_shift
  const uint64_t* fine_keys;       // the small members' (FineKey), as keys
  int block_shift, fanout_shift, fine_shift;
  double block_walker;     // HsxTuning::shell_block_walker
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
        for (uint32_t a = 0; a < c.anchors; ++a) cut(c, a, t, cell_end);
        run = cell_end;
      }
      t = cell_end;
    }
    if (run < end) body.range(run, end);
  }

  // Anchor a's members within [t, end) whose intervals may meet the walker's: starts in
  // [K_lo - cap, K_hi] (widened by the slack), the wide ones, and the small ones in the
  // fine cells or boxes that the walker may meet.
  NESTSIM_HD void cut(const ShellCell& c, uint32_t a, uint32_t t, uint32_t end) {
    // Most anchors are rejected on rho^2 alone: rho - r > hi + slack puts the walker's
    // interval past the anchor's hull, rho + r < lo - slack before it (the factors keep
    // the rounding of the squares on the side of testing).
    const double d2 = radial_distance2(space, x, c.centre[a]);
    const double past = c.hi[a] + double(r) + slack, before = c.lo[a] - slack - double(r);
    if (past >= 0 && d2 > past * past * (1 + 0x1p-40)) return;
    if (before > 0 && d2 * (1 + 0x1p-40) < before * before) return;
    const RadialInterval k = radial_interval_of(d2, r, q);
    if (c.lo[a] > k.hi + slack || c.hi[a] < k.lo - slack) return;  // none can meet it
    const double hi = k.hi + slack;
    const uint32_t base = a << kAnchorShift;
    const uint32_t key_lo = base | (shell_order(k.lo - c.cap - slack) >> kOrderShift);
    const uint32_t key_hi = base | (hi == hi ? shell_order(hi) >> kOrderShift : kShellOrderMax);
    const uint32_t wide = c.wide[a], small = c.small[a];
    const uint32_t from = first_above(c.begin[a], wide, key_lo, true);
    const uint32_t to = first_above(from, wide, key_hi, false);
    const bool blocked = blocks && k.hi - k.lo > block_walker * c.cap;
    emit(from, to, t, end, blocked);
    emit(wide, small, t, end, blocked);
    if (small < c.end[a]) small_part(c, a, small, c.end[a], t, end);
  }
  // Anchor a's small members [from, to) within [t, end): by rows of fine cells (fine_code)
  // where the walker's window, the centres within r + the part's largest radius + the
  // slack of x axis by axis, spans few rows; else by boxes. Offsets are minimum images
  // about the anchor: on a periodic axis the window stays within half an edge of it (else
  // the boxes), so that a partner's offset is the walker's plus their displacement.
  NESTSIM_HD void small_part(const ShellCell& c, uint32_t a, uint32_t from, uint32_t to,
                             uint32_t t, uint32_t end) {
    if (from < t) from = t;
    if (to > end) to = end;
    if (from >= to) return;
    const double reach = double(r) + c.small_radius[a] + slack;
    uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    uint64_t rows = 1;
    bool fine = finite(reach);
    for (int k = 0; k < space.dim; ++k) {
      const double edge = double(space.edge[k]);
      const double d = minimum_image(double(x[k]) - c.centre[a][k], edge,
                                     double(space.inv_edge[k]));
      const double far = (d < 0 ? -d : d) + reach;
      if (!finite(d) || (edge > 0 && !(far < 0.5 * edge * (1 - 0x1p-20)))) fine = false;
      lo[k] = fine_index((d - reach) * c.fine_scale);
      hi[k] = fine_index((d + reach) * c.fine_scale);
      if (k > 0) rows *= uint64_t(hi[k] - lo[k] + 1);
    }
    if (!fine || rows * kShellRowCost > to - from) {
      boxes(from, to, t, end);
      return;
    }
    for (uint32_t i2 = lo[2]; i2 <= hi[2]; ++i2)
      for (uint32_t i1 = lo[1]; i1 <= hi[1]; ++i1) {
        from = gallop(from, to, fine_key(lo[0], i1, i2), false);
        const uint32_t stop = gallop(from, to, fine_key(hi[0], i1, i2), true);
        if (from < stop) body.range(from, stop);
        if (stop >= to) return;
        from = stop;
      }
  }
  // The first position in [lo, hi) whose fine key is >= key (or > key where `after`), hi
  // if none: steps doubling from lo, then a binary search (the next row lies near).
  NESTSIM_HD uint32_t gallop(uint32_t lo, uint32_t hi, uint64_t key, bool after) const {
    for (uint32_t step = 1; lo < hi; step *= 2) {
      const uint32_t p = hi - lo > step ? lo + step - 1 : hi - 1;
      if (!fine_below(p, key, after)) {
        hi = p;
        break;
      }
      lo = p + 1;
    }
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (fine_below(mid, key, after)) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  NESTSIM_HD bool fine_below(uint32_t p, uint64_t key, bool after) const {
    const uint64_t k = fine_keys[p - key_first];
    return after ? k <= key : k < key;
  }
  // The small members [from, to) within [t, end), through three levels of boxes: those
  // of kShellFanout blocks, of a block, of a fine block (ShellCells::fine_shift); each
  // level tested only within the boxes above it that the walker may meet.
  NESTSIM_HD void boxes(uint32_t from, uint32_t to, uint32_t t, uint32_t end) {
    if (from < t) from = t;
    if (to > end) to = end;
    if (!blocks) {  // (ShellSortKey sets no small part without blocks)
      if (from < to) body.range(from, to);
      return;
    }
    uint32_t run = from;  // the pending run of kept members
    while (from < to) {
      const uint32_t k2 = (from - key_first) >> fanout_shift;
      const uint32_t stop2 = box_end(k2, fanout_shift, to);
      if (!block_may_meet(space, fanout[k2], x, r, q, slack)) {
        if (run < from) body.range(run, from);
        from = run = stop2;
        continue;
      }
      while (from < stop2) {
        const uint32_t k1 = (from - key_first) >> block_shift;
        const uint32_t stop1 = box_end(k1, block_shift, stop2);
        if (!block_may_meet(space, blocks[k1], x, r, q, slack)) {
          if (run < from) body.range(run, from);
          from = run = stop1;
          continue;
        }
        while (from < stop1) {
          const uint32_t k0 = (from - key_first) >> fine_shift;
          const uint32_t stop0 = box_end(k0, fine_shift, stop1);
          if (!block_may_meet(space, fine[k0], x, r, q, slack)) {
            if (run < from) body.range(run, from);
            run = stop0;
          }
          from = stop0;
        }
      }
    }
    if (run < to) body.range(run, to);
  }
  // The end of box k of 2^shift members, or `to` if sooner.
  NESTSIM_HD uint32_t box_end(uint32_t k, int shift, uint32_t to) const {
    const uint64_t e = uint64_t(key_first) + (uint64_t(k + 1) << shift);
    return e < to ? uint32_t(e) : to;
  }
  // Candidates [from, to) within [t, end), less the blocks that hold no partner where
  // `blocked`.
  NESTSIM_HD void emit(uint32_t from, uint32_t to, uint32_t t, uint32_t end, bool blocked) {
    if (from < t) from = t;
    if (to > end) to = end;
    if (!blocked) {
      if (from < to) body.range(from, to);
      return;
    }
    uint32_t run = from;  // the pending run of kept blocks
    while (from < to) {
      const uint32_t block = (from - key_first) >> block_shift;
      const uint64_t block_end = uint64_t(key_first) + (uint64_t(block + 1) << block_shift);
      const uint32_t stop = block_end < to ? uint32_t(block_end) : to;
      if (!block_may_meet(space, blocks[block], x, r, q, slack)) {
        if (run < from) body.range(run, from);
        run = stop;
      }
      from = stop;
    }
    if (run < to) body.range(run, to);
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

// The members of global bucket b (a reduction's value: the most crowded cell).
struct CellMembers {
  const uint32_t* bucket_start;
  NESTSIM_HD uint32_t operator()(uint64_t b) const {
    return bucket_start[b + 1] - bucket_start[b];
  }
};
struct MaxMembers {
  NESTSIM_HD uint32_t operator()(uint32_t a, uint32_t b) const { return a < b ? b : a; }
};

// The shell cells of one find(): its buffers kept across calls.
template <class Real>
struct ShellCells {
  thrust::device_vector<ShellCell> cells;
  thrust::device_vector<uint64_t> keys, segment_keys, space_keys;
  thrust::device_vector<uint64_t> fine_keys;           // FineKey's, by position - first
  thrust::device_vector<Largest<Real>> largest;
  thrust::device_vector<Spread> spread;
  thrust::device_vector<HullSpan> hull;
  thrust::device_vector<uint32_t> order;               // the sort's permutation
  thrust::device_vector<uint8_t> served;               // MarkServed's, by position - first
  thrust::device_vector<BodyRecord<Real>> moved;       // the records in their new order
  thrust::device_vector<ShellBlock<Real>> blocks;      // of the sorted members (shell_block)
  thrust::device_vector<ShellBlock<Real>> fanout;      // of kShellFanout blocks each
  thrust::device_vector<ShellBlock<Real>> fine;        // of 2^fine_shift members each
  int block_shift = -1;  // log2 of shell_block; -1: no blocks
  int fine_shift = 0;    // log2 of a fine block's members: a quarter block (kShellFineShift)
  uint64_t offset = 0;   // global bucket of cells[0]
  uint32_t first = 0;    // sorted position of keys[0]
  double slack = 0;      // the walks' (ShellCut::slack), set before prepare

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
    // A shell cell has at least shell_min_bodies members (its first anchor's round and
    // MarkShellCells ask as much), and the rounds run only where a cell has
    // shell_prep_min_bodies. Without a cell that crowded among the gated groups'
    // buckets (scenes other than piles of shells: the exponential ones' crowded group),
    // nothing below runs and the walks keep the kernels without shell code: one
    // reduction over the buckets instead of the anchor rounds, the sort and the hulls.
    const uint32_t crowded = thrust::transform_reduce(
        exec, thrust::counting_iterator<uint64_t>(bucket_lo),
        thrust::counting_iterator<uint64_t>(bucket_hi), CellMembers{s.bucket_start}, 0u,
        MaxMembers());
    if (crowded < anchor_members(0, t.shell_min_bodies) || crowded < t.shell_prep_min_bodies)
      return false;
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
                          HasAnchor<Real>{min_members})) {
        if (a == 0) return false;  // no cell has an anchor: none is a shell cell
        break;
      }
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
                                            offset, t.shell_min_bodies, t.shell_max_overlap,
                                            t.shell_fine_width, slack,
                                            t.shell_fine_min_cells});
    for_each_index(count, ShellSortKey<Real>{s, space, raw(cells), offset, first, raw(keys)});
    // The records follow a permutation (4-byte values in the sort, one gather of records):
    // no temporary array of the over-aligned records.
    ensure_size(order, count);
    ensure_size(moved, count);
    thrust::sequence(exec, order.begin(), order.begin() + count, first);
    // Small members: sorted by fine key first, then stably by key, so that each anchor's
    // small part ends in fine-key order (the keys' 32 low bits hold no room for it).
    const bool small_part =
        thrust::any_of(exec, keys.begin(), keys.begin() + count, IsSmallKey{});
    if (small_part) {
      ensure_size(space_keys, count);
      for_each_index(count, FineKey<Real>{s, space, raw(cells), offset, first, raw(keys),
                                          raw(space_keys)});
      sort_keys(exec, space_keys, count);
      for_each_index(count, GatherKeys{raw(keys), raw(order), first, raw(space_keys)});
      keys.swap(space_keys);
    }
    sort_keys(exec, keys, count);
    for_each_index(count, GatherSorted<Real>{records, raw(order), raw(moved)});
    thrust::copy_n(exec, moved.begin(), count, thrust::device_pointer_cast(records + first));
    if (small_part) {
      ensure_size(fine_keys, count);
      for_each_index(count, FineKey<Real>{s, space, raw(cells), offset, first, raw(keys),
                                          raw(fine_keys)});
    }
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
    block_shift = -1;
    if (t.shell_block > 0) {
      block_shift = 0;
      while ((1u << block_shift) < t.shell_block) ++block_shift;
      const uint32_t block_count = uint32_t((uint64_t(count) + t.shell_block - 1) >> block_shift);
      ensure_size(blocks, block_count);
      if (!small_part) {  // blocks alone: no walker searches the other levels
        for_each_index(block_count,
                       BlockBounds<Real>{s, first, count, block_shift, raw(blocks)});
        return true;
      }
      // Fine blocks from the records, blocks and second-level boxes from the level below.
      fine_shift = block_shift > kShellFineShift ? block_shift - kShellFineShift : 0;
      const uint32_t fine_count =
          uint32_t((uint64_t(count) + (1u << fine_shift) - 1) >> fine_shift);
      ensure_size(fine, fine_count);
      for_each_index(fine_count, BlockBounds<Real>{s, first, count, fine_shift, raw(fine)});
      for_each_index(block_count, MergeBounds<Real>{raw(fine), fine_count, block_shift - fine_shift,
                                                   raw(blocks)});
      const uint32_t fanout_count = (block_count + kShellFanout - 1) >> kShellFanoutShift;
      ensure_size(fanout, fanout_count);
      for_each_index(fanout_count, MergeBounds<Real>{raw(blocks), block_count, kShellFanoutShift,
                                                    raw(fanout)});
    }
    return true;
  }
  // `order` sorted stably by the first `count` of `by` (a radix sort on the GPU).
  template <class Policy>
  void sort_keys(const Policy& exec, thrust::device_vector<uint64_t>& by, uint32_t count) {
#if defined(NESTSIM_BACKEND_CUDA)
    thrust::stable_sort_by_key(exec, by.begin(), by.begin() + count, order.begin());
#else  // OpenMP's merges allocate inside their parallel region: not from `exec`'s cache
    (void)exec;
    thrust::stable_sort_by_key(nosync(), by.begin(), by.begin() + count, order.begin());
#endif
  }
};

}  // namespace nestsim::detail

// The HSX walks over the groups' grids (HSX paper section 4): the small-small pairs of
// each group, the large bodies' tasks and their rim walks, and a deferred column's walk.
#pragma once
#include <cstdint>

#include "common/test_against.cuh"
#include "hsx/shell_cells.cuh"
#include "hsx/warp_ranges.cuh"

// The shell cells' walks (hsx/shell_cells.cuh) compiled apart: on the GPU so that their
// registers do not weigh on the walks of every other group, on the CPU so that their
// code does not weigh on the inlining of those walks (with it inlined, GCC called the
// window's plan and its columns as functions in every walk: 15% more instructions and
// up to 1.7x the time of a search without shell cells, docs/performance.md, "The CPU
// walks inlined").
#if defined(__CUDACC__)
#define NESTSIM_SHELL_WALK __noinline__
#else
#define NESTSIM_SHELL_WALK __attribute__((noinline))
#endif

namespace nestsim::detail {

// HSX over all groups of levels at once (docs/performance.md, "All groups of levels in
// one sort").
template <class Real>
struct GroupedView {
  SortedBodies<Real> s;
  Space<Real> space;
  uint32_t group_count = 0;
  double pad = 0;  // rounding allowance (extent.cuh, rounding_pad)
  const uint64_t* task_start = nullptr;  // large items + 1 offsets
  // Per task, (its item's first task << 32) | its item (MarkTaskOwners); or null.
  const uint64_t* task_owner = nullptr;
  uint64_t items = 0;                    // large items (large body, smaller group)
  // The shell cells (hsx/shell_cells.cuh) of the groups with GroupGrid::shells, by
  // global bucket - shell_offset, and their members' sort keys, by sorted position -
  // shell_first.
  const ShellCell* shell_cell = nullptr;
  uint64_t shell_offset = 0;
  const uint64_t* shell_key = nullptr;
  uint32_t shell_first = 0;
  const ShellBlock<Real>* shell_block = nullptr;  // by (sorted position - shell_first) >> shift
  const ShellBlock<Real>* shell_fanout = nullptr;  // blocks of kShellFanout blocks
  const ShellBlock<Real>* shell_fine = nullptr;    // fine blocks, of 2^shell_fine_shift
  const uint64_t* shell_fine_key = nullptr;        // the small members' fine keys (FineKey)
  int shell_block_shift = 0, shell_fine_shift = 0;
  double shell_block_walker = 0;  // HsxTuning::shell_block_walker

  // A walk's candidates cut at grp's shell cells: `body` wrapped for walker (x, r, q).
  template <class Body>
  NESTSIM_HD ShellCut<Real, Body> shell_cut(const GroupGrid& grp, const Real* x, Real r, Real q,
                                            Body& body) const {
    const ShellCell* cells = shell_cell + (grp.bucket_base - shell_offset);
    return ShellCut<Real, Body>{s,
                                grp,
                                cells,
                                shell_key,
                                shell_first,
                                shell_block,
                                shell_fanout,
                                shell_fine,
                                shell_fine_key,
                                shell_block_shift,
                                shell_block_shift + kShellFanoutShift,
                                shell_fine_shift,
                                shell_block_walker,
                                space,
                                2.0 * pad,
                                x,
                                r,
                                q,
                                body};
  }

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
  NESTSIM_HD NESTSIM_HOST_INLINE void operator()(const long long* c, long long lo, long long hi) {
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
// spanning the group's largest, at the price of the row skip (docs/performance.md,
// "The larger-side rule").
// Shells: the walk of a find with shell cells (GroupGrid::shells may be set); without,
// the kernel holds no shell code (GroupSmallPairs, the path of every other scene).
template <class Real, int Dim, bool Write, bool Shells>
struct GroupSmallWalk {
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
    if constexpr (Shells) {
      if (grp.shells) {
        walk_shells<Larger>(a, grp, test.pa, test.ra, test.qa, body);
        return;
      }
    }
    walk_cells<Larger>(a, grp, test.pa, test.ra, body);
  }
  template <bool Larger, class Body>
  NESTSIM_HD NESTSIM_SHELL_WALK void walk_shells(uint32_t a, const GroupGrid& grp, const Real* x,
                                                 Real ra, Real qa, Body& body) const {
    auto cut = v.shell_cut(grp, x, ra, qa, body);
    walk_cells<Larger>(a, grp, x, ra, cut);
  }
  // The walk of body a (centre x, radius ra) over its window, its candidates to `body`.
  template <bool Larger, class Body>
  NESTSIM_HD void walk_cells(uint32_t a, const GroupGrid& grp, const Real* x, Real ra,
                             Body& body) const {
    const SortedBodies<Real>& s = v.s;
    const uint32_t first = Larger ? grp.begin : a + 1;
    if (!grp.brute) {
      // The window's geometry in the bodies' precision (grid.cuh, GridSpec::coord).
      const Real outer = Larger ? ra + ra + Real(v.pad)  // partners: r_b <= r_a
                                : window_outer(ra, grp, v.pad);
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

// Each task's item without a binary search per task (docs/performance.md, "Task owners"):
// the first task of every item that has tasks marks (first task << 32) | item in a zeroed
// array, and an inclusive maximum scan then fills each run of tasks with it (first tasks
// and items ascend together): a task learns its rank in its item without reading
// task_start. The table holds `capacity` (< 2^32) tasks (the total is not read back,
// which would stall the host; docs/performance.md, "The read-backs' gaps"): tasks past it
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
// Shells: as GroupSmallWalk's.
template <class Real, int Dim, bool Write, bool Shells>
struct GroupLargeWalk {
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
    if constexpr (Shells) {
      if (grp.shells) {
        walk_shells(grp, local, test.pa, test.ra, test.qa, body);
        return;
      }
    }
    walk_task(grp, local, test.pa, test.ra, test.qa, body);
  }
  template <class Body>
  NESTSIM_HD NESTSIM_SHELL_WALK void walk_shells(const GroupGrid& grp, uint64_t local,
                                                 const Real* x, Real ra, Real qa,
                                                 Body& body) const {
    auto cut = v.shell_cut(grp, x, ra, qa, body);
    walk_task(grp, local, x, ra, qa, cut);
  }
  // Task `local` of large body (x, ra, qa) in group grp, its candidates to `body`.
  template <class Body>
  NESTSIM_HD void walk_task(const GroupGrid& grp, uint64_t local, const Real* x, Real ra, Real qa,
                            Body& body) const {
    const SortedBodies<Real>& s = v.s;
    const Real outer = window_outer(ra, grp, v.pad);  // as GroupLargeTasks planned it
    const LargePlan plan = plan_large<Dim>(grp.grid, x, outer, grp.end - grp.begin, grp.task);
    if (plan.direct) {
      const uint64_t first = grp.begin + local * grp.task.direct_chunk;
      const uint64_t last = first + grp.task.direct_chunk < grp.end
                                ? first + grp.task.direct_chunk
                                : grp.end;
      if (first < last) body.range(uint32_t(first), uint32_t(last));
      return;
    }
    const Real inner = ra - qa - Real(grp.reach + v.pad);
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

// The walks as Steps (PairFinder::emit_walk_pairs): a find without shell cells runs
// kernels without their code (no branch, no call, no registers kept for them).
template <class Real, int Dim, bool Write>
using GroupSmallPairs = GroupSmallWalk<Real, Dim, Write, false>;
template <class Real, int Dim, bool Write>
using GroupSmallShellPairs = GroupSmallWalk<Real, Dim, Write, true>;
template <class Real, int Dim, bool Write>
using GroupLargePairs = GroupLargeWalk<Real, Dim, Write, false>;
template <class Real, int Dim, bool Write>
using GroupLargeShellPairs = GroupLargeWalk<Real, Dim, Write, true>;

}  // namespace nestsim::detail

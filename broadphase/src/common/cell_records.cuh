// The cell grid of groups of levels in one table, and the device steps of the sort of
// bodies into it (HSX paper section 4.1): binning, placing (counting sort), the bucket
// table from sorted buckets and the gather (radix sort).
#pragma once
#include <cstdint>

#include "common/bodies.cuh"
#include "common/grid.cuh"
#include "nestsim/device/pairwise.cuh"

namespace nestsim::detail {

// The cell grid of one or more groups of levels, in one table: every body sorted by
// (group, bucket) (sorted_grid.cuh, SortedGrid). HSX puts each group of levels in its
// own grid, all sorted at once with one pair pass for all groups (cheaper than a sort and
// a pass per level; docs/performance.md, "All groups of levels in one sort");
// grid_uniform has one group.
struct GroupGrid {
  GridSpec grid;
  uint64_t bucket_base = 0;      // the group's first bucket in the shared table
  uint64_t item_base = 0;        // its first large item (large body, this group)
  uint32_t begin = 0, end = 0;   // its bodies, in sorted order
  double reach = 0;              // bound on a member's radius (d / 2)
  int brute = 0;                 // members tested all against all (section 5.8)
  int larger_side = 0;           // small-small pairs found from the larger member
  int shell_gate = 0;            // its cells may be shell cells (hsx/shell_cells.cuh)
  int shells = 0;                // it has shell cells (set on the device)
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
// in one sector (docs/performance.md, "Records of one sector").
template <class Real>
struct alignas(8 * sizeof(Real)) BodyRecord {
  PackedBody<Real> packed;
  Real thickness;
  uint32_t id;
  uint64_t key;  // linear cell index in its group's grid

  NESTSIM_HD static BodyRecord make(const PackedBody<Real>& p, Real q, uint32_t id, uint64_t key) {
    return BodyRecord{p, q, id, key};
  }
};

// In double the fields fill 52 of the record's 64 bytes; the rest is named and written
// (zero) so that the sort's whole-record copies move no uninitialised bytes
// (compute-sanitizer's initcheck reports those).
template <>
struct alignas(64) BodyRecord<double> {
  PackedBody<double> packed;
  double thickness;
  uint64_t key;  // linear cell index in its group's grid
  uint32_t id;
  uint32_t spare[3];

  NESTSIM_HD static BodyRecord make(const PackedBody<double>& p, double q, uint32_t id, uint64_t key) {
    return BodyRecord{p, q, key, id, {0u, 0u, 0u}};
  }
};
static_assert(sizeof(BodyRecord<float>) == 32 && sizeof(BodyRecord<double>) == 64,
              "a record is one 32-byte sector in float, two in double");

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
NESTSIM_HD NESTSIM_HOST_INLINE inline void for_each_in_run(const SortedBodies<Real>& s,
                                                           const GroupGrid& grp,
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
    record[k] = BodyRecord<Real>::make(PackedBody<Real>{p[0], p[1], p[2], bodies.radius[k]},
                                       bodies.thickness[k], bodies.id_of(k), lin);
    bucket_of[k] = b;
    if (bucket_count) rank[k] = atomic_fetch_add(&bucket_count[b], 1u);  // else radix-sorted
  }
};

// Section 4.1, step 4 (counting sort): each body's record goes to its place, bucket
// start + rank: one coalesced read and one scattered sector write per body. Building
// the record here from the caller's arrays instead (no record in the caller's order)
// is slower on the H100 (place 71 -> 93 us at 1e6, bin 41 -> 26 us; docs/performance.md,
// "Records placed from the caller's arrays, rejected").
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
// (docs/performance.md, "The counting sort's records moved by a gather").
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
// a zero fill, marked ends and a running maximum over the table; docs/performance.md,
// "The bucket table in one pass"): entry b is the first sorted position whose bucket is
// >= b, so position i (0 <= i <= n) writes the entries from the previous position's
// bucket + 1 to its own (position n: to the table's end), each entry once. A run longer
// than `long_run` entries (an empty stretch of cells) is recorded in `runs` instead, for
// the GPU's long_bucket_runs (the CPU sets no limit): no thread writes more than long_run
// entries. `runs` has room for every such run ((table + 1) / (long_run + 1) + 1 entries);
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

}  // namespace nestsim::detail

// The buffers and device steps that PairFinder's methods share across calls: the pair
// keys and their running total on the device, the level plan, the sorted grid, the
// large bodies' tasks, the pair passes (fused, or count -> scan -> write) and the sorts
// of pair keys.
//
// The orchestration (pair_finder.cu, hsx/search.cuh) includes this header; the kernel
// families it calls are only declared here (pair_finder_families.cuh, and the members
// brute, all_pairs and emit_walk_pairs below) and instantiated in a .cu of their own,
// so that no compile instantiates another family's kernels (broadphase/CMakeLists.txt).
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#if defined(NESTSIM_BACKEND_CUDA)
#include <cub/device/device_radix_sort.cuh>
#endif

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/buffers.cuh"
#include "common/counted_rows.cuh"
#include "common/extent.cuh"
#include "common/fused_pass.cuh"
#include "common/host_stage.cuh"
#include "common/loops.cuh"
#include "common/pair_keys.cuh"
#include "common/side_stream.cuh"
#include "hsx/walks.cuh"
#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/device/pair_finder.cuh"
#include "nestsim/device/pairwise.cuh"
#include "nestsim/tuning.h"
#include "pair_finder_families.cuh"
#include "solid_grids/solid_grids.cuh"

namespace nestsim::device {

using detail::BodyArrays;
using detail::ensure_size;
using detail::for_each_index;
using detail::LevelPlan;
using detail::PairSink;
using detail::raw;

struct MaxOf {
  NESTSIM_HD uint64_t operator()(uint64_t a, uint64_t b) const { return a > b ? a : b; }
};

struct AddTotal {
  uint64_t* total;
  const uint64_t* add;
  NESTSIM_HD void operator()(int) const { *total += *add; }
};

template <class Real>
struct PairFinder<Real>::State {
  Tuning tuning;  // the options' tuning of the current find()
  // effective radii (skin, solid mode)
  thrust::device_vector<Real> r_eff, q_eff;
  // HSX: the level plan and each body's natural level, the bodies sorted by (group,
  // bucket), the large bodies' tasks.
  detail::LevelsFamily<Real> levels;      // hsx/levels.cu
  detail::CellSortFamily<Real> sorted;   // hsx/cell_sort.cu
  detail::ShellCellsFamily<Real> shells;  // crowded cells of near-concentric shells

  thrust::device_vector<uint64_t> task_count, task_start;
  thrust::device_vector<uint64_t> task_owner;  // (first task << 32) | item per task
  uint64_t task_capacity = 0;  // tasks the owners' table and the walk cover (groups_pass)
  // count -> scan -> write
  thrust::device_vector<uint64_t> counts, offsets;
  detail::HostStage stage;  // the read-backs (plan, totals)
  thrust::device_vector<uint64_t> keys;
  uint64_t pair_count = 0;
  bool keys_sorted = true;         // keys[0, pair_count) ascending (sort_pairs, or sort_keys())
  uint32_t n = 0;                  // the bodies of the last find()
  detail::CachingAllocator alloc;  // Thrust temporaries, kept across calls
  detail::SideStream side_stream;  // HSX's large-body work beside the small-small walk
#if defined(NESTSIM_BACKEND_CUDA)
  detail::CachingAllocator side_alloc;  // the side stream's Thrust temporaries
#endif
  device::PairwiseBuffers pairwise;      // the scheduled brute-force methods
  detail::SolidGrids<Real> solid_grids;  // grid_uniform, grid_aabb (solid_grids.cu)

  Space<Real> space;
  bool count_only = false;

  // The running pair total of this find(), on the device: each step appends after it
  // without the host reading the step's count (a read-back per step stalls the host;
  // docs/performance.md, "No read-back per step of a find").
  thrust::device_vector<uint64_t> total;

  // Fused single pass (pair_sink.cuh, PairSink; FusedChunk on the CPU) instead of count ->
  // scan -> write: set by find() for HSX, whose pairs are sorted afterwards anyway.
  bool fused = false;

  // brute and hsx append to keys after a running total kept on the device; the host
  // reads it once at the end. If it exceeds the buffer (the first call, or more pairs
  // than ever before), the buffer grows and the same deterministic work runs again.
  // The same for HSX's large-body tasks (total[1], groups_pass): their table grows
  // with the count, and shrinks (for the next call) when it is 4 times too large.
  template <class Run>
  void appending(uint32_t n, Run&& run) {
    ensure_size(total, 2);
    if (keys.empty()) ensure_size(keys, std::max<std::size_t>(1024, n));
    for (;;) {
      thrust::fill_n(detail::nosync(), total.begin(), 2, uint64_t(0));
      run();
      uint64_t totals[2];
      stage.to_host(total, 2, totals);
      pair_count = totals[0];
      const uint64_t tasks = totals[1];
      const bool tasks_fit = tasks <= task_capacity;
      if (!tasks_fit || task_capacity > 4 * tasks + 4096) task_capacity = tasks + tasks / 4 + 1024;
      if (tasks_fit && (count_only || pair_count <= keys.size())) return;
      if (!count_only && pair_count > keys.size())
        ensure_size(keys, std::size_t(pair_count + pair_count / 4));
    }
  }

  PairSink fused_sink() {
    PairSink sink;
    sink.out = raw(keys);
    sink.total = reinterpret_cast<unsigned long long*>(raw(total));
    sink.capacity = count_only ? 0 : keys.size();
    return sink;
  }
  // The pairs of a functor family over `items` items, appended after the running total.
  // Fused (above): the path of HSX (find() sets `fused` for it), whose pairs are sorted
  // afterwards. Counted (count -> scan -> write): the path of brute, whose rows come out
  // in index order; the write pass runs over every item (those that counted nothing
  // return at once), and a one-thread step then advances the total. Each path is
  // instantiated only for the families that take it.
  template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
  void emit_fused(Index items, Args... args) {
    if (items == 0) return;
#if defined(NESTSIM_BACKEND_CUDA)
    detail::launch_pair_step(items, Step<Real, Dim, false>{args..., fused_sink()});
#else
    const PairSink sink = fused_sink();
    const uint64_t chunks = (uint64_t(items) + detail::kFusedChunk - 1) / detail::kFusedChunk;
    for_each_index(chunks, detail::FusedChunk<Step<Real, Dim, false>, Index>{
                               Step<Real, Dim, false>{args..., sink}, items, sink});
#endif
  }
  template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
  void emit_counted(Index items, Args... args) {
    if (items == 0) return;
    PairSink sink;
    ensure_size(counts, std::size_t(items));
    sink.counts = raw(counts);
    for_each_index(items, Step<Real, Dim, false>{args..., sink});
    detail::scan_counts_async(detail::policy(alloc), counts, offsets, items);
    if (!count_only) {
      sink.offsets = raw(offsets);
      sink.out = raw(keys);
      sink.base = raw(total);
      sink.capacity = keys.size();
      for_each_index(items, Step<Real, Dim, true>{args..., sink});
    }
    for_each_index(1, AddTotal{raw(total), raw(offsets) + items});
  }

  // Sorts keys[0, pair_count) ascending. A pair (i, j) of n bodies needs only 2 b bits,
  // b = bits of n - 1: the keys are packed to (i << b) | j, sorted on those bits (on
  // CUDA, radix passes of 8 bits: 5 at n = 1e6 instead of 8) and unpacked.
  thrust::device_vector<uint64_t> keys_alt;
  void sort_keys(uint32_t n) {
    const uint64_t p = pair_count;
    if (p < 2) return;
    const int b = detail::radix_bits(n);
    ensure_size(keys_alt, p);
    thrust::transform(detail::nosync(), keys.begin(), keys.begin() + p, keys_alt.begin(),
                      pair_keys::PackKey{b});
    const uint64_t* sorted = sort_packed(raw(keys_alt), raw(keys), p, 2 * b);
    thrust::transform(detail::nosync(), thrust::device_pointer_cast(sorted),
                      thrust::device_pointer_cast(sorted) + p, keys.begin(),
                      pair_keys::UnpackKey{b});
  }
  // Sorts `count` keys below 2^bits, in `keys` with `alt` as scratch of the same size;
  // returns the buffer that holds them sorted (either).
  uint64_t* sort_packed(uint64_t* keys_in, uint64_t* alt, uint64_t count, int bits) {
#if defined(NESTSIM_BACKEND_CUDA)
    cub::DoubleBuffer<uint64_t> buffers(keys_in, alt);
    std::size_t bytes = 0;
    NESTSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, buffers, count, 0, bits));
    char* temp = alloc.allocate(std::ptrdiff_t(bytes));
    NESTSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, buffers, count, 0, bits));
    alloc.deallocate(temp, bytes);
    return buffers.Current();
#else
    (void)alt;
    (void)bits;
    thrust::sort(detail::policy(alloc), thrust::device_pointer_cast(keys_in),
                 thrust::device_pointer_cast(keys_in) + count);
    return keys_in;
#endif
  }
  // neighbour_lists(): both directions of every pair, packed as (row << b) | column.
  thrust::device_vector<uint64_t> both, both_alt;
#if defined(NESTSIM_BACKEND_CUDA)
  // neighbour_lists() of few entries, counted into rows.
  detail::CountedRows counted_rows;
#endif

  // The HSX walks (steps with walk_with), fused: on the GPU each warp's candidates
  // tested by all its lanes (warp_tested_items) unless the tuning says otherwise; else
  // emit_fused. `side`: on the side stream (groups_pass; only with the warp's tests).
  // Defined in hsx/walk_launch.cuh, instantiated per walk in hsx/*_walks.cu.
  template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
  void emit_walk_pairs(bool side, Index items, Args... args);

  // Method::brute over bodies [begin, end), counted (brute/brute_pass.cu).
  template <int Dim>
  void brute(const BodyArrays<Real>& bodies, uint32_t begin, uint32_t end);

  // All pairs, HSX's path for small n: tiles in shared memory on the GPU
  // (all_pairs_tiles), the circular schedule on the CPU (brute_pairs.cuh, CircularPairs);
  // brute/all_pairs.cu.
  template <int Dim>
  void all_pairs(const BodyArrays<Real>& bodies, uint32_t n);

  template <int Dim>
  void hsx(const BroadphaseOptions& options, const BodyArrays<Real>& in, uint32_t n);

  template <int Dim>
  void groups_pass(std::vector<detail::GroupGrid>& groups, detail::LevelToGroup to_group,
                   const BodyArrays<Real>& in, uint32_t n, double pad, uint64_t items, bool radix);
};

}  // namespace nestsim::device

// Bodies sorted by (group, bucket) into one table for every group at once (SortedGrid):
// the counting sort of the HSX paper (section 4.1) or a radix sort.
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#if defined(NESTSIM_BACKEND_CUDA)
#include <cub/device/device_radix_sort.cuh>
#endif

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/buffers.cuh"
#include "common/cell_records.cuh"
#include "common/host_stage.cuh"
#include "common/loops.cuh"
#include "common/side_stream.cuh"
#include "nestsim/broadphase.h"
#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/tuning.h"

namespace nestsim::detail {

// Whether SortedGrid::build radix-sorts n bodies (BroadphaseOptions::grid_sort; the
// automatic choice from tuning.cell_sort.radix_min_n bodies on).
inline bool radix_grid_sort(const BroadphaseOptions& options, uint32_t n) {
  using GridSort = BroadphaseOptions::GridSort;
  if (options.grid_sort == GridSort::counting) return false;
  if (options.grid_sort == GridSort::radix) return true;
  return double(n) >= options.tuning.cell_sort.radix_min_n;
}

#if defined(NESTSIM_BACKEND_CUDA)
// BucketRunStarts on the GPU: one thread per sorted position (n + 1 of them); the warp
// numbers its lanes' entries (an inclusive sum) and writes them 32 at a time, entry j by
// lane j mod 32, which finds the lane that owns j by a 5-step search over the sums:
// consecutive lanes' runs are consecutive entries, so each store is one coalesced 128
// bytes (writing run by run reaches only 1.2 TB/s on the H100; docs/performance.md, "The
// bucket table in one pass"). Runs longer than CellSortTuning::long_bucket_run entries
// are left to long_bucket_runs.
// (Templates: kernels defined in a header included by several files.)
template <int = 0>
__global__ void __launch_bounds__(256) bucket_run_starts(BucketRunStarts f) {
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t first = 0, count = 0;
  if (i <= f.n) count = f.entries(uint32_t(i), first);
  const uint32_t upto = warp_inclusive_sum(count, lane);  // entries up to this lane's
  const uint32_t total = __shfl_sync(0xffffffffu, upto, 31);
  for (uint32_t base = 0; base < total; base += 32) {
    const uint32_t j = base + lane;
    uint32_t owner = 0;  // lanes whose sums are <= j: the first lane with upto > j
    for (uint32_t step = 16; step; step >>= 1)
      if (__shfl_sync(0xffffffffu, upto, owner + step - 1) <= j) owner += step;
    owner &= 31u;  // j >= total: any lane (nothing is written)
    const uint32_t owner_first = __shfl_sync(0xffffffffu, first, owner);
    const uint32_t owner_before = __shfl_sync(0xffffffffu, upto - count, owner);
    const uint32_t position = __shfl_sync(0xffffffffu, uint32_t(i), owner);
    if (j < total) f.bucket_start[owner_first + (j - owner_before)] = position;
  }
}
// The runs longer than long_bucket_run, each written by one block at a time.
template <int = 0>
__global__ void __launch_bounds__(256) long_bucket_runs(const BucketRun* runs,
                                                        const uint32_t* run_count,
                                                        uint32_t* bucket_start) {
  const uint32_t count = *run_count;
  for (uint32_t r = blockIdx.x; r < count; r += gridDim.x) {
    const BucketRun run = runs[r];
    for (uint64_t b = uint64_t(run.first) + threadIdx.x; b <= run.last; b += blockDim.x)
      bucket_start[b] = run.position;
  }
}
#endif

// Whether the counting sort moves the records of n bodies by a gather (PlaceSources,
// GatherSorted) rather than scattering them (PlaceSorted): from
// tuning.place_gather_min_n bodies on.
inline bool place_by_gather(const CellSortTuning& tuning, uint32_t n) {
  return double(n) >= tuning.place_gather_min_n;
}

// Bodies sorted by (group, bucket) into one table, for every group at once; its buffers
// kept across calls. Two sorts, the same order of buckets (within a bucket the counting
// sort's order varies; no result depends on it):
//  - counting (HSX paper section 4.1): atomic count per bucket -> exclusive scan ->
//    scatter. One pass over the bodies, but its atomics and scatters land at random in
//    a table of ~1.6 n buckets, which outgrows the L2 cache beyond a few 10^6 bodies.
//  - radix: the bodies' 32-bit bucket numbers radix-sorted with their indices (CUB on
//    the GPU, on the table's bits only), then the table from the sorted buckets
//    (BucketRunStarts, one pass): streaming passes, no atomics (faster than the
//    counting sort's atomics for many bodies; docs/performance.md, "The radix sort
//    into cells").
template <class Real>
struct SortedGrid {
  thrust::device_vector<GroupGrid> groups;
  thrust::device_vector<uint32_t> bucket_count, bucket_start, bucket_of, rank, source_of;
  thrust::device_vector<uint32_t> sorted_bucket, body_index;  // radix sort
  thrust::device_vector<char> sort_temp;                      // radix sort, CUB's scratch
  HostStage stage;                                            // the groups' copy
  thrust::device_vector<BodyRecord<Real>> record, sorted_record;

  // Sorts bodies [0, n) into the groups' grids. `host` holds the groups in order, each
  // with its grid (buckets chosen) and its range [begin, end) of sorted positions (the
  // sizes of the groups); bucket bases are filled in here. `level` gives each body's
  // natural level, mapped to its group by to_group (nullptr: one group).
  // `side` (GPU, radix sort): a stream on which the bucket table is built beside the
  // records' gather (docs/performance.md, "The bucket table beside the gather"); null:
  // all on the default stream.
  template <int Dim, class Policy>
  SortedBodies<Real> build(const Policy& exec, std::vector<GroupGrid>& host, const uint8_t* level,
                           LevelToGroup to_group, const BodyArrays<Real>& bodies, uint32_t n,
                           bool radix, const CellSortTuning& tuning,
                           SideStream* side = nullptr) {
    uint64_t table = 0;
    for (GroupGrid& g : host) {
      g.bucket_base = table;
      table += g.grid.table_size;
    }
    if (table >= (uint64_t(1) << 32) - 1)
      throw std::length_error("nestsim: grid tables exceed 2^32 - 2 buckets");
    stage.to_device(host.data(), host.size(), groups);
    ensure_size(bucket_of, n);
    ensure_size(record, n);
    ensure_size(sorted_record, n);
    ensure_size(bucket_start, table + 1);
    if (radix) {
      ensure_size(source_of, n);
      for_each_index(n, BinGroups<Real, Dim>{raw(groups), level, to_group, bodies, nullptr,
                                             raw(bucket_of), nullptr, raw(record)});
      radix_sort_buckets(exec, n, table);
      bucket_table(n, uint32_t(table), tuning.long_bucket_run, side);
      for_each_index(n, GatherSorted<Real>{raw(record), raw(source_of), raw(sorted_record)});
      if (side) side->join();
    } else {
      ensure_size(bucket_count, table + 1);
      thrust::fill_n(nosync(), bucket_count.begin(), table + 1, 0u);
      ensure_size(rank, n);
      for_each_index(n, BinGroups<Real, Dim>{raw(groups), level, to_group, bodies,
                                             raw(bucket_count), raw(bucket_of), raw(rank),
                                             raw(record)});
      thrust::exclusive_scan(exec, bucket_count.begin(), bucket_count.begin() + table + 1,
                             bucket_start.begin(), 0u);
      if (place_by_gather(tuning, n)) {
        ensure_size(source_of, n);
        for_each_index(n, PlaceSources{raw(bucket_of), raw(rank), raw(bucket_start),
                                       raw(source_of)});
        for_each_index(n, GatherSorted<Real>{raw(record), raw(source_of), raw(sorted_record)});
      } else {
        for_each_index(n, PlaceSorted<Real>{raw(bucket_of), raw(rank), raw(bucket_start),
                                            raw(record), raw(sorted_record)});
      }
    }
    SortedBodies<Real> s;
    s.groups = raw(groups);
    s.group_count = uint32_t(host.size());
    s.record = raw(sorted_record);
    s.bucket_start = raw(bucket_start);
    return s;
  }

  // bucket_start from sorted_bucket (cell_records.cuh, BucketRunStarts): on the GPU, each
  // warp numbers its lanes' entries and writes 32 per store (bucket_run_starts), and
  // runs longer than long_run entries are written by whole blocks after
  // (long_bucket_runs).
  thrust::device_vector<BucketRun> long_runs;
  thrust::device_vector<uint32_t> long_run_count;
  // With `side` (GPU), on its stream, forked here: the caller joins it.
  void bucket_table(uint32_t n, uint32_t table, uint32_t long_run, SideStream* side) {
#if defined(NESTSIM_BACKEND_CUDA)
    const uint64_t capacity = (uint64_t(table) + 1) / (uint64_t(long_run) + 1) + 1;
    ensure_size(long_runs, capacity);
    ensure_size(long_run_count, 1);
    cudaStream_t stream{};
    if (side) {
      side->fork();
      stream = side->stream();
    }
    NESTSIM_CUDA_CHECK(cudaMemsetAsync(raw(long_run_count), 0, sizeof(uint32_t), stream));
#else
    (void)side;
    long_run = ~uint32_t(0);  // the CPU writes every run where it ends
#endif
    const BucketRunStarts f{raw(sorted_bucket), n, table, long_run, raw(bucket_start),
                            raw(long_runs), raw(long_run_count)};
#if defined(NESTSIM_BACKEND_CUDA)
    const uint64_t threads = 256, items = uint64_t(n) + 1;
    bucket_run_starts<0><<<unsigned((items + threads - 1) / threads), unsigned(threads), 0,
                           stream>>>(f);
    NESTSIM_CUDA_CHECK(cudaGetLastError());
    long_bucket_runs<0><<<unsigned(std::min<uint64_t>(capacity, 264)), 256, 0, stream>>>(
        raw(long_runs), raw(long_run_count), raw(bucket_start));
    NESTSIM_CUDA_CHECK(cudaGetLastError());
#else
    for_each_index(uint64_t(n) + 1, f);
#endif
  }

  // bucket_of[0, n) -> sorted_bucket (ascending) and source_of (the body at each sorted
  // position; stable: equal buckets keep the caller's order).
  template <class Policy>
  void radix_sort_buckets(const Policy& exec, uint32_t n, uint64_t table) {
    ensure_size(sorted_bucket, n);
    ensure_size(body_index, n);
    thrust::sequence(exec, body_index.begin(), body_index.begin() + n, 0u);
#if defined(NESTSIM_BACKEND_CUDA)
    const int bits = radix_bits(table);
    std::size_t bytes = 0;
    NESTSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, raw(bucket_of),
                                                       raw(sorted_bucket), raw(body_index),
                                                       raw(source_of), n, 0, bits));
    ensure_size(sort_temp, std::max<std::size_t>(bytes, 1));
    NESTSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(raw(sort_temp), bytes, raw(bucket_of),
                                                       raw(sorted_bucket), raw(body_index),
                                                       raw(source_of), n, 0, bits));
#else
    (void)table;
    thrust::copy_n(exec, bucket_of.begin(), n, sorted_bucket.begin());
    thrust::copy_n(exec, body_index.begin(), n, source_of.begin());
    thrust::stable_sort_by_key(exec, sorted_bucket.begin(), sorted_bucket.begin() + n,
                               source_of.begin());
#endif
  }
};

}  // namespace nestsim::detail

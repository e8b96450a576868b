// Neighbour lists of a few thousand entries on the GPU without a radix sort: each row's
// entries counted, placed by a scan of the counts, then ordered within the row by their
// rank among its columns. The result is the radix sort's, entry for entry: rows in
// order, columns ascending within a row (PairFinder::neighbour_lists).
//
// Why: a small model's lists are rebuilt at every step at large time steps (the
// physiological receptor cycle: ~24,000 entries), where CUB's radix sort of the packed
// keys takes three onesweep passes, a histogram and a scan (~37 us on an H200,
// docs/performance.md, "Small lists counted into rows"), each a chain of dependent steps
// over a few tiles. Counting is one atomic add per entry, placing one more, ranking a
// pass of the warp over the entry's own row. The rank costs each warp the length of its
// rows, so rows longer than DeviceTuning::list_rank_max_row send the next calls back to
// the radix sort (the longest row of each call is kept; the first call assumes short
// rows, and every 256th call after a long row tries again).
#pragma once
#include <thrust/device_vector.h>
#include <thrust/scan.h>

#include <cstdint>

#include "common/buffers.cuh"
#include "common/loops.cuh"
#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/device/pair_finder.cuh"

namespace nestsim::detail {

#if defined(NESTSIM_BACKEND_CUDA)
// count[row] += 1 for both bodies of every pair.
struct CountRowEntries {
  const uint64_t* keys;
  uint32_t* count;
  __device__ void operator()(uint64_t k) const {
    atomicAdd(count + device::pair_first(keys[k]), 1u);
    atomicAdd(count + device::pair_second(keys[k]), 1u);
  }
};

// Both directions of pair k into their rows, in the order the atomics give: the column
// into `cols`, the row into `rows` (the same for every place of a row, so these are the
// final rows). count[row] counts down to 0 as its places fill.
struct PlaceRowEntries {
  const uint64_t* keys;
  const uint64_t* offsets;
  uint32_t* count;
  uint32_t* cols;
  uint32_t* rows;
  __device__ void place(uint32_t row, uint32_t col) const {
    const uint64_t at = offsets[row] + atomicSub(count + row, 1u) - 1u;
    cols[at] = col;
    rows[at] = row;
  }
  __device__ void operator()(uint64_t k) const {
    const uint32_t i = device::pair_first(keys[k]), j = device::pair_second(keys[k]);
    place(i, j);
    place(j, i);
  }
};

// Entry e's column to its place in ascending order within its row: the row's start plus
// the number of the row's columns below it (a pair is listed once: the columns of a row
// differ). The lanes of a warp rank together, one of the warp's rows at a time: the row's
// columns read 32 at a time, one per lane, and passed round the warp, so that a row of
// length L costs its warps L shuffles each rather than each of its entries L dependent
// loads (one thread per entry looping over a row of ~1,000 took 14-18 us of a small
// model's step on an H200). The first place of each row records its length in *longest.
// (A template, defined in every file that includes this header.)
constexpr uint32_t kRankThreads = 128;
template <uint32_t Threads>
__global__ void __launch_bounds__(Threads)
    rank_row_entries(uint64_t entries, const uint64_t* offsets, const uint32_t* cols,
                     const uint32_t* rows, uint32_t* neighbours, uint32_t* longest) {
  constexpr unsigned kAll = 0xffffffffu;
  const uint64_t e = uint64_t(blockIdx.x) * Threads + threadIdx.x;
  const uint32_t lane = threadIdx.x & 31u;
  const bool active = e < entries;
  uint32_t row = 0, col = 0, length = 0;
  uint64_t lo = 0;
  if (active) {
    row = rows[e];
    col = cols[e];
    lo = offsets[row];
    length = uint32_t(offsets[row + 1] - lo);
  }
  uint32_t below = 0;
  unsigned pending = __ballot_sync(kAll, active);
  while (pending) {
    const int leader = __ffs(pending) - 1;
    const uint32_t r = __shfl_sync(kAll, row, leader);
    const uint64_t r_lo = __shfl_sync(kAll, lo, leader);
    const uint32_t r_length = __shfl_sync(kAll, length, leader);
    const bool mine = active && row == r;
    for (uint32_t base = 0; base < r_length; base += 32) {
      const uint32_t n = r_length - base < 32 ? r_length - base : 32;  // the same in every lane
      const uint32_t c = lane < n ? cols[r_lo + base + lane] : 0u;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t other = __shfl_sync(kAll, c, int(k));
        below += mine && other < col ? 1u : 0u;
      }
    }
    pending &= ~__ballot_sync(kAll, mine);
  }
  if (!active) return;
  neighbours[lo + below] = col;
  if (e == lo) atomicMax(longest, length);
}

class CountedRows {
 public:
  CountedRows() = default;
  CountedRows(const CountedRows&) = delete;
  CountedRows& operator=(const CountedRows&) = delete;
  ~CountedRows() {
    if (done_) cudaEventDestroy(done_);  // in a destructor: an error cannot be reported
    if (host_longest_) cudaFreeHost(host_longest_);
  }

  // Does the counted path take 2p entries (max_entries: DeviceTuning::list_count_max_entries),
  // given the longest row of the last call whose length has come back (max_row:
  // DeviceTuning::list_rank_max_row)?
  bool takes(uint64_t entries, double max_entries, double max_row) {
    if (done_) {
      const cudaError_t e = cudaEventQuery(done_);
      if (e == cudaSuccess) longest_ = *host_longest_;
      else if (e != cudaErrorNotReady) NESTSIM_CUDA_CHECK(e);
    }
    if (double(entries) > max_entries) return false;
    if (double(longest_) <= max_row) return true;
    // A long row seen: the radix sort, with a measured try every kRetry calls (rows
    // change as bodies move and events happen).
    if (++declined_ < kRetry) return false;
    declined_ = 0;
    return true;
  }

  // The lists of the p pair keys over rows [0, n) (every pair's bodies below n):
  // offsets (n + 1), neighbours and rows (2 p each, rows optional), as
  // PairFinder::neighbour_lists sizes them. alloc: the scan's temporaries.
  void build(const uint64_t* keys, uint64_t p, uint32_t n, uint64_t* offsets,
             uint32_t* neighbours, uint32_t* rows, CachingAllocator& alloc) {
    if (!done_) {
      NESTSIM_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
      NESTSIM_CUDA_CHECK(cudaMallocHost(&host_longest_, sizeof(uint32_t)));
      *host_longest_ = 0;
    }
    // count[0, n] and the longest row after them, cleared in one call.
    grow_discard(count_, std::size_t(n) + 2);
    grow_discard(cols_, std::size_t(2 * p));
    if (!rows) grow_discard(rows_, std::size_t(2 * p));
    uint32_t* row_of = rows ? rows : raw(rows_);
    uint32_t* longest = raw(count_) + n + 1;
    NESTSIM_CUDA_CHECK(cudaMemsetAsync(raw(count_), 0, (std::size_t(n) + 2) * sizeof(uint32_t),
                                       cudaStreamPerThread));
    launch_items(p, CountRowEntries{keys, raw(count_)});
    thrust::exclusive_scan(policy(alloc), count_.begin(), count_.begin() + n + 1,
                           thrust::device_pointer_cast(offsets), uint64_t(0));
    launch_items(p, PlaceRowEntries{keys, offsets, raw(count_), raw(cols_), row_of});
    const uint64_t blocks = (2 * p + kRankThreads - 1) / kRankThreads;
    rank_row_entries<kRankThreads><<<unsigned(blocks), kRankThreads>>>(
        2 * p, offsets, raw(cols_), row_of, neighbours, longest);
    NESTSIM_CUDA_CHECK(cudaGetLastError());
    NESTSIM_CUDA_CHECK(cudaMemcpyAsync(host_longest_, longest, sizeof(uint32_t),
                                       cudaMemcpyDeviceToHost, cudaStreamPerThread));
    NESTSIM_CUDA_CHECK(cudaEventRecord(done_, cudaStreamPerThread));
  }

 private:
  thrust::device_vector<uint32_t> count_, cols_, rows_;
  cudaEvent_t done_ = nullptr;
  uint32_t* host_longest_ = nullptr;  // pinned: the copy that done_ marks
  uint32_t longest_ = 0;              // the longest row known to the host
  uint32_t declined_ = 0;             // calls sent to the radix sort since the last try
  static constexpr uint32_t kRetry = 256;
};
#endif

}  // namespace nestsim::detail

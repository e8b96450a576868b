// Pieces every device broad phase uses: raw pointers and growing buffers, the generic
// index loop, count -> scan, the extent of the bodies, the rounding pad and the grid
// over the space. One copy, for HSX (pair_finder.cu) and the solid grids.
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/functional.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(NESTSIM_BACKEND_CUDA)
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#endif

#include "grid.cuh"
#include "kernels.cuh"
#include "nestsim/broadphase.h"
#include "nestsim/device/exec.cuh"

namespace nestsim::detail {

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

// Grows a buffer (never shrinks it, so repeated calls do not reallocate); its contents
// are not kept (exec.cuh, release).
template <class T>
void ensure_size(thrust::device_vector<T>& v, std::size_t n) {
  if (v.size() < n) {
    release(v);
    v.resize(n);
  }
}

#if defined(NESTSIM_BACKEND_CUDA)
// A read-back's device side, by every thread of one block: `bytes` from device memory
// into the host's mapped page-locked buffer, then a system-scope fence and *flag = seq,
// which the host polls (HostStage::wait_mapped) instead of waiting on the stream for a
// copy engine's transfer (a copy engine's read-back of the plan took ~15 us after its
// kernels had finished on the H100; docs/perf-log.md, "read-backs polled in mapped
// memory"). The source is read from L2 (ld.cg): the caller may be the last block of a
// launch whose other blocks wrote it (level_histogram_kernel).
__device__ inline void publish_mapped(const unsigned char* src, unsigned char* dst,
                                      std::size_t bytes, volatile unsigned* flag, unsigned seq) {
  const std::size_t words = bytes / 4;
  const bool aligned =
      reinterpret_cast<uintptr_t>(src) % 4 == 0 && reinterpret_cast<uintptr_t>(dst) % 4 == 0;
  const std::size_t start = aligned ? 4 * words : 0;
  if (aligned)
    for (std::size_t i = threadIdx.x; i < words; i += blockDim.x)
      reinterpret_cast<unsigned*>(dst)[i] = __ldcg(reinterpret_cast<const unsigned*>(src) + i);
  for (std::size_t i = start + threadIdx.x; i < bytes; i += blockDim.x) dst[i] = __ldcg(src + i);
  __threadfence_system();  // the bytes reach the host before the flag
  __syncthreads();
  if (threadIdx.x == 0) *flag = seq;
}

// to_host's copy by the GPU itself: publish_mapped as a one-block kernel of its own.
static __global__ void copy_to_mapped(const unsigned char* src, unsigned char* dst, std::size_t bytes,
                                      volatile unsigned* flag, unsigned seq) {
  publish_mapped(src, dst, bytes, flag, seq);
}
#endif

// Small copies between host and device (a plan, a few totals, the group table) through
// page-locked buffers. From pageable memory the driver stages the bytes itself and a
// host-to-device copy waits for the device (docs/perf-log.md, "the read-backs' gaps").
// The copy to the device is queued on the stream; the buffer is reused only after it was
// done. The copy to the host is written by a one-block kernel into mapped memory and
// announced by a flag the host polls (NESTSIM_READBACK_POLL=0: a copy engine's transfer
// and a stream synchronisation instead, the slower portable path).
class HostStage {
 public:
  HostStage() = default;
  HostStage(const HostStage&) = delete;
  HostStage& operator=(const HostStage&) = delete;
  ~HostStage() {
#if defined(NESTSIM_BACKEND_CUDA)
    if (done_) cudaEventDestroy(done_);
    if (buffer_) cudaFreeHost(buffer_);
    if (back_) cudaFreeHost(back_);
    if (flag_) cudaFreeHost(const_cast<unsigned*>(flag_));
#endif
  }
#if defined(NESTSIM_BACKEND_CUDA)
  // A read-back that a kernel of the caller's writes itself, saving to_host's copy kernel
  // (docs/perf-log.md, "the plan's read-back without a copy kernel"): the mapped buffer
  // for `bytes` (a device-usable pointer) and the value the kernel writes to *flag once
  // the bytes are there (after a system-scope fence). Only while the read-backs poll
  // (polls()); wait_mapped returns the bytes.
  struct Mapped {
    void* dst = nullptr;
    volatile unsigned* flag = nullptr;
    unsigned seq = 0;
  };
  bool polls() const { return poll_; }
  Mapped mapped_back(std::size_t bytes) {
    Mapped m;
    m.dst = reserve_back(bytes);
    m.flag = flag_;
    m.seq = ++seq_;
    return m;
  }
  template <class T>
  void wait_mapped(const Mapped& m, std::size_t count, T* out) {
    wait_for(m.seq);
    std::copy_n(static_cast<const T*>(m.dst), count, out);
  }
#endif
  // count elements of src (device) into out (host); returns when they are there.
  template <class T>
  void to_host(const thrust::device_vector<T>& src, std::size_t count, T* out) {
#if defined(NESTSIM_BACKEND_CUDA)
    const std::size_t bytes = count * sizeof(T);
    if (poll_) {
      const Mapped m = mapped_back(bytes);
      const auto* from = reinterpret_cast<const unsigned char*>(thrust::raw_pointer_cast(src.data()));
      copy_to_mapped<<<1, 128>>>(from, static_cast<unsigned char*>(m.dst), bytes, m.flag, m.seq);
      NESTSIM_CUDA_CHECK(cudaGetLastError());
      wait_mapped(m, count, out);
      return;
    }
    void* stage = reserve(bytes);
    NESTSIM_CUDA_CHECK(cudaMemcpyAsync(stage, thrust::raw_pointer_cast(src.data()), bytes,
                                       cudaMemcpyDeviceToHost, 0));
    NESTSIM_CUDA_CHECK(cudaStreamSynchronize(0));
    std::copy_n(static_cast<const T*>(stage), count, out);
#else
    thrust::copy_n(src.begin(), count, out);
#endif
  }
  // count elements of src (host) into dst (device, resized), queued on the stream.
  template <class T>
  void to_device(const T* src, std::size_t count, thrust::device_vector<T>& dst) {
    if (dst.size() != count) dst.resize(count);
#if defined(NESTSIM_BACKEND_CUDA)
    void* stage = reserve(count * sizeof(T));
    std::copy_n(src, count, static_cast<T*>(stage));
    NESTSIM_CUDA_CHECK(cudaMemcpyAsync(thrust::raw_pointer_cast(dst.data()), stage,
                                       count * sizeof(T), cudaMemcpyHostToDevice, 0));
    NESTSIM_CUDA_CHECK(cudaEventRecord(done_, 0));
    pending_ = true;
#else
    thrust::copy_n(src, count, dst.begin());
#endif
  }

 private:
#if defined(NESTSIM_BACKEND_CUDA)
  void* reserve(std::size_t bytes) {
    if (pending_) NESTSIM_CUDA_CHECK(cudaEventSynchronize(done_));  // the last copy read it
    pending_ = false;
    if (!done_) NESTSIM_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    if (bytes > size_) {
      if (buffer_) NESTSIM_CUDA_CHECK(cudaFreeHost(buffer_));
      buffer_ = nullptr;
      size_ = 0;
      NESTSIM_CUDA_CHECK(cudaMallocHost(&buffer_, bytes));
      size_ = bytes;
    }
    return buffer_;
  }
  // The mapped buffer of the copies to the host (the previous one was waited for).
  void* reserve_back(std::size_t bytes) {
    if (!flag_) {
      unsigned* f = nullptr;
      NESTSIM_CUDA_CHECK(
          cudaHostAlloc(reinterpret_cast<void**>(&f), sizeof(unsigned), cudaHostAllocMapped));
      *f = 0;
      flag_ = f;
    }
    if (bytes > back_size_) {
      if (back_) NESTSIM_CUDA_CHECK(cudaFreeHost(back_));
      back_ = nullptr;
      back_size_ = 0;
      NESTSIM_CUDA_CHECK(cudaHostAlloc(&back_, bytes, cudaHostAllocMapped));
      back_size_ = bytes;
    }
    return back_;
  }
  // Polls the flag; every 1024 polls asks the stream, so that a failed kernel before the
  // copy (which then never runs) is reported instead of waited for.
  void wait_for(unsigned seq) {
    for (unsigned k = 1;; ++k) {
      if (*flag_ == seq) break;
      if (k % 1024 == 0) {
        const cudaError_t e = cudaStreamQuery(0);
        if (e == cudaSuccess) {
          if (*flag_ == seq) break;
          throw std::runtime_error("HostStage: the read-back's flag was not set");
        }
        if (e != cudaErrorNotReady) NESTSIM_CUDA_CHECK(e);
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  void* buffer_ = nullptr;
  std::size_t size_ = 0;
  cudaEvent_t done_ = nullptr;
  bool pending_ = false;
  void* back_ = nullptr;
  std::size_t back_size_ = 0;
  volatile unsigned* flag_ = nullptr;
  unsigned seq_ = 0;
  bool poll_ = [] {
    const char* v = std::getenv("NESTSIM_READBACK_POLL");
    return !(v && std::string(v) == "0");
  }();
#endif
};

// f(i) for i in [0, n), on the default stream (nosync) or with the given policy (a
// stream of its own: SideStream).
template <class Policy, class F, class Index>
void for_each_index_on(const Policy& exec, Index n, F f) {
  if (n == 0) return;
  thrust::for_each_n(exec, thrust::counting_iterator<Index>(0), n, f);
}
template <class F, class Index>
void for_each_index(Index n, F f) {
  for_each_index_on(nosync(), n, f);
}

#if defined(NESTSIM_BACKEND_CUDA)
// A second stream, for work that may run beside the default stream's (HSX's large-body
// tasks and walk beside the small-small walk; docs/perf-log.md, "the large bodies' work
// beside the small-small walk"). Created on first
// use, non-blocking, with the device's highest priority, so that as the default
// stream's blocks finish, its blocks take their slots first. fork() orders it after
// everything queued on the default stream so far; join() orders the default stream
// after everything queued on it. Buffers it uses are sized before the fork (a new
// buffer's zero fill runs on the default stream) and its Thrust calls draw temporaries
// from an allocator of their own (exec.cuh: a cached block is reused by the next
// call, whatever stream it runs on).
class SideStream {
 public:
  SideStream() = default;
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  ~SideStream() {  // in a destructor: errors cannot be reported
    if (fork_) cudaEventDestroy(fork_);
    if (join_) cudaEventDestroy(join_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  void fork() {
    if (!stream_) {
      int least = 0, greatest = 0;
      NESTSIM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      NESTSIM_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
      NESTSIM_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
      NESTSIM_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    }
    NESTSIM_CUDA_CHECK(cudaEventRecord(fork_, cudaStream_t{}));
    NESTSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, fork_, 0));
  }
  cudaStream_t stream() const { return stream_; }  // after the first fork()
  void join() {
    NESTSIM_CUDA_CHECK(cudaEventRecord(join_, stream_));
    NESTSIM_CUDA_CHECK(cudaStreamWaitEvent(cudaStream_t{}, join_, 0));
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};
#else
class SideStream {  // the CPU backend runs its steps one after another
 public:
  void fork() {}
  void join() {}
};
#endif

#if defined(NESTSIM_BACKEND_CUDA)
constexpr int kBoundedThreads = 256;

template <int MinBlocks, class F, class Index>
__global__ void __launch_bounds__(kBoundedThreads, MinBlocks) bounded_items(Index n, F f) {
  const Index i = Index(blockIdx.x) * kBoundedThreads + Index(threadIdx.x);
  if (i < n) f(i);
}
#endif

// The index loop for the heavy pair steps: on the GPU one item per thread, with at
// least MinBlocks blocks of 256 threads resident per SM, which caps the registers at
// 65536 / (256 MinBlocks) (thrust's loop gives the pair walks 80 registers and 37.5%
// occupancy; docs/perf-log.md, "records, bounded launches"). On the CPU the generic loop.
template <int MinBlocks, class F, class Index>
void for_each_bounded(Index n, F f) {
#if defined(NESTSIM_BACKEND_CUDA)
  if (n == 0) return;
  const uint64_t blocks = (uint64_t(n) + kBoundedThreads - 1) / kBoundedThreads;
  if (blocks >= (uint64_t(1) << 31))
    throw std::length_error("nestsim: too many items for one launch");
  bounded_items<MinBlocks><<<unsigned(blocks), kBoundedThreads>>>(n, f);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
#else
  for_each_index(n, f);
#endif
}

// Exclusive scan of counts[0..n) into offsets[0..n], left on the device (offsets[n]
// is the total); offsets[0] is written only when the buffer is new (it stays 0).
template <class Policy>
void scan_counts_async(const Policy& exec, const thrust::device_vector<uint64_t>& counts,
                       thrust::device_vector<uint64_t>& offsets, std::size_t n) {
  ensure_size(offsets, n + 1);  // a new buffer is zero-filled
  thrust::inclusive_scan(exec, counts.begin(), counts.begin() + n, offsets.begin() + 1);
}

// The same, returning the total to the host (which waits for it).
template <class Policy>
uint64_t scan_counts(const Policy& exec, const thrust::device_vector<uint64_t>& counts,
                     thrust::device_vector<uint64_t>& offsets, std::size_t n) {
  scan_counts_async(exec, counts, offsets, n);
  return offsets[n];
}

// Extent of the bodies: centres and boxes per axis, smallest, largest and summed radius.
struct Extent {
  double centre_lo[3], centre_hi[3], box_lo[3], box_hi[3];
  double rmin, rmax, rsum, absmax;
};

struct MergeExtent {
  NESTSIM_HD Extent operator()(const Extent& a, const Extent& b) const {
    Extent m;
    for (int k = 0; k < 3; ++k) {
      m.centre_lo[k] = a.centre_lo[k] < b.centre_lo[k] ? a.centre_lo[k] : b.centre_lo[k];
      m.centre_hi[k] = a.centre_hi[k] > b.centre_hi[k] ? a.centre_hi[k] : b.centre_hi[k];
      m.box_lo[k] = a.box_lo[k] < b.box_lo[k] ? a.box_lo[k] : b.box_lo[k];
      m.box_hi[k] = a.box_hi[k] > b.box_hi[k] ? a.box_hi[k] : b.box_hi[k];
    }
    m.rmin = a.rmin < b.rmin ? a.rmin : b.rmin;
    m.rmax = a.rmax > b.rmax ? a.rmax : b.rmax;
    m.rsum = a.rsum + b.rsum;
    m.absmax = a.absmax > b.absmax ? a.absmax : b.absmax;
    return m;
  }
};

template <class Real>
struct BodyExtent {
  BodyArrays<Real> b;
  int dim;
  NESTSIM_HD Extent operator()(uint32_t i) const {
    Real p[3] = {0, 0, 0};
    b.load(i, dim, p);
    return of(p, b.radius[i], dim);
  }
  // The extent of one body at p (axes past dim 0) with radius rr.
  NESTSIM_HD static Extent of(const Real* p, Real rr, int dim) {
    Extent m;
    const double r = double(rr);
    m.absmax = 0;
    for (int k = 0; k < 3; ++k) {
      const double x = k < dim ? double(p[k]) : 0.0;
      m.centre_lo[k] = m.centre_hi[k] = x;
      m.box_lo[k] = k < dim ? x - r : 0.0;
      m.box_hi[k] = k < dim ? x + r : 0.0;
      const double ax = x < 0 ? -x : x;
      m.absmax = ax > m.absmax ? ax : m.absmax;
    }
    m.rmin = m.rmax = m.rsum = r;
    return m;
  }
};

inline Extent empty_extent() {
  const double big = std::numeric_limits<double>::max();
  return Extent{{big, big, big}, {-big, -big, -big}, {big, big, big}, {-big, -big, -big},
                big, 0.0, 0.0, 0.0};
}

template <class Real, class Policy>
Extent extent_of(const Policy& exec, const BodyArrays<Real>& bodies, uint32_t n, int dim) {
  return thrust::transform_reduce(exec, thrust::counting_iterator<uint32_t>(0),
                                  thrust::counting_iterator<uint32_t>(n),
                                  BodyExtent<Real>{bodies, dim}, empty_extent(), MergeExtent{});
}

#if defined(NESTSIM_BACKEND_CUDA)
// True, in every thread of the block, for the grid's last block to get here: a ticket
// counter (`done`, zero before the launch, wrapped back to 0 by the last ticket for the
// next one). Each thread's writes before the call are visible device-wide (a fence)
// before its block counts itself, so the last block reads every block's results (from
// L2: ld.cg). All threads of each block call it, once per launch.
__device__ inline bool last_block(unsigned* done) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicInc(done, gridDim.x - 1) == gridDim.x - 1;
  __syncthreads();
  return last;
}

constexpr int kExtentThreads = 256;

// Bodies each thread loads before it merges them: the loop is latency-bound at 2 blocks
// per SM, and kExtentUnroll bodies' loads in flight at once take 1e7 bodies' extent from
// 110 us (ncu, one body per iteration: 1.7 TB/s) towards the bandwidth (H100;
// docs/perf-log.md, "the plan's per-body kernels").
constexpr int kExtentUnroll = 4;

// One thread's share of the extent while it loads (extent_blocks): the minima and maxima
// of centres, radii and |x| in the bodies' precision, where they are exact (a minimum of
// floats converts to the minimum of their doubles), the boxes (x - r, x + r) and the
// radii's sum in double as BodyExtent::of computes them; 9 floats and 7 doubles where a
// per-body Extent and its merge would hold 16 doubles, which spill (docs/perf-log.md,
// "the plan kernels' arithmetic"). The same values
// as merging BodyExtent::of body by body into init.
template <class Real>
struct ThreadExtent {
  // Empty: infinities, which merged_into turns into init's values.
  static constexpr Real kInf = std::numeric_limits<Real>::infinity();
  static constexpr double kInfD = std::numeric_limits<double>::infinity();
  Real centre_lo[3] = {kInf, kInf, kInf}, centre_hi[3] = {-kInf, -kInf, -kInf};
  Real rmin = kInf, rmax = -kInf, absmax = 0;
  double box_lo[3] = {kInfD, kInfD, kInfD}, box_hi[3] = {-kInfD, -kInfD, -kInfD};
  double rsum = 0;
  NESTSIM_HD void add(const Real* p, Real r, int dim) {
    const double rd = double(r);
    Real body_abs = 0;  // as BodyExtent::of
    for (int k = 0; k < 3; ++k) {
      const Real x = k < dim ? p[k] : Real(0);
      centre_lo[k] = centre_lo[k] < x ? centre_lo[k] : x;
      centre_hi[k] = centre_hi[k] > x ? centre_hi[k] : x;
      const double bl = k < dim ? double(x) - rd : 0.0, bh = k < dim ? double(x) + rd : 0.0;
      box_lo[k] = box_lo[k] < bl ? box_lo[k] : bl;
      box_hi[k] = box_hi[k] > bh ? box_hi[k] : bh;
      const Real ax = x < Real(0) ? -x : x;
      body_abs = ax > body_abs ? ax : body_abs;
    }
    rmin = rmin < r ? rmin : r;
    rmax = rmax > r ? rmax : r;
    rsum += rd;
    absmax = absmax > body_abs ? absmax : body_abs;
  }
  // The share as an Extent merged into init (init's values where the thread had no body).
  NESTSIM_HD Extent merged_into(const Extent& init) const {
    Extent m;
    for (int k = 0; k < 3; ++k) {
      m.centre_lo[k] = double(centre_lo[k]);
      m.centre_hi[k] = double(centre_hi[k]);
      m.box_lo[k] = box_lo[k];
      m.box_hi[k] = box_hi[k];
    }
    m.rmin = double(rmin);
    m.rmax = double(rmax);
    m.rsum = rsum;
    m.absmax = double(absmax);
    return MergeExtent{}(init, m);
  }
};

// Each thread gathers a strided share of the bodies in registers (ThreadExtent), each
// block merges its threads (cub::BlockReduce) into one Extent per block, in out[block].
// Then the last block to finish (a ticket counter, `done`, zero before and after the
// launch) merges the blocks' results and calls finish(total) in its thread 0: the level
// plan (pair_finder.cu) in the same launch, not a kernel of its own, which saves a
// launch on the critical path (docs/perf-log.md, "the host's plan, the level plan's
// launch"); before that, every thread of that block calls finish.share(thread,
// threads), the plan's work that the block can split (zeroing the histograms).
template <class Real, class Finish>
__global__ void __launch_bounds__(kExtentThreads)
    extent_blocks(BodyArrays<Real> bodies, uint32_t n, int dim, Extent init, Extent* out,
                  unsigned* done, Finish finish) {
  using BlockReduce = cub::BlockReduce<Extent, kExtentThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const MergeExtent merge;
  ThreadExtent<Real> mine;
  const uint32_t stride = gridDim.x * kExtentThreads;
  for (uint64_t base = uint64_t(blockIdx.x) * kExtentThreads + threadIdx.x; base < n;
       base += uint64_t(kExtentUnroll) * stride) {
    Real p[kExtentUnroll][3], r[kExtentUnroll];
#pragma unroll
    for (int u = 0; u < kExtentUnroll; ++u) {
      const uint64_t i = base + uint64_t(u) * stride;
      p[u][0] = p[u][1] = p[u][2] = r[u] = 0;
      if (i < n) {
        bodies.load(uint32_t(i), dim, p[u]);
        r[u] = bodies.radius[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kExtentUnroll; ++u)
      if (base + uint64_t(u) * stride < n) mine.add(p[u], r[u], dim);
  }
  const Extent total = BlockReduce(temp).Reduce(mine.merged_into(init), merge);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
  if (!last_block(done)) return;  // its barriers also end the block's use of temp
  finish.share(threadIdx.x, kExtentThreads);
  Extent acc = init;
  for (uint32_t k = threadIdx.x; k < gridDim.x; k += kExtentThreads) {
    // From L2 (ld.cg): written by other blocks.
    Extent e;
    const double* src = reinterpret_cast<const double*>(out + k);
    double* dst = reinterpret_cast<double*>(&e);
    for (std::size_t w = 0; w < sizeof(Extent) / sizeof(double); ++w) dst[w] = __ldcg(src + w);
    acc = merge(acc, e);
  }
  const Extent all = BlockReduce(temp).Reduce(acc, merge);
  if (threadIdx.x == 0) finish(all);
}

// Launches extent_blocks into scratch (grown as needed), whose last block calls
// finish(extent of all bodies) on the device. A single pass over the bodies: a generic
// reduction of this 128-byte type costs several times more. `done` is one counter,
// zeroed once when allocated (the kernel leaves it at zero).
template <class Real, class Finish>
void extent_async(const BodyArrays<Real>& bodies, uint32_t n, int dim,
                  thrust::device_vector<Extent>& scratch, thrust::device_vector<unsigned>& done,
                  Finish finish) {
  const uint32_t blocks = std::max<uint32_t>(
      1, std::min<uint32_t>((n + kExtentThreads - 1) / kExtentThreads, 264));
  ensure_size(scratch, blocks);
  if (done.empty()) done.assign(1, 0u);
  extent_blocks<Real><<<blocks, kExtentThreads>>>(bodies, n, dim, empty_extent(),
                                                  thrust::raw_pointer_cast(scratch.data()),
                                                  thrust::raw_pointer_cast(done.data()), finish);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}
#endif

// What the rounding pad and the grids need of the space, in a form device code can take.
struct PadSpace {
  int dim = 3;
  bool periodic = false;
  double size[3] = {0, 0, 0};
};
inline PadSpace pad_space(const Domain& dom, int dim) {
  PadSpace s;
  s.dim = dim;
  s.periodic = dom.periodic;
  for (int a = 0; a < 3; ++a) s.size[a] = dom.size[a];
  return s;
}

// Largest extent of the space a grid must cover: the box edge when periodic, else the
// bodies' boxes.
NESTSIM_HD inline double space_span(const Extent& e, const PadSpace& s) {
  double span = 0;
  for (int a = 0; a < s.dim; ++a) {
    const double w = s.periodic ? s.size[a] : e.box_hi[a] - e.box_lo[a];
    span = w > span ? w : span;
  }
  return span;
}

// Rounding pad: covers the error of the exact test in the body precision (positions,
// minimum image, squares) and of the cell geometry in double, so that no pair the exact
// test accepts can fall outside the cells searched.
template <class Real>
NESTSIM_HD double rounding_pad(const Extent& e, const PadSpace& s) {
  const double eps = sizeof(Real) == sizeof(float) ? double(FLT_EPSILON) : DBL_EPSILON;
  return 64.0 * eps * (e.absmax + space_span(e, s) + 2.0 * e.rmax) + DBL_MIN;
}
template <class Real>
double rounding_pad(const Extent& e, const Domain& dom, int dim) {
  return rounding_pad<Real>(e, pad_space(dom, dim));
}

// Cells of width >= `width` over [lo, hi] per axis (open), or over the periodic box;
// at most 2^20 cells per axis.
inline GridSpec make_grid(const Domain& dom, int dim, double width, const double* lo,
                          const double* hi) {
  GridSpec g;
  g.dim = dim;
  g.periodic = dom.periodic;
  width = std::max(width, 1e-300);
  for (int a = 0; a < dim; ++a) {
    if (dom.periodic) {
      const double fit = std::floor(dom.size[a] / width);
      g.n[a] = static_cast<long long>(std::clamp(fit, 1.0, double(1 << 20)));
      g.origin[a] = dom.lo[a];
      g.width[a] = dom.size[a] / double(g.n[a]);
    } else {
      g.origin[a] = lo[a];
      g.width[a] = std::max(width, (hi[a] - lo[a]) * 0x1p-20);
      g.n[a] = static_cast<long long>(std::floor((hi[a] - lo[a]) / g.width[a])) + 1;
    }
    g.inv_width[a] = 1.0 / g.width[a];
  }
  g.set_float_copies();
  return g;
}

// Buckets for `count` bodies in `grid`: one per cell when there are at most 16 cells per
// body (dense: a run of cells along x is one bucket range), otherwise a hash table of
// about 2 count buckets (sparse scenes; exact through the cell check of the pair steps,
// but one look-up per cell). Why 16: at 3e6 bodies, phi 0.1, the bottom group needs 6
// cells per member, where hashed walks cost 2.6x the dense ones on the H100
// (docs/perf-log.md, "dense cell tables"); a dense table costs 4 bytes per cell and two
// streaming passes. NESTSIM_DENSE_CELLS_PER_BODY overrides the 16 for tuning. Returns the
// number of cells.
inline double choose_buckets(GridSpec& grid, uint32_t count) {
  double cells = 1;
  for (int a = 0; a < grid.dim; ++a) cells *= double(grid.n[a]);
  static const double per_body = [] {
    const char* v = std::getenv("NESTSIM_DENSE_CELLS_PER_BODY");
    return v ? std::atof(v) : 16.0;
  }();
  // At most 2^30 dense buckets (4 GB): the shared table must stay below 2^32 buckets.
  if (cells <= per_body * count + 1024.0 && cells <= double(uint64_t(1) << 30)) {
    grid.dense = true;
    grid.table_size = static_cast<uint64_t>(cells);
  } else {
    grid.dense = false;
    int bits = 10;
    while ((uint64_t(1) << bits) < 2ull * count) ++bits;
    grid.table_size = uint64_t(1) << bits;
    grid.hash_shift = 64 - bits;
  }
  return cells;
}

// A grid of one cell (the brute-force group: its bodies are only sorted together).
inline GridSpec single_cell_grid(const Domain& dom, int dim) {
  GridSpec g;
  g.dim = dim;
  g.periodic = dom.periodic;
  return g;
}

// Whether SortedGrid::build radix-sorts n bodies (BroadphaseOptions::grid_sort). The
// automatic choice: radix from kRadixSortMin bodies on, on the GPU 2e6 (H100: the radix
// path is 16-17% faster at 2e6 and 3e6, phi 0.1, a tie at phi 0.3, 3-4% slower at 1e6;
// docs/perf-log.md, "the radix sort into cells from 2e6 bodies on"), on the CPU 1e5
// (thrust's sort of the 32-bit cell numbers, per-thread radix sorts and a merge, 2-11%
// faster than the counting sort's atomics at 1e5 and 1e6 on 2 cores, a tie below;
// docs/perf-log.md, "CPU: the candidate test without per-axis branches").
// NESTSIM_GRID_RADIX_MIN overrides it.
#if defined(NESTSIM_BACKEND_CUDA)
constexpr double kRadixSortMin = 2e6;
#else
constexpr double kRadixSortMin = 1e5;
#endif
inline bool radix_grid_sort(const BroadphaseOptions& options, uint32_t n) {
  using GridSort = BroadphaseOptions::GridSort;
  if (options.grid_sort == GridSort::counting) return false;
  if (options.grid_sort == GridSort::radix) return true;
  static const double min_n = [] {
    const char* v = std::getenv("NESTSIM_GRID_RADIX_MIN");
    return v ? std::atof(v) : kRadixSortMin;
  }();
  return double(n) >= min_n;
}

// The bits a radix sort needs for values below `count` (at least 1, at most 32): the
// keys of the sort into cells, the packed pair keys, and fit_radix_passes' plan of the
// former's passes.
inline int radix_bits(uint64_t count) {
  int bits = 1;
  while (bits < 32 && (uint64_t(1) << bits) < count) ++bits;
  return bits;
}

#if defined(NESTSIM_BACKEND_CUDA)
// BucketRunStarts on the GPU: one thread per sorted position (n + 1 of them); the warp
// numbers its lanes' entries (an inclusive sum) and writes them 32 at a time, entry j by
// lane j mod 32, which finds the lane that owns j by a 5-step search over the sums:
// consecutive lanes' runs are consecutive entries, so each store is one coalesced 128
// bytes (writing run by run reaches only 1.2 TB/s on the H100; docs/perf-log.md, "the
// bucket table"). NESTSIM_BUCKET_LONG_RUN: the longest
// run a warp writes (longer ones: long_bucket_runs; a test variant makes it small).
inline const uint32_t kLongBucketRun = [] {
  const char* v = std::getenv("NESTSIM_BUCKET_LONG_RUN");
  return v ? uint32_t(std::max(1, std::atoi(v))) : 4096u;
}();
// Inclusive sum of v over the warp's lanes (every lane of the warp calls it).
__device__ inline uint32_t warp_inclusive_sum(uint32_t v, uint32_t lane) {
  for (uint32_t d = 1; d < 32; d <<= 1) {
    const uint32_t below = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += below;
  }
  return v;
}
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
// The runs longer than kLongBucketRun, each written by one block at a time.
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
// GatherSorted) rather than scattering them (PlaceSorted): on the GPU from
// kPlaceGatherMinN bodies on (H100: -1 to -3% at 1e6, +5 to +7% at 1e5, where the extra
// launch costs more than the scatters it saves; docs/perf-log.md, "the counting sort's
// records moved by a gather"); never on the CPU (unmeasured). NESTSIM_PLACE_GATHER=0 / 1
// forces either move.
constexpr uint32_t kPlaceGatherMinN = 500000;
inline bool place_by_gather(uint32_t n) {
  static const int forced = [] {
    const char* v = std::getenv("NESTSIM_PLACE_GATHER");
    return v ? (std::string(v) == "0" ? 0 : 1) : -1;
  }();
  if (forced >= 0) return forced == 1;
#if defined(NESTSIM_BACKEND_CUDA)
  return n >= kPlaceGatherMinN;
#else
  (void)n;
  return false;
#endif
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
//    counting sort's atomics for many bodies; docs/perf-log.md).
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
  // records' gather (docs/perf-log.md, "the bucket table beside the gather"); null: all
  // on the default stream.
  template <int Dim, class Policy>
  SortedBodies<Real> build(const Policy& exec, std::vector<GroupGrid>& host, const uint8_t* level,
                           LevelToGroup to_group, const BodyArrays<Real>& bodies, uint32_t n,
                           bool radix, SideStream* side = nullptr) {
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
      bucket_table(n, uint32_t(table), side);
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
      if (place_by_gather(n)) {
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

  // bucket_start from sorted_bucket (kernels.cuh, BucketRunStarts): on the GPU, each
  // warp numbers its lanes' entries and writes 32 per store (bucket_run_starts), and
  // runs longer than kLongBucketRun entries are written by whole blocks after
  // (long_bucket_runs).
  thrust::device_vector<BucketRun> long_runs;
  thrust::device_vector<uint32_t> long_run_count;
  // With `side` (GPU), on its stream, forked here: the caller joins it.
  void bucket_table(uint32_t n, uint32_t table, SideStream* side) {
#if defined(NESTSIM_BACKEND_CUDA)
    const uint32_t long_run = kLongBucketRun;
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
    const uint32_t long_run = ~uint32_t(0);
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

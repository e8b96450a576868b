// The execution policy of the broad phase: the backend's parallel policy with a caching
// allocator, so that Thrust's temporary buffers (scans, sorts, reductions) are allocated
// once and reused across levels and calls instead of a cudaMalloc/cudaFree per call.
#pragma once
#include <thrust/execution_policy.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "nestsim/tuning.h"

#if defined(NESTSIM_BACKEND_CUDA)
#include <thrust/system/cuda/execution_policy.h>

#include "nestsim/device/check.cuh"
#else
#include <thrust/system/omp/execution_policy.h>
#endif

namespace nestsim::detail {

class CachingAllocator {
 public:
  using value_type = char;

  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator() {
    for (auto& [size, p] : free_) release(p);
    for (auto& [p, size] : used_) release(p);
  }

  // Thread-safe: on the CPU backend, Thrust's parallel sorts allocate their merge
  // buffers from inside their OpenMP teams, several threads at once.
  char* allocate(std::ptrdiff_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t n = std::size_t(bytes);
    auto it = free_.lower_bound(n);
    if (it != free_.end() && it->first <= 2 * n + 4096) {
      char* p = it->second;
      used_[p] = it->first;
      free_.erase(it);
      return p;
    }
    char* p = obtain(n);
    if (!p && !free_.empty()) {  // out of memory: hand the cached blocks back, try again
      for (auto& [size, q] : free_) release(q);
      free_.clear();
      p = obtain(n);
    }
    if (!p) throw_out_of_memory(n);
    used_[p] = n;
    return p;
  }

  void deallocate(char* p, std::size_t) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = used_.find(p);
    if (it == used_.end()) return;
    free_.emplace(it->second, p);
    used_.erase(it);
  }

 private:
  // A new block, or null when the device (or host) is out of memory.
  static char* obtain(std::size_t n) {
#if defined(NESTSIM_BACKEND_CUDA)
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, n ? n : 1);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the error, the caller retries or throws
      return nullptr;
    }
    NESTSIM_CUDA_CHECK(e);
    return static_cast<char*>(p);
#else
    return static_cast<char*>(std::malloc(n ? n : 1));
#endif
  }
  [[noreturn]] static void throw_out_of_memory(std::size_t n) {
#if defined(NESTSIM_BACKEND_CUDA)
    throw std::runtime_error("out of GPU memory: a temporary buffer of " +
                             std::to_string(double(n) / double(1 << 20)) + " MiB does not fit");
#else
    (void)n;
    throw std::bad_alloc();
#endif
  }
  static void release(char* p) {
#if defined(NESTSIM_BACKEND_CUDA)
    cudaFree(p);  // in a destructor: an error here cannot be reported
#else
    std::free(p);
#endif
  }

  std::mutex mutex_;
  std::multimap<std::size_t, char*> free_;
  std::map<char*, std::size_t> used_;
};

// The policy for Thrust calls that allocate temporaries. On CUDA it does not
// synchronise after each call (par_nosync): the broad phase queues its kernels on the
// default stream and the host waits only where it reads a result back (a count, a
// reduction), which a copy to the host does by itself. Stream order keeps every call
// after the one before it, and temporaries handed back to the caching allocator are
// only reused by later work on the same stream.
inline auto policy(CachingAllocator& alloc) {
#if defined(NESTSIM_BACKEND_CUDA)
  return thrust::cuda::par_nosync(alloc);
#else
  return thrust::omp::par(alloc);
#endif
}

// Frees a buffer's memory (clear() alone keeps the capacity).
template <class Vector>
void release(Vector& v) {
  v.clear();
  v.shrink_to_fit();
}

// Sizes a buffer whose contents are not needed to n elements. Thrust's resize keeps the
// old contents and may double the capacity when it grows (with the old block alive
// during the copy); here a buffer that must grow is freed first and allocated at n.
template <class Vector>
void resize_discard(Vector& v, std::size_t n) {
  if (n > v.capacity()) release(v);
  v.resize(n);
}

// Sizes a buffer whose contents are not needed, and whose users count its elements
// themselves, to at least n elements: it never shrinks, and grows with room to spare.
// Thrust value-initialises every element a resize adds (a kernel and a wait on CUDA),
// which a buffer sized exactly to a count that varies from step to step pays at about
// every other step (the simulator's per-step lists: six such waits a step).
template <class Vector>
void grow_discard(Vector& v, std::size_t n) {
  if (v.size() >= n) return;
  const std::size_t room = std::min<std::size_t>(n / 8, std::size_t(1) << 22) + 1024;
  release(v);
  v.resize(n + room);
}

// The same without an allocator, for calls that need no temporaries.
inline auto nosync() {
#if defined(NESTSIM_BACKEND_CUDA)
  return thrust::cuda::par_nosync;
#else
  return thrust::omp::par;
#endif
}

// The CPU backend: sets the calling thread's OpenMP team size to the cores that other
// programs leave free (tuning.h, set_follow_free_cores); cheap between its samples.
void follow_free_cores();

// f(exec) for a data-parallel step over n items: on the CPU, after follow_free_cores(),
// the calling thread alone (thrust::seq) below serial_items() (tuning.h), else the
// parallel policy given; on CUDA always the parallel policy. The one place where the
// broad phase's and the simulator's loops choose their path. f takes the policy as
// `const auto&`.
template <class Parallel, class F>
auto on_items_on(const Parallel& parallel, uint64_t n, F&& f) {
#if defined(NESTSIM_BACKEND_CUDA)
  (void)n;
#else
  follow_free_cores();
  if (n < serial_items()) return f(thrust::seq);
#endif
  return f(parallel);
}

#if defined(NESTSIM_BACKEND_CUDA)
template <class F, class Index>
__global__ void __launch_bounds__(kGpuLoopThreads) items_kernel(Index n, F f) {
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < uint64_t(n)) f(Index(i));
}

// f(i) for i in [0, n) on the GPU, on the calling thread's default stream, without
// waiting: one item per thread, in blocks of kGpuLoopThreads, or of
// kGpuSmallLoopThreads below kGpuSmallLoopItems items (tuning.h). Thrust's for_each
// gives each thread two items in turn in blocks of 256: a small model's per-body steps
// (chains of dependent loads, a few thousand items) then run on a handful of SMs at
// twice the latency of one item.
template <class F, class Index>
void launch_items(Index n, const F& f) {
  if (n == 0) return;
  const uint32_t threads =
      uint64_t(n) < kGpuSmallLoopItems ? kGpuSmallLoopThreads : kGpuLoopThreads;
  const uint64_t blocks = (uint64_t(n) + threads - 1) / threads;
  if (blocks >= (uint64_t(1) << 31))
    throw std::length_error("nestsim: too many items for one launch");
  items_kernel<<<unsigned(blocks), threads>>>(n, f);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}
#endif

}  // namespace nestsim::detail

// Small copies between host and device through page-locked buffers (HostStage), with
// read-backs written by the GPU into mapped memory and polled by the host.
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>

#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"

namespace nestsim::detail {

#if defined(NESTSIM_BACKEND_CUDA)
// A read-back's device side, by every thread of one block: `bytes` from device memory
// into the host's mapped page-locked buffer, then a system-scope fence and *flag = seq,
// which the host polls (HostStage::wait_mapped) instead of waiting on the stream for a
// copy engine's transfer (a copy engine's read-back of the plan took ~15 us after its
// kernels had finished on the H100; docs/performance.md, "Read-backs polled in
// mapped memory"). The source is read from L2 (ld.cg): the caller may be the last block
// of a launch whose other blocks wrote it (level_histogram_kernel).
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
static __global__ void copy_to_mapped(const unsigned char* src, unsigned char* dst,
                                      std::size_t bytes, volatile unsigned* flag, unsigned seq) {
  publish_mapped(src, dst, bytes, flag, seq);
}
#endif

// Small copies between host and device (a plan, a few totals, the group table) through
// page-locked buffers. From pageable memory the driver stages the bytes itself and a
// host-to-device copy waits for the device (docs/performance.md, "The read-backs' gaps").
// The copy to the device is queued on the stream; the buffer is reused only after it was
// done. The copy to the host is written by a one-block kernel into mapped memory and
// announced by a flag the host polls (set_poll(false): a copy engine's transfer and a
// stream synchronisation instead, the slower portable path; DeviceTuning::readback_poll).
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
  // (docs/performance.md, "The plan's read-back without a copy kernel"): the mapped
  // buffer for `bytes` (a device-usable pointer) and the value the kernel writes to *flag
  // once the bytes are there (after a system-scope fence). Only while the read-backs poll
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
  // Whether read-backs poll mapped memory (GPU; the CPU copies directly). Between
  // read-backs only.
  void set_poll(bool poll) {
#if defined(NESTSIM_BACKEND_CUDA)
    poll_ = poll;
#else
    (void)poll;
#endif
  }
  // count elements of src (device) into out (host); returns when they are there.
  template <class T>
  void to_host(const thrust::device_vector<T>& src, std::size_t count, T* out) {
#if defined(NESTSIM_BACKEND_CUDA)
    const std::size_t bytes = count * sizeof(T);
    if (poll_) {
      const Mapped m = mapped_back(bytes);
      const auto* from =
          reinterpret_cast<const unsigned char*>(thrust::raw_pointer_cast(src.data()));
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
  bool poll_ = true;
#endif
};

}  // namespace nestsim::detail

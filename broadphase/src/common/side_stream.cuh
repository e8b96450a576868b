// A second stream for work beside the default stream's (SideStream).
#pragma once
#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"

namespace nestsim::detail {

#if defined(NESTSIM_BACKEND_CUDA)
// A second stream, for work that may run beside the default stream's (HSX's large-body
// tasks and walk beside the small-small walk; docs/performance.md, "The large bodies'
// work beside the small-small walk"). Created on first
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

}  // namespace nestsim::detail

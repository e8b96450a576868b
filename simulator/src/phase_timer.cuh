// One phase of a step, timed into PhaseTimes (wall clock, device work finished before
// the clock stops) and, on the GPU, labelled as an NVTX range ("nestsim/forces", ...),
// so that a profile (Nsight Systems) reads like the step loop.
#pragma once
#include <chrono>

#if defined(NESTSIM_BACKEND_CUDA)
#include <nvtx3/nvToolsExt.h>
#endif

#include "device_loops.cuh"

namespace nestsim::sim::detail {

class PhaseTimer {
 public:
  PhaseTimer(double& into, const char* range) : into_(into), start_(Clock::now()) {
#if defined(NESTSIM_BACKEND_CUDA)
    nvtxRangePushA(range);
#else
    (void)range;
#endif
  }
  ~PhaseTimer() {
    device_sync();
    into_ += std::chrono::duration<double>(Clock::now() - start_).count();
#if defined(NESTSIM_BACKEND_CUDA)
    nvtxRangePop();
#endif
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  double& into_;
  Clock::time_point start_;
};

}  // namespace nestsim::sim::detail

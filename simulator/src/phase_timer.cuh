// One phase of a step: on the GPU, labelled as an NVTX range ("nestsim/forces", ...) so
// that a profile (Nsight Systems) reads like the step loop; and, when the phases are
// timed (SimulationOptions::phase_times), its wall clock added to PhaseTimes. A timed
// phase waits for its device work before the clock stops: one host synchronisation per
// phase, which is why timing is off unless asked for.
#pragma once
#include <chrono>

#if defined(NESTSIM_BACKEND_CUDA)
#include <nvtx3/nvToolsExt.h>
#endif

#include "device_loops.cuh"

namespace nestsim::sim::detail {

class PhaseTimer {
 public:
  // `timed`: add the phase's seconds to `into` (waiting for the device at the end).
  PhaseTimer(bool timed, double& into, const char* range) : into_(timed ? &into : nullptr) {
    if (into_) start_ = Clock::now();
#if defined(NESTSIM_BACKEND_CUDA)
    nvtxRangePushA(range);
#else
    (void)range;
#endif
  }
  ~PhaseTimer() {
    if (into_) {
      device_sync();
      *into_ += std::chrono::duration<double>(Clock::now() - start_).count();
    }
#if defined(NESTSIM_BACKEND_CUDA)
    nvtxRangePop();
#endif
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  double* into_;
  Clock::time_point start_;
};

}  // namespace nestsim::sim::detail

// Named ranges of the broad phase's work ("broadphase/hsx/plan"), as a profile should
// read: NVTX ranges on the CUDA backend (Nsight Systems shows them on the host's
// timeline beside the kernels they launch); nothing on the CPU backend.
#pragma once
#if defined(NESTSIM_BACKEND_CUDA)
#include <nvtx3/nvToolsExt.h>
#endif

namespace nestsim::detail {

class Range {
 public:
  explicit Range(const char* name) {
#if defined(NESTSIM_BACKEND_CUDA)
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~Range() {
#if defined(NESTSIM_BACKEND_CUDA)
    nvtxRangePop();
#endif
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

}  // namespace nestsim::detail

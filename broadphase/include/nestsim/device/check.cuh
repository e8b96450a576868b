// One error macro for CUDA runtime calls: throws with file:line.
#pragma once
#include <stdexcept>
#include <string>

#if defined(NESTSIM_BACKEND_CUDA)
#include <cuda_runtime.h>
#define NESTSIM_CUDA_CHECK(call)                                                          \
  do {                                                                                    \
    const cudaError_t nestsim_status_ = (call);                                           \
    if (nestsim_status_ != cudaSuccess)                                                   \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +  \
                               ": " #call ": " + cudaGetErrorString(nestsim_status_));    \
  } while (0)
#else
#define NESTSIM_CUDA_CHECK(call) (void)0
#endif

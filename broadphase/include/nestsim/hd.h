// Portability macros shared by host and device code. Plain C++ compiles this header.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define NESTSIM_HD __host__ __device__
#else
#define NESTSIM_HD
#endif

namespace nestsim {

// Relaxed atomic fetch-add on a 32-bit counter: atomicAdd in CUDA device code, the
// GCC builtin on the OpenMP backend. Returns the old value.
NESTSIM_HD inline uint32_t atomic_fetch_add(uint32_t* target, uint32_t value) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(reinterpret_cast<unsigned int*>(target), value);
#else
  return __atomic_fetch_add(target, value, __ATOMIC_RELAXED);
#endif
}

NESTSIM_HD inline unsigned long long atomic_fetch_add(unsigned long long* target,
                                                      unsigned long long value) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(target, value);
#else
  return __atomic_fetch_add(target, value, __ATOMIC_RELAXED);
#endif
}

}  // namespace nestsim

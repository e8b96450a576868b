// Portability macros shared by host and device code. Plain C++ compiles this header.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define NESTSIM_HD __host__ __device__
#else
#define NESTSIM_HD
#endif

// A function that the CPU backend's compiler must inline into its caller: the walks'
// inner steps, which GCC otherwise calls as functions from the walks' larger bodies
// (measured: 15% more instructions in a search, docs/performance.md, "The CPU walks
// inlined"). nvcc inlines device code on its own; unchanged there.
#if defined(__CUDACC__)
#define NESTSIM_HOST_INLINE
#else
#define NESTSIM_HOST_INLINE __attribute__((always_inline))
#endif

// Loops over the three axes with this prefix unroll, so that arrays indexed by the axis
// stay in registers: a loop bound only known at run time (dim) makes nvcc copy the
// indexed structs into per-thread local memory (measured: 800-byte stack frames in
// every per-body kernel of the simulator, docs/performance.md, "Loops over the axes
// unrolled"). Use as
//   NESTSIM_AXES(k, dim) { ... }   // k = 0, 1, 2 with k < dim
#if defined(__CUDA_ARCH__)
#define NESTSIM_UNROLL _Pragma("unroll")
#else
#define NESTSIM_UNROLL
#endif
#define NESTSIM_AXES(k, dim) NESTSIM_UNROLL for (int k = 0; k < 3; ++k) if (k < (dim))

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

// Atomic maximum on a 64-bit word (the result does not depend on the order of the
// callers). Returns nothing: callers compare afterwards.
NESTSIM_HD inline void atomic_fetch_max(unsigned long long* target, unsigned long long value) {
#if defined(__CUDA_ARCH__)
  atomicMax(target, value);
#else
  unsigned long long old = __atomic_load_n(target, __ATOMIC_RELAXED);
  while (old < value &&
         !__atomic_compare_exchange_n(target, &old, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

// Correctly rounded multiply / add / subtract that the compiler may not fuse into an
// FMA. nvcc contracts a * b + c by default; the exact pair test must round the same way
// on every backend so that the CPU and GPU give the same pairs bit for bit.
NESTSIM_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
NESTSIM_HD inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
NESTSIM_HD inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
NESTSIM_HD inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
NESTSIM_HD inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
NESTSIM_HD inline double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

}  // namespace nestsim

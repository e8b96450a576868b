// The levels of the HSX algorithm (the HSX paper, Köster, Perumalla, Uhrmacher 2017,
// Algorithm 1: the grid width doubles from d0 at each iteration): a
// body of diameter D belongs to the first level whose width holds it. Plain C++ compiles
// this header; tests/test_levels.cpp checks it against the definition.
#pragma once
#include <cstdint>
#include <cstring>

#include "nestsim/hd.h"

namespace nestsim {

// Smallest k >= 0 with diameter <= d0 * 2^k (capped at 63; 0 for a NaN diameter, 63
// for an infinite one), from the two numbers' bits: with diameter = m 2^e and
// d0 = m0 2^e0 (m, m0 in [1, 2)), k = e - e0 when m <= m0, else e - e0 + 1.
// Precondition: d0 is a positive normal number (the broad phase keeps d0 >= 1e-300).
// Exact, and ~10 instructions where log2, ceil and ldexp in double took ~180 per body
// on the GPU (docs/performance.md, "The plan's per-body kernels").
NESTSIM_HD inline int natural_level(double diameter, double d0) {
  if (!(diameter > d0)) return 0;                        // NaN too
  if (!(diameter <= 1.7976931348623157e308)) return 63;  // infinite
#if defined(__CUDA_ARCH__)
  const uint64_t a = uint64_t(__double_as_longlong(diameter));
  const uint64_t b = uint64_t(__double_as_longlong(d0));
#else
  uint64_t a = 0, b = 0;
  std::memcpy(&a, &diameter, sizeof a);
  std::memcpy(&b, &d0, sizeof b);
#endif
  constexpr uint64_t kMantissa = (uint64_t(1) << 52) - 1;
  const int k = int(a >> 52) - int(b >> 52) + ((a & kMantissa) > (b & kMantissa) ? 1 : 0);
  return k < 0 ? 0 : (k > 63 ? 63 : k);
}

}  // namespace nestsim

// Thread index -> pair of bodies without memory reads, and one-bit result masks, after
// Avril, Gouranton, Arnaldi: "Fast Collision Culling in Large-Scale Environments Using
// GPU Mapping Function" (EGPGV 2012; section 3.2 "Linear function of
// access", 3.2.2 "Comparison with lazy way", 3.3 the corrections of approximate square
// roots, 3.4 "Output transfer optimization"). Plain C++ compiles this header.
//
// Pairs are numbered row by row over the upper triangle of the n x n pairs matrix
// (the seed's Table 1): k = 0 is (0, 1), k = n - 2 is (0, n - 1), k = n - 1 is (1, 2),
// ..., k = n (n - 1) / 2 - 1 is (n - 2, n - 1). Indices here are 0-based; the seed
// numbers bodies from 1 and the formulas below are written in its numbering.
#pragma once
#include <cmath>
#include <cstdint>

#include "nestsim/hd.h"

namespace nestsim {

// Number of pairs among n bodies: the length of the sqrt mapping's index range.
NESTSIM_HD inline uint64_t pair_index_count(uint32_t n) {
  return n < 2 ? 0 : uint64_t(n) * (n - 1) / 2;
}

// Section 3.2.1: S_a = (a - 1)(2n - a) / 2, the index of the first pair of row a
// (1-based row a), i.e. the number of pairs in rows 1 .. a - 1.
NESTSIM_HD inline uint64_t pair_row_start(uint32_t n, uint32_t a1) {
  return uint64_t(a1 - 1) * (2 * uint64_t(n) - a1) / 2;
}

// Section 3.2.1, equations (1) and (2), with the corrections of section 3.3.
// a = floor((2n + 1 - sqrt(D)) / 2), D = 4n^2 - 4n - 8k + 1 = (2n - 1)^2 - 8k, and
// b = (a + 1) + k - S_a. D is formed exactly in 64-bit integers (n < 2^31); only the
// square root is taken in `Float`. An approximate root can put a one row off; the
// seed's two rules repair that: "if b > n: a++, b = a + (b - n)" (a one row too small)
// and "if a >= b: b = n - (a - b), a--" (a one row too large). tests/test_pair_mapping.cpp
// checks every k for n up to 10^5 (float and double) and the row boundaries beyond.
// Float is exact there; use double for larger n (D < 2^53 keeps its root exact).
template <class Float>
NESTSIM_HD inline void pair_from_index_sqrt(uint64_t k, uint32_t n, uint32_t& a, uint32_t& b) {
  const uint64_t two_n_minus_1 = 2 * uint64_t(n) - 1;
  const uint64_t d = two_n_minus_1 * two_n_minus_1 - 8 * k;
  using std::floor;
  using std::sqrt;
  const Float root = sqrt(Float(d));
  int64_t a1 = int64_t(floor((Float(2 * uint64_t(n) + 1) - root) / Float(2)));
  // A root far off (never seen; guards the arithmetic below) is clamped to a valid row.
  if (a1 < 1) a1 = 1;
  if (a1 > int64_t(n) - 1) a1 = int64_t(n) - 1;
  int64_t b1 = (a1 + 1) + int64_t(k) - int64_t(pair_row_start(n, uint32_t(a1)));
  if (b1 > int64_t(n)) {  // section 3.3, first rule
    ++a1;
    b1 = a1 + (b1 - int64_t(n));
  }
  if (a1 >= b1) {  // section 3.3, second rule
    b1 = int64_t(n) - (a1 - b1);
    --a1;
  }
  a = uint32_t(a1 - 1);
  b = uint32_t(b1 - 1);
}

// The mapping the product uses: float root where the exhaustive test covers it, double
// beyond.
constexpr uint32_t kSqrtMappingFloatMaxN = 100000;
NESTSIM_HD inline void pair_from_index(uint64_t k, uint32_t n, uint32_t& a, uint32_t& b) {
  if (n <= kSqrtMappingFloatMaxN)
    pair_from_index_sqrt<float>(k, n, a, b);
  else
    pair_from_index_sqrt<double>(k, n, a, b);
}

// The inverse: the index of pair (a, b), a < b < n, 0-based.
NESTSIM_HD inline uint64_t pair_index(uint32_t a, uint32_t b, uint32_t n) {
  return pair_row_start(n, a + 1) + (b - a - 1);
}

// Section 3.2.2, the lazy way: k in [0, n^2), a = k / n, b = k % n, and the index is
// thrown away unless a < b (half of them are). Returns whether k names a pair.
NESTSIM_HD inline uint64_t lazy_index_count(uint32_t n) { return uint64_t(n) * n; }
NESTSIM_HD inline bool pair_from_index_lazy(uint64_t k, uint32_t n, uint32_t& a, uint32_t& b) {
  a = uint32_t(k / n);
  b = uint32_t(k % n);
  return a < b;
}

// Section 3.4: results packed one bit per pair. Pair index k lives in bit k % 32 of
// word k / 32 (the seed packs 8 per byte; 32-bit words are the same bit order on a
// little-endian machine and what a GPU thread writes in one store).
constexpr uint32_t kMaskWordBits = 32;
NESTSIM_HD inline uint64_t mask_word_count(uint64_t indices) {
  return (indices + kMaskWordBits - 1) / kMaskWordBits;
}
NESTSIM_HD inline uint32_t mask_bit(uint64_t k) { return uint32_t(1) << (k % kMaskWordBits); }
NESTSIM_HD inline bool mask_test(const uint32_t* words, uint64_t k) {
  return (words[k / kMaskWordBits] & mask_bit(k)) != 0;
}

NESTSIM_HD inline int popcount32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}
// Index of the lowest set bit; x != 0.
NESTSIM_HD inline int lowest_bit32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __ffs(int(x)) - 1;
#else
  return __builtin_ctz(x);
#endif
}

}  // namespace nestsim

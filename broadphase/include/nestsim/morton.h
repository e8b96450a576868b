// The Morton (Z-order) key of a point: the bits of its cell on a grid of 2^bits cells per
// axis, interleaved, so that points near each other in space mostly get near keys.
// Bodies stored in this order share cache lines in neighbour loops (the simulator's
// initial slots; bench_hsx --order morton).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace nestsim {

// fraction[k]: the point's coordinate on axis k as a fraction of the box (wrapped into
// [0, 1)); dim 2 or 3; bits * dim <= 64.
inline uint64_t morton_key(const double* fraction, int dim, int bits = 10) {
  const uint64_t cells = uint64_t(1) << bits;
  uint64_t code = 0;
  for (int k = 0; k < dim; ++k) {
    double f = fraction[k] - std::floor(fraction[k]);
    if (!(f >= 0)) f = 0;  // NaN
    const uint64_t c = std::min<uint64_t>(cells - 1, uint64_t(f * double(cells)));
    for (int bit = 0; bit < bits; ++bit) code |= ((c >> bit) & 1u) << (bit * dim + k);
  }
  return code;
}

}  // namespace nestsim

// The pair keys packed to 2 b bits for their sort, and both directions of every pair
// split into neighbour-list rows.
#pragma once
#include <cstdint>

#include "nestsim/device/pair_finder.cuh"

namespace nestsim::device::pair_keys {

// A pair (i, j) of n bodies packed as (i << bits) | j, bits = bits of n - 1, and back.
struct PackKey {
  int bits;
  NESTSIM_HD uint64_t operator()(uint64_t key) const {
    return (uint64_t(device::pair_first(key)) << bits) | device::pair_second(key);
  }
};
struct UnpackKey {
  int bits;
  NESTSIM_HD uint64_t operator()(uint64_t packed) const {
    return ((packed >> bits) << 32) | (packed & ((uint64_t(1) << bits) - 1));
  }
};

// Pair k's two directions, packed as (row << bits) | column: (i, j) at k, (j, i) at p + k.
struct PackBothWays {
  const uint64_t* keys;
  uint64_t p;
  int bits;
  uint64_t* out;
  NESTSIM_HD void operator()(uint64_t k) const {
    const uint64_t i = pair_first(keys[k]), j = pair_second(keys[k]);
    out[k] = (i << bits) | j;
    out[p + k] = (j << bits) | i;
  }
};
// Entry k of the sorted packed keys: its column into `neighbours`, its row into `rows`
// (if wanted), and, where a row's entries end, that end into offsets[row + 1] (rows >= n
// are not listed; a running maximum then fills the rows without entries).
struct SplitRows {
  const uint64_t* sorted;
  uint64_t entries;
  int bits;
  uint32_t n;
  uint64_t* offsets;
  uint32_t* neighbours;
  uint32_t* rows;
  NESTSIM_HD void operator()(uint64_t k) const {
    const uint64_t key = sorted[k];
    const uint64_t row = key >> bits;
    neighbours[k] = uint32_t(key & ((uint64_t(1) << bits) - 1));
    if (rows) rows[k] = uint32_t(row);
    if (row < n && (k + 1 == entries || (sorted[k + 1] >> bits) != row)) offsets[row + 1] = k + 1;
  }
};

}  // namespace nestsim::device::pair_keys

// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel
// random numbers: as easy as 1, 2, 3", SC'11), the generator of Random123 and cuRAND.
// Each draw is a pure function of (key, counter), so a body's noise at a step depends
// only on (seed, step, body id, purpose): never on thread scheduling, slot order or
// restarts. Plain C++ compiles this header; NESTSIM_HD makes it callable on the device.
#pragma once
#include <cmath>
#include <cstdint>

#include "nestsim/hd.h"

namespace nestsim::sim {

struct Philox4x32 {
  uint32_t v[4];
};

NESTSIM_HD inline void philox_mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}

// Philox4x32 with 10 rounds on counter c and key k (Random123's philox4x32_10).
NESTSIM_HD inline Philox4x32 philox4x32_10(Philox4x32 c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(kM0, c.v[0], hi0, lo0);
    philox_mulhilo(kM1, c.v[2], hi1, lo1);
    c = Philox4x32{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

// What a draw is for: separate streams for separate uses of one (step, body).
enum class RandomPurpose : uint32_t { brownian = 0, reaction = 1, event = 2 };

// Four random words for (seed, step, body id, purpose): the key is the seed, the
// counter (step low, step high, id low, purpose << 24 | id bits 32..55).
NESTSIM_HD inline Philox4x32 random_words(uint64_t seed, uint64_t step, uint64_t id,
                                          RandomPurpose purpose) {
  const Philox4x32 counter{{uint32_t(step), uint32_t(step >> 32), uint32_t(id),
                            (uint32_t(purpose) << 24) | (uint32_t(id >> 32) & 0xFFFFFFu)}};
  return philox4x32_10(counter, uint32_t(seed), uint32_t(seed >> 32));
}

// Uniform in (0, 1) from a 32-bit word: never 0 (safe for log), never 1.
NESTSIM_HD inline double uniform_open(uint32_t word) {
  return (double(word) + 0.5) * 2.3283064365386963e-10;  // 2^-32
}

// Box-Muller: two independent standard normals from two words.
NESTSIM_HD inline void box_muller(uint32_t a, uint32_t b, double& z0, double& z1) {
  const double radius = std::sqrt(-2.0 * std::log(uniform_open(a)));
  const double angle = 6.283185307179586476925286766559 * uniform_open(b);
  z0 = radius * std::cos(angle);
  z1 = radius * std::sin(angle);
}

// Four independent standard normals for (seed, step, id, purpose).
NESTSIM_HD inline void normals4(uint64_t seed, uint64_t step, uint64_t id, RandomPurpose purpose,
                                double* z) {
  const Philox4x32 w = random_words(seed, step, id, purpose);
  box_muller(w.v[0], w.v[1], z[0], z[1]);
  box_muller(w.v[2], w.v[3], z[2], z[3]);
}

}  // namespace nestsim::sim

// The natural level of a diameter (nestsim/levels.h) against its definition: the
// smallest k >= 0 with diameter <= d0 * 2^k, found by stepping k with std::ldexp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "nestsim/levels.h"

using nestsim::natural_level;

namespace {
int level_by_definition(double diameter, double d0) {
  if (!(diameter > d0)) return 0;
  int k = 0;
  while (k < 63 && diameter > std::ldexp(d0, k)) ++k;
  return k;
}

// f(diameter, d0) for `trials` random bases d0 (2^-60 to 2^61) and, per base, four
// diameters: exactly d0 2^k (k from -3 to 66, some above the cap), one ulp either side
// of it, and one anywhere in that range.
template <class F>
void for_random_diameters(uint64_t seed, int trials, F f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(-60, 60), unit(0, 1);
  for (int t = 0; t < trials; ++t) {
    const double d0 = std::exp2(exponent(rng)) * (1 + unit(rng));
    const double exact = d0 * std::exp2(std::floor(unit(rng) * 70 - 3));
    for (double d : {exact, std::nextafter(exact, 0.0), std::nextafter(exact, 1e308),
                     d0 * std::exp2(unit(rng) * 70 - 3)})
      f(d, d0);
  }
}
}  // namespace

TEST_CASE("natural levels equal the definition on random and boundary diameters") {
  long wrong = 0, checked = 0;
  for_random_diameters(7, 400000, [&](double d, double d0) {
    ++checked;
    if (natural_level(d, d0) != level_by_definition(d, d0)) ++wrong;
  });
  CHECK(checked == 1600000);
  CHECK(wrong == 0);
}

TEST_CASE("natural levels at the edges: below d0, huge, infinite, NaN") {
  CHECK(natural_level(0.5, 1.0) == 0);
  CHECK(natural_level(1.0, 1.0) == 0);
  CHECK(natural_level(std::nextafter(1.0, 2.0), 1.0) == 1);
  CHECK(natural_level(2.0, 1.0) == 1);
  CHECK(natural_level(1e300, 1e-300) == 63);  // capped
  CHECK(natural_level(std::ldexp(1.0, 63), 1.0) == 63);
  CHECK(natural_level(std::ldexp(1.0, 62), 1.0) == 62);
  CHECK(natural_level(std::numeric_limits<double>::infinity(), 1.0) == 63);
  CHECK(natural_level(std::numeric_limits<double>::quiet_NaN(), 1.0) == 0);
  CHECK(natural_level(-1.0, 1.0) == 0);
  for (int k = 0; k < 63; ++k) {
    CHECK(natural_level(std::ldexp(3.0, k), 3.0) == k);
    CHECK(natural_level(std::nextafter(std::ldexp(3.0, k), 1e308), 3.0) == k + 1);
  }
}

// The broad phase derives the histograms of bases d0 2^m from that of d0 (pair_finder.cu,
// choose_level_base: phase j + 4 is phase j one octave up) by shifting every level m
// down, the lowest merged into 0; it relies on natural_level(D, d 2^m) = max(0,
// natural_level(D, d) - m) wherever level 63 (the cap) is empty, which this checks by the
// definition on random and boundary diameters.
TEST_CASE("a base one or two octaves up shifts every level below the cap down") {
  long wrong = 0, checked = 0, capped = 0;
  for_random_diameters(11, 200000, [&](double d, double d0) {
    const int k = level_by_definition(d, d0);
    if (k == 63) {  // the cap: no derived phase (choose_level_base)
      ++capped;
      return;
    }
    for (int m : {1, 2}) {
      ++checked;
      if (natural_level(d, std::ldexp(d0, m)) != std::max(0, k - m)) ++wrong;
      if (level_by_definition(d, std::ldexp(d0, m)) != std::max(0, k - m)) ++wrong;
    }
  });
  CHECK(capped > 0);
  CHECK(checked == 2 * (800000 - capped));
  CHECK(checked > 1400000);
  CHECK(wrong == 0);
  // The cap does not shift: a diameter at d0 2^70 is level 63 at d0 and at 2 d0.
  CHECK(natural_level(std::ldexp(1.0, 70), 1.0) == 63);
  CHECK(natural_level(std::ldexp(1.0, 70), 2.0) == 63);
}

// Brute-force pair steps: the plain double loop (BrutePairs) and the balanced circular
// schedule (CircularPairs).
#pragma once
#include <cstdint>

#include "common/bodies.cuh"
#include "common/pair_sink.cuh"
#include "nestsim/device/pairwise.cuh"

namespace nestsim::detail {

// Brute force: item i tests every j in (i, end). The reference, and the last step of
// the HSX algorithm when few large bodies remain (section 5.8).
template <class Real, int Dim, bool Write>
struct BrutePairs {
  BodyArrays<Real> bodies;
  Space<Real> space;
  uint32_t begin, end;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t item) const { run_pair_step<Write>(*this, item, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t item, Emitter& e) const {
    const uint32_t i = begin + item;
    Real pi[3] = {0, 0, 0}, pj[3] = {0, 0, 0};
    bodies.load(i, Dim, pi);
    const Real ri = bodies.radius[i], qi = bodies.thickness[i];
    const uint32_t id_i = bodies.id_of(i);
    for (uint32_t j = i + 1; j < end; ++j) {
      bodies.load(j, Dim, pj);
      if (exact_pair(space, pi, ri, qi, pj, bodies.radius[j], bodies.thickness[j]))
        e.emit(id_i, bodies.id_of(j));
    }
  }
};

// All pairs by the balanced circular schedule (pairwise seed, section IV, Algorithm 4;
// device::CircularSchedule): item i tests body i against (i + s) mod n for
// s = 1 .. steps(i, n), the same work for every item. HSX's path for small n on the CPU
// (BroadphaseOptions::hsx_small_n; the GPU's is tiled, all_pairs_tiles.cuh); bodies in index
// order.
template <class Real, int Dim, bool Write>
struct CircularPairs {
  BodyArrays<Real> bodies;
  Space<Real> space;
  uint32_t n;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t item) const { run_pair_step<Write>(*this, item, sink); }

  template <class Emitter>
  struct Test {  // the schedule's visitor: the exact test, i's fields loaded once
    const CircularPairs& step;
    Emitter& e;
    Real pi[3], ri, qi;
    NESTSIM_HD void operator()(uint32_t i, uint32_t j) {
      Real pj[3] = {0, 0, 0};
      step.bodies.load(j, Dim, pj);
      if (exact_pair(step.space, pi, ri, qi, pj, step.bodies.radius[j], step.bodies.thickness[j]))
        e.emit(i, j);
    }
  };
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t i, Emitter& e) const {
    Test<Emitter> test{*this, e, {0, 0, 0}, bodies.radius[i], bodies.thickness[i]};
    bodies.load(i, Dim, test.pi);
    device::CircularSchedule{n}.visit(i, test);
  }
};

}  // namespace nestsim::detail

// The exact test of a walk's candidates against one body (TestAgainst), as the HSX
// walks and the uniform grid's step use it.
#pragma once
#include <cstdint>

#include "common/cell_records.cuh"
#include "common/pair_sink.cuh"
#include "nestsim/predicates.h"

namespace nestsim::detail {

// The larger-side rule's filter: body a (radius ra, sorted position self) skips a
// partner larger than itself and, among equal radii, one sorted before it.
template <class Real>
NESTSIM_HD inline bool larger_side_skips(Real rb, Real ra, uint32_t t, uint32_t self) {
  return rb > ra || (rb == ra && t <= self);
}

// The exact test of sorted body t against a fixed body a, emitting (id_a, id[t]).
// OnlySmaller: a tests only partners no larger than itself, ties only those sorted
// after it (GroupSmallPairs, larger side); a parameter, not a flag, so that the other
// walks test nothing more per candidate (measured on the CPU; docs/performance.md,
// "Window geometry in float").

template <class Real, class Emitter, bool OnlySmaller = false>
struct TestAgainst {
  static constexpr bool only_smaller = OnlySmaller;
  const SortedBodies<Real>& s;
  const Space<Real>& space;
  Real pa[3], ra, qa;
  uint32_t id_a;
  Emitter& e;
  // No periodic axis (set once per walk): the distance needs no minimum image.
  bool open = space.edge[0] == Real(0) && space.edge[1] == Real(0) && space.edge[2] == Real(0);
  uint32_t self = 0;  // a's sorted position (OnlySmaller)
  NESTSIM_HD NESTSIM_HOST_INLINE void operator()(uint32_t t) {
    Real pb[3] = {0, 0, 0};
    const Real rb = s.load(t, pb);
    if constexpr (OnlySmaller) {
      if (larger_side_skips(rb, ra, t, self)) return;
    }
#if !defined(__CUDA_ARCH__)
    // The CPU's hot loop (docs/performance.md, "The CPU's candidate test"): without the
    // per-axis dimension and periodic branches of Space::distance2. The same sums in the
    // same order: z is 0 for both bodies in 2D, and adding a square of +0 changes nothing.
    if (open) {
      const Real dx = sub_rn(pa[0], pb[0]), dy = sub_rn(pa[1], pb[1]), dz = sub_rn(pa[2], pb[2]);
      const Real d2 = add_rn(add_rn(mul_rn(dx, dx), mul_rn(dy, dy)), mul_rn(dz, dz));
      if (hsx_intersect(d2, ra, qa, rb, s.thickness(t))) e.emit(id_a, s.id(t));
      return;
    }
#endif
    if (exact_pair(space, pa, ra, qa, pb, rb, s.thickness(t))) e.emit(id_a, s.id(t));
  }
  // Sorted positions [t, end) of one bucket range: inlined into the walks' runs (a call
  // per run cost GCC 5% of a search's instructions, docs/performance.md, "The CPU walks
  // inlined").
  NESTSIM_HD NESTSIM_HOST_INLINE void range(uint32_t t, uint32_t end) {
    for (; t < end; ++t) (*this)(t);
  }
  // A walk that tests its own candidates walks its own columns (WarpRanges defers them).
  NESTSIM_HD bool defers(const GridSpec&, uint64_t) const { return false; }
  template <class T>
  NESTSIM_HD void defer_columns(const LargePlan&, T, T, uint32_t, uint32_t, uint64_t, uint64_t,
                                uint32_t) {}
};

// The walks' candidate consumer as it is: each walk tests its own candidates (the CPU's
// fused chunks, and the GPU without HsxTuning::warp_tests). The GPU's warp-tested pass
// wraps it instead (WarpRanges: ranges collected, tested by the whole warp).
struct OwnTests {
  template <class Test>
  NESTSIM_HD Test& operator()(Test& test) const {
    return test;
  }
};

}  // namespace nestsim::detail

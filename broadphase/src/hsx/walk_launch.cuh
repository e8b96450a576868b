// The launch of an HSX walk (PairFinder::State::emit_walk_pairs), included only by the
// walks' own compiles (hsx/*_walks.cu), each of which instantiates it for one walk in
// both precisions and dimensions (NESTSIM_WALK_FAMILY).
#pragma once
#include "common/fused_pass.cuh"
#include "hsx/walks.cuh"
#include "hsx/warp_tested.cuh"
#include "pair_finder_state.cuh"

namespace nestsim::device {

template <class Real>
template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
void PairFinder<Real>::State::emit_walk_pairs(bool side, Index items, Args... args) {
  if (!fused) throw std::logic_error("nestsim: the HSX walks run only in the fused pass");
#if defined(NESTSIM_BACKEND_CUDA)
  if (tuning.hsx.warp_tests) {
    if (items > 0)
      detail::launch_warp_tested<Real>(items, Step<Real, Dim, false>{args..., fused_sink()},
                                       side ? side_stream.stream() : cudaStream_t{}, tuning.hsx);
    return;
  }
#endif
  (void)side;
  emit_fused<Step, Dim>(items, args...);
}

}  // namespace nestsim::device

// The walk Step over Index items (groups_pass: uint32_t bodies for the small-small
// walks, uint64_t tasks for the large bodies'), 2D and 3D, for float and double, or for
// NESTSIM_FAMILY_REAL (and NESTSIM_FAMILY_DIM) alone where CMake compiles a family once
// per precision (and dimension): broadphase/CMakeLists.txt, the longest families, so that
// the parts build in parallel.
#define NESTSIM_WALK_INSTANCE(Step, Real, Dim, Index)                                   \
  template void nestsim::device::PairFinder<Real>::State::emit_walk_pairs<              \
      nestsim::detail::Step, Dim, Index, nestsim::detail::GroupedView<Real>>(           \
      bool, Index, nestsim::detail::GroupedView<Real>);
#if defined(NESTSIM_FAMILY_DIM)
#define NESTSIM_WALK_FAMILY_OF(Step, Real, Index) \
  NESTSIM_WALK_INSTANCE(Step, Real, NESTSIM_FAMILY_DIM, Index)
#else
#define NESTSIM_WALK_FAMILY_OF(Step, Real, Index) \
  NESTSIM_WALK_INSTANCE(Step, Real, 2, Index)     \
  NESTSIM_WALK_INSTANCE(Step, Real, 3, Index)
#endif
#if defined(NESTSIM_FAMILY_REAL)
#define NESTSIM_WALK_FAMILY(Step, Index) NESTSIM_WALK_FAMILY_OF(Step, NESTSIM_FAMILY_REAL, Index)
#else
#define NESTSIM_WALK_FAMILY(Step, Index)       \
  NESTSIM_WALK_FAMILY_OF(Step, float, Index)   \
  NESTSIM_WALK_FAMILY_OF(Step, double, Index)
#endif

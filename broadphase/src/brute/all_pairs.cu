// Kernel family: all pairs, HSX's path for few bodies or crowded cells
// (PairFinder::State::all_pairs): tiles in shared memory on the GPU (all_pairs_tiles.cuh),
// the circular schedule in the fused pass on the CPU (brute_pairs.cuh, CircularPairs).
#include "brute/all_pairs_tiles.cuh"
#include "brute/brute_pairs.cuh"
#include "pair_finder_state.cuh"

namespace nestsim::device {

template <class Real>
template <int Dim>
void PairFinder<Real>::State::all_pairs(const BodyArrays<Real>& bodies, uint32_t n) {
#if defined(NESTSIM_BACKEND_CUDA)
  detail::all_pairs_tiles<Real, Dim>(bodies, space, n,
                                     reinterpret_cast<unsigned long long*>(raw(total)), raw(keys),
                                     count_only ? 0 : keys.size());
#else
  emit_fused<detail::CircularPairs, Dim>(n, bodies, space, n);
#endif
}

template void PairFinder<float>::State::all_pairs<2>(const BodyArrays<float>&, uint32_t);
template void PairFinder<float>::State::all_pairs<3>(const BodyArrays<float>&, uint32_t);
template void PairFinder<double>::State::all_pairs<2>(const BodyArrays<double>&, uint32_t);
template void PairFinder<double>::State::all_pairs<3>(const BodyArrays<double>&, uint32_t);

}  // namespace nestsim::device

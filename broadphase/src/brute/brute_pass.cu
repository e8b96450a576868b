// Kernel family: Method::brute (PairFinder::State::brute), the plain double loop
// (brute_pairs.cuh, BrutePairs) counted, scanned and written, so that its rows come out
// in index order.
#include "brute/brute_pairs.cuh"
#include "pair_finder_state.cuh"

namespace nestsim::device {

template <class Real>
template <int Dim>
void PairFinder<Real>::State::brute(const BodyArrays<Real>& bodies, uint32_t begin,
                                    uint32_t end) {
  emit_counted<detail::BrutePairs, Dim>(end - begin, bodies, space, begin, end);
}

template void PairFinder<float>::State::brute<2>(const BodyArrays<float>&, uint32_t, uint32_t);
template void PairFinder<float>::State::brute<3>(const BodyArrays<float>&, uint32_t, uint32_t);
template void PairFinder<double>::State::brute<2>(const BodyArrays<double>&, uint32_t, uint32_t);
template void PairFinder<double>::State::brute<3>(const BodyArrays<double>&, uint32_t, uint32_t);

}  // namespace nestsim::device

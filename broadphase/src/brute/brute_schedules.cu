// Dispatch of the scheduled brute-force methods (see brute_schedules.cuh): runtime
// options -> schedule, mapping and mask width as template parameters, in one place.
#include "brute/brute_schedules.cuh"

#include <stdexcept>
#include <string>

namespace nestsim::detail {
namespace {

template <class Schedule, class Predicate>
uint64_t run(const Schedule& schedule, const Predicate& predicate, bool count_only,
             thrust::device_vector<uint64_t>& keys, device::PairwiseBuffers& buffers) {
  if (count_only) return device::pairwise_count(schedule, predicate);
  return device::pairwise_list(schedule, predicate, keys, buffers);
}

template <class Mapping, class Predicate>
uint64_t run_mapping(const Mapping& mapping, const Predicate& predicate, bool byte_mask,
                     bool count_only, thrust::device_vector<uint64_t>& keys,
                     device::PairwiseBuffers& buffers) {
  thrust::device_vector<uint64_t>* out = count_only ? nullptr : &keys;
  if (byte_mask) return device::pairwise_through_mask<8>(mapping, predicate, out, buffers);
  return device::pairwise_through_mask<1>(mapping, predicate, out, buffers);
}

template <class Real, int Dim>
uint64_t dispatch(const BroadphaseOptions& options, const BodyArrays<Real>& bodies,
                  const Space<Real>& space, uint32_t n, bool count_only,
                  thrust::device_vector<uint64_t>& keys, device::PairwiseBuffers& buffers) {
  const SpherePredicate<Real, Dim> predicate{bodies, space};
  switch (options.method) {
    case Method::brute_tiled:
      return run(device::RowSchedule{n}, predicate, count_only, keys, buffers);
    case Method::brute_balanced:
      return run(device::CircularSchedule{n}, predicate, count_only, keys, buffers);
    case Method::brute_mapping:
      if (options.mapping_lazy)
        return run_mapping(device::LazyMapping{n}, predicate, options.mapping_byte_mask,
                           count_only, keys, buffers);
      return run_mapping(device::SqrtMapping{n}, predicate, options.mapping_byte_mask,
                         count_only, keys, buffers);
    default:
      throw std::logic_error(std::string("brute_schedule_pairs: not a scheduled brute force: ") +
                             to_string(options.method));
  }
}

}  // namespace

template <class Real>
uint64_t brute_schedule_pairs(const BroadphaseOptions& options, const BodyArrays<Real>& bodies,
                              const Space<Real>& space, uint32_t n, bool count_only,
                              thrust::device_vector<uint64_t>& keys,
                              device::PairwiseBuffers& buffers) {
  if (n < 2) return 0;
  if (bodies.id) throw std::logic_error("brute_schedule_pairs: bodies must be in index order");
  if (options.domain.dim == 3)
    return dispatch<Real, 3>(options, bodies, space, n, count_only, keys, buffers);
  return dispatch<Real, 2>(options, bodies, space, n, count_only, keys, buffers);
}

template uint64_t brute_schedule_pairs<float>(const BroadphaseOptions&, const BodyArrays<float>&,
                                              const Space<float>&, uint32_t, bool,
                                              thrust::device_vector<uint64_t>&,
                                              device::PairwiseBuffers&);
template uint64_t brute_schedule_pairs<double>(const BroadphaseOptions&,
                                               const BodyArrays<double>&, const Space<double>&,
                                               uint32_t, bool, thrust::device_vector<uint64_t>&,
                                               device::PairwiseBuffers&);

}  // namespace nestsim::detail

// The brute-force methods other than Method::brute: the generic all-pairs layer
// (nestsim/device/pairwise.cuh) run with the exact sphere test (equation 3 of the HSX
// paper) as its predicate, under the three schedules of the seeds:
//   Method::brute_tiled    RowSchedule, pairwise seed Algorithm 3 / section V;
//   Method::brute_balanced CircularSchedule, pairwise seed Algorithm 4 (even-n rule);
//   Method::brute_mapping  SqrtMapping (or LazyMapping) + one-bit (or one-byte) mask,
//                          gpu-mapping-function seed sections 3.2-3.4.
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>

#include "common/bodies.cuh"
#include "common/pair_sink.cuh"
#include "nestsim/broadphase.h"
#include "nestsim/device/pairwise.cuh"

namespace nestsim::detail {

// Bodies a and b intersect (after the PairFinder's effective radii: skin, solid mode).
template <class Real, int Dim>
struct SpherePredicate {
  BodyArrays<Real> bodies;
  Space<Real> space;

  NESTSIM_HD bool operator()(uint32_t a, uint32_t b) const {
    Real pa[3] = {0, 0, 0}, pb[3] = {0, 0, 0};
    bodies.load(a, Dim, pa);
    bodies.load(b, Dim, pb);
    return exact_pair(space, pa, bodies.radius[a], bodies.thickness[a], pb, bodies.radius[b],
                      bodies.thickness[b]);
  }
};

// Runs options.method (one of the three above) over bodies [0, n), whose ids are their
// indices (bodies.id == nullptr). Returns the number of pairs; unless count_only,
// keys[0 .. count) then holds them as pair_key()s, sorted ascending.
template <class Real>
uint64_t brute_schedule_pairs(const BroadphaseOptions& options, const BodyArrays<Real>& bodies,
                              const Space<Real>& space, uint32_t n, bool count_only,
                              thrust::device_vector<uint64_t>& keys,
                              device::PairwiseBuffers& buffers);

// Whether the method is one of those brute_schedule_pairs() runs.
inline bool is_brute_schedule(Method method) {
  return method == Method::brute_tiled || method == Method::brute_balanced ||
         method == Method::brute_mapping;
}

}  // namespace nestsim::detail

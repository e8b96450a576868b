// The excluded-volume forces at given positions (force_kernels.cuh: which pairs repel,
// and how the sums stay bitwise reproducible without atomics).
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>

#include "neighbour_lists.cuh"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

class Forces {
 public:
  explicit Forces(nestsim::detail::CachingAllocator& alloc) : alloc_(alloc) {}

  // Is there a soft force to integrate (else Heun's corrector equals the predictor)?
  static bool any(double repulsion, const NeighbourLists& lists) {
    return repulsion > 0 && lists.entries() > 0;
  }
  // The forces at the positions v.x into v.force (zero without soft forces).
  void compute(const SlotView& v, NeighbourLists& lists);

 private:
  void fit(const NeighbourLists& lists, uint32_t used);

  nestsim::detail::CachingAllocator& alloc_;
  // The force arrays last filled with zeros, and their slots [0, zeroed_used_).
  const double* zeroed_[3] = {nullptr, nullptr, nullptr};
  uint32_t zeroed_used_ = 0;
  // The interacting entries in a compacted CSR, and the chunks of its long rows.
  thrust::device_vector<uint32_t> nbrs_;
  thrust::device_vector<uint64_t> offsets_, chunk_offsets_;
  thrust::device_vector<double> partial_[3];
};

}  // namespace nestsim::sim::detail

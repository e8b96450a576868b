#include "forces.cuh"

#include <thrust/fill.h>
#include <thrust/scan.h>

#include <algorithm>

#include "device_loops.cuh"
#include "force_kernels.cuh"

namespace nestsim::sim::detail {

namespace {
// A bound on the chunks of the long rows: ceil(m / C) < 2 m / C for m > C.
uint64_t max_chunks(uint64_t entries) { return 2 * entries / kForceChunk + 1; }
}  // namespace

// Buffers sized for the lists (exact sizes: at 1e8 bodies they are tens of GB).
void Forces::fit(const NeighbourLists& lists, uint32_t used) {
  const std::size_t room = std::size_t(std::max<uint64_t>(lists.entries(), 1));
  nestsim::detail::resize_discard(nbrs_, room);
  for (auto* o : {&offsets_, &chunk_offsets_}) o->resize(std::size_t(used) + 1);
  for (auto& p : partial_)
    nestsim::detail::resize_discard(p, std::size_t(max_chunks(lists.entries())));
}

void Forces::compute(const SlotView& v, NeighbourLists& lists) {
  const uint32_t used = v.n;
  if (!any(v.repulsion, lists)) {
    // Zero forces stay zero: only this function writes them, and new slots start at 0
    // (BodyState). Three launches a step fewer for models without soft forces.
    const bool zero = used <= zeroed_used_ && v.force[0] == zeroed_[0] &&
                      v.force[1] == zeroed_[1] && v.force[2] == zeroed_[2];
    if (zero) return;
    for (int k = 0; k < 3; ++k) {
      thrust::fill_n(step_policy(), thrust::device_pointer_cast(v.force[k]), used, 0.0);
      zeroed_[k] = v.force[k];
    }
    zeroed_used_ = used;
    return;
  }
  zeroed_used_ = 0;  // the forces written below are not zero
#if !defined(NESTSIM_BACKEND_CUDA)
  for_each_slot(used, ForceRowDirect{v});  // the same sums, one pass (force_kernels.cuh)
#else
  fit(lists, used);
  for_each_index(lists.entries(), MarkInteracting{v, lists.rows(), lists.mark()});
  lists.compact(used, offsets_, nbrs_);
  for_each_slot(used + 1, ChunkCount{used, raw(offsets_), raw(chunk_offsets_)});
  thrust::exclusive_scan(nestsim::detail::policy(alloc_), chunk_offsets_.begin(),
                         chunk_offsets_.begin() + used + 1, chunk_offsets_.begin());
  ForceLists l;
  l.offsets = raw(offsets_);
  l.nbrs = raw(nbrs_);
  l.chunk_offsets = raw(chunk_offsets_);
  for (int k = 0; k < 3; ++k) l.partial[k] = raw(partial_[k]);
  for_each_index(max_chunks(lists.entries()), ForceChunk{v, l});
  for_each_slot(used, ForceRow{v, l});
#endif
}

}  // namespace nestsim::sim::detail

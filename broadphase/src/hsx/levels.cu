// Kernel family: the natural levels and their histogram (hsx/level_plan.cuh), for the
// orchestration's LevelsFamily (pair_finder_families.cuh).
#include "pair_finder_families.cuh"

namespace nestsim::detail {

template <class Real>
LevelPlan LevelsFamily<Real>::plan_levels(const BodyArrays<Real>& in, uint32_t n,
                                          const PadSpace& space, HostStage& stage,
                                          CachingAllocator& alloc) {
  return LevelPlanner<Real>::plan_levels(in, n, space, stage, alloc);
}

template struct LevelsFamily<float>;
template struct LevelsFamily<double>;

}  // namespace nestsim::detail

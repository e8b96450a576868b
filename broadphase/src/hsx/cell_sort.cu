// Kernel family: the bodies sorted into the groups' grids (common/sorted_grid.cuh), for
// the orchestration's CellSortFamily (pair_finder_families.cuh), in both precisions and
// dimensions.
#include "pair_finder_families.cuh"

namespace nestsim::detail {

template <class Real>
template <int Dim, class Policy>
SortedBodies<Real> CellSortFamily<Real>::build(const Policy& exec, std::vector<GroupGrid>& host,
                                               const uint8_t* level, LevelToGroup to_group,
                                               const BodyArrays<Real>& bodies, uint32_t n,
                                               bool radix, const CellSortTuning& tuning,
                                               SideStream* side) {
  return SortedGrid<Real>::template build<Dim>(exec, host, level, to_group, bodies, n, radix,
                                               tuning, side);
}

#define NESTSIM_CELL_SORT(Real, Dim)                                                        \
  template SortedBodies<Real> CellSortFamily<Real>::build<Dim, DefaultPolicy>(              \
      const DefaultPolicy&, std::vector<GroupGrid>&, const uint8_t*, LevelToGroup,          \
      const BodyArrays<Real>&, uint32_t, bool, const CellSortTuning&, SideStream*);
NESTSIM_CELL_SORT(float, 2)
NESTSIM_CELL_SORT(float, 3)
NESTSIM_CELL_SORT(double, 2)
NESTSIM_CELL_SORT(double, 3)
#undef NESTSIM_CELL_SORT

}  // namespace nestsim::detail

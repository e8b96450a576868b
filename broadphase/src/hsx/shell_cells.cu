// Kernel family: the crowded cells of near-concentric shells (hsx/shell_cells.cuh,
// hsx/shell_anchors.cuh), for the orchestration's ShellCellsFamily
// (pair_finder_families.cuh). Their walks are hsx/small_shell_walks.cu and
// hsx/large_shell_walks.cu.
#include "pair_finder_families.cuh"

namespace nestsim::detail {

template <class Real>
template <class Policy>
bool ShellCellsFamily<Real>::prepare(const Policy& exec, const std::vector<GroupGrid>& host,
                                     GroupGrid* groups, const SortedBodies<Real>& s,
                                     const Space<Real>& space, BodyRecord<Real>* records,
                                     const HsxTuning& t) {
  return ShellCells<Real>::prepare(exec, host, groups, s, space, records, t);
}

#define NESTSIM_SHELL_CELLS(Real)                                                           \
  template bool ShellCellsFamily<Real>::prepare<DefaultPolicy>(                             \
      const DefaultPolicy&, const std::vector<GroupGrid>&, GroupGrid*,                      \
      const SortedBodies<Real>&, const Space<Real>&, BodyRecord<Real>*, const HsxTuning&);
#if defined(NESTSIM_FAMILY_REAL)  // one precision per compile (broadphase/CMakeLists.txt)
NESTSIM_SHELL_CELLS(NESTSIM_FAMILY_REAL)
#else
NESTSIM_SHELL_CELLS(float)
NESTSIM_SHELL_CELLS(double)
#endif
#undef NESTSIM_SHELL_CELLS

}  // namespace nestsim::detail

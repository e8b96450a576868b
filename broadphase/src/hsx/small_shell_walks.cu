// Kernel family: the small-small pairs of a search with shell cells
// (hsx/shell_cells.cuh), as GroupSmallShellPairs (hsx/walks.cuh).
#include "hsx/walk_launch.cuh"

NESTSIM_WALK_FAMILY(GroupSmallShellPairs, uint32_t)

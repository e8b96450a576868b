// Kernel family: the large bodies' rim walks in a search with shell cells, as
// GroupLargeShellPairs (hsx/walks.cuh).
#include "hsx/walk_launch.cuh"

NESTSIM_WALK_FAMILY(GroupLargeShellPairs, uint64_t)

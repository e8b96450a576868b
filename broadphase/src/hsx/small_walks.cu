// Kernel family: the small-small pairs of every group (HSX paper section 4, line 6), as
// GroupSmallPairs (hsx/walks.cuh).
#include "hsx/walk_launch.cuh"

NESTSIM_WALK_FAMILY(GroupSmallPairs, uint32_t)

// Kernel family: the large bodies' tasks' rim walks (HSX paper section 4.3), as
// GroupLargePairs (hsx/walks.cuh).
#include "hsx/walk_launch.cuh"

NESTSIM_WALK_FAMILY(GroupLargePairs, uint64_t)

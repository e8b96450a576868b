// The work per large-body task of a group.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/grid.cuh"
#include "nestsim/tuning.h"

namespace nestsim::detail {

// The task size of a group whose ns members fill `cells` cells, in a find over n bodies
// (grid.cuh, TaskSize). With adapt_task_columns (the GPU's default), the columns per
// task shrink with the cells' occupancy: most * 0.7 / (ns / cells), at most `most`, at
// least 1, where `most` is columns_per_task, or wide_task_columns from
// wide_task_bodies bodies on. The columns per task were measured where cells hold about
// half a body (exponential scenes at phi 0.1-0.3); in crowded grids (4-13 members per
// cell) a column holds that many times more candidates and the few large bodies' tasks
// become a long tail (3e4 bodies, phi 3: 0.91 ms with 4 columns per task, 0.62 with 1;
// docs/performance.md, "Task size per group"). The CPU has no tail to hide (each thread
// takes many tasks) and keeps columns_per_task.
inline TaskSize task_size_for(const HsxTuning& t, double ns, double cells, uint32_t n) {
  TaskSize size{t.direct_chunk, t.columns_per_task};
  if (t.adapt_task_columns) {
    const double most = double(n) >= t.wide_task_bodies ? double(t.wide_task_columns)
                                                         : double(t.columns_per_task);
    const double per_cell = ns / std::max(cells, 1.0);
    const double columns = std::floor(most * 0.7 / std::max(per_cell, 1e-9));
    size.columns = uint32_t(std::clamp(columns, 1.0, most));
  }
  return size;
}

}  // namespace nestsim::detail

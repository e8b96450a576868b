// The minimum image of a short displacement and the wrapping of a position that stayed
// in the box, as the step's hot loops need them.
#pragma once
#include <cmath>

#include "nestsim/hd.h"
#include "nestsim/predicates.h"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

// minimum_image(delta, edge, inv_edge) bitwise, without its floor where that is 0: for
// |delta| <= edge / 4, delta / edge + 1/2 lies in [1/4, 3/4], and delta - edge x 0 is
// delta (also -0). Listed pairs and moves since a list build are that short nearly
// always, and std::floor is a library call on x86-64 without SSE4.1 (three per pair).
NESTSIM_HD inline double near_minimum_image(double delta, double edge, double inv_edge) {
  return std::fabs(delta) <= 0.25 * edge ? delta : minimum_image(delta, edge, inv_edge);
}

// SlotView::wrap bitwise, without its floor where that is 0: for 0 < p / edge < 1,
// p - edge x floor(p / edge) is p - 0 = p (the checks after it then do nothing, as there).
// A body's position stays inside the box in nearly every step.
NESTSIM_HD inline void wrap_near(const SlotView& v, double* p) {
  double far[3];
  bool any_far = false;
  NESTSIM_UNROLL for (int k = 0; k < 3; ++k) far[k] = p[k];
  NESTSIM_AXES(k, v.dim) {
    const double q = p[k] * v.space.inv_edge[k];
    if (!(v.space.edge[k] > 0) || (q > 0 && q < 1 && p[k] < v.space.edge[k])) continue;
    any_far = true;
  }
  if (!any_far) return;
  v.wrap(far);
  NESTSIM_UNROLL for (int k = 0; k < 3; ++k) p[k] = far[k];
}

}  // namespace nestsim::sim::detail

// The intersection relations of the HSX paper (Köster, Perumalla, Uhrmacher: "Efficient
// Simulation of Nested Hollow Sphere Intersections for Dynamically Nested Compartmental
// Models in Cell Biology", 2017, section 2.1, equations (1)-(4); docs/design.md, "The
// HSX relation"), written once and used by
// every broad phase, every reference and every test. Plain C++ compiles this header.
//
// A body is a sphere with centre x, outer radius r and shell thickness q (0 <= q <= r);
// its lumen is the open ball of radius r - q. q = r is a solid sphere.
//
// Boundary cases, pinned down here and by tests/test_predicates.cpp:
//  - contact counts: |x_i - x_j| == r_i + r_j intersects (eq. 3 uses <=);
//  - containment is strict: a body touching the inner wall from inside intersects
//    (eq. 1 uses <);
//  - distances are compared in squared form, d2 = |x_i - x_j|^2, so that the test is
//    the same bit-for-bit on every backend (no sqrt): |x| < m  <=>  m > 0 && d2 < m*m;
//    every operation is correctly rounded and never fused into an FMA (hd.h, mul_rn).
#pragma once
#include <cmath>

#include "nestsim/hd.h"

namespace nestsim {

// Equation (1): a body of outer radius r_inside, at squared distance d2 from the centre
// of a shell with lumen radius lumen_radius (= r - q), lies wholly inside that lumen.
template <class Real>
NESTSIM_HD inline bool in_lumen(Real d2, Real lumen_radius, Real r_inside) {
  const Real margin = sub_rn(lumen_radius, r_inside);
  return margin > Real(0) && d2 < mul_rn(margin, margin);
}

// Equation (4): solid spheres touch or overlap.
template <class Real>
NESTSIM_HD inline bool ssx_intersect(Real d2, Real r_i, Real r_j) {
  const Real reach = add_rn(r_i, r_j);
  return d2 <= mul_rn(reach, reach);
}

// Equations (2) and (3): hollow spheres intersect when they touch and neither lies
// inside the other's lumen.
template <class Real>
NESTSIM_HD inline bool hsx_intersect(Real d2, Real r_i, Real q_i, Real r_j, Real q_j) {
  return ssx_intersect(d2, r_i, r_j) && !in_lumen(d2, sub_rn(r_j, q_j), r_i) &&
         !in_lumen(d2, sub_rn(r_i, q_i), r_j);
}

// Minimum-image component of a displacement in a periodic box of edge `edge`
// (inverse `inv_edge`); the identity when the axis is not periodic (edge == 0).
template <class Real>
NESTSIM_HD inline Real minimum_image(Real delta, Real edge, Real inv_edge) {
  using std::floor;
  return edge > Real(0)
             ? sub_rn(delta, mul_rn(edge, Real(floor(add_rn(mul_rn(delta, inv_edge), Real(0.5))))))
             : delta;
}

// Geometry of the space the bodies live in, as device code needs it.
template <class Real>
struct Space {
  int dim = 3;               // 2 or 3
  Real edge[3] = {0, 0, 0};  // periodic box edges; 0 on an open axis
  Real inv_edge[3] = {0, 0, 0};

  NESTSIM_HD Real distance2(const Real* a, const Real* b) const {
    Real d2 = 0;
    NESTSIM_AXES(k, dim) {
      const Real d = minimum_image(sub_rn(a[k], b[k]), edge[k], inv_edge[k]);
      d2 = add_rn(d2, mul_rn(d, d));
    }
    return d2;
  }
};

}  // namespace nestsim

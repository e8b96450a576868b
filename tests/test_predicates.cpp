// The boundary cases of equations (1)-(4) (predicates.h), pinned down.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "nestsim/predicates.h"

using nestsim::hsx_intersect;
using nestsim::in_lumen;
using nestsim::minimum_image;
using nestsim::ssx_intersect;

TEST_CASE_TEMPLATE("contact at exactly r_i + r_j intersects", Real, float, double) {
  // |d| = 3 = 1 + 2, exactly representable.
  CHECK(ssx_intersect<Real>(9, 1, 2));
  CHECK(hsx_intersect<Real>(9, 1, 0, 2, 0));
  CHECK_FALSE(ssx_intersect<Real>(std::nextafter(Real(9), Real(10)), 1, 2));
  CHECK_FALSE(hsx_intersect<Real>(std::nextafter(Real(9), Real(10)), 1, 1, 2, 2));
}

TEST_CASE_TEMPLATE("containment is strict (equation 1)", Real, float, double) {
  // Shell r = 8, q = 2: lumen radius 6. A body of radius 2 at distance 4 touches the
  // inner wall: not contained, so it intersects.
  CHECK_FALSE(in_lumen<Real>(16, 6, 2));
  CHECK(hsx_intersect<Real>(16, 8, 2, 2, 2));
  // A hair closer: contained, no pair.
  CHECK(in_lumen<Real>(std::nextafter(Real(16), Real(0)), 6, 2));
  CHECK_FALSE(hsx_intersect<Real>(std::nextafter(Real(16), Real(0)), 8, 2, 2, 2));
  // ...but the solid relation still reports it.
  CHECK(ssx_intersect<Real>(std::nextafter(Real(16), Real(0)), 8, 2));
}

TEST_CASE_TEMPLATE("coincident centres", Real, float, double) {
  // Equal zero-thickness shells on one centre: the same surface, they intersect.
  CHECK(hsx_intersect<Real>(0, 4, 0, 4, 0));
  // A solid ball in a larger zero-thickness shell's lumen: no pair.
  CHECK_FALSE(hsx_intersect<Real>(0, 4, 0, 2, 2));
  // A solid ball as large as the lumen: touching the wall, not strictly inside.
  CHECK(hsx_intersect<Real>(0, 4, 1, 3, 3));
  // Two solid balls: always intersect.
  CHECK(hsx_intersect<Real>(0, 1, 1, 5, 5));
}

TEST_CASE_TEMPLATE("thickness extremes", Real, float, double) {
  // q = r: solid, nothing is ever in its lumen; HSX equals SSX.
  for (Real d2 : {Real(0), Real(1), Real(4), Real(25)}) {
    CHECK(hsx_intersect<Real>(d2, 5, 5, 1, 1) == ssx_intersect<Real>(d2, 5, 1));
  }
  // q = 0: a bare surface; a point-like body (r = 0) strictly inside is contained, one
  // on the surface intersects.
  CHECK_FALSE(hsx_intersect<Real>(9, 4, 0, 0, 0));
  CHECK(hsx_intersect<Real>(16, 4, 0, 0, 0));
  CHECK_FALSE(hsx_intersect<Real>(Real(16.25), 4, 0, 0, 0));
}

TEST_CASE_TEMPLATE("relation is symmetric and HSX implies SSX (equation 5)", Real, float, double) {
  const Real radii[] = {0, Real(0.5), 1, 2, 3, 7};
  const Real d2s[] = {0, Real(0.25), 1, 4, 9, 16, 25, 49, 100};
  for (Real ri : radii)
    for (Real rj : radii)
      for (Real fi : {Real(0), Real(0.5), Real(1)})
        for (Real fj : {Real(0), Real(0.5), Real(1)})
          for (Real d2 : d2s) {
            const bool h = hsx_intersect<Real>(d2, ri, fi * ri, rj, fj * rj);
            CHECK(h == hsx_intersect<Real>(d2, rj, fj * rj, ri, fi * ri));
            if (h) CHECK(ssx_intersect<Real>(d2, ri, rj));
          }
}

TEST_CASE_TEMPLATE("minimum image", Real, float, double) {
  CHECK(minimum_image<Real>(9, 10, Real(0.1)) == doctest::Approx(-1));
  CHECK(minimum_image<Real>(-9, 10, Real(0.1)) == doctest::Approx(1));
  CHECK(minimum_image<Real>(3, 10, Real(0.1)) == doctest::Approx(3));
  CHECK(minimum_image<Real>(9, 0, 0) == 9);  // open axis
}

// Bodies as the device steps read them: the caller's arrays (BodyArrays) and a small
// body packed for one aligned load (PackedBody).
#pragma once
#include <cstdint>

#include "nestsim/hd.h"

namespace nestsim::detail {

// Bodies in structure-of-arrays form with their original ids.
template <class Real>
struct BodyArrays {
  const Real* pos[3] = {nullptr, nullptr, nullptr};
  const Real* radius = nullptr;
  const Real* thickness = nullptr;
  const uint32_t* id = nullptr;  // nullptr: id == index

  NESTSIM_HD uint32_t id_of(uint32_t k) const { return id ? id[k] : k; }
  NESTSIM_HD void load(uint32_t k, int dim, Real* p) const {
    NESTSIM_AXES(a, dim) p[a] = pos[a][k];
  }
};


// A small body's centre and radius in one aligned load (16 bytes in float): the pair
// steps read them for every candidate (docs/performance.md, "Records of one sector").
template <class Real>
struct alignas(4 * sizeof(Real)) PackedBody {
  Real x, y, z, r;  // z = 0 in 2D
};

}  // namespace nestsim::detail

// The uniform grid's pair step (Method::grid_uniform): the Moore neighbourhood.
#pragma once
#include <cstdint>

#include "common/test_against.cuh"

namespace nestsim::detail {

// The solid uniform grid's step (grid_uniform, solid_grids.cu; in the style of fast
// fixed-radius nearest neighbours): pairs from the Moore neighbourhood (27 cells in
// 3D, 9 in 2D) of one group whose cell width bounds every pair's reach; each pair
// once, from the body that comes first in bucket order.
template <class Real, int Dim, bool Write>
struct MoorePairs {
  SortedBodies<Real> s;
  Space<Real> space;
  PairSink sink;

  NESTSIM_HD void operator()(uint32_t a) const { run_pair_step<Write>(*this, a, sink); }
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t a, Emitter& e) const {
    const GroupGrid& grp = s.groups[0];
    const GridSpec& g = grp.grid;
    TestAgainst<Real, Emitter> test{s, space, {0, 0, 0}, 0, s.thickness(a), s.id(a), e};
    test.ra = s.load(a, test.pa);
    long long c[3] = {0, 0, 0};
    NESTSIM_AXES(d, Dim) c[d] = g.home(g.raw_coord(double(test.pa[d]), d), d);
    // In a periodic box of fewer than 3 cells on an axis, offsets -1 and +1 reach the
    // same cell: visit each distinct cell once.
    int off_lo[3] = {0, 0, 0}, off_hi[3] = {0, 0, 0};
    NESTSIM_UNROLL for (int d = 0; d < Dim; ++d) {
      off_lo[d] = (g.periodic && g.n[d] < 3) ? 0 : -1;
      off_hi[d] = (g.periodic && g.n[d] == 1) ? 0 : 1;
    }
    long long nc[3] = {0, 0, 0};
    for (int oz = off_lo[2]; oz <= off_hi[2]; ++oz) {
      for (int oy = off_lo[1]; oy <= off_hi[1]; ++oy) {
        const int off[3] = {0, oy, oz};
        bool inside = true;
        NESTSIM_UNROLL for (int d = 1; d < Dim; ++d) {
          nc[d] = g.neighbour(c[d] + off[d], d);
          inside = inside && nc[d] >= 0;
        }
        if (!inside) continue;
        long long lo = c[0] + off_lo[0], hi = c[0] + off_hi[0];
        if (!g.periodic) {
          lo = lo < 0 ? 0 : lo;
          hi = hi > g.n[0] - 1 ? g.n[0] - 1 : hi;
        }
        for_each_in_run(s, grp, nc, lo, hi, a + 1, test);
      }
    }
  }
};

}  // namespace nestsim::detail

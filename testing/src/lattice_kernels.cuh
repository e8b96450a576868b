// Functors of the lattice counts (Saldanha, de Souza: "High Performance Algorithms for
// Counting Collisions and Pairwise Interactions", section III): each loop over the beads of Algorithms 1 and 2 becomes
// one thrust::for_each over bead indices. The seed's sequential "read, add, increment"
// becomes an atomic fetch-add: the old value is the number of beads placed on the site
// before this one, whatever the order, so the sum of old values is the same
// sum over sites of k (k - 1) / 2 that Algorithm 1 returns.
#pragma once
#include <cstdint>

#include "nestsim/hd.h"
#include "nestsim/testing/lattice.h"

namespace nestsim::detail {

// Maps lattice coordinates in [-a, a]^dim to the index of their site in the space array
// (the seed translates the space to have its origin in (a, a, a)).
struct SiteMap {
  int32_t a = 0;
  int dim = 3;
  uint64_t side = 1;  // 2a + 1

  NESTSIM_HD bool inside(int64_t c) const { return c >= -a && c <= a; }
  NESTSIM_HD uint64_t site(int64_t x, int64_t y, int64_t z) const {
    const uint64_t k = dim == 3 ? uint64_t(z + a) : 0;
    return uint64_t(x + a) + side * (uint64_t(y + a) + side * k);
  }
  NESTSIM_HD uint64_t site(const Bead& b) const { return site(b.x, b.y, b.z); }
  // Calls f(site) for each face neighbour of b that lies in the space (the 6 spots of
  // Algorithm 2 in 3D, 4 in 2D); spots outside the space hold no bead.
  template <class F>
  NESTSIM_HD void for_each_neighbour(const Bead& b, F& f) const {
    const int64_t c[3] = {b.x, b.y, dim == 3 ? b.z : 0};
    NESTSIM_AXES(axis, dim) {
      for (int step = -1; step <= 1; step += 2) {
        int64_t n[3] = {c[0], c[1], c[2]};
        n[axis] += step;
        if (inside(n[axis])) f(site(n[0], n[1], n[2]));
      }
    }
  }
};

// Section III, initialisation: zero the sites a count will read, those of the beads
// (Algorithm 1) and, for contacts, their neighbours too (Algorithm 2, "the elements of
// space that are accessed ... must be initialized to zero"). This is what keeps one
// call from seeing the marks of the previous call on a reused space array.
struct ClearSites {
  SiteMap map;
  uint32_t* space;
  const Bead* beads;
  bool neighbours;

  struct Zero {
    uint32_t* space;
    NESTSIM_HD void operator()(uint64_t s) const { space[s] = 0; }
  };
  NESTSIM_HD void operator()(uint32_t i) const {
    Zero zero{space};
    zero(map.site(beads[i]));
    if (neighbours) map.for_each_neighbour(beads[i], zero);
  }
};

// Algorithm 1 body: collisions += space[b]; space[b] += 1.
struct CountCollisions {
  SiteMap map;
  uint32_t* space;
  const Bead* beads;
  unsigned long long* total;

  NESTSIM_HD void operator()(uint32_t i) const {
    const uint32_t before = atomic_fetch_add(&space[map.site(beads[i])], 1u);
    if (before) atomic_fetch_add(total, static_cast<unsigned long long>(before));
  }
};

// Algorithm 2, first loop: place the beads.
struct PlaceBeads {
  SiteMap map;
  uint32_t* space;
  const Bead* beads;

  NESTSIM_HD void operator()(uint32_t i) const {
    atomic_fetch_add(&space[map.site(beads[i])], 1u);
  }
};

// Algorithm 2, second loop: add the beads on the neighbouring spots. Every contact is
// seen from both beads; the caller halves the total.
struct CountContacts {
  SiteMap map;
  const uint32_t* space;
  const Bead* beads;
  unsigned long long* total;

  struct Sum {
    const uint32_t* space;
    unsigned long long count;
    NESTSIM_HD void operator()(uint64_t s) { count += space[s]; }
  };
  NESTSIM_HD void operator()(uint32_t i) const {
    Sum sum{space, 0};
    map.for_each_neighbour(beads[i], sum);
    if (sum.count) atomic_fetch_add(total, sum.count);
  }
};

}  // namespace nestsim::detail

// Host side of the lattice counts: the quadratic references and the procedural API of
// the "Elf Collision Count" README (docs/design.md, "The papers").
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "nestsim/testing/lattice.h"

namespace nestsim {

namespace {
void check_dim(int dim) {
  if (dim != 2 && dim != 3)
    throw std::invalid_argument("lattice dimension must be 2 or 3, not " + std::to_string(dim));
}
}  // namespace

// The README seed's "most basic sequential code": every pair, isEqual.
uint64_t count_collisions_quadratic(const std::vector<Bead>& beads, int dim) {
  check_dim(dim);
  uint64_t collisions = 0;
  for (std::size_t i = 0; i + 1 < beads.size(); ++i)
    for (std::size_t j = i + 1; j < beads.size(); ++j)
      collisions += beads[i].x == beads[j].x && beads[i].y == beads[j].y &&
                    (dim == 2 || beads[i].z == beads[j].z);
  return collisions;
}

// Every pair whose sites are one lattice step apart along one axis (Algorithm 2's
// neighbours): the sum of the absolute coordinate differences is 1.
uint64_t count_contacts_quadratic(const std::vector<Bead>& beads, int dim) {
  check_dim(dim);
  uint64_t contacts = 0;
  for (std::size_t i = 0; i + 1 < beads.size(); ++i) {
    for (std::size_t j = i + 1; j < beads.size(); ++j) {
      const int64_t manhattan = std::llabs(int64_t(beads[i].x) - beads[j].x) +
                                std::llabs(int64_t(beads[i].y) - beads[j].y) +
                                (dim == 3 ? std::llabs(int64_t(beads[i].z) - beads[j].z) : 0);
      contacts += manhattan == 1;
    }
  }
  return contacts;
}

CollisionCountPromise count_collisions_launch(const Bead* beads, std::size_t n) {
  int64_t reach = 0;
  auto widen = [&reach](int32_t c) { reach = std::max<int64_t>(reach, c < 0 ? -int64_t(c) : c); };
  for (std::size_t i = 0; i < n; ++i) {
    widen(beads[i].x);
    widen(beads[i].y);
    widen(beads[i].z);
  }
  if (reach > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("count_collisions_launch: a bead coordinate is -2^31");
  // The promise keeps the counter's space alive until it is fetched.
  LatticeCounter counter(static_cast<int32_t>(reach), 3);
  return counter.launch_collisions(std::vector<Bead>(beads, beads + n));
}

uint64_t count_collisions_fetch(CollisionCountPromise& promise) { return promise.fetch(); }

}  // namespace nestsim

// The example of the "Elf Collision Count" README (docs/design.md) in C++: four
// beads, two of them at (0, 0, 0) and two at (1, 1, 1), counted asynchronously with
// the launch/fetch API (nestsim/testing/lattice.h). Prints "Collisions: 2".
#include <cstdio>

#include "nestsim/testing/lattice.h"

int main() {
  const nestsim::Bead vector[] = {
      {0, 0, 0},
      {0, 0, 0},
      {1, 1, 1},
      {1, 1, 1},
  };

  nestsim::CollisionCountPromise promise = nestsim::count_collisions_launch(vector, 4);

  const unsigned long long collisions = nestsim::count_collisions_fetch(promise);

  std::printf("Collisions: %llu\n", collisions);

  return 0;
}

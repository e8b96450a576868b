// Writes a generated scene as a `nestsim pairs` scene file.
//   make_scene cell N [SEED] > cell.csv           a cell with N proteins (nestsim/testing/scenes.h)
//   make_scene exponential N PHI [SEED] > s.csv  exponential radii at volume fraction PHI
//   make_scene concentric N > c.csv              N concentric shells
//   make_scene nested N [SEED] > n.csv           a cell full of nested vesicles
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nestsim/testing/scenes.h"

int main(int argc, char** argv) {
  using namespace nestsim::scenes;
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_scene cell|exponential|concentric|nested N [PHI] [SEED]\n");
    return 2;
  }
  const std::string kind = argv[1];
  const std::size_t n = std::size_t(std::atof(argv[2]));
  Scene s;
  if (kind == "cell") {
    s = cell_like(n, argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1);
  } else if (kind == "exponential" && argc > 3) {
    s = exponential(n, std::atof(argv[3]), 3, argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1);
  } else if (kind == "concentric") {
    s = concentric(n, 3);
  } else if (kind == "nested") {
    s = nested(n, 3, argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1);
  } else {
    std::fprintf(stderr, "make_scene: unknown scene '%s'\n", kind.c_str());
    return 2;
  }
  std::printf("x,y,z,radius,thickness\n");
  const auto& b = s.bodies;
  for (std::size_t i = 0; i < b.size(); ++i)
    std::printf("%.9g,%.9g,%.9g,%.9g,%.9g\n", b.x[i], b.y[i], b.z[i], b.radius[i],
                b.thickness[i]);
  return 0;
}

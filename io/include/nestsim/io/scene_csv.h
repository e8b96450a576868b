// Scene files for `nestsim pairs`: CSV with a header `x,y,z,radius,thickness` (3D) or
// `x,y,radius,thickness` (2D), one body per row; the row index (0-based, header
// excluded) is the body id. Lines holding only blanks are ignored.
#pragma once
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/io/errors.h"

namespace nestsim::io {

struct Scene {
  int dim = 3;
  SphereSet<double> bodies;
  std::vector<long> lines;  // file line of each body, for later error messages
};

// Reads and validates a scene (finite numbers, radius >= 0, 0 <= thickness <= radius).
// Throws InputError. Line 0 names a file that cannot be opened.
Scene read_scene_csv(const std::string& path);

// Writes a scene in the same format (round trip: every double printed exactly).
void write_scene_csv(const std::string& path, const Scene& scene);

// Checks the scene against a box [0, size): in an open box every centre must lie in
// [0, size] (InputError otherwise); in a periodic box centres are wrapped into [0, size).
void apply_box(const std::string& path, Scene& scene, const Domain& box);

}  // namespace nestsim::io

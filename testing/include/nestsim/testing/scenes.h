// Generators of varied scenes, shared by the tests, the benchmarks and the examples.
// Deterministic for a given seed (own distributions over std::mt19937_64).
#pragma once
#include <cstdint>
#include <string>

#include "nestsim/broadphase.h"

namespace nestsim::scenes {

struct Scene {
  SphereSet<double> bodies;
  Domain domain;  // dim, and the box the bodies were placed in (lo, size)
};

// Exponentially distributed radii (HSX paper, equation 6) with the given mean, cut at
// `cut`; a fraction `solid` of the bodies solid, the others with thickness
// `thickness_ratio * r`; uniform centres in a cube whose size makes the bodies'
// volume fraction `volume_fraction`.
Scene exponential(std::size_t n, double volume_fraction, int dim, uint64_t seed,
                  double mean = 1.0, double cut = 20.0, double solid = 0.2,
                  double thickness_ratio = 0.2);

// Equal radii r, all hollow with thickness_ratio * r.
Scene equal_radii(std::size_t n, double volume_fraction, int dim, uint64_t seed, double r = 1.0,
                  double thickness_ratio = 0.2);

// n shells with a common centre, radii 1, 2, ..., n and thickness 0.5: SSX finds
// n (n - 1) / 2 pairs, HSX none.
Scene concentric(std::size_t n, int dim);

// n near-concentric shells: radii 1, 2, ..., n around one point, each centre offset
// from it by up to 0.2 (uniform in the ball or disc), thickness 0.5, one in 20 (at random)
// 0.9, whose lumen its offset may push the next smaller shell's wall into.
Scene near_concentric(std::size_t n, int dim, uint64_t seed);

// A cell full of nested vesicles, the case HSX exists for (n >= 16 bodies). About half
// the bodies in max(2, sqrt(n) / 16) stacks of endosomes in endosomes: near-concentric
// shells of radii 2, 4, 6, ..., thickness 0.5 (one in 20: 1.8, which may cut into the
// next smaller shell), centres offset from the stack's by up to 0.3; stacks on a lattice
// of pitch 2.2 stack radii. The rest: lysosomes (thickness 1) placed at random off the
// stacks (they may overlap each other), each holding up to 1,000 intraluminal vesicles
// (radius 0.5-1, thickness 0.3 r; 20 % of its lumen) uniform in its lumen, so that some
// cut its wall and some each other. Last, the cell membrane (thickness 8) around all;
// the box holds the cell. 2D or 3D.
Scene nested(std::size_t n, int dim, uint64_t seed);

// Radii log-uniform in [rmin, rmax]; thickness uniform in [0, r], with q = 0 and q = r
// each for a tenth of the bodies.
Scene log_uniform(std::size_t n, double volume_fraction, int dim, uint64_t seed, double rmin,
                  double rmax);

// A cell: one big cell (r 900, q 8), lysosomes (r 150, q 6) and vesicles (r 40, q 4)
// inside it, vesicles inside lysosomes, and `proteins` solid proteins (r 2-3), a third of
// them placed exactly touching a membrane from inside or outside (some at contact
// distance, some one rounding step away), the rest free in the cytosol and outside.
Scene cell_like(std::size_t proteins, uint64_t seed);

// Bodies in exact contact: pairs of bodies at distance exactly r_i + r_j (on a lattice,
// values exactly representable), and coincident centres.
Scene contacts(int dim);

// Makes the scene's box periodic: positions are wrapped into [lo, lo + size).
void make_periodic(Scene& scene);

// Reorders the scene's bodies by the Morton key of their centres over its box (1024
// cells per axis; nestsim/morton.h): the order in which the simulator stores them.
void order_spatially(Scene& scene);

// The bodies in another precision (thickness clamped to the rounded radius).
template <class Real>
SphereSet<Real> converted(const SphereSet<double>& b) {
  SphereSet<Real> out;
  out.resize(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    out.x[i] = Real(b.x[i]);
    out.y[i] = Real(b.y[i]);
    out.z[i] = Real(b.z[i]);
    out.radius[i] = Real(b.radius[i]);
    out.thickness[i] = Real(b.thickness[i]) < out.radius[i] ? Real(b.thickness[i]) : out.radius[i];
  }
  return out;
}

}  // namespace nestsim::scenes

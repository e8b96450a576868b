// Helpers of the validation suite that read the engine's types: the largest accepted dt
// of a setup, a frame's positions, and soft-sphere overlaps measured in a frame
// (independently of the engine's force code).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "nestsim/model/setup.h"
#include "nestsim/model/time_step.h"
#include "stats.h"

namespace nestsim::validation {

// model::max_dt for the setup's kinds and repulsion at the default (accurate) limit.
inline double largest_dt(const nestsim::model::Setup& s) {
  std::vector<nestsim::model::ContactKind> kinds;
  for (const nestsim::model::Kind& k : s.kinds) kinds.push_back({k.compartment, k.membrane, k.diffusion});
  return nestsim::model::max_dt(kinds, s.repulsion, s.kT, nestsim::model::DtLimit::accurate);
}

// A reaction rule of kinds without sites ("A + B -> C", "C -> A + B", "A -> 0").
inline nestsim::model::Reaction rule(const std::string& name, double rate, double radius,
                                   std::vector<uint32_t> in, std::vector<uint32_t> out) {
  nestsim::model::Reaction r;
  r.name = name;
  r.rate = rate;
  r.radius = radius;
  for (uint32_t k : in) r.reactants.push_back(nestsim::model::Term{k, nestsim::model::Site{}});
  for (uint32_t k : out) r.products.push_back(nestsim::model::Term{k, nestsim::model::Site{}});
  return r;
}

// The live bodies of one kind in a frame.
inline std::size_t count_kind(const nestsim::model::Frame& f, uint32_t kind) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < f.id.size(); ++s) n += (f.id[s] >= 0 && f.kind[s] == int32_t(kind)) ? 1 : 0;
  return n;
}

// The positions of the live bodies of a frame, in slot order.
inline std::vector<Vec> positions(const nestsim::model::Frame& f) {
  std::vector<Vec> x;
  for (std::size_t s = 0; s < f.id.size(); ++s)
    if (f.id[s] >= 0) x.push_back(f.position[s]);
  return x;
}

// For each body[k] (a membrane protein, by id: the frame in id order), the unit vector
// from its compartment centre[k] to it, nearest image in a periodic box (a box edge 0:
// that axis not periodic): the direction whose correlation <cos theta> measures
// diffusion on a sphere.
inline std::vector<Vec> unit_directions(const nestsim::model::Frame& f,
                                        const std::vector<int64_t>& body,
                                        const std::vector<int64_t>& centre, const Vec& box) {
  std::vector<Vec> u;
  for (std::size_t k = 0; k < body.size(); ++k) {
    const Vec d = periodic_delta(f.position[std::size_t(body[k])],
                                 f.position[std::size_t(centre[k])], box);
    const double len = std::sqrt(norm2(d));
    u.push_back({d[0] / len, d[1] / len, d[2] / len});
  }
  return u;
}

// The overlapping pairs of equal spheres (radius a) and their summed harmonic energy
// k/2 (2a - r)^2 (kT), in a periodic box.
inline std::pair<double, double> overlaps(const std::vector<Vec>& x, const Vec& box, double a, double k) {
  double n = 0, e = 0;
  for_close_pairs(x, box, 2 * a, [&](std::size_t, std::size_t, double r) {
    n += 1;
    e += 0.5 * k * (2 * a - r) * (2 * a - r);
  });
  return {n, e};
}

}  // namespace nestsim::validation

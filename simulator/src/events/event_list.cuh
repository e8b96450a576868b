// Compartment events: budding and fusion. They are rare and change the nesting,
// so each step's candidates (after the claims, and after the other events of the step
// have been executed) are checked exactly against every body (one thread per body, a
// loop over the few candidates), not through the lists. The invariants of
// integrator_kernels.cuh,
// (A) inside the parent's mid-surface and (B) outside sibling compartments' mid-surface
// balls, hold after every event:
//
// Budding, "S on X -> V + S' on V" (or "... + S' in V"): a new compartment V is born in
// X's lumen, touching X's inner surface where S sits: its centre on the ray from X's
// centre through S, at l_X - r_V (l = r - q, the lumen radius), so (A) holds by
// construction. S' goes onto V's membrane facing X's (or to V's centre, "in V").
// Proteins of X's lumen inside V's mid-surface ball are pushed out of it (PushPlan). It
// happens only when no compartment of X is in the way (B), every push lands in a valid
// place, and V's ball is clear of every other bud in X this step with a higher priority
// (the claim's random bits): no bias by slot or order.
//
// Fusion, "V + Y -> Y": sibling compartments V and Y whose outer surfaces are within the
// rule's radius merge: V disappears, Y's lumen volume grows by V's (l_Y'^3 = l_Y^3 +
// l_V^3, thickness and diffusion of Y unchanged), V's lumen contents move into Y as one
// rigid group (V's lumen ball translated to the "ghost" inside Y's new lumen, touching
// its inner surface on the side facing V), and V's membrane-bound bodies move to Y's
// membrane (projected onto its new mid-surface along the ray from Y's centre). It
// happens only when Y's grown ball is clear of its siblings (their grown balls when they
// fuse too), stays wholly in its parent's lumen (and the box when reflective), the ghost
// ball is clear of Y's compartments (their grown balls), and, when V carries
// compartments, of Y's free proteins (which would otherwise end inside them).
// ---------------------------------------------------------------------------------------
#pragma once
#include <cstdint>

#include "reactions/candidates.cuh"

namespace nestsim::sim::detail {

// Squared minimum-image distance from point p to slot j's centre.
NESTSIM_HD inline double point_dist2(const SlotView& v, const double* p, uint32_t j) {
  double s = 0;
  NESTSIM_AXES(k, v.dim) {
    const double d = minimum_image(p[k] - v.x[k][j], v.space.edge[k], v.space.inv_edge[k]);
    s += d * d;
  }
  return s;
}

// The candidate events of one phase, in slot order (a compaction of per-slot marks).
struct EventList {
  uint32_t count = 0;
  const uint32_t* slot = nullptr;  // fusion: V; budding: the reactant
  int32_t* target = nullptr;       // fusion: Y; budding: X
  int32_t* rule = nullptr;
  double* centre[3] = {nullptr, nullptr, nullptr};  // fusion: ghost; budding: V's centre
  double* mid = nullptr;      // fusion: Y's new mid-surface radius; budding: V's radius
  double* aux = nullptr;      // fusion: V's lumen radius (the ghost ball)
  // Fusion: Y's free proteins that meet the ghost ball, and V's compartments (counts).
  uint32_t* ghost_proteins = nullptr;
  uint32_t* ghost_children = nullptr;
  unsigned long long* blocked = nullptr;
  int32_t* ev_v = nullptr;    // per slot: the fusion whose V it is (-1)
  int32_t* ev_y = nullptr;    // per slot: the fusion whose Y it is (-1)
};

}  // namespace nestsim::sim::detail

// The per-body steps of one Brownian-dynamics step, as NESTSIM_HD functors run by
// thrust::for_each over slots (one source for the CUDA and the OpenMP backends).
//
// One step (simulation.cu drives it):
//   Forces     F_i from the CSR neighbour list, ascending neighbour order;
//   Propose    own move dx_i (drift + Philox noise; tangential + projection for bound
//              bodies; reflection at the box walls for top-level bodies);
//   [rebuild]  lists rebuilt at the old positions when a body might end more than half
//              the skin away from where the lists were built (StepBound);
//   Accept     impermeability tests; a failing move becomes zero (rejection);
//   Apply      x += own accepted move + accepted moves of the parent chain (carrying);
//   ApplyBound bound bodies: their membrane's new centre + their new relative position.
//
// Why rejection and why these tests: see simulation.h. The invariants (relative to the
// parent P, which carries i and all of i's siblings, so only own moves change them):
//   (A) |x_i - x_P| + s_i < m_P                         (inside the parent)
//   (B) |x_i - x_j| >= s_i + s_j for siblings i, j      (outside each other)
// with m = r - q/2 the membrane mid-surface and s = m for compartments, 0 for proteins.
// Accept tests i's proposal against the old and the proposed position of each sibling,
// so every combination of accepted and rejected moves keeps (B).
#pragma once
#include <cmath>
#include <cstdint>

#include "nestsim/hd.h"
#include "nestsim/predicates.h"
#include "nestsim/sim/philox.h"

namespace nestsim::sim::detail {

// Parent chains are validated acyclic on the host; this bound only guards the loops.
constexpr int kMaxDepth = 1024;

// Raw device pointers of the slot arrays (structure of arrays) and the step's constants.
struct SlotView {
  int dim = 3;
  uint32_t n = 0;  // slots in use (high-water mark); slots beyond are empty
  Space<double> space;
  bool reflective = false;
  double box[3] = {0, 0, 0};
  double dt = 0, kT = 1, repulsion = 0;
  uint64_t seed = 0, step = 0;

  double* x[3] = {nullptr, nullptr, nullptr};       // positions now
  double* x_next[3] = {nullptr, nullptr, nullptr};  // positions after the step
  double* x_built[3] = {nullptr, nullptr, nullptr}; // positions at the last list build
  double* force[3] = {nullptr, nullptr, nullptr};
  double* move[3] = {nullptr, nullptr, nullptr};      // proposed own move
  double* accepted[3] = {nullptr, nullptr, nullptr};  // accepted own move
  const double* radius = nullptr;
  const double* thickness = nullptr;
  const double* diffusion = nullptr;
  const int64_t* id = nullptr;         // -1: empty slot
  const int32_t* parent = nullptr;     // slot of the parent compartment, -1 none
  const int32_t* membrane = nullptr;   // slot of the membrane's compartment, -1 none
  const uint8_t* compartment = nullptr;
  uint32_t* rejections = nullptr;
  const uint64_t* nbr_offsets = nullptr;
  const uint32_t* nbrs = nullptr;

  NESTSIM_HD bool empty(uint32_t i) const { return id[i] < 0; }
  NESTSIM_HD double mid(uint32_t c) const { return radius[c] - 0.5 * thickness[c]; }
  NESTSIM_HD double lumen(uint32_t c) const { return radius[c] - thickness[c]; }
  // The radius of the ball that a body's contents and its own centre stay in.
  NESTSIM_HD double inner_ball(uint32_t i) const { return compartment[i] ? mid(i) : 0.0; }
  // The compartment that carries i: its membrane's, else its parent.
  NESTSIM_HD int32_t carrier(uint32_t i) const { return membrane[i] >= 0 ? membrane[i] : parent[i]; }

  // Minimum-image vector a - b between slots (positions from `p`).
  NESTSIM_HD void delta(double* const* p, uint32_t a, uint32_t b, double* d) const {
    d[0] = d[1] = d[2] = 0;
    for (int k = 0; k < dim; ++k)
      d[k] = minimum_image(p[k][a] - p[k][b], space.edge[k], space.inv_edge[k]);
  }
  NESTSIM_HD double norm2(const double* d) const {
    double s = 0;
    for (int k = 0; k < dim; ++k) s += d[k] * d[k];
    return s;
  }
  // Is compartment c in the parent chain of body b?
  NESTSIM_HD bool contains(uint32_t c, uint32_t b) const {
    int32_t p = parent[b];
    for (int depth = 0; p >= 0 && depth < kMaxDepth; ++depth, p = parent[p])
      if (uint32_t(p) == c) return true;
    return false;
  }
  NESTSIM_HD void wrap(double* p) const {
    for (int k = 0; k < dim; ++k) {
      const double edge = space.edge[k];
      if (edge > 0) {
        double y = p[k] - edge * std::floor(p[k] * space.inv_edge[k]);
        if (y >= edge) y -= edge;
        if (y < 0) y = 0;
        p[k] = y;
      }
    }
  }
};

// Harmonic excluded volume on body i from its listed neighbours (which pairs repel and
// how: simulation.h). Exact distance filter: listed pairs that do not overlap add nothing.
struct Forces {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    double f[3] = {0, 0, 0};
    if (!v.empty(i) && v.repulsion > 0) {
      const bool ci = v.compartment[i];
      for (uint64_t e = v.nbr_offsets[i]; e < v.nbr_offsets[i + 1]; ++e) {
        const uint32_t j = v.nbrs[e];
        if (v.empty(j) || v.membrane[i] == int32_t(j) || v.membrane[j] == int32_t(i)) continue;
        double d[3];
        v.delta(v.x, i, j, d);
        const double d2 = v.norm2(d);
        if (!(d2 > 0)) continue;  // coincident centres: no direction, no force
        const double dist = std::sqrt(d2);
        const bool cj = v.compartment[j];
        double overlap, sign;
        if (cj && v.contains(j, i)) {  // i in j's lumen: pushed towards j's centre
          overlap = dist + v.radius[i] - v.lumen(j);
          sign = -1;
        } else if (ci && v.contains(i, j)) {  // j in i's lumen: i pulled towards j
          overlap = dist + v.radius[j] - v.lumen(i);
          sign = -1;
        } else {  // outside each other
          overlap = v.radius[i] + v.radius[j] - dist;
          sign = 1;
        }
        if (overlap > 0) {
          const double scale = sign * v.repulsion * overlap / dist;
          for (int k = 0; k < v.dim; ++k) f[k] += scale * d[k];
        }
      }
    }
    for (int k = 0; k < 3; ++k) v.force[k][i] = f[k];
  }
};

// Reflects y into [lo, hi] (once, then clamps: a move longer than the interval is rare).
NESTSIM_HD inline double reflect(double y, double lo, double hi) {
  if (y < lo) y = lo + (lo - y);
  if (y > hi) y = hi - (y - hi);
  return y < lo ? lo : (y > hi ? hi : y);
}

// Euler-Maruyama proposal of body i's own move.
struct Propose {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    double dx[3] = {0, 0, 0};
    if (!v.empty(i)) {
      const double D = v.diffusion[i];
      if (D > 0) {
        double z[4];
        normals4(v.seed, v.step, uint64_t(v.id[i]), RandomPurpose::brownian, z);
        const double mobility_dt = D / v.kT * v.dt;
        const double sigma = std::sqrt(2.0 * D * v.dt);
        for (int k = 0; k < v.dim; ++k) dx[k] = mobility_dt * v.force[k][i] + sigma * z[k];
      }
      const int32_t c = v.membrane[i];
      if (c >= 0) {
        // Tangential step on the sphere |x - x_c| = m_c, then back onto it.
        double rel[3];
        v.delta(v.x, i, uint32_t(c), rel);
        const double r2 = v.norm2(rel);
        if (r2 > 0) {
          const double inv = 1.0 / std::sqrt(r2);
          double radial = 0;
          for (int k = 0; k < v.dim; ++k) radial += dx[k] * rel[k] * inv;
          double moved[3] = {0, 0, 0};
          for (int k = 0; k < v.dim; ++k) moved[k] = rel[k] + dx[k] - radial * rel[k] * inv;
          const double scale = v.mid(uint32_t(c)) / std::sqrt(v.norm2(moved));
          for (int k = 0; k < v.dim; ++k) dx[k] = moved[k] * scale - rel[k];
        } else {
          for (int k = 0; k < 3; ++k) dx[k] = 0;
        }
      } else if (v.reflective && v.parent[i] < 0) {
        const double s = v.inner_ball(i);
        for (int k = 0; k < v.dim; ++k) {
          const double x = v.x[k][i];
          dx[k] = reflect(x + dx[k], s, v.box[k] - s) - x;
        }
      }
    }
    for (int k = 0; k < 3; ++k) v.move[k][i] = dx[k];
  }
};

// Bounds used to decide a rebuild: the largest possible distance of a body from where
// the lists were built after this step (whatever is accepted), and the largest step.
struct StepBound {
  double from_built = 0;
  double step = 0;
};
struct MaxStepBound {
  NESTSIM_HD StepBound operator()(const StepBound& a, const StepBound& b) const {
    return {a.from_built > b.from_built ? a.from_built : b.from_built,
            a.step > b.step ? a.step : b.step};
  }
};
struct BoundOfBody {
  SlotView v;
  NESTSIM_HD double length(const double* const* m, uint32_t i) const {
    double s = 0;
    for (int k = 0; k < v.dim; ++k) s += m[k][i] * m[k][i];
    return std::sqrt(s);
  }
  NESTSIM_HD StepBound operator()(uint32_t i) const {
    if (v.empty(i)) return {0, 0};
    double step = length(v.move, i);
    int32_t c = v.carrier(i);
    for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
      step += length(v.move, uint32_t(c));
    double d[3];
    d[0] = d[1] = d[2] = 0;
    for (int k = 0; k < v.dim; ++k)
      d[k] = minimum_image(v.x[k][i] - v.x_built[k][i], v.space.edge[k], v.space.inv_edge[k]);
    return {std::sqrt(v.norm2(d)) + step, step};
  }
};

// Impermeability tests of i's proposal; writes the accepted own move (zero if rejected).
// Bound bodies are always accepted: their membrane's tests cover them.
struct Accept {
  SlotView v;
  NESTSIM_HD bool allowed(uint32_t i) const {
    double dx[3] = {0, 0, 0};
    for (int k = 0; k < v.dim; ++k) dx[k] = v.move[k][i];
    const int32_t p = v.parent[i];
    const double si = v.inner_ball(i);
    if (p >= 0) {  // (A)
      double rel[3];
      v.delta(v.x, i, uint32_t(p), rel);
      for (int k = 0; k < v.dim; ++k) rel[k] += dx[k];
      const double room = v.mid(uint32_t(p)) - si;
      if (!(room > 0 && v.norm2(rel) < room * room)) return false;
    }
    const bool ci = v.compartment[i];
    for (uint64_t e = v.nbr_offsets[i]; e < v.nbr_offsets[i + 1]; ++e) {  // (B)
      const uint32_t j = v.nbrs[e];
      if (v.empty(j) || v.parent[j] != p || v.membrane[j] >= 0) continue;
      if (!ci && !v.compartment[j]) continue;
      const double need = si + v.inner_ball(j);
      double d[3];
      v.delta(v.x, i, j, d);
      for (int k = 0; k < v.dim; ++k) d[k] += dx[k];
      if (!(v.norm2(d) >= need * need)) return false;  // against j where it was
      for (int k = 0; k < v.dim; ++k) d[k] -= v.move[k][j];
      if (!(v.norm2(d) >= need * need)) return false;  // against j where it may go
    }
    return true;
  }
  NESTSIM_HD void operator()(uint32_t i) const {
    bool ok = true;
    if (!v.empty(i) && v.membrane[i] < 0) ok = allowed(i);
    for (int k = 0; k < 3; ++k) v.accepted[k][i] = ok ? v.move[k][i] : 0.0;
    if (!ok) ++v.rejections[i];
  }
};

// New positions of the bodies not bound to a membrane: own move plus the moves of the
// parent chain (a compartment carries its contents). Top-level bodies in a reflective
// box are clamped into their interval (the proposal reflected them; this only removes
// the rounding of x + dx).
struct Apply {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    if (v.membrane[i] >= 0) return;
    double total[3] = {0, 0, 0};
    if (!v.empty(i)) {
      for (int k = 0; k < v.dim; ++k) total[k] = v.accepted[k][i];
      int32_t c = v.parent[i];
      for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
        for (int k = 0; k < v.dim; ++k) total[k] += v.accepted[k][c];
    }
    double p[3] = {0, 0, 0};
    for (int k = 0; k < v.dim; ++k) p[k] = v.x[k][i] + total[k];
    if (v.reflective && v.parent[i] < 0 && !v.empty(i)) {
      const double s = v.inner_ball(i);
      for (int k = 0; k < v.dim; ++k) p[k] = reflect(p[k], s, v.box[k] - s);
    }
    v.wrap(p);
    for (int k = 0; k < 3; ++k) v.x_next[k][i] = k < v.dim ? p[k] : v.x[k][i];
  }
};

// Bound bodies, after Apply: the membrane's new centre plus the new relative position,
// recomputed each step from the projected move (no drift off the sphere accumulates).
struct ApplyBound {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    const int32_t c = v.membrane[i];
    if (c < 0) return;
    double rel[3];
    v.delta(v.x, i, uint32_t(c), rel);
    double p[3] = {0, 0, 0};
    for (int k = 0; k < v.dim; ++k) p[k] = v.x_next[k][c] + (rel[k] + v.accepted[k][i]);
    v.wrap(p);
    for (int k = 0; k < 3; ++k) v.x_next[k][i] = k < v.dim ? p[k] : v.x[k][i];
  }
};

}  // namespace nestsim::sim::detail

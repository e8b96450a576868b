// The per-body steps of one Brownian-dynamics step, as NESTSIM_HD functors run by
// thrust::for_each over slots (one source for the CUDA and the OpenMP backends).
//
// One step (Simulation::Impl::advance in simulation.cu), a stochastic Heun step on the
// soft forces:
//   Forces     F_i from the interacting entries of the CSR neighbour list, ascending
//              neighbour order, long rows in fixed chunks (load balance; see below);
//   Propose    predictor: own move dx_i (drift + Philox noise; tangential + projection
//              for bound bodies; reflection at the box walls for top-level bodies);
//   [rebuild]  lists rebuilt at the old positions when a body might end more than half
//              the skin away from where the lists were built (StepBound);
//   Predict    x* = x + the predicted moves of i and its carriers; Forces F*_i at x*;
//   Propose    corrector: the same noise with the drift of (F_i + F*_i) / 2;
//   Accept     impermeability tests; a failing move becomes zero (rejection);
//   Apply      x += own accepted move + accepted moves of the parent chain (carrying);
//   ApplyBound bound bodies: their membrane's new centre + their new relative position.
// Time-step classes (time_step.h): a body of a kind of class K proposes a move only at
// the steps that K divides, a step of K dt; at the others its move is zero, so it rests
// where it is relative to its carrier, which carries it at the carrier's own steps. The
// tests below and the reactions run at every step, against resting and moving bodies
// alike (a resting body's proposal is its position).
// The Heun step samples a harmonic contact's Boltzmann distribution to second order in
// the contact step (time_step.h); with no soft contact it is plain Brownian motion.
//
// Why rejection and why these tests: see simulation.h. The invariants are the HSX
// relation (a free body never intersects a compartment it is inside or outside of),
// relative to the parent P, which carries i and all of i's siblings, so only own moves
// change them:
//   (A) |x_i - x_P| + r_i <= r_P - q_P                  (wholly in the parent's lumen)
//   (B) |x_i - x_j| >= r_i + r_j for siblings i, j, one of them a compartment
//                                                       (off each other's outer surface)
// Accept tests i's proposal against the old and the proposed position of each sibling,
// so every combination of accepted and rejected moves keeps (B), and tests the path of
// the move, so that no step, however long, crosses a membrane and comes back. (A) needs
// only the end point: the lumen is a ball, convex. Under hard contacts (time_step.h)
// AcceptContact excludes the soft pairs in the same way.
#pragma once
#include <cmath>
#include <cstdint>

#include "nestsim/sim/philox.h"
#include "near_image.cuh"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

// Reflects y into [lo, hi] (once, then clamps: a move longer than the interval is rare).
NESTSIM_HD inline double reflect(double y, double lo, double hi) {
  if (y < lo) y = lo + (lo - y);
  if (y > hi) y = hi - (y - hi);
  return y < lo ? lo : (y > hi ? hi : y);
}

// Proposal of body i's own move: the predictor (drift of F, v.force_pred null) or
// Heun's corrector (drift of (F + F*) / 2); both with the step's one noise draw. The
// predictor keeps its draw in v.accepted, which nothing reads until Accept overwrites it
// after the corrector, and the corrector reads it back there: the same numbers as a
// second draw, without a second Philox and Box-Muller per body. With `kClasses`
// (v.kind_step set: time-step classes), a body of class K moves at the steps K divides,
// by a step of K dt, and proposes zero at the others; without, the loop is the one
// without classes, instruction for instruction (integrator.cu picks one per step).
template <bool kClasses>
struct Propose {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    double dx[3] = {0, 0, 0};
    const uint32_t K = kClasses && !v.empty(i) ? v.step_class(i) : 1u;
    if (!v.empty(i) && (!kClasses || (v.step & uint64_t(K - 1)) == 0)) {
      const double D = v.diffusion[i];
      if (D > 0) {
        double z[4] = {0, 0, 0, 0};
        if (v.force_pred[0]) {
          NESTSIM_AXES(k, v.dim) z[k] = v.accepted[k][i];
        } else {
          normals4(v.seed, v.step, uint64_t(v.id[i]), RandomPurpose::brownian, z);
          NESTSIM_AXES(k, v.dim) v.accepted[k][i] = z[k];
        }
        const double dt = kClasses ? v.dt * double(K) : v.dt;  // a move of K dt
        const double mobility_dt = D / v.kT * dt;
        const double sigma = std::sqrt(2.0 * D * dt);
        NESTSIM_AXES(k, v.dim) {
          const double f = v.force_pred[0] ? 0.5 * (v.force[k][i] + v.force_pred[k][i]) : v.force[k][i];
          dx[k] = mobility_dt * f + sigma * z[k];
        }
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
          NESTSIM_AXES(k, v.dim) radial += dx[k] * rel[k] * inv;
          double moved[3] = {0, 0, 0};
          NESTSIM_AXES(k, v.dim) moved[k] = rel[k] + dx[k] - radial * rel[k] * inv;
          const double scale = v.mid(uint32_t(c)) / std::sqrt(v.norm2(moved));
          NESTSIM_AXES(k, v.dim) dx[k] = moved[k] * scale - rel[k];
        } else {
          NESTSIM_UNROLL for (int k = 0; k < 3; ++k) dx[k] = 0;
        }
      } else if (v.reflective && v.parent[i] < 0) {
        const double s = v.radius[i];
        NESTSIM_AXES(k, v.dim) {
          const double x = v.x[k][i];
          dx[k] = reflect(x + dx[k], s, v.box[k] - s) - x;
        }
      }
    }
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.move[k][i] = dx[k];
  }
};

// Heun's predicted positions, into x_pred: each body moved by its own predicted move and
// those of its carriers (membrane, then the parent chain), so that pairs carried by
// different compartments see each other's predicted motion.
struct Predict {
  SlotView v;
  double* x_pred[3] = {nullptr, nullptr, nullptr};
  NESTSIM_HD void operator()(uint32_t i) const {
    double p[3] = {v.x[0][i], v.x[1][i], v.x[2][i]};
    if (!v.empty(i)) {
      NESTSIM_AXES(k, v.dim) p[k] += v.move[k][i];
      int32_t c = v.carrier(i);
      for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
        NESTSIM_AXES(k, v.dim) p[k] += v.move[k][c];
      wrap_near(v, p);
    }
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) x_pred[k][i] = p[k];
  }
};

// Impermeability tests of the proposals, in three passes, so that a compartment with
// thousands of sibling entries (a lysosome among crowded proteins) does not serialise on
// one thread (measured on the H100: one thread per body spent 2.3 ms of a 3.6 ms step at
// 1e6 bodies, docs/performance.md, "Impermeability tests per sibling entry"):
//   AcceptParent   one thread per body: (A) against its parent; reject[i] = 0 or 1;
//   AcceptSibling  one thread per sibling entry (i, j): (B) against j's old and proposed
//                  position; a failure stores reject[i] = 1 (every writer stores the same
//                  value, so the result is the logical OR whatever the order);
//   AcceptContact  hard contacts only, one thread per list entry (i, j): the soft pairs
//                  excluded (below); stores reject = 1 like AcceptSibling (one thread
//                  per body over its row spent 2.2 ms a step where a cell's row held
//                  every body, docs/performance.md, "Hard contacts per list entry");
//   AcceptApply    one thread per body: the accepted own move (zero if rejected).
// Bound bodies pass (A) and (B): their membrane's tests cover them (AcceptContact may
// reject them).
struct AcceptParent {
  SlotView v;
  NESTSIM_HD bool allowed(uint32_t i) const {
    const int32_t p = v.parent[i];
    if (p < 0) return true;
    double rel[3];
    v.delta(v.x, i, uint32_t(p), rel);
    NESTSIM_AXES(k, v.dim) rel[k] += v.move[k][i];
    const double room = v.lumen(uint32_t(p)) - v.radius[i];
    return room >= 0 && v.norm2(rel) <= room * room;
  }
  NESTSIM_HD void operator()(uint32_t i) const {
    const bool ok = v.empty(i) || v.membrane[i] >= 0 || allowed(i);
    v.reject[i] = ok ? 0 : 1;
  }
};

// Does the segment a + t u, t in [0, 1], come closer to the origin than `need` at an
// interior point? Only a crossing counts: the end points are tested on their own, and a
// start that touches to within rounding (kPathSlack, relative) must not pin a body.
constexpr double kPathSlack = 1e-9;
NESTSIM_HD inline bool path_crosses(const SlotView& v, const double* a, const double* u,
                                    double need) {
  const double uu = v.norm2(u);
  if (!(uu > 0)) return false;
  double au = 0;
  NESTSIM_AXES(k, v.dim) au += a[k] * u[k];
  const double t = -au / uu;
  if (!(t > 0 && t < 1)) return false;
  double c[3] = {0, 0, 0};
  NESTSIM_AXES(k, v.dim) c[k] = a[k] + t * u[k];
  return v.norm2(c) < need * need * (1 - kPathSlack);
}

// (B) for i's proposal: the end point against j's old and proposed position, and the
// whole path, so that a step longer than a small compartment cannot jump over its
// membrane (in and out again): i's segment against j standing at either end point, and
// the relative segment when both move.
struct AcceptSibling {
  SlotView v;
  NESTSIM_HD void operator()(uint64_t e) const {
    if (e >= *v.sib_total) return;
    const uint32_t i = v.sib_rows[e], j = v.sibs[e];
    if (v.empty(i) || v.membrane[i] >= 0 || v.empty(j) || v.membrane[j] >= 0 ||
        v.parent[j] != v.parent[i] || (!v.compartment[i] && !v.compartment[j]))
      return;
    const double need = v.radius[i] + v.radius[j];
    double d[3] = {0, 0, 0}, d0[3] = {0, 0, 0}, mi[3] = {0, 0, 0}, rel[3] = {0, 0, 0};
    v.delta(v.x, i, j, d);
    NESTSIM_AXES(k, v.dim) {
      d0[k] = d[k];
      mi[k] = v.move[k][i];
      rel[k] = v.move[k][i] - v.move[k][j];
    }
    NESTSIM_AXES(k, v.dim) d[k] += v.move[k][i];
    bool ok = v.norm2(d) >= need * need;  // against j where it was
    NESTSIM_AXES(k, v.dim) d[k] -= v.move[k][j];
    ok = ok && v.norm2(d) >= need * need;  // against j where it may go
    ok = ok && !path_crosses(v, d0, mi, need) && !path_crosses(v, d0, rel, need);
    if (ok) {
      NESTSIM_AXES(k, v.dim) d0[k] -= v.move[k][j];
      ok = !path_crosses(v, d0, mi, need);
    }
    if (!ok) v.reject[i] = 1;
  }
};

// Hard contacts (Contacts::hard): one thread per list entry (i, j). For each pair
// (i, j) that soft contacts would act on (force_kernels.cuh; two species, or a bound
// species and a compartment other than its own) and whose kinds are not exempt, the
// bodies whose own moves change the pair's separation are the "movers": each body and
// its carriers up to (not including) the first carrier the two share. Where the moves
// can combine into an overlap (any combination of accepted and rejected movers other
// than all rejected), every mover of the pair is rejected. So no combination of verdicts
// makes an overlap, and for a pair with one mover each (two species in one lumen, two
// on one membrane) the verdict is symmetric under reversing the step: the old and the
// proposed positions play the same part, so with Gaussian proposals the update is a
// Metropolis step for the hard-sphere distribution at any dt (docs/validation.md,
// "Large steps"). Pairs with more than kContactMovers movers on a side (carried by
// compartments two levels apart) are not excluded (models/README.md).
constexpr int kContactMovers = 2;
struct AcceptContact {
  SlotView v;
  // Does the pair interact (soft pairs, force_kernels.cuh) and exclude (not exempt)?
  NESTSIM_HD bool excludes(uint32_t i, uint32_t j) const {
    const bool ci = v.compartment[i], cj = v.compartment[j];
    bool pair = !ci && !cj;
    if (ci && !cj) pair = v.membrane[j] >= 0 && v.membrane[j] != int32_t(i);
    if (cj && !ci) pair = v.membrane[i] >= 0 && v.membrane[i] != int32_t(j);
    if (!pair) return false;
    if (v.contact_exempt) {
      const int32_t a = v.kind[i], b = v.kind[j];
      if (a >= 0 && b >= 0 && uint32_t(a) < v.kinds && uint32_t(b) < v.kinds &&
          v.contact_exempt[uint64_t(a) * v.kinds + uint64_t(b)])
        return false;
    }
    return true;
  }
  // The movers of b relative to the frame `stop` (a carrier of b, or -1): b, then its
  // carriers below stop. Returns their number, or kContactMovers + 1 when there are more.
  NESTSIM_HD int movers(uint32_t b, int32_t stop, int32_t* out) const {
    int n = 0;
    int32_t c = int32_t(b);
    for (int depth = 0; c >= 0 && c != stop && depth < kMaxDepth; ++depth) {
      if (n == kContactMovers) return kContactMovers + 1;
      out[n++] = c;
      c = depth == 0 ? v.carrier(uint32_t(c)) : v.parent[c];
    }
    return n;
  }
  // The first carrier of i (i itself included) that also carries j (or is j), else -1.
  NESTSIM_HD int32_t shared_frame(uint32_t i, uint32_t j) const {
    int32_t a = int32_t(i);
    for (int da = 0; a >= 0 && da < kMaxDepth; ++da) {
      int32_t b = int32_t(j);
      for (int db = 0; b >= 0 && db < kMaxDepth; ++db) {
        if (a == b) return a;
        b = db == 0 ? v.carrier(uint32_t(b)) : v.parent[b];
      }
      a = da == 0 ? v.carrier(uint32_t(a)) : v.parent[a];
    }
    return -1;
  }
  NESTSIM_HD double length(int32_t b) const {
    double s = 0;
    NESTSIM_AXES(k, v.dim) s += v.move[k][b] * v.move[k][b];
    return std::sqrt(s);
  }
  // Do i and j overlap at separation d = x_i - x_j?
  NESTSIM_HD bool overlap(uint32_t i, uint32_t j, const double* d) const {
    const double d2 = v.norm2(d);
    if (v.compartment[j] && v.contains(j, i)) {  // i reaching through j's inner surface
      const double room = v.lumen(j) - v.radius[i];
      return !(room >= 0 && d2 <= room * room);
    }
    if (v.compartment[i] && v.contains(i, j)) {
      const double room = v.lumen(i) - v.radius[j];
      return !(room >= 0 && d2 <= room * room);
    }
    const double need = v.radius[i] + v.radius[j];
    return d2 < need * need;
  }
  NESTSIM_HD void operator()(uint64_t e) const {
    const uint32_t i = v.nbr_rows[e], j = v.nbrs[e];
    if (j == i || v.empty(i) || v.empty(j) || !excludes(i, j)) return;
    const int32_t frame = shared_frame(i, j);
    int32_t mi[kContactMovers], mj[kContactMovers];
    const int ni = movers(i, frame, mi), nj = movers(j, frame, mj);
    if (ni > kContactMovers || nj > kContactMovers) return;
    double d0[3] = {0, 0, 0};
    v.delta(v.x, i, j, d0);
    // Most listed pairs (the skin's) are further apart than their moves can close.
    const bool nested =
        (v.compartment[j] && v.contains(j, i)) || (v.compartment[i] && v.contains(i, j));
    if (!nested) {
      double reach = v.radius[i] + v.radius[j];
      for (int a = 0; a < ni; ++a) reach += length(mi[a]);
      for (int b = 0; b < nj; ++b) reach += length(mj[b]);
      if (v.norm2(d0) > reach * reach) return;
    }
    bool conflict = false;
    const unsigned combos = 1u << (ni + nj);
    for (unsigned s = 1; s < combos && !conflict; ++s) {
      double d[3] = {d0[0], d0[1], d0[2]};
      for (int a = 0; a < ni; ++a)
        if (s & (1u << a)) NESTSIM_AXES(k, v.dim) d[k] += v.move[k][mi[a]];
      for (int b = 0; b < nj; ++b)
        if (s & (1u << (ni + b))) NESTSIM_AXES(k, v.dim) d[k] -= v.move[k][mj[b]];
      conflict = overlap(i, j, d);
    }
    if (!conflict) return;
    for (int a = 0; a < ni; ++a) v.reject[mi[a]] = 1;
    for (int b = 0; b < nj; ++b) v.reject[mj[b]] = 1;
  }
};

struct AcceptApply {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    const bool ok = v.reject[i] == 0;
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.accepted[k][i] = ok ? v.move[k][i] : 0.0;
    if (!ok && v.moves_now(i)) ++v.rejections[i];  // a body at rest proposed nothing
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
      NESTSIM_AXES(k, v.dim) total[k] = v.accepted[k][i];
      int32_t c = v.parent[i];
      for (int depth = 0; c >= 0 && depth < kMaxDepth; ++depth, c = v.parent[c])
        NESTSIM_AXES(k, v.dim) total[k] += v.accepted[k][c];
    }
    double p[3] = {0, 0, 0};
    NESTSIM_AXES(k, v.dim) p[k] = v.x[k][i] + total[k];
    if (v.reflective && v.parent[i] < 0 && !v.empty(i)) {
      const double s = v.radius[i];
      NESTSIM_AXES(k, v.dim) p[k] = reflect(p[k], s, v.box[k] - s);
    }
    wrap_near(v, p);
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.x_next[k][i] = k < v.dim ? p[k] : v.x[k][i];
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
    NESTSIM_AXES(k, v.dim) p[k] = v.x_next[k][c] + (rel[k] + v.accepted[k][i]);
    wrap_near(v, p);
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.x_next[k][i] = k < v.dim ? p[k] : v.x[k][i];
  }
};

// The periodic images: how many box edges each body's unwrapped position lies from its
// wrapped one (H5MD's `image`: unwrapped = position + image * edge). Updated once per
// step from the positions before and after it: a jump of more than half an edge is a
// crossing (no body moves that far in one step: the lists' skin bounds a step, events
// place bodies next to their reactants). A slot that holds a new body starts at 0.
struct UpdateImage {
  SlotView v;
  const double* before[3] = {nullptr, nullptr, nullptr};
  const int64_t* id_before = nullptr;  // null: no slot changed its body this step
  int32_t* image[3] = {nullptr, nullptr, nullptr};
  NESTSIM_HD void operator()(uint32_t i) const {
    const bool fresh = v.empty(i) || (id_before && id_before[i] != v.id[i]);
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) {
      if (fresh) {
        image[k][i] = 0;
      } else if (k < v.dim && v.space.edge[k] > 0) {
        const double moved = before[k][i] - v.x[k][i];
        // floor(moved / edge + 1/2) is 0 for |moved| <= edge / 4 (near_image.cuh)
        if (std::fabs(moved) > 0.25 * v.space.edge[k])
          image[k][i] += int32_t(std::floor(moved * v.space.inv_edge[k] + 0.5));
      }
    }
  }
};

}  // namespace nestsim::sim::detail

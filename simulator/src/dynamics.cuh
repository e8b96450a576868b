// The per-body steps of one Brownian-dynamics step, as NESTSIM_HD functors run by
// thrust::for_each over slots (one source for the CUDA and the OpenMP backends).
//
// One step (simulation.cu drives it), a stochastic Heun step on the soft forces:
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
  // The forces at the predicted positions (Heun's corrector); null in the predictor.
  const double* force_pred[3] = {nullptr, nullptr, nullptr};
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
  // The entries of the lists that Accept needs (MarkSibling), compacted at each build.
  const uint32_t* sib_rows = nullptr;  // the row (body) of each compacted entry
  const uint32_t* sibs = nullptr;
  uint64_t sib_count = 0;
  uint8_t* reject = nullptr;  // per body, Accept's verdict (1: rejected)

  NESTSIM_HD bool empty(uint32_t i) const { return id[i] < 0; }
  NESTSIM_HD double mid(uint32_t c) const { return radius[c] - 0.5 * thickness[c]; }
  NESTSIM_HD double lumen(uint32_t c) const { return radius[c] - thickness[c]; }
  // The compartment that carries i: its membrane's, else its parent.
  NESTSIM_HD int32_t carrier(uint32_t i) const { return membrane[i] >= 0 ? membrane[i] : parent[i]; }

  // Minimum-image vector a - b between slots (positions from `p`).
  NESTSIM_HD void delta(double* const* p, uint32_t a, uint32_t b, double* d) const {
    d[0] = d[1] = d[2] = 0;
    NESTSIM_AXES(k, dim)
      d[k] = minimum_image(p[k][a] - p[k][b], space.edge[k], space.inv_edge[k]);
  }
  NESTSIM_HD double norm2(const double* d) const {
    double s = 0;
    NESTSIM_AXES(k, dim) s += d[k] * d[k];
    return s;
  }
  // Does compartment c carry body b (b in c's lumen, on c's membrane, or on the membrane
  // of a compartment in c's lumen)? A bound body's parent is its membrane's parent.
  NESTSIM_HD bool carries(uint32_t c, uint32_t b) const {
    return membrane[b] == int32_t(c) || contains(c, b);
  }
  // Is compartment c in the parent chain of body b?
  NESTSIM_HD bool contains(uint32_t c, uint32_t b) const {
    int32_t p = parent[b];
    for (int depth = 0; p >= 0 && depth < kMaxDepth; ++depth, p = parent[p])
      if (uint32_t(p) == c) return true;
    return false;
  }
  NESTSIM_HD void wrap(double* p) const {
    NESTSIM_AXES(k, dim) {
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

// Harmonic excluded volume on body i from body j (which pairs repel and how:
// simulation.h): adds the force on i to f and says whether the pair interacts. Soft
// pairs are two species (free or bound), and a bound species with a compartment other
// than its own membrane; a free body and a compartment meet at a hard wall (Accept),
// without force. A compartment feels nothing from what it carries, so its contents
// cannot drive it. Exact distance filter: listed pairs that do not overlap add nothing
// and return false, so the set of interacting entries (and hence everything summed
// below) does not depend on the skin of the lists.
NESTSIM_HD inline bool pair_force(const SlotView& v, uint32_t i, uint32_t j, double* f) {
  if (v.empty(i) || v.empty(j) || v.membrane[i] == int32_t(j) || v.membrane[j] == int32_t(i))
    return false;
  const bool ci = v.compartment[i], cj = v.compartment[j];
  if (ci && (cj || v.membrane[j] < 0 || v.carries(i, j))) return false;
  if (cj && v.membrane[i] < 0) return false;
  double d[3];
  v.delta(v.x, i, j, d);
  const double d2 = v.norm2(d);
  if (!(d2 > 0)) return false;  // coincident centres: no direction, no force
  const double dist = std::sqrt(d2);
  double overlap, sign;
  if (cj && v.contains(j, i)) {  // bound i reaching through j's inner surface: inwards
    overlap = dist + v.radius[i] - v.lumen(j);
    sign = -1;
  } else {  // outside each other
    overlap = v.radius[i] + v.radius[j] - dist;
    sign = 1;
  }
  if (!(overlap > 0)) return false;
  const double scale = sign * v.repulsion * overlap / dist;
  NESTSIM_AXES(k, v.dim) f[k] += scale * d[k];
  return true;
}

// Forces, load-balanced and deterministic without atomics (simulation.cu drives it):
//   MarkInteracting  one thread per list entry: does the pair interact?
//   (compaction)     the interacting entries, in list order (ascending neighbour), into a
//                    compacted CSR; its content does not depend on the skin;
//   ForceChunk       a row longer than kForceChunk compacted entries is cut into chunks of
//                    kForceChunk entries counted from the row's start; one thread sums a
//                    chunk sequentially;
//   ForceRow         one thread per body: a short row summed sequentially in ascending
//                    order, a long row's chunk sums added sequentially in chunk order.
// The association depends only on the compacted row, so the forces are bitwise the same
// for any skin and rebuild timing, and on a given backend for a given input.
constexpr uint64_t kForceChunk = 32;

// Entry marks for a compaction: 1 keeps the entry (row[e], nbrs[e]).
struct MarkInteracting {
  SlotView v;
  const uint32_t* row = nullptr;
  uint8_t* mark = nullptr;
  NESTSIM_HD void operator()(uint64_t e) const {
    double f[3] = {0, 0, 0};
    mark[e] = pair_force(v, row[e], v.nbrs[e], f) ? 1 : 0;
  }
};

// Entries that Accept needs: a free body i and a free sibling j, one of them a
// compartment. Depends only on id, parent, membrane, compartment (fixed between builds).
struct MarkSibling {
  SlotView v;
  const uint32_t* row = nullptr;
  uint8_t* mark = nullptr;
  NESTSIM_HD void operator()(uint64_t e) const {
    const uint32_t i = row[e], j = v.nbrs[e];
    const bool keep = !v.empty(i) && !v.empty(j) && v.membrane[i] < 0 && v.membrane[j] < 0 &&
                      v.parent[i] == v.parent[j] && (v.compartment[i] || v.compartment[j]);
    mark[e] = keep ? 1 : 0;
  }
};

// Compaction by an exclusive scan `pos` of the marks (pos[e + 1] > pos[e]: kept).
struct ScatterKept {
  const uint64_t* pos = nullptr;
  const uint32_t* in = nullptr;
  uint32_t* out = nullptr;
  NESTSIM_HD void operator()(uint64_t e) const {
    if (pos[e + 1] != pos[e]) out[pos[e]] = in[e];
  }
};
struct RowStart {
  const uint64_t* pos = nullptr;
  const uint64_t* offsets = nullptr;
  uint64_t* out = nullptr;
  NESTSIM_HD void operator()(uint32_t i) const { out[i] = pos[offsets[i]]; }
};

// Chunks per row (0 for a short row), for i in [0, n]; the n-th is 0 (scan total).
struct ChunkCount {
  uint32_t n = 0;
  const uint64_t* offsets = nullptr;  // compacted rows
  uint64_t* chunks = nullptr;
  NESTSIM_HD void operator()(uint32_t i) const {
    const uint64_t m = i < n ? offsets[i + 1] - offsets[i] : 0;
    chunks[i] = m > kForceChunk ? (m + kForceChunk - 1) / kForceChunk : 0;
  }
};

// The compacted lists of the interacting pairs and the chunks of the long rows.
struct ForceLists {
  const uint64_t* offsets = nullptr;  // n + 1
  const uint32_t* nbrs = nullptr;
  const uint64_t* chunk_offsets = nullptr;  // n + 1, exclusive scan of ChunkCount
  double* partial[3] = {nullptr, nullptr, nullptr};
  // Sum of the forces on i from compacted entries [begin, end), in order.
  NESTSIM_HD static void sum(const SlotView& v, uint32_t i, const uint32_t* nbrs,
                             uint64_t begin, uint64_t end, double* f) {
    for (uint64_t e = begin; e < end; ++e) pair_force(v, i, nbrs[e], f);
  }
};

// One thread per possible chunk t (the launch covers an upper bound; threads past the
// total return).
struct ForceChunk {
  SlotView v;
  ForceLists l;
  NESTSIM_HD void operator()(uint64_t t) const {
    const uint32_t n = v.n;
    if (t >= l.chunk_offsets[n]) return;
    uint32_t lo = 0, hi = n;  // the row i with chunk_offsets[i] <= t < chunk_offsets[i + 1]
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (l.chunk_offsets[mid] <= t) lo = mid; else hi = mid;
    }
    const uint32_t i = lo;
    const uint64_t begin = l.offsets[i] + (t - l.chunk_offsets[i]) * kForceChunk;
    const uint64_t end = begin + kForceChunk < l.offsets[i + 1] ? begin + kForceChunk : l.offsets[i + 1];
    double f[3] = {0, 0, 0};
    ForceLists::sum(v, i, l.nbrs, begin, end, f);
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) l.partial[k][t] = f[k];
  }
};

struct ForceRow {
  SlotView v;
  ForceLists l;
  NESTSIM_HD void operator()(uint32_t i) const {
    double f[3] = {0, 0, 0};
    const uint64_t begin = l.offsets[i], end = l.offsets[i + 1];
    if (end - begin <= kForceChunk) {
      ForceLists::sum(v, i, l.nbrs, begin, end, f);
    } else {
      for (uint64_t t = l.chunk_offsets[i]; t < l.chunk_offsets[i + 1]; ++t)
        NESTSIM_UNROLL for (int k = 0; k < 3; ++k) f[k] += l.partial[k][t];
    }
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.force[k][i] = f[k];
  }
};

// Reflects y into [lo, hi] (once, then clamps: a move longer than the interval is rare).
NESTSIM_HD inline double reflect(double y, double lo, double hi) {
  if (y < lo) y = lo + (lo - y);
  if (y > hi) y = hi - (y - hi);
  return y < lo ? lo : (y > hi ? hi : y);
}

// Proposal of body i's own move: the predictor (drift of F, v.force_pred null) or
// Heun's corrector (drift of (F + F*) / 2); both with the step's one noise draw.
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
      v.wrap(p);
    }
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) x_pred[k][i] = p[k];
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
    NESTSIM_AXES(k, v.dim) s += m[k][i] * m[k][i];
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
    NESTSIM_AXES(k, v.dim)
      d[k] = minimum_image(v.x[k][i] - v.x_built[k][i], v.space.edge[k], v.space.inv_edge[k]);
    return {std::sqrt(v.norm2(d)) + step, step};
  }
};

// Impermeability tests of the proposals, in three passes, so that a compartment with
// thousands of sibling entries (a lysosome among crowded proteins) does not serialise on
// one thread (measured on the H100: one thread per body spent 2.3 ms of a 3.6 ms step at
// 1e6 bodies, docs/perf-log.md):
//   AcceptParent   one thread per body: (A) against its parent; reject[i] = 0 or 1;
//   AcceptSibling  one thread per sibling entry (i, j): (B) against j's old and proposed
//                  position; a failure stores reject[i] = 1 (every writer stores the same
//                  value, so the result is the logical OR whatever the order);
//   AcceptApply    one thread per body: the accepted own move (zero if rejected).
// Bound bodies are always accepted: their membrane's tests cover them.
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

struct AcceptSibling {
  SlotView v;
  NESTSIM_HD void operator()(uint64_t e) const {
    const uint32_t i = v.sib_rows[e], j = v.sibs[e];
    if (v.empty(i) || v.membrane[i] >= 0 || v.empty(j) || v.membrane[j] >= 0 ||
        v.parent[j] != v.parent[i] || (!v.compartment[i] && !v.compartment[j]))
      return;
    const double need = v.radius[i] + v.radius[j];
    double d[3];
    v.delta(v.x, i, j, d);
    NESTSIM_AXES(k, v.dim) d[k] += v.move[k][i];
    bool ok = v.norm2(d) >= need * need;  // against j where it was
    NESTSIM_AXES(k, v.dim) d[k] -= v.move[k][j];
    ok = ok && v.norm2(d) >= need * need;  // against j where it may go
    if (!ok) v.reject[i] = 1;
  }
};

struct AcceptApply {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    const bool ok = v.reject[i] == 0;
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.accepted[k][i] = ok ? v.move[k][i] : 0.0;
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
    v.wrap(p);
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
    v.wrap(p);
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
        image[k][i] += int32_t(std::floor((before[k][i] - v.x[k][i]) * v.space.inv_edge[k] + 0.5));
      }
    }
  }
};

}  // namespace nestsim::sim::detail

// The excluded-volume forces as device functors (forces.cu drives them).
#pragma once
#include <cstdint>

#include "near_image.cuh"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

// Harmonic excluded volume on body i from body j (which pairs repel and how:
// simulation.h): adds the force on i to f and says whether the pair interacts. Soft
// pairs are two species (free or bound), and a bound species with a compartment other
// than its own membrane; a free body and a compartment meet at a hard wall (Accept),
// without force. A compartment feels nothing from what it carries, so its contents
// cannot drive it. Exact distance filter: listed pairs that do not overlap add nothing
// and return false, so the set of interacting entries (and hence everything summed
// below) does not depend on the skin of the lists.
NESTSIM_HD inline bool pair_force(const SlotView& v, uint32_t i, uint32_t j, double* f) {
  const bool ci = v.compartment[i], cj = v.compartment[j];
  double d[3] = {0, 0, 0};
  NESTSIM_AXES(k, v.dim)
    d[k] = near_minimum_image(v.x[k][i] - v.x[k][j], v.space.edge[k], v.space.inv_edge[k]);
  const double d2 = v.norm2(d);
  // Unless i reaches through j's inner surface, the overlap below is r_i + r_j - |d|:
  // none where d2 exceeds (r_i + r_j)^2 with a margin far above rounding. Most list
  // entries (the skin's) return here, before the tests below have read anything else
  // and without the square root, with the verdict those tests would give.
  if (!cj) {
    const double reach = v.radius[i] + v.radius[j];
    if (d2 > reach * reach * (1 + 1e-9)) return false;
  }
  if (v.empty(i) || v.empty(j) || v.membrane[i] == int32_t(j) || v.membrane[j] == int32_t(i))
    return false;
  if (ci && (cj || v.membrane[j] < 0 || v.carries(i, j))) return false;
  if (cj && v.membrane[i] < 0) return false;
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

// Forces, load-balanced and deterministic without atomics (forces.cu drives it on the
// GPU; the CPU runs ForceRowDirect, the same sums in one pass):
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

// The CPU's forces: one thread per body sums its whole list row in list order, skipping
// the entries that do not interact, with the association above (chunks of kForceChunk
// interacting entries, each summed from zero, added to the body's force in order; a row
// of at most kForceChunk is one chunk, and 0 + chunk is the chunk bitwise: a sum that
// starts at +0 is never -0). One pass and one pair_force per entry, where the GPU's
// compaction evaluates each entry twice and makes six passes over the lists: on a few
// cores, threads per body balance well and the passes are the cost.
struct ForceRowDirect {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    double f[3] = {0, 0, 0}, chunk[3] = {0, 0, 0};
    uint64_t in_chunk = 0;
    for (uint64_t e = v.nbr_offsets[i]; e < v.nbr_offsets[i + 1]; ++e) {
      if (!pair_force(v, i, v.nbrs[e], chunk)) continue;
      if (++in_chunk < kForceChunk) continue;
      NESTSIM_UNROLL for (int k = 0; k < 3; ++k) { f[k] += chunk[k]; chunk[k] = 0; }
      in_chunk = 0;
    }
    if (in_chunk > 0) NESTSIM_UNROLL for (int k = 0; k < 3; ++k) f[k] += chunk[k];
    NESTSIM_UNROLL for (int k = 0; k < 3; ++k) v.force[k][i] = f[k];
  }
};

}  // namespace nestsim::sim::detail

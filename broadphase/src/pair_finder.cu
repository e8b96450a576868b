// The device broad phase: HSX (Algorithm 1 of the HSX paper, Köster, Perumalla,
// Uhrmacher: "Efficient Simulation of Nested Hollow Sphere Intersections for Dynamically
// Nested Compartmental Models in Cell Biology", sections 3-4; docs/design.md) and the
// brute-force reference.
//
// find() in outline:
//  1. effective radii: skin added; solid mode (SSX) is HSX with thickness = radius;
//  2. bounds and the rounding pad (common/extent.cuh);
//  3. each body's natural level k: the smallest with 2 r + pad <= d0 2^k, d0 from the
//     smallest diameter (Algorithm 1 line 1); a histogram of levels (hsx/level_plan.cuh);
//  4. levels grouped on the host (hsx/group_plan.h): a level whose large bodies would walk
//     far more rim cells than it has small bodies is merged into the next (d only
//     grows, so every small-small pair still lies in the Moore neighbourhood); few
//     remaining bodies are finished by brute force (section 5.8);
//  5. bodies sorted by group once: the small set S of a level is a contiguous range and
//     the large set L the suffix after it (section 4, "indicator sequences and prefix
//     sums" partition, done as one sort with the cells: common/sorted_grid.cuh);
//  6. per level: counting-sort grid of S (4.1), small-small pairs (line 6), rim tasks of
//     L (4.3), count -> scan -> write (4.2), exact test (equation 3) on every candidate
//     (hsx/walks.cuh; hsx/search.cuh runs steps 2-6);
//  7. the pair keys sorted (BroadphaseOptions::sort_pairs): pairs come out sorted by
//     (i, j), whatever the backend.
//
// The dispatcher: find() picks the method's path; the paths live in brute/, hsx/ and
// solid_grids/, the buffers they share in pair_finder_state.cuh.
//
// This file is the host orchestration, compiled once for both precisions: the kernel
// families it calls (the levels, the sort into cells, the shell cells, the walks, all
// pairs, brute) are declared in pair_finder_state.cuh and pair_finder_families.cuh and
// compiled in their own files (broadphase/CMakeLists.txt).
#include <thrust/fill.h>
#include <thrust/scan.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>

#include "brute/brute_schedules.cuh"
#include "common/nvtx.h"
#include "hsx/search.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/device/pair_finder.cuh"
#include "pair_finder_state.cuh"

namespace nestsim::device {
namespace {

using detail::BodyArrays;
using detail::ensure_size;
using detail::for_each_index;
using detail::raw;

template <class Real>
struct EffectiveRadii {
  const Real* radius;
  const Real* thickness;
  Real* r_out;
  Real* q_out;
  Real skin;
  bool solid;
  NESTSIM_HD void operator()(uint32_t i) const {
    const Real r = radius[i] + skin;
    Real q = thickness[i] + skin + skin;
    if (solid || q > r) q = r;
    r_out[i] = r;
    q_out[i] = q;
  }
};

}  // namespace

template <class Real>
PairFinder<Real>::PairFinder(const BroadphaseOptions& options)
    : options_(options), state_(std::make_unique<State>()) {
  options_.validate();
  Space<Real>& s = state_->space;
  s.dim = options_.domain.dim;
  for (int a = 0; a < 3; ++a) {
    const bool wrap = options_.domain.periodic && a < s.dim;
    s.edge[a] = wrap ? Real(options_.domain.size[a]) : Real(0);
    s.inv_edge[a] = wrap ? Real(1) / s.edge[a] : Real(0);
  }
}

template <class Real>
PairFinder<Real>::~PairFinder() = default;
template <class Real>
PairFinder<Real>::PairFinder(PairFinder&&) noexcept = default;
template <class Real>
PairFinder<Real>& PairFinder<Real>::operator=(PairFinder&&) noexcept = default;

// The bodies as the search sees them: hollow bodies without a skin as they are
// (0 <= q <= r, the precondition: no copy); else each body's effective radius and
// thickness.
template <class Real>
BodyArrays<Real> effective_bodies(const BroadphaseOptions& o, const SphereView<Real>& bodies,
                                  thrust::device_vector<Real>& r_eff,
                                  thrust::device_vector<Real>& q_eff) {
  BodyArrays<Real> in;
  for (int a = 0; a < 3; ++a) in.pos[a] = bodies.pos[a];
  in.radius = bodies.radius;
  in.thickness = bodies.thickness;
  if (o.skin > 0 || o.overlap == Overlap::solid) {
    ensure_size(r_eff, bodies.n);
    ensure_size(q_eff, bodies.n);
    for_each_index(bodies.n, EffectiveRadii<Real>{bodies.radius, bodies.thickness, raw(r_eff),
                                                  raw(q_eff), Real(o.skin),
                                                  o.overlap == Overlap::solid});
    in.radius = raw(r_eff);
    in.thickness = raw(q_eff);
  }
  return in;
}

template <class Real>
uint64_t PairFinder<Real>::find(const SphereView<Real>& bodies, bool count_only) {
  State& s = *state_;
  s.pair_count = 0;
  s.count_only = count_only;
  s.fused = false;
  s.keys_sorted = true;  // until a method below leaves them in the order found
  s.tuning = options_.tuning;
  s.stage.set_poll(options_.tuning.device.readback_poll);
  const uint32_t n = bodies.n;
  s.n = n;
  if (n < 2) return 0;
  detail::Range range("broadphase/find");
  const BodyArrays<Real> in = effective_bodies(options_, bodies, s.r_eff, s.q_eff);
  const bool three = options_.domain.dim == 3;
  switch (options_.method) {
    case Method::brute:
      s.appending(n, [&] {
        if (three) s.template brute<3>(in, 0, n); else s.template brute<2>(in, 0, n);
      });
      return s.pair_count;  // rows in index order: already sorted
    case Method::brute_tiled:
    case Method::brute_balanced:
    case Method::brute_mapping:  // brute_schedules.cu; keys come out sorted
      s.pair_count = detail::brute_schedule_pairs(options_, in, s.space, n, count_only, s.keys,
                                                  s.pairwise);
      return s.pair_count;
    case Method::hsx:  // fused on both backends: the pairs are sorted afterwards
      s.fused = true;
      s.appending(n, [&] {
        if (three) s.template hsx<3>(options_, in, n); else s.template hsx<2>(options_, in, n);
      });
      break;
    case Method::grid_uniform:  // solid_grids.cu; keys unsorted
      s.pair_count = s.solid_grids.uniform(options_, in, n, s.space, count_only, s.keys);
      break;
    case Method::grid_aabb:
      s.pair_count = s.solid_grids.aabb(options_, in, n, s.space, count_only, s.keys);
      break;
  }
  s.keys_sorted = count_only;
  if (!count_only && options_.sort_pairs) {
    detail::Range sort_range("broadphase/sort pairs");
    s.sort_keys(n);
    s.keys_sorted = true;
  }
  return s.pair_count;
}

template <class Real>
void PairFinder<Real>::sort_keys() {
  State& s = *state_;
  if (s.keys_sorted) return;
  s.sort_keys(s.n);
  s.keys_sorted = true;
}

template <class Real>
const thrust::device_vector<uint64_t>& PairFinder<Real>::keys() const {
  return state_->keys;
}

template <class Real>
uint64_t PairFinder<Real>::pair_count() const {
  return state_->pair_count;
}


// Both directions of every pair, packed to 2 b bits (b = bits of n - 1) and sorted on
// those bits only (on CUDA 5 radix passes at n = 1e6, 6 at 1e7, instead of 8 for full
// 64-bit keys); the order of keys() does not matter (sort_pairs = false suffices). The
// rows' ends are marked where the sorted rows change and filled by a running maximum
// (no binary search per row).
template <class Real>
void PairFinder<Real>::neighbour_lists(uint32_t n, thrust::device_vector<uint64_t>& offsets,
                                      thrust::device_vector<uint32_t>& neighbours,
                                      thrust::device_vector<uint32_t>* rows, bool exact) const {
  State& s = *state_;
  const uint64_t p = s.pair_count;
  detail::Range range("broadphase/neighbour lists");
  const auto size = exact ? detail::resize_discard<thrust::device_vector<uint32_t>>
                          : detail::grow_discard<thrust::device_vector<uint32_t>>;
#if defined(NESTSIM_BACKEND_CUDA)
  // Few entries: counted into rows (common/counted_rows.cuh), the same lists.
  const DeviceTuning& t = options_.tuning.device;
  if (p > 0 && s.n <= n && s.counted_rows.takes(2 * p, t.list_count_max_entries, t.list_rank_max_row)) {
    detail::resize_discard(offsets, std::size_t(n) + 1);
    size(neighbours, 2 * p);
    if (rows) size(*rows, 2 * p);
    s.counted_rows.build(raw(s.keys), p, n, raw(offsets), raw(neighbours),
                         rows ? raw(*rows) : nullptr, s.alloc);
    return;
  }
#endif
  const int b = detail::radix_bits(std::max<uint32_t>(n, s.n));
  ensure_size(s.both, 2 * p);
  ensure_size(s.both_alt, 2 * p);
  for_each_index(p, pair_keys::PackBothWays{raw(s.keys), p, b, raw(s.both)});
  const uint64_t* sorted =
      p > 0 ? s.sort_packed(raw(s.both), raw(s.both_alt), 2 * p, 2 * b) : raw(s.both);
  detail::resize_discard(offsets, std::size_t(n) + 1);
  thrust::fill_n(detail::nosync(), offsets.begin(), std::size_t(n) + 1, uint64_t(0));
  size(neighbours, 2 * p);
  if (rows) size(*rows, 2 * p);
  for_each_index(2 * p, pair_keys::SplitRows{sorted, 2 * p, b, n, raw(offsets),
                                             raw(neighbours), rows ? raw(*rows) : nullptr});
  thrust::inclusive_scan(detail::policy(s.alloc), offsets.begin(), offsets.end(), offsets.begin(),
                         thrust::maximum<uint64_t>());
  // The sort's two buffers (16 bytes per entry) are kept for the next call, unless they
  // are large: then the caller's memory after the lists matters more than one cudaMalloc
  // per call (the simulator at 1e8 bodies; docs/performance.md, "List sort buffers
  // released when large").
  if (double(2 * sizeof(uint64_t) * s.both.size()) > options_.tuning.device.list_keep_bytes) {
    detail::release(s.both);
    detail::release(s.both_alt);
  }
}

template class PairFinder<float>;
template class PairFinder<double>;

}  // namespace nestsim::device

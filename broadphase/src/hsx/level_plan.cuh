// Algorithm 1 line 1 of the HSX paper and the natural levels: d0 from the smallest
// diameter, each body's level and the levels' histogram, per phase of the level base.
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/fill.h>

#include <algorithm>
#include <cstdint>

#include "common/buffers.cuh"
#include "common/extent.cuh"
#include "common/host_stage.cuh"
#include "common/loops.cuh"
#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/levels.h"

namespace nestsim::detail {

using nestsim::natural_level;  // nestsim/levels.h

constexpr int kLevels = 64;

// Level bases tried (docs/performance.md, "The level base chosen among phases"):
// d0 2^(j/4), j < 4 kOctaves. Any base >= the finest keeps HSX exact; the base moves every
// level's width, so where the group plan's first boundary falls, and with it the first
// group's cell width (the phase choose_level_base picks). The GPU histograms the first
// kPhases (one octave) in one pass; phase j + 4 is phase j with every level one lower
// (natural_level(D, 2 d) = max(0, natural_level(D, d) - 1), exactly: the same mantissa),
// so the host derives the higher octaves' histograms, which serve sparse scenes whose
// first group is level 0 (cells of one diameter, far below the spacing). The CPU backend
// has one phase per octave (tuning.h: the CPU tries phase 0 only unless told).
constexpr int kOctaves = 3;
#if defined(NESTSIM_BACKEND_CUDA)
constexpr int kPhases = 4;  // at most 4: level_histogram_kernel packs a byte per phase
#else
constexpr int kPhases = 1;
#endif
NESTSIM_HD constexpr double phase_scale(int j) {  // 2^(j/4), j < 4
  return j == 1   ? 1.189207115002721
         : j == 2 ? 1.4142135623730951
         : j == 3 ? 1.681792830507429
                  : 1.0;
}

// Algorithm 1 line 1 and the natural levels' histogram, as one record: on the GPU built
// on the device and read back once (each read-back stalls the host; docs/performance.md,
// "The level plan on the device, one read-back").
struct LevelPlan {
  detail::Extent bounds;
  double pad = 0;           // extent.cuh, rounding_pad
  double d0[kPhases] = {};  // level-0 cell width of each phase
  uint32_t histogram[kPhases][kLevels];
};

// The diameter a body of radius r is levelled by, padded for rounding: one rule for d0
// (plan_base, from the smallest radius) and every body's natural level (the histograms,
// Relevel), so that the smallest body is level 0.
NESTSIM_HD inline double padded_diameter(double r, double pad) { return 2.0 * r + pad; }

// d0 from the smallest diameter; never so fine that an axis would need more than 2^20
// cells.
template <class Real>
NESTSIM_HD inline void plan_base(LevelPlan& p, const detail::PadSpace& space) {
  p.pad = detail::rounding_pad<Real>(p.bounds, space);
  const double span = detail::space_span(p.bounds, space);
  double d0 = padded_diameter(p.bounds.rmin, p.pad);
  const double finest = (span + 2.0 * p.bounds.rmax) * 0x1p-20;
  d0 = finest > d0 ? finest : d0;
  d0 = d0 > 1e-300 ? d0 : 1e-300;
  for (int j = 0; j < kPhases; ++j) p.d0[j] = d0 * phase_scale(j);
}
#if !defined(NESTSIM_BACKEND_CUDA)
constexpr uint32_t kHistogramChunk = 256;

// Levels of a chunk of bodies, histogrammed locally then added with one atomic per bin.
template <class Real>
struct LevelHistogram {
  const Real* radius;
  uint32_t n;
  double d0, pad;
  uint8_t* level;
  uint32_t* histogram;
  NESTSIM_HD void operator()(uint32_t chunk) const {
    uint32_t local[kLevels];
    for (int k = 0; k < kLevels; ++k) local[k] = 0;
    const uint32_t first = chunk * kHistogramChunk;
    const uint32_t last = first + kHistogramChunk < n ? first + kHistogramChunk : n;
    for (uint32_t i = first; i < last; ++i) {
      const int k = natural_level(padded_diameter(double(radius[i]), pad), d0);
      level[i] = static_cast<uint8_t>(k);
      ++local[k];
    }
    for (int k = 0; k < kLevels; ++k)
      if (local[k]) atomic_fetch_add(&histogram[k], local[k]);
  }
};

#else
// The same on the GPU: the extent's last block (extent.cuh, extent_async) plans
// the base (plan_base) on the device; then one thread per body, a shared histogram per
// block (peers with the same level add once, __match_any_sync), one global atomic per
// bin and block, into the plan, which the host reads back once: the histogram's last
// block (a ticket counter, `done`, zero before and after) copies the plan into the
// host's mapped buffer and sets the flag the host polls (HostStage::mapped_back; no copy
// kernel of its own), unless `mapped` is null (the read-backs do not poll).

template <class Real>
struct FinishLevelPlan {
  detail::PadSpace space;
  LevelPlan* plan;
  // Every thread of the extent's last block: the histograms zeroed (by the whole block:
  // one thread's serial loop would be the launch's tail).
  __device__ void share(unsigned thread, unsigned threads) const {
    for (unsigned k = thread; k < unsigned(kPhases * kLevels); k += threads)
      plan->histogram[k / kLevels][k % kLevels] = 0;
  }
  __device__ void operator()(const detail::Extent& total) const {
    plan->bounds = total;
    plan_base<Real>(*plan, space);
  }
};

template <class Real>
__global__ void level_histogram_kernel(const Real* radius, uint32_t n, LevelPlan* plan,
                                       uint8_t* level, unsigned* done, LevelPlan* mapped,
                                       volatile unsigned* flag, unsigned seq) {
  __shared__ uint32_t local[kPhases * kLevels];
  for (int k = threadIdx.x; k < kPhases * kLevels; k += blockDim.x) local[k] = 0;
  __syncthreads();
  double d0[kPhases];
  for (int j = 0; j < kPhases; ++j) d0[j] = plan->d0[j];
  const double pad = plan->pad;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double diameter = padded_diameter(double(radius[i]), pad);
    static_assert(kPhases <= 4 && kLevels <= 256, "a byte per phase in one 32-bit key");
    const unsigned active = __activemask();
    // The body's level in each phase, a byte each (levels < 64): one match finds the
    // lanes with the same levels in all phases (fewer matches than one per phase).
    int k[kPhases];
    unsigned levels = 0;
#pragma unroll
    for (int j = 0; j < kPhases; ++j) {
      k[j] = natural_level(diameter, d0[j]);
      levels |= unsigned(k[j]) << (8 * j);
    }
    level[i] = static_cast<uint8_t>(k[0]);  // Relevel if another phase is chosen
    const unsigned peers = __match_any_sync(active, levels);
    if (int(threadIdx.x & 31u) == __ffs(peers) - 1) {
#pragma unroll
      for (int j = 0; j < kPhases; ++j)
        atomicAdd(&local[j * kLevels + k[j]], unsigned(__popc(peers)));
    }
  }
  __syncthreads();
  for (int k = threadIdx.x; k < kPhases * kLevels; k += blockDim.x)
    if (local[k]) atomicAdd(&plan->histogram[k / kLevels][k % kLevels], local[k]);
  if (!mapped || !detail::last_block(done)) return;  // mapped: the same for every block
  // Every block's bins are in: the plan into the mapped buffer, then the flag.
  detail::publish_mapped(reinterpret_cast<const unsigned char*>(plan),
                         reinterpret_cast<unsigned char*>(mapped), sizeof(LevelPlan), flag, seq);
}
#endif

// The natural levels again, for the phase chosen when it is not the first.
template <class Real>
struct Relevel {
  const Real* radius;
  double pad, d0;
  uint8_t* level;
  NESTSIM_HD void operator()(uint32_t i) const {
    level[i] = static_cast<uint8_t>(natural_level(padded_diameter(double(radius[i]), pad), d0));
  }
};

// The level plan of a find() and the buffers it keeps across calls.
template <class Real>
struct LevelPlanner {
  thrust::device_vector<uint8_t> natural;          // each body's natural level
  thrust::device_vector<uint32_t> histogram;       // CPU backend
  thrust::device_vector<LevelPlan> level_plan;     // CUDA backend
  thrust::device_vector<unsigned> histogram_done;  // level_histogram_kernel's ticket counter
  thrust::device_vector<Extent> extent_scratch;
  thrust::device_vector<unsigned> extent_done;  // extent_async's ticket counter

  // The bounds of the bodies, the pad, d0, each body's natural level (in `natural`)
  // and the levels' histogram: on the GPU with one read-back, else as it reads.
  template <class Alloc>
  LevelPlan plan_levels(const BodyArrays<Real>& in, uint32_t n, const PadSpace& space,
                        HostStage& stage, Alloc& alloc) {
    ensure_size(natural, n);
    LevelPlan plan;
#if defined(NESTSIM_BACKEND_CUDA)
    (void)alloc;
    ensure_size(level_plan, 1);
    extent_async(in, n, space.dim, extent_scratch, extent_done,
                 FinishLevelPlan<Real>{space, raw(level_plan)});
    const uint32_t threads = 256;
    const uint32_t grid = std::min<uint32_t>((n + threads - 1) / threads, 2048);
    if (histogram_done.empty()) histogram_done.assign(1, 0u);
    HostStage::Mapped back;
    if (stage.polls()) back = stage.mapped_back(sizeof(LevelPlan));
    level_histogram_kernel<Real>
        <<<grid, threads>>>(in.radius, n, raw(level_plan), raw(natural), raw(histogram_done),
                            static_cast<LevelPlan*>(back.dst), back.flag, back.seq);
    NESTSIM_CUDA_CHECK(cudaGetLastError());
    if (back.dst)
      stage.wait_mapped(back, 1, &plan);
    else
      stage.to_host(level_plan, 1, &plan);
#else
    (void)stage;
    plan.bounds = extent_of<Real>(policy(alloc), in, n, space.dim);
    plan_base<Real>(plan, space);
    ensure_size(histogram, kLevels);
    thrust::fill_n(nosync(), histogram.begin(), kLevels, 0u);
    const uint32_t chunks = (n + kHistogramChunk - 1) / kHistogramChunk;
    for_each_index(chunks, LevelHistogram<Real>{in.radius, n, plan.d0[0], plan.pad, raw(natural),
                                                raw(histogram)});
    thrust::copy_n(histogram.begin(), kLevels, plan.histogram[0]);
#endif
    return plan;
  }
};

}  // namespace nestsim::detail

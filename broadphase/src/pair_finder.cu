// The device broad phase: HSX (Algorithm 1 of the HSX paper, Köster, Perumalla,
// Uhrmacher: "Efficient Simulation of Nested Hollow Sphere Intersections for Dynamically
// Nested Compartmental Models in Cell Biology", sections 3-4; docs/design.md) and the
// brute-force reference.
//
// find() in outline:
//  1. effective radii: skin added; solid mode (SSX) is HSX with thickness = radius;
//  2. bounds and the rounding pad;
//  3. each body's natural level k: the smallest with 2 r + pad <= d0 2^k, d0 from the
//     smallest diameter (Algorithm 1 line 1); a histogram of levels;
//  4. levels grouped on the host (plan_groups): a level whose large bodies would walk
//     far more rim cells than it has small bodies is merged into the next (d only
//     grows, so every small-small pair still lies in the Moore neighbourhood); few
//     remaining bodies are finished by brute force (section 5.8);
//  5. bodies sorted by group once: the small set S of a level is a contiguous range and
//     the large set L the suffix after it (section 4, "indicator sequences and prefix
//     sums" partition, done as one stable sort);
//  6. per level: counting-sort grid of S (4.1), small-small pairs (line 6), rim tasks of
//     L (4.3), count -> scan -> write (4.2), exact test (equation 3) on every candidate;
//  7. the pair keys sorted (BroadphaseOptions::sort_pairs): pairs come out sorted by
//     (i, j), whatever the backend.
//
// One compile per precision and dimension, so that the build runs the four in parallel
// (this file is the CUDA build's longest; broadphase/CMakeLists.txt):
// NESTSIM_PAIR_FINDER_REAL float (default) or double; NESTSIM_PAIR_FINDER_DIM 3
// (default: the class, with its 3D search) or 2 (only the 2D search, State::hsx<2>,
// which the class's compile then leaves to it).
#if !defined(NESTSIM_PAIR_FINDER_REAL)
#define NESTSIM_PAIR_FINDER_REAL float
#endif
#if !defined(NESTSIM_PAIR_FINDER_DIM)
#define NESTSIM_PAIR_FINDER_DIM 3
#endif
#include <thrust/functional.h>
#if defined(NESTSIM_BACKEND_CUDA)
#include <cub/device/device_radix_sort.cuh>
#endif
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "brute_schedules.cuh"
#include "device_util.cuh"
#include "nestsim/levels.h"
#include "nestsim/device/exec.cuh"
#include "kernels.cuh"
#include "nestsim/device/pair_finder.cuh"
#include "solid_grids.cuh"

namespace nestsim::device {
namespace {

using detail::BodyArrays;
using detail::GridSpec;
using detail::LevelToGroup;
using detail::PairSink;
using detail::ensure_size;
using detail::for_each_index;
using detail::raw;
using detail::scan_counts;

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

using nestsim::natural_level;  // nestsim/levels.h

constexpr int kLevels = 64;

// Level bases tried (docs/perf-log.md, "the level base chosen among four phases"):
// d0 2^(j/4), j < 4 kOctaves. Any base >= the finest keeps HSX exact; the base moves every
// level's width, so where the group plan's first boundary falls, and with it the first
// group's cell width (the phase choose_level_base picks). The GPU histograms the first
// kPhases (one octave) in one pass; phase j + 4 is phase j with every level one lower
// (natural_level(D, 2 d) = max(0, natural_level(D, d) - 1), exactly: the same mantissa),
// so the host derives the higher octaves' histograms, which serve sparse scenes whose
// first group is level 0 (cells of one diameter, far below the spacing). The CPU backend
// has one phase per octave and keeps phase 0 unless told (its costs are not measured).
// The same for the cells' growth in sparse scenes (kCellGrowMax below: 4x at most on the
// GPU) and their shrinking in dense ones (kCellShrinkMax: to a quarter at most): none on
// the CPU unless told.
constexpr int kOctaves = 3;
#if defined(NESTSIM_BACKEND_CUDA)
constexpr int kPhases = 4;  // at most 4: level_histogram_kernel packs a byte per phase
constexpr int kDefaultPhasesTried = kPhases * kOctaves;
constexpr int kDefaultCellGrowMax = 8;
constexpr int kDefaultCellShrinkMax = 8;
#else
constexpr int kPhases = 1;
constexpr int kDefaultPhasesTried = 1;
constexpr int kDefaultCellGrowMax = 0;
constexpr int kDefaultCellShrinkMax = 0;
#endif
NESTSIM_HD constexpr double phase_scale(int j) {  // 2^(j/4), j < 4
  return j == 1 ? 1.189207115002721 : j == 2 ? 1.4142135623730951 : j == 3 ? 1.681792830507429 : 1.0;
}

// Algorithm 1 line 1 and the natural levels' histogram, as one record: on the GPU built
// on the device and read back once (each read-back stalls the host; docs/perf-log.md,
// "the level plan on the device, one read-back").
struct LevelPlan {
  detail::Extent bounds;
  double pad = 0;          // device_util.cuh, rounding_pad
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
// The same on the GPU: the extent's last block (device_util.cuh, extent_async) plans
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
      for (int j = 0; j < kPhases; ++j) atomicAdd(&local[j * kLevels + k[j]], unsigned(__popc(peers)));
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

#if defined(NESTSIM_BACKEND_CUDA)
// All pairs on the GPU in tiles, the N-body pattern: a block of kTile threads takes
// rows [I kTile, (I + 1) kTile) against columns [J kTile, ...) held in shared memory,
// I <= J, every thread reading the same column at once (a broadcast); diagonal tiles
// test only t > row. Block k -> tile pair (I, J) by the gpu-mapping-function seed's
// square-root mapping (pair_mapping.h) over tiles + 1 indices, J = b - 1. Pairs through
// the fused sink (kernels.cuh, run_pair_step).
constexpr uint32_t kTile = 128;

template <class Real, int Dim>
struct TileRow {
  const detail::PackedBody<Real>* column;
  const Real* column_q;
  Space<Real> space;
  Real p[3], r, q;
  uint32_t row, first_column, t0, count;
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t, Emitter& e) const {
    for (uint32_t t = t0; t < count; ++t) {
      const detail::PackedBody<Real> b = column[t];
      const Real pb[3] = {b.x, b.y, b.z};
      if (detail::exact_pair(space, p, r, q, pb, b.r, column_q[t])) e.emit(row, first_column + t);
    }
  }
};

template <class Real, int Dim>
__global__ void __launch_bounds__(kTile)
    all_pairs_tiles_kernel(BodyArrays<Real> bodies, Space<Real> space, uint32_t n, uint32_t tiles,
                           uint64_t tile_pairs, PairSink sink) {
  __shared__ detail::PackedBody<Real> column[kTile];
  __shared__ Real column_q[kTile];
  for (uint64_t k = blockIdx.x; k < tile_pairs; k += gridDim.x) {
    uint32_t I = 0, J = 0;
    pair_from_index(k, tiles + 1, I, J);
    --J;
    const uint32_t c = J * kTile + threadIdx.x;
    __syncthreads();  // the previous tile is read
    if (c < n) {
      Real pc[3] = {0, 0, 0};
      bodies.load(c, Dim, pc);
      column[threadIdx.x] = detail::PackedBody<Real>{pc[0], pc[1], pc[2], bodies.radius[c]};
      column_q[threadIdx.x] = bodies.thickness[c];
    }
    __syncthreads();
    const uint32_t i = I * kTile + threadIdx.x;
    if (i >= n) continue;
    TileRow<Real, Dim> row{column, column_q, space, {0, 0, 0}, bodies.radius[i],
                           bodies.thickness[i], i, J * kTile, I == J ? threadIdx.x + 1 : 0,
                           n - J * kTile < kTile ? n - J * kTile : kTile};
    bodies.load(i, Dim, row.p);
    detail::run_pair_step<false>(row, 0u, sink);
  }
}

template <class Real, int Dim>
void all_pairs_tiles(const BodyArrays<Real>& bodies, const Space<Real>& space, uint32_t n,
                     unsigned long long* total, uint64_t* out, uint64_t capacity) {
  const uint32_t tiles = (n + kTile - 1) / kTile;
  const uint64_t tile_pairs = uint64_t(tiles) * (tiles + 1) / 2;
  PairSink sink;
  sink.out = out;
  sink.total = total;
  sink.capacity = capacity;
  const uint32_t blocks = uint32_t(std::min<uint64_t>(tile_pairs, uint64_t(1) << 30));
  all_pairs_tiles_kernel<Real, Dim><<<blocks, kTile>>>(bodies, space, n, tiles, tile_pairs, sink);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}
#endif

}  // namespace

// The pair keys' packing for their sort and the neighbour lists: in a named namespace,
// since the 2D-only compile references none of them (nvcc warns about unreferenced
// functions of internal linkage).
namespace pair_keys {
struct PackKey {
  int bits;
  NESTSIM_HD uint64_t operator()(uint64_t key) const {
    return (uint64_t(device::pair_first(key)) << bits) | device::pair_second(key);
  }
};
struct UnpackKey {
  int bits;
  NESTSIM_HD uint64_t operator()(uint64_t packed) const {
    return ((packed >> bits) << 32) | (packed & ((uint64_t(1) << bits) - 1));
  }
};
}  // namespace pair_keys

namespace {

struct MaxOf {
  NESTSIM_HD uint64_t operator()(uint64_t a, uint64_t b) const { return a > b ? a : b; }
};

struct AddTotal {
  uint64_t* total;
  const uint64_t* add;
  NESTSIM_HD void operator()(int) const { *total += *add; }
};

// One group of levels: bodies [begin, end) in group order are its small set.
struct Group {
  int top_level;  // its cell width is d0 * 2^top_level
  uint32_t begin, end;
  bool brute;     // brute force over [begin, n): the last few large bodies
};

// Rim cells a large body walks per small body before its level is merged upwards: on
// the H100 2 (with all groups sharing one sort and one pair pass, 1 is 1-13% slower at
// phi 0.3 and equal at phi 0.1); on 2 CPU cores 0.25 (1 costs a third more at 1e6, phi
// 0.1). docs/perf-log.md, "level planning factor" and "all groups of levels in one
// counting sort".
// Both can be overridden for tuning experiments: NESTSIM_HSX_RIM_PER_SMALL,
// NESTSIM_HSX_BRUTE_REMAINDER (docs/perf-log.md).
double env_or(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : fallback;
}
#if defined(NESTSIM_BACKEND_CUDA)
const double kRimPerSmall = env_or("NESTSIM_HSX_RIM_PER_SMALL", 2.0);
#else
const double kRimPerSmall = env_or("NESTSIM_HSX_RIM_PER_SMALL", 0.25);
#endif
// Work per large-body task (grid.cuh, TaskSize); NESTSIM_HSX_COLUMNS_PER_TASK and
// NESTSIM_HSX_DIRECT_CHUNK override them for tuning. On the H100 4 columns per task (a
// task steps from column to column without a division), 8 from kWideTaskBodies bodies on
// (task_size_for); docs/perf-log.md, "records, bounded launches" and "8 columns per
// large task".
uint32_t env_count(const char* name, uint32_t fallback) {
  return std::max<uint32_t>(1, uint32_t(env_or(name, fallback)));
}
#if defined(NESTSIM_BACKEND_CUDA)
const detail::TaskSize kTaskSize{env_count("NESTSIM_HSX_DIRECT_CHUNK", 32),
                                 env_count("NESTSIM_HSX_COLUMNS_PER_TASK", 4)};
// From this many bodies in a find the GPU's large tasks take 8 columns each, not 4
// (H100, exponential scenes: 8 is 0-2% faster at 1e7 in three calls, within +-3% at 1e6,
// but 5-40% slower at 1e5-3e5, where 4's twice as many tasks fill the GPU better;
// docs/perf-log.md, "8 columns per large task from 6e5 bodies").
constexpr uint32_t kWideTaskBodies = 600000;
constexpr double kWideTaskColumns = 8;
#else
const detail::TaskSize kTaskSize{env_count("NESTSIM_HSX_DIRECT_CHUNK", 128),
                                 env_count("NESTSIM_HSX_COLUMNS_PER_TASK", 8)};
#endif
// The task size of a group whose ns members fill `cells` cells (docs/perf-log.md, "task
// size per group").
// On the GPU, kTaskSize.columns was measured where cells hold about half a body (the
// exponential scenes at phi 0.1-0.3, 0.46-0.59 members per cell); in crowded grids
// (volume fraction 1-3: 4-13 members per cell) a column holds that many times more
// candidates and the few large bodies' tasks become a long tail (3e4 bodies, phi 3:
// 0.91 ms with 4 columns per task, 0.62 with 1). So the columns per task shrink with
// the occupancy: most * 0.7 / (ns / cells), at most `most` (below 0.7 members per
// cell: the exponential scenes keep theirs), at least 1, where `most` is
// kTaskSize.columns, or kWideTaskColumns from kWideTaskBodies bodies in the find (n)
// on. The CPU has no tail to hide (each thread takes many tasks) and keeps kTaskSize.
detail::TaskSize task_size_for(double ns, double cells, uint32_t n) {
  detail::TaskSize size = kTaskSize;
#if defined(NESTSIM_BACKEND_CUDA)
  static const bool forced = std::getenv("NESTSIM_HSX_COLUMNS_PER_TASK") != nullptr;
  if (!forced) {
    const double most = n >= kWideTaskBodies ? kWideTaskColumns : double(kTaskSize.columns);
    const double per_cell = ns / std::max(cells, 1.0);
    const double columns = std::floor(most * 0.7 / std::max(per_cell, 1e-9));
    size.columns = uint32_t(std::clamp(columns, 1.0, most));
  }
#else
  (void)ns;
  (void)cells;
  (void)n;
#endif
  return size;
}
// Resident blocks of 256 threads per SM asked of the fused pair steps on the GPU
// (device_util.cuh, for_each_bounded; docs/perf-log.md, "records, bounded launches").
// Built with -DNESTSIM_TUNE_LAUNCH, NESTSIM_PAIR_MIN_BLOCKS picks 0 (thrust's loop), 3,
// 4, 5 or 6.
constexpr int kPairMinBlocks = 4;
template <class F, class Index>
void launch_pair_step(Index n, F f) {
#if defined(NESTSIM_TUNE_LAUNCH)
  static const int blocks = int(env_or("NESTSIM_PAIR_MIN_BLOCKS", kPairMinBlocks));
  switch (blocks) {
    case 0: detail::for_each_index(n, f); return;
    case 3: detail::for_each_bounded<3>(n, f); return;
    case 5: detail::for_each_bounded<5>(n, f); return;
    case 6: detail::for_each_bounded<6>(n, f); return;
    default: break;
  }
#endif
  detail::for_each_bounded<kPairMinBlocks>(n, f);
}

#if defined(NESTSIM_BACKEND_CUDA)
// Threads per block of warp_tested_items: 256 as for_each_bounded, 128 for double
// bodies, whose WarpShared would exceed the 48 KB of static shared memory of a block
// (the same warps per SM: twice the blocks).
template <class Real>
constexpr uint32_t kWarpBlockThreads = sizeof(Real) == 4 ? detail::kBoundedThreads
                                                         : detail::kBoundedThreads / 2;
// Resident blocks of 256 threads per SM asked of warp_tested_items (the register
// budget: 65536 / (256 k)); -DNESTSIM_WALK_MIN_BLOCKS=k overrides it for tuning
// (2, 3 and 5 are slower than 4 on the H100; docs/perf-log.md, "the walks' occupancy").
#if defined(NESTSIM_WALK_MIN_BLOCKS)
constexpr int kWalkMinBlocks = NESTSIM_WALK_MIN_BLOCKS;
#else
constexpr int kWalkMinBlocks = kPairMinBlocks;
#endif

// The fused pair pass of the HSX walks with the warp sharing its work (kernels.cuh,
// WarpRanges; docs/perf-log.md, "each warp's candidates tested by all its lanes" and "the
// warp walks its lanes' columns together"): each lane plans its item's walk; the columns
// of dense windows (`defer`) are numbered across the warp and each lane walks every 32nd
// of them (walk_warp_column); the bucket ranges kept on the way are numbered likewise and
// each lane tests every 32nd candidate against its owner's fields.
template <class Real, class Step, class Index>
__global__ void __launch_bounds__(kWarpBlockThreads<Real>,
                                  kWalkMinBlocks * detail::kBoundedThreads / kWarpBlockThreads<Real>)
    warp_tested_items(Index n, Step step, uint32_t slots, bool defer) {
  __shared__ detail::WarpShared<Real> shared[kWarpBlockThreads<Real> / 32];
  detail::WarpShared<Real>& w = shared[threadIdx.x >> 5];
  const Index i = Index(blockIdx.x) * kWarpBlockThreads<Real> + Index(threadIdx.x);
  const detail::AtomicEmitter e{step.sink};
  detail::WarpRanges<Real> ranges{&w, threadIdx.x & 31u, slots};
  ranges.defer = defer;
  if (i < n) step.walk_with(i, e, ranges);
  if (defer) {
    const uint32_t lane = detail::lane_now(0);  // read again: not kept live across the walk
    const uint32_t columns = ranges.columns;
    const uint32_t end = detail::warp_inclusive_sum(columns, lane);
    const uint32_t total = __shfl_sync(0xffffffffu, end, 31);
    if (total > 0) {
      w.offset[lane] = end - columns;
      __syncwarp();
      // Column j belongs to the last lane whose offset is <= j.
      for (uint32_t j = lane; j < total; j += 32) {
        const uint32_t l = detail::warp_lane_of(w.offset, j);
        detail::walk_warp_column<Real, Step::dim>(step.v.s, step.v.space, w, ranges, e, l,
                                                  j - w.offset[l]);
      }
      __syncwarp();  // the offsets are numbered again below
    }
  }
  const uint32_t lane = detail::lane_now(0);
  const uint32_t end = detail::warp_inclusive_sum(ranges.sum, lane);
  const uint32_t total = __shfl_sync(0xffffffffu, end, 31);
  w.offset[lane] = end - ranges.sum;
  __syncwarp();
  for (uint32_t j = lane; j < total; j += 32) {
    uint32_t owner = 0;
    const uint32_t t = detail::warp_candidate(w, j, owner);
    detail::test_for_owner(step.v.s, step.v.space, w.owner[owner], t, e);
  }
}

// NESTSIM_HSX_WARP_TESTS=0: each lane tests its own candidates (the per-lane pass).
// NESTSIM_HSX_WARP_SLOTS: ranges a lane keeps (1..kWarpSlots; fewer make the lanes test
// more ranges themselves: the tests' overflow case).
// NESTSIM_HSX_WARP_COLUMNS=0: each lane walks its own window's columns (the per-lane
// column walk).
const bool kWarpTests = env_or("NESTSIM_HSX_WARP_TESTS", 1) != 0;
const uint32_t kWarpSlotsUsed = uint32_t(
    std::clamp(env_or("NESTSIM_HSX_WARP_SLOTS", detail::kWarpSlots), 0.0, double(detail::kWarpSlots)));
const bool kWarpColumns = env_or("NESTSIM_HSX_WARP_COLUMNS", 1) != 0;

template <class Real, class Step, class Index>
void launch_warp_tested(Index n, const Step& step, cudaStream_t stream) {
  constexpr uint32_t threads = kWarpBlockThreads<Real>;
  const uint64_t blocks = (uint64_t(n) + threads - 1) / threads;
  if (blocks >= (uint64_t(1) << 31))
    throw std::length_error("nestsim: too many items for one launch");
  warp_tested_items<Real><<<unsigned(blocks), threads, 0, stream>>>(n, step, kWarpSlotsUsed,
                                                                     kWarpColumns);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}

#endif

#if !defined(NESTSIM_BACKEND_CUDA)
// The fused pair pass on the CPU (20-28% faster on 2 cores; docs/perf-log.md, "the CPU's
// fused pair pass"): instead of count -> scan -> write, which walks every item that has
// pairs twice, chunks of items walk once into a vector of their own and append it after
// the running total with one atomic add per chunk (GPU: one per warp, kernels.cuh,
// run_pair_step). Places depend on timing; HSX sorts the pairs afterwards.
constexpr uint64_t kFusedChunk = 512;

struct VectorEmitter {
  std::vector<uint64_t>& pairs;
  void emit(uint32_t a, uint32_t b) { pairs.push_back(device::pair_key(a, b)); }
};

template <class Step, class Index>
struct FusedChunk {
  Step step;
  Index items;
  PairSink sink;
  void operator()(uint64_t chunk) const {
    thread_local std::vector<uint64_t> pairs;  // one per thread, kept across chunks and calls
    pairs.clear();
    VectorEmitter e{pairs};
    const uint64_t first = chunk * kFusedChunk;
    const uint64_t last = std::min<uint64_t>(first + kFusedChunk, uint64_t(items));
    for (uint64_t i = first; i < last; ++i) step.walk(Index(i), e);
    if (pairs.empty()) return;
    const uint64_t place = detail::reserve_places(sink.total, pairs.size());
    for (std::size_t k = 0; k < pairs.size() && place + k < sink.capacity; ++k)
      sink.out[place + k] = pairs[k];
  }
};
#endif

// From this many large items on, the large-small tasks find their item in a table
// (kernels.cuh, MarkTaskOwners: three more launches) rather than by a binary search of
// log2(items) dependent loads each (docs/perf-log.md, "task owners": on the H100 2% at
// 1e7 bodies, phi 0.3, and within the noise at 1e6, where items are 8e4-2e5; on 2 CPU
// cores 2-3% slower at 1e6, phi 0.1: there the search's loads hit the cache and each
// thread takes many tasks, so the CPU never builds the table).
// NESTSIM_HSX_TASK_OWNERS_MIN_ITEMS overrides it (0: always).
#if defined(NESTSIM_BACKEND_CUDA)
const double kTaskOwnersMinItems = env_or("NESTSIM_HSX_TASK_OWNERS_MIN_ITEMS", 65536);
#else
const double kTaskOwnersMinItems = env_or("NESTSIM_HSX_TASK_OWNERS_MIN_ITEMS", 1e300);
#endif

// The large items' work (tasks, scans, owners, walk) on a side stream beside the
// small-small walk (GPU, with the warp's tests; docs/perf-log.md, "the large bodies' work
// beside the small-small walk").
// NESTSIM_HSX_LARGE_BESIDE=0: after it, on the default stream (the tests' variant).
const bool kLargeBeside = env_or("NESTSIM_HSX_LARGE_BESIDE", 1) != 0;
// The radix sort's bucket table built on the side stream beside the records' gather (GPU;
// docs/perf-log.md, "the bucket table beside the gather"). NESTSIM_HSX_TABLE_BESIDE=0:
// after it.
const bool kTableBeside = env_or("NESTSIM_HSX_TABLE_BESIDE", 1) != 0;

// Small-small pairs from the larger member (kernels.cuh, GroupSmallPairs) in groups whose
// members' radii span at least this many levels and that hold at most one member per cell
// (docs/perf-log.md, "the larger-side rule"): there a member's window shrinks with its
// own radius to fewer cells. A group of one level, or of crowded cells (where a cell
// visit costs the same whatever the window, and the concentric shells share one cell),
// keeps the row skip of the sorted-order rule. 0: never. NESTSIM_HSX_LARGER_SIDE_LEVELS
// overrides it. NESTSIM_HSX_LARGER_SIDE_PER_CELL overrides the occupancy bound (the tests
// lift it).
const int kLargerSideLevels = int(env_or("NESTSIM_HSX_LARGER_SIDE_LEVELS", 2));
const double kLargerSideMaxPerCell = env_or("NESTSIM_HSX_LARGER_SIDE_PER_CELL", 1.0);

// Remaining bodies finished by brute force.
const uint32_t kBruteRemainder = uint32_t(env_or("NESTSIM_HSX_BRUTE_REMAINDER", 128));

// neighbor_lists() keeps its sort's two buffers for the next call while they hold at
// most this many bytes (2 GiB: 6.7e7 pairs), and frees them after each call above.
// NESTSIM_LIST_KEEP_BYTES=0: freed after every call (a test variant takes that path).
const double kKeepListBuffersBytes = env_or("NESTSIM_LIST_KEEP_BYTES", double(uint64_t(1) << 31));

// HSX over at most this many bodies tests all pairs (BroadphaseOptions::hsx_small_n):
// the measured crossover on the H100 (the grid path costs ~0.3 ms at 2e4-3e4 bodies, the
// tiled all-pairs pass 0.16 ms at 1e4, 0.42 at 2e4; docs/perf-log.md, "all pairs for
// small n").
#if defined(NESTSIM_BACKEND_CUDA)
const double kSmallN = env_or("NESTSIM_HSX_SMALL_N", 15000);
#else
const double kSmallN = env_or("NESTSIM_HSX_SMALL_N", 256);
#endif
bool all_pairs_for(const BroadphaseOptions& options, uint32_t n) {
  const double limit = options.hsx_small_n >= 0 ? double(options.hsx_small_n) : kSmallN;
  return double(n) <= limit;
}

// Crowded cells. ns bodies in `cells` cells share a cell in at least ns (ns / cells - 1)
// / 2 pairs (Cauchy-Schwarz: the sum of squared occupancies is at least ns^2 / cells),
// and the small-pair pass tests each of them. When that lower bound, times the grid's
// cost per candidate relative to one test of the all-pairs pass, exceeds the
// n (n - 1) / 2 tests of the all-pairs pass, the grid cannot win: concentric shells,
// whose centres all fall in one cell of the top group (docs/perf-log.md, "crowded cells
// -> all pairs"). Only in the automatic mode (hsx_small_n = -1);
// NESTSIM_HSX_GRID_TEST_COST overrides the cost ratio.
#if defined(NESTSIM_BACKEND_CUDA)
const double kGridTestCost = env_or("NESTSIM_HSX_GRID_TEST_COST", 2.0);
#else
const double kGridTestCost = env_or("NESTSIM_HSX_GRID_TEST_COST", 1.0);
#endif

// Cell width of a group's grid relative to its top diameter d: the small-pair windows and
// the rim walks search cells of this width; members' radii stay bounded by d / 2 whatever
// the cells. NESTSIM_HSX_CELL_FRACTION overrides it.
const double kCellFraction = std::max(1.0 / 64, env_or("NESTSIM_HSX_CELL_FRACTION", 1.0));

// The host's part of find() between two GPU phases (the GPU waits for it): the rim
// estimate of every level in one pass, not a sum of pow() terms per candidate top
// (those cost 10-15 us per find; docs/perf-log.md, "the host's plan").
// rim[t] = sum over b > t of histogram[b] growth^(b - t)
//        = growth (histogram[t + 1] + rim[t + 1]); rest[t] the bodies above t.
// The groups go to out[0, count), count returned; at most `limit` of them (each group
// takes at least one level, the brute-force remainder one more: kMaxGroups serve all).
constexpr int kMaxGroups = kLevels + 1;
int plan_groups(const uint32_t* histogram, int dim, uint32_t n, Group* out, int limit) {
  const double growth = dim == 3 ? 4.0 : 2.0;  // rim cells per level step down
  double rim[kLevels];
  uint64_t rest[kLevels];
  rim[kLevels - 1] = 0;
  rest[kLevels - 1] = 0;
  for (int t = kLevels - 2; t >= 0; --t) {
    rest[t] = rest[t + 1] + histogram[t + 1];
    rim[t] = growth * (double(histogram[t + 1]) + rim[t + 1]);
  }
  int count = 0;
  uint32_t begin = 0;
  int k = 0;
  while (begin < n && count < limit) {
    if (n - begin <= kBruteRemainder && count > 0) {
      out[count++] = {k, begin, n, true};
      break;
    }
    uint64_t members = 0;
    int top = k;
    for (; top < kLevels; ++top) {
      members += histogram[top];
      if (members == 0) continue;
      if (rest[top] == 0 || rim[top] <= kRimPerSmall * double(members)) break;
    }
    if (top >= kLevels) top = kLevels - 1;
    out[count++] = {top, begin, begin + uint32_t(members), false};
    begin += uint32_t(members);
    k = top + 1;
  }
  return count;
}

// The first group's cell width over its members' mean spacing (the side of the centres'
// box per member) that the level base aims at (on the H100, from 1e6 to 1e7 bodies at
// volume fractions 0.1 and 0.3, the phase closest to 0.88 is the fastest of the four in
// each of ten scenes; 2e6 and 5e6 gain 7-16%, 1e6 and 1e7 0-5%; docs/perf-log.md, "the
// level base chosen among four phases").
// Finer cells cost large items and table cells, coarser ones candidates per body.
// NESTSIM_HSX_CELL_SPACING overrides it; 0 keeps phase 0 (d0 from the smallest diameter,
// as Algorithm 1 line 1). Below kPhaseMinN bodies phase 0 serves: at 1e5 the find is
// launch-bound and the phase picked is 5-7% slower than phase 0 at phi 0.1 (the relevel a
// launch more), at 3e5 already 2-5% faster (NESTSIM_HSX_PHASE_MIN_N overrides it).
// NESTSIM_HSX_LEVEL_PHASE=j forces phase j (< kPhases kOctaves; tests/CMakeLists.txt);
// NESTSIM_HSX_PHASES=m considers only the first m (for A/B measurements).
const double kCellSpacing = env_or("NESTSIM_HSX_CELL_SPACING", 0.88);
const double kPhaseMinN = env_or("NESTSIM_HSX_PHASE_MIN_N", 2.5e5);
const int kForcedPhase = int(env_or("NESTSIM_HSX_LEVEL_PHASE", -1));
// Where even the best phase leaves the first group's cells finer than that (sparse
// scenes: at volume fraction 0.01-0.03 the group plan's cells are 0.4-0.55 spacings),
// every group's cells grow by 2^(i/4), i <= kCellGrowMax, to come closest
// (docs/perf-log.md, "cells grown in sparse scenes"; the members' radii stay bounded by d
// / 2 whatever the cells, as with NESTSIM_HSX_CELL_FRACTION). NESTSIM_HSX_CELL_GROW_MAX
// overrides it; 0 never grows (the CPU's default: its costs are not measured).
const int kCellGrowMax =
    std::clamp(int(env_or("NESTSIM_HSX_CELL_GROW_MAX", kDefaultCellGrowMax)), 0, 16);
// Where even the finest phase leaves them coarser (dense scenes: phase 0 is the finest
// base, and at volume fraction 1-3 its first group's cells are 1.1-1.7 spacings), every
// group's cells shrink by 2^(-i/4), i <= kCellShrinkMax, likewise (docs/perf-log.md,
// "cells shrunk in dense scenes": finer cells than the group's diameter; its small-small
// windows reach r_a + d / 2 over more, smaller cells, and the large bodies walk more rim
// cells). NESTSIM_HSX_CELL_SHRINK_MAX overrides it; 0 never shrinks.
const int kCellShrinkMax =
    std::clamp(int(env_or("NESTSIM_HSX_CELL_SHRINK_MAX", kDefaultCellShrinkMax)), 0, 16);
const int kPhasesTried =
    std::clamp(int(env_or("NESTSIM_HSX_PHASES", kDefaultPhasesTried)), 1, kPhases * kOctaves);

using LevelCounts = std::array<uint32_t, kLevels>;

struct LevelBase {
  int phase = 0;
  double d0 = 0;
  LevelCounts histogram{};  // of the natural levels at d0
  std::vector<Group> groups;
  double cell_fraction = kCellFraction;  // cell width / group's top diameter
  double cells_per_spacing = 0;  // the first group's, as chosen
};

// The phase whose first group's cells come closest to kCellSpacing mean spacings (a
// factor either way); phase 0 unless another is strictly closer (a flat or empty box,
// say). Each phase is judged by plan_groups' first group of its histogram, on the stack
// (the host's critical path: no allocation per phase); the chosen one is planned whole.
LevelBase choose_level_base(const LevelPlan& plan, int dim, uint32_t n) {
  double volume = 1;
  for (int k = 0; k < dim; ++k) volume *= plan.bounds.centre_hi[k] - plan.bounds.centre_lo[k];
  auto d0_of = [&](int j) { return std::ldexp(plan.d0[j % kPhases], j / kPhases); };
  auto histogram_of = [&](int j, LevelCounts& h) {
    h.fill(0);
    for (int l = 0; l < kLevels; ++l)  // levels j / kPhases lower, the lowest merged into 0
      h[std::max(0, l - j / kPhases)] += plan.histogram[j % kPhases][l];
  };
  auto cells_per_spacing = [&](int j, const LevelCounts& h) {
    Group g{0, 0, 0, false};
    plan_groups(h.data(), dim, n, &g, 1);
    const double spacing = std::pow(volume / double(std::max(1u, g.end - g.begin)), 1.0 / dim);
    return std::ldexp(d0_of(j), g.top_level) * kCellFraction / spacing;
  };
  // Level 63 holds every diameter from d0 2^62 up (infinite ones too), so it would not
  // shift down with the base: no derived phase then.
  auto valid = [&](int j) {
    return j < kPhases || plan.histogram[j % kPhases][kLevels - 1] == 0;
  };
  const bool forced = kForcedPhase >= 0 && kForcedPhase < kPhases * kOctaves && valid(kForcedPhase);
  const bool choose = !forced && kCellSpacing > 0 && double(n) >= kPhaseMinN;
  LevelBase best;
  best.phase = forced ? kForcedPhase : 0;
  histogram_of(best.phase, best.histogram);
  best.cells_per_spacing = cells_per_spacing(best.phase, best.histogram);
  if (choose) {
    double best_miss = std::fabs(std::log(best.cells_per_spacing / kCellSpacing));
    LevelCounts h;
    for (int j = 1; j < kPhasesTried; ++j) {
      if (!valid(j)) continue;
      histogram_of(j, h);
      const double ratio = cells_per_spacing(j, h);
      const double miss = std::fabs(std::log(ratio / kCellSpacing));
      if (miss < best_miss) {
        best.phase = j;
        best.histogram = h;
        best.cells_per_spacing = ratio;
        best_miss = miss;
      }
    }
  }
  best.d0 = d0_of(best.phase);
  best.groups.resize(kMaxGroups);
  best.groups.resize(std::size_t(plan_groups(best.histogram.data(), dim, n, best.groups.data(),
                                             kMaxGroups)));
  // Cells still finer or coarser than kCellSpacing spacings: the nearest 2^(i/4) towards
  // it, i in [-kCellShrinkMax, kCellGrowMax]. (A flat or empty box has no finite ratio.)
  const double ratio = best.cells_per_spacing;
  if (choose && ratio > 0 && std::isfinite(ratio)) {
    const int steps = std::clamp(int(std::lround(4.0 * std::log2(kCellSpacing / ratio))),
                                 -kCellShrinkMax, kCellGrowMax);
    const double scale = std::exp2(0.25 * steps);
    best.cell_fraction *= scale;
    best.cells_per_spacing *= scale;
  }
  return best;
}

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

}  // namespace

// With NESTSIM_TRACE set, mark(name) synchronises the device and prints the time since
// the previous mark (and, on the GPU, the free device memory): the phases of find(), as a
// profile would show them.
// NESTSIM_TRACE=events instead records a CUDA event and the host's clock at each mark,
// without synchronising, and prints both timelines when find() ends (flush): where the
// GPU's clock advances no further than the host's, the GPU waited for the host (launch
// gaps, read-backs, host-side planning) rather than computing.
struct PhaseTrace {
  const char* mode = std::getenv("NESTSIM_TRACE");
  bool on = mode != nullptr;
  bool events = on && std::string(mode) == "events";
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::vector<const char*> names;
  std::vector<double> host_ms;  // since the first mark of this find()
#if defined(NESTSIM_BACKEND_CUDA)
  std::vector<cudaEvent_t> pool;
  ~PhaseTrace() {
    for (cudaEvent_t e : pool) cudaEventDestroy(e);
  }
#endif
  void mark(const char* name) {
    if (!on) return;
    const auto now = std::chrono::steady_clock::now();
    if (events) {
      if (names.empty()) last = now;
#if defined(NESTSIM_BACKEND_CUDA)
      if (pool.size() <= names.size()) {
        cudaEvent_t e;
        NESTSIM_CUDA_CHECK(cudaEventCreate(&e));
        pool.push_back(e);
      }
      NESTSIM_CUDA_CHECK(cudaEventRecord(pool[names.size()]));
#endif
      names.push_back(name);
      host_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
      return;
    }
    double free_gib = -1;  // the device's free memory after the phase (GPU only)
#if defined(NESTSIM_BACKEND_CUDA)
    NESTSIM_CUDA_CHECK(cudaDeviceSynchronize());
    std::size_t free_bytes = 0, total_bytes = 0;
    NESTSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    free_gib = double(free_bytes) / double(1u << 30);
#endif
    const auto after = std::chrono::steady_clock::now();
    std::fprintf(stderr, "    %-22s %8.3f ms", name,
                 std::chrono::duration<double, std::milli>(after - last).count());
    if (free_gib >= 0) std::fprintf(stderr, "   free %.2f GiB", free_gib);
    std::fprintf(stderr, "\n");
    last = after;
  }
  // Events mode: per mark, the GPU's clock and the host's since the first mark.
  void flush() {
    if (!events || names.empty()) return;
#if defined(NESTSIM_BACKEND_CUDA)
    NESTSIM_CUDA_CHECK(cudaEventSynchronize(pool[names.size() - 1]));
#endif
    std::fprintf(stderr, "    %-26s %9s %9s\n", "mark (work before it done)", "gpu ms", "host ms");
    for (std::size_t k = 0; k < names.size(); ++k) {
      float gpu = 0;
#if defined(NESTSIM_BACKEND_CUDA)
      NESTSIM_CUDA_CHECK(cudaEventElapsedTime(&gpu, pool[0], pool[k]));
#endif
      std::fprintf(stderr, "    %-26s %9.3f %9.3f\n", names[k], double(gpu), host_ms[k]);
    }
    names.clear();
    host_ms.clear();
  }
};

template <class Real>
struct PairFinder<Real>::State {
  PhaseTrace phase;
  // effective radii (skin, solid mode)
  thrust::device_vector<Real> r_eff, q_eff;
  // natural levels, and all bodies sorted by (group, bucket)
  thrust::device_vector<uint8_t> natural;
  thrust::device_vector<uint32_t> histogram;  // CPU backend
  thrust::device_vector<LevelPlan> level_plan;  // CUDA backend
  thrust::device_vector<unsigned> histogram_done;  // level_histogram_kernel's ticket counter

  // The bounds of the bodies, the pad, d0, each body's natural level (in `natural`)
  // and the levels' histogram: on the GPU with one read-back, else as it reads.
  LevelPlan plan_levels(const BodyArrays<Real>& in, uint32_t n, const detail::PadSpace& space) {
    ensure_size(natural, n);
    LevelPlan plan;
#if defined(NESTSIM_BACKEND_CUDA)
    ensure_size(level_plan, 1);
    detail::extent_async(in, n, space.dim, extent_scratch, extent_done,
                         FinishLevelPlan<Real>{space, raw(level_plan)});
    const uint32_t threads = 256;
    const uint32_t grid = std::min<uint32_t>((n + threads - 1) / threads, 2048);
    if (histogram_done.empty()) histogram_done.assign(1, 0u);
    detail::HostStage::Mapped back;
    if (stage.polls()) back = stage.mapped_back(sizeof(LevelPlan));
    level_histogram_kernel<Real><<<grid, threads>>>(in.radius, n, raw(level_plan), raw(natural),
                                                    raw(histogram_done),
                                                    static_cast<LevelPlan*>(back.dst), back.flag,
                                                    back.seq);
    NESTSIM_CUDA_CHECK(cudaGetLastError());
    phase.mark("(plan kernels queued)");
    if (back.dst)
      stage.wait_mapped(back, 1, &plan);
    else
      stage.to_host(level_plan, 1, &plan);
    phase.mark("(plan read back)");
#else
    plan.bounds = detail::extent_of<Real>(detail::policy(alloc), in, n, space.dim);
    plan_base<Real>(plan, space);
    ensure_size(histogram, kLevels);
    thrust::fill_n(detail::nosync(), histogram.begin(), kLevels, 0u);
    const uint32_t chunks = (n + kHistogramChunk - 1) / kHistogramChunk;
    for_each_index(chunks, LevelHistogram<Real>{in.radius, n, plan.d0[0], plan.pad, raw(natural),
                                                raw(histogram)});
    thrust::copy_n(histogram.begin(), kLevels, plan.histogram[0]);
#endif
    return plan;
  }
  detail::SortedGrid<Real> sorted;
  // pair assembly
  thrust::device_vector<uint64_t> task_count, task_start, counts, offsets;
  thrust::device_vector<uint64_t> task_owner;  // (first task << 32) | item per task
  uint64_t task_capacity = 0;  // tasks the owners' table and the walk cover (groups_pass)
  detail::HostStage stage;     // the read-backs (plan, totals)
  thrust::device_vector<uint64_t> keys;
  uint64_t pair_count = 0;
  bool keys_sorted = true;  // keys[0, pair_count) ascending (sort_pairs, or sort_keys())
  uint32_t n = 0;           // the bodies of the last find()
  detail::CachingAllocator alloc;  // Thrust temporaries, kept across calls
  detail::SideStream side_stream;  // HSX's large-body work beside the small-small walk
#if defined(NESTSIM_BACKEND_CUDA)
  detail::CachingAllocator side_alloc;  // the side stream's Thrust temporaries
#endif
  device::PairwiseBuffers pairwise;  // the scheduled brute-force methods
  detail::SolidGrids<Real> solid_grids;  // grid_uniform, grid_aabb (solid_grids.cu)

  Space<Real> space;
  bool count_only = false;

  // The running pair total of this find(), on the device: each step appends after it
  // without the host reading the step's count (a read-back per step stalls the host;
  // docs/perf-log.md, "HSX without host round trips").
  thrust::device_vector<uint64_t> total;

  // Fused single pass (kernels.cuh, PairSink; FusedChunk on the CPU) instead of count ->
  // scan -> write: set by find() for HSX, whose pairs are sorted afterwards anyway.
  bool fused = false;

  PairSink fused_sink() {
    PairSink sink;
    sink.out = raw(keys);
    sink.total = reinterpret_cast<unsigned long long*>(raw(total));
    sink.capacity = count_only ? 0 : keys.size();
    return sink;
  }
  // The pairs of a functor family over `items` items, appended after the running total.
  // Fused (above), or count -> scan -> write: the write pass runs over every item (those
  // that counted nothing return at once), and a one-thread step then advances the total.
  template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
  void emit_pairs(Index items, Args... args) {
    if (items == 0) return;
    if (fused) {
#if defined(NESTSIM_BACKEND_CUDA)
      launch_pair_step(items, Step<Real, Dim, false>{args..., fused_sink()});
#else
      const PairSink sink = fused_sink();
      const uint64_t chunks = (uint64_t(items) + kFusedChunk - 1) / kFusedChunk;
      for_each_index(chunks, FusedChunk<Step<Real, Dim, false>, Index>{
                                 Step<Real, Dim, false>{args..., sink}, items, sink});
#endif
      return;
    }
    PairSink sink;
    ensure_size(counts, std::size_t(items));
    sink.counts = raw(counts);
    for_each_index(items, Step<Real, Dim, false>{args..., sink});
    detail::scan_counts_async(detail::policy(alloc), counts, offsets, items);
    if (!count_only) {
      sink.offsets = raw(offsets);
      sink.out = raw(keys);
      sink.base = raw(total);
      sink.capacity = keys.size();
      for_each_index(items, Step<Real, Dim, true>{args..., sink});
    }
    for_each_index(1, AddTotal{raw(total), raw(offsets) + items});
  }

  // Sorts keys[0, pair_count) ascending. A pair (i, j) of n bodies needs only 2 b bits,
  // b = bits of n - 1: the keys are packed to (i << b) | j, sorted on those bits (on
  // CUDA, radix passes of 8 bits: 5 at n = 1e6 instead of 8) and unpacked.
  thrust::device_vector<uint64_t> keys_alt;
  thrust::device_vector<detail::Extent> extent_scratch;
  thrust::device_vector<unsigned> extent_done;  // extent_async's ticket counter
  void sort_keys(uint32_t n) {
    const uint64_t p = pair_count;
    if (p < 2) return;
    const int b = detail::radix_bits(n);
    ensure_size(keys_alt, p);
    thrust::transform(detail::nosync(), keys.begin(), keys.begin() + p, keys_alt.begin(),
                      pair_keys::PackKey{b});
    const uint64_t* sorted = sort_packed(raw(keys_alt), raw(keys), p, 2 * b);
    thrust::transform(detail::nosync(), thrust::device_pointer_cast(sorted),
                      thrust::device_pointer_cast(sorted) + p, keys.begin(),
                      pair_keys::UnpackKey{b});
  }
  // Sorts `count` keys below 2^bits, in `keys` with `alt` as scratch of the same size;
  // returns the buffer that holds them sorted (either).
  uint64_t* sort_packed(uint64_t* keys_in, uint64_t* alt, uint64_t count, int bits) {
#if defined(NESTSIM_BACKEND_CUDA)
    cub::DoubleBuffer<uint64_t> buffers(keys_in, alt);
    std::size_t bytes = 0;
    NESTSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, buffers, count, 0, bits));
    char* temp = alloc.allocate(std::ptrdiff_t(bytes));
    NESTSIM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, buffers, count, 0, bits));
    alloc.deallocate(temp, bytes);
    return buffers.Current();
#else
    (void)alt;
    (void)bits;
    thrust::sort(detail::policy(alloc), thrust::device_pointer_cast(keys_in),
                 thrust::device_pointer_cast(keys_in) + count);
    return keys_in;
#endif
  }
  // neighbor_lists(): both directions of every pair, packed as (row << b) | column.
  thrust::device_vector<uint64_t> both, both_alt;

  // The HSX walks (steps with walk_with): in the fused pass on the GPU, each warp's
  // candidates tested by all its lanes (warp_tested_items); else emit_pairs.
  // `side`: on the side stream (groups_pass; only with the warp's tests).
  template <template <class, int, bool> class Step, int Dim, class Index, class... Args>
  void emit_walk_pairs(bool side, Index items, Args... args) {
#if defined(NESTSIM_BACKEND_CUDA)
    if (fused && kWarpTests) {
      if (items > 0)
        launch_warp_tested<Real>(items, Step<Real, Dim, false>{args..., fused_sink()},
                                 side ? side_stream.stream() : cudaStream_t{});
      return;
    }
#endif
    (void)side;
    emit_pairs<Step, Dim>(items, args...);
  }

  template <int Dim>
  void brute(const BodyArrays<Real>& bodies, uint32_t begin, uint32_t end) {
    emit_pairs<detail::BrutePairs, Dim>(end - begin, bodies, space, begin, end);
  }

  // All pairs, HSX's path for small n: tiles in shared memory on the GPU
  // (all_pairs_tiles), the circular schedule on the CPU (kernels.cuh, CircularPairs).
  template <int Dim>
  void all_pairs(const BodyArrays<Real>& bodies, uint32_t n) {
#if defined(NESTSIM_BACKEND_CUDA)
    all_pairs_tiles<Real, Dim>(bodies, space, n, reinterpret_cast<unsigned long long*>(raw(total)),
                               raw(keys), count_only ? 0 : keys.size());
#else
    emit_pairs<detail::CircularPairs, Dim>(n, bodies, space, n);
#endif
  }

  template <int Dim>
  void hsx(const BroadphaseOptions& options, const BodyArrays<Real>& in, uint32_t n);

  template <int Dim>
  void groups_pass(std::vector<detail::GroupGrid>& groups, LevelToGroup to_group,
                   const BodyArrays<Real>& in, uint32_t n, double pad, uint64_t items,
                   bool radix);
};

// The GPU's radix sort into cells sorts the bucket numbers on the tables' bits, 8 per
// onesweep pass (device_util.cuh, radix_sort_buckets): tables just above a multiple of 8
// bits pay a whole pass more (1e7 bodies: ~18M buckets, 25 bits, 4 passes). There the
// largest dense group's cells grow a little, by at most ~10% per axis (a third fewer
// cells), until all tables fit the multiple below (docs/perf-log.md, "one radix pass
// fewer into cells at 1e7"). The group's task size and larger-side rule follow its new
// cells. NESTSIM_HSX_FIT_RADIX_BITS: the bits per pass to fit (0: off; the CPU's default,
// whose thrust sort is a merge sort; the tests use 1 on both backends, to reach the
// resized grids on small scenes).
#if defined(NESTSIM_BACKEND_CUDA)
const int kFitRadixBits = int(env_or("NESTSIM_HSX_FIT_RADIX_BITS", 8));
#else
const int kFitRadixBits = int(env_or("NESTSIM_HSX_FIT_RADIX_BITS", 0));
#endif
static void fit_radix_passes(std::vector<detail::GroupGrid>& grids,
                             const std::vector<Group>& groups, const Domain& dom,
                             const detail::Extent& bounds, double d0, double cell_fraction,
                             int dim, int pass_bits, uint32_t n) {
  uint64_t table = 0;
  std::size_t big = grids.size();
  for (std::size_t k = 0; k < grids.size(); ++k) {
    table += grids[k].grid.table_size;
    if (!grids[k].brute && grids[k].grid.dense &&
        (big == grids.size() || grids[k].grid.table_size > grids[big].grid.table_size))
      big = k;
  }
  const int bits = detail::radix_bits(table);  // as radix_sort_buckets sorts them
  // Sorted in ceil(bits / pass_bits) passes; one fewer fits `target` bits.
  const int target = (bits + pass_bits - 1) / pass_bits * pass_bits - pass_bits;
  if (big == grids.size() || target < 1) return;
  const uint64_t fit = uint64_t(1) << target;
  if (double(table) > 1.35 * double(fit)) return;
  detail::GroupGrid& g = grids[big];
  const uint64_t others = table - g.grid.table_size;
  if (others >= fit) return;
  const uint64_t want = fit - others;  // buckets left for the group
  const double ns = double(g.end - g.begin);
  double width = std::ldexp(d0, groups[big].top_level) * cell_fraction;
  double scale = std::pow(double(g.grid.table_size) / double(want), 1.0 / dim);
  for (int i = 0; i < 32 && scale < 1.12; ++i, scale *= 1.004) {
    detail::GridSpec grid =
        detail::make_grid(dom, dim, width * scale, bounds.centre_lo, bounds.centre_hi);
    const double cells = detail::choose_buckets(grid, g.end - g.begin);
    if (!grid.dense || grid.table_size > want) continue;
    if (std::getenv("NESTSIM_TRACE"))
      std::fprintf(stderr, "hsx: group %zu's cells x%.3f: %llu buckets in all, %d-bit passes\n",
                   big, scale, (unsigned long long)(others + grid.table_size), pass_bits);
    g.grid = grid;
    g.task = task_size_for(ns, cells, n);
    g.larger_side = g.larger_side && ns <= kLargerSideMaxPerCell * cells;
    return;
  }
}

// Refuses bodies outside the range the grids support (broadphase.h, check_supported),
// where cells' numbers could leave 64 bits and pairs be lost in silence.
// Broadphase::upload refuses them first; this guards PairFinder's own callers.
template <class Real>
static void check_grid_range(const detail::Extent& e, const Domain& dom, int dim) {
  const double limit = max_extent<Real>();
  bool inside = e.absmax <= limit && e.rmax <= limit;
  for (int a = 0; a < dim && dom.periodic; ++a)
    inside = inside && dom.size[a] <= limit && dom.size[a] >= kMinEdgePerReach * e.rmax &&
             e.absmax <= std::fabs(dom.lo[a]) + kMaxEdgesFromBox * dom.size[a];
  if (inside) return;
  char what[256];
  std::snprintf(what, sizeof what,
                "hsx: bodies outside the supported range (|coordinates|, radius + skin and box "
                "edges up to %g; periodic edges at least 2^-30 of the largest radius + skin, "
                "coordinates within 2^30 edges of the box)",
                limit);
  throw std::invalid_argument(what);
}

template <class Real>
template <int Dim>
void PairFinder<Real>::State::hsx(const BroadphaseOptions& options, const BodyArrays<Real>& in,
                                  uint32_t n) {
  // All pairs instead of the grid: few bodies, or (below) crowded cells.
  if (all_pairs_for(options, n)) {
    all_pairs<Dim>(in, n);
    return;
  }
  // Algorithm 1 line 1 (the bounds, d0, the pad), the natural levels and their histogram.
  const Domain& dom = options.domain;
  const LevelPlan plan = plan_levels(in, n, detail::pad_space(dom, Dim));
  const detail::Extent& bounds = plan.bounds;
  check_grid_range<Real>(bounds, dom, Dim);
  const LevelBase base = choose_level_base(plan, Dim, n);
  if (base.phase != 0)  // the natural levels were written for phase 0
    for_each_index(n, Relevel<Real>{in.radius, plan.pad, base.d0, raw(natural)});
  const double pad = plan.pad, d0 = base.d0;
  const std::vector<Group>& groups = base.groups;
  const LevelCounts& histogram = base.histogram;

  // One grid per group of levels, all in one table (one sort for all groups;
  // docs/perf-log.md, "all groups of levels in one counting sort"): cells of
  // base.cell_fraction (kCellFraction, grown in sparse scenes) times the group's top
  // diameter d; members have radius <= d / 2.
  std::vector<detail::GroupGrid> grids(groups.size());
  LevelToGroup to_group{0, static_cast<uint8_t>(groups.size() - 1)};
  uint64_t items = 0;       // large items (large body, smaller group)
  double shared = 0;        // lower bound of the pairs that share a cell, over the groups
  int first_level = 0;      // the lowest level of the next group
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups[k];
    detail::GroupGrid& grid = grids[k];
    grid.begin = g.begin;
    grid.end = g.end;
    grid.brute = g.brute;
    if (g.brute) {
      grid.grid = detail::single_cell_grid(dom, Dim);
      continue;
    }
    to_group.tops |= uint64_t(1) << g.top_level;
    const double d = std::ldexp(d0, g.top_level);
    grid.grid =
        detail::make_grid(dom, Dim, d * base.cell_fraction, bounds.centre_lo, bounds.centre_hi);
    const double ns = double(g.end - g.begin);
    const double cells = detail::choose_buckets(grid.grid, g.end - g.begin);
    shared += ns * std::max(0.0, ns / cells - 1.0) / 2.0;
    grid.task = task_size_for(ns, cells, n);
    grid.reach = 0.5 * d;
    int levels = 0;  // non-empty levels in the group
    for (int l = first_level; l <= g.top_level; ++l) levels += histogram[l] ? 1 : 0;
    first_level = g.top_level + 1;
    grid.larger_side = kLargerSideLevels > 0 && levels >= kLargerSideLevels &&
                       ns <= kLargerSideMaxPerCell * cells;
    grid.item_base = items;
    items += n - g.end;
  }
  for (detail::GroupGrid& grid : grids)
    if (grid.brute) grid.item_base = items;  // owns no item
  if (options.hsx_small_n < 0 && kGridTestCost * shared > double(n) * double(n - 1) / 2.0) {
    if (phase.on) std::fprintf(stderr, "hsx: crowded cells (>= %g shared pairs): all pairs\n", shared);
    all_pairs<Dim>(in, n);
    return;
  }
  const bool radix = detail::radix_grid_sort(options, n);
  if (radix && kFitRadixBits > 0)
    fit_radix_passes(grids, groups, dom, bounds, d0, base.cell_fraction, Dim, kFitRadixBits, n);
  phase.mark("bounds, level histogram");
  static const bool trace = std::getenv("NESTSIM_TRACE") != nullptr;
  if (trace) {
    std::fprintf(stderr,
                 "hsx: n=%u d0=%g (phase %d, cells/spacing %.3f, cells/diameter %.3f) pad=%g "
                 "groups=%zu\n",
                 n, d0, base.phase, base.cells_per_spacing, base.cell_fraction, pad, groups.size());
    for (const detail::GroupGrid& g : grids)
      std::fprintf(stderr, "  group top=%g members=%u large=%u %s table=%llu columns/task=%u%s%s\n",
                   2 * g.reach, g.end - g.begin, n - g.end, g.grid.dense ? "dense" : "hashed",
                   (unsigned long long)g.grid.table_size, g.task.columns,
                   g.larger_side ? " larger-side" : "", g.brute ? " (brute force)" : "");
  }
  groups_pass<Dim>(grids, to_group, in, n, pad, items, radix);
}

template <class Real>
template <int Dim>
void PairFinder<Real>::State::groups_pass(std::vector<detail::GroupGrid>& groups,
                                          LevelToGroup to_group, const BodyArrays<Real>& in,
                                          uint32_t n, double pad, uint64_t items,
                                          bool radix) {
  detail::GroupedView<Real> v;
  // The bucket table beside the gather (the CPU's SideStream runs it in order).
  v.s = sorted.template build<Dim>(detail::policy(alloc), groups, raw(natural), to_group, in, n,
                                   radix, kTableBeside ? &side_stream : nullptr);
  phase.mark("sort by group and cell");
  v.space = space;
  v.group_count = uint32_t(groups.size());
  v.pad = pad;
  // Small-small pairs of every group, and the large-small pairs: items (large body,
  // smaller group) -> tasks -> their walk. On the GPU with the warp's tests, the large
  // items' work runs on a side stream of higher priority, beside the small-small walk
  // (docs/perf-log.md, "the large bodies' work beside the small-small walk"): its chain
  // of short kernels (tasks, scans, owners) and the two walks' tails overlap instead of
  // following each other.
  v.items = items;
  const bool large = items > 0;
  bool side = false;
#if defined(NESTSIM_BACKEND_CUDA)
  side = large && fused && kWarpTests && kLargeBeside;
#endif
  // The buffers first: a new buffer's zero fill runs on the default stream.
  if (large && task_capacity == 0) task_capacity = 2 * items + 1024;  // the first guess
  const uint64_t tasks = task_capacity;
  // The task total stays on the device (no read-back; docs/perf-log.md, "the read-backs'
  // gaps"): the owners' table and the walk cover task_capacity tasks, those past the
  // total return at once, and find() reads the total with the pair count (total[1]); a
  // total beyond the capacity grows it and runs the call again, as the pair buffer does.
  const bool owners = large && double(items) >= kTaskOwnersMinItems &&
                      items < (uint64_t(1) << 32) && tasks < (uint64_t(1) << 32);
  if (large) {
    ensure_size(task_count, std::size_t(items));
    ensure_size(task_start, std::size_t(items) + 1);
    if (owners) ensure_size(task_owner, std::size_t(tasks));
  }
  auto on_large = [&](auto&& run) {  // a Thrust call for the large items' work
#if defined(NESTSIM_BACKEND_CUDA)
    if (side) {
      run(thrust::cuda::par_nosync(side_alloc).on(side_stream.stream()));
      return;
    }
#endif
    run(detail::policy(alloc));
  };
  if (side) side_stream.fork();
  if (large)  // first: its blocks start before the walk's
    on_large([&](const auto& exec) {
      detail::for_each_index_on(exec, items,
                                detail::GroupLargeTasks<Real, Dim>{v, raw(task_count)});
    });
  emit_walk_pairs<detail::GroupSmallPairs, Dim>(false, n, v);
  phase.mark(large && !side ? "large tasks, small-small pairs" : "small-small pairs");
  if (!large) return;
  on_large([&](const auto& exec) {
    detail::scan_counts_async(exec, task_count, task_start, items);
    detail::for_each_index_on(exec, 1, AddTotal{raw(total) + 1, raw(task_start) + items});
  });
  v.task_start = raw(task_start);
  if (owners) {
    on_large([&](const auto& exec) {
      thrust::fill_n(exec, task_owner.begin(), tasks, uint64_t(0));
      detail::for_each_index_on(exec, uint32_t(items),
                                detail::MarkTaskOwners{raw(task_start), tasks, raw(task_owner)});
      thrust::inclusive_scan(exec, task_owner.begin(), task_owner.begin() + tasks,
                             task_owner.begin(), MaxOf{});
    });
    v.task_owner = raw(task_owner);
  }
  emit_walk_pairs<detail::GroupLargePairs, Dim>(side, tasks, v);
  if (side) side_stream.join();
  phase.mark(side ? "large-small pairs (beside)" : "large-small pairs");
}

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

template <class Real>
uint64_t PairFinder<Real>::find(const SphereView<Real>& bodies, bool count_only) {
  State& s = *state_;
  s.pair_count = 0;
  s.count_only = count_only;
  s.fused = false;
  s.keys_sorted = true;  // until a method below leaves them in the order found
  const uint32_t n = bodies.n;
  s.n = n;
  if (n < 2) return 0;
  s.phase.flush();  // a find() that returned early
  s.phase.mark("(before find)");
  BodyArrays<Real> in;
  for (int a = 0; a < 3; ++a) in.pos[a] = bodies.pos[a];
  in.radius = bodies.radius;
  in.thickness = bodies.thickness;
  // Hollow bodies without a skin are searched as they are (0 <= q <= r, the
  // precondition): no copy. Else each body's effective radius and thickness.
  if (options_.skin > 0 || options_.overlap == Overlap::solid) {
    ensure_size(s.r_eff, n);
    ensure_size(s.q_eff, n);
    for_each_index(n, EffectiveRadii<Real>{bodies.radius, bodies.thickness, raw(s.r_eff),
                                           raw(s.q_eff), Real(options_.skin),
                                           options_.overlap == Overlap::solid});
    in.radius = raw(s.r_eff);
    in.thickness = raw(s.q_eff);
  }

  const bool three = options_.domain.dim == 3;
  // brute and hsx append to keys after a running total kept on the device; the host
  // reads it once at the end. If it exceeds the buffer (the first call, or more pairs
  // than ever before), the buffer grows and the same deterministic work runs again.
  // The same for HSX's large-body tasks (total[1], groups_pass): their table grows
  // with the count, and shrinks (for the next call) when it is 4 times too large.
  auto appending = [&](auto&& run) {
    ensure_size(s.total, 2);
    if (s.keys.empty()) detail::ensure_size(s.keys, std::max<std::size_t>(1024, n));
    for (;;) {
      thrust::fill_n(detail::nosync(), s.total.begin(), 2, uint64_t(0));
      run();
      uint64_t totals[2];
      s.stage.to_host(s.total, 2, totals);
      s.pair_count = totals[0];
      const uint64_t tasks = totals[1];
      const bool tasks_fit = tasks <= s.task_capacity;
      if (!tasks_fit || s.task_capacity > 4 * tasks + 4096)
        s.task_capacity = tasks + tasks / 4 + 1024;
      if (tasks_fit && (count_only || s.pair_count <= s.keys.size())) return;
      if (!count_only && s.pair_count > s.keys.size())
        detail::ensure_size(s.keys, std::size_t(s.pair_count + s.pair_count / 4));
      s.phase.mark(tasks_fit ? "(pair buffer grown: again)" : "(task table grown: again)");
    }
  };
  switch (options_.method) {
    case Method::brute:
      appending([&] {
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
      appending([&] {
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
    s.sort_keys(n);
    s.keys_sorted = true;
    s.phase.mark("sort pairs");
  }
  s.phase.flush();
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

namespace pair_keys {  // (see PackKey)
// Pair k's two directions, packed as (row << bits) | column: (i, j) at k, (j, i) at p + k.
struct PackBothWays {
  const uint64_t* keys;
  uint64_t p;
  int bits;
  uint64_t* out;
  NESTSIM_HD void operator()(uint64_t k) const {
    const uint64_t i = pair_first(keys[k]), j = pair_second(keys[k]);
    out[k] = (i << bits) | j;
    out[p + k] = (j << bits) | i;
  }
};
// Entry k of the sorted packed keys: its column into `neighbors`, its row into `rows`
// (if wanted), and, where a row's entries end, that end into offsets[row + 1] (rows >= n
// are not listed; a running maximum then fills the rows without entries).
struct SplitRows {
  const uint64_t* sorted;
  uint64_t entries;
  int bits;
  uint32_t n;
  uint64_t* offsets;
  uint32_t* neighbors;
  uint32_t* rows;
  NESTSIM_HD void operator()(uint64_t k) const {
    const uint64_t key = sorted[k];
    const uint64_t row = key >> bits;
    neighbors[k] = uint32_t(key & ((uint64_t(1) << bits) - 1));
    if (rows) rows[k] = uint32_t(row);
    if (row < n && (k + 1 == entries || (sorted[k + 1] >> bits) != row)) offsets[row + 1] = k + 1;
  }
};
}  // namespace pair_keys

// Both directions of every pair, packed to 2 b bits (b = bits of n - 1) and sorted on
// those bits only (on CUDA 5 radix passes at n = 1e6, 6 at 1e7, instead of 8 for full
// 64-bit keys); the order of keys() does not matter (sort_pairs = false suffices). The
// rows' ends are marked where the sorted rows change and filled by a running maximum
// (no binary search per row).
template <class Real>
void PairFinder<Real>::neighbor_lists(uint32_t n, thrust::device_vector<uint64_t>& offsets,
                                      thrust::device_vector<uint32_t>& neighbors,
                                      thrust::device_vector<uint32_t>* rows) const {
  State& s = *state_;
  const uint64_t p = s.pair_count;
  s.phase.mark("(before lists)");
  const int b = detail::radix_bits(std::max<uint32_t>(n, s.n));
  ensure_size(s.both, 2 * p);
  ensure_size(s.both_alt, 2 * p);
  for_each_index(p, pair_keys::PackBothWays{raw(s.keys), p, b, raw(s.both)});
  const uint64_t* sorted =
      p > 0 ? s.sort_packed(raw(s.both), raw(s.both_alt), 2 * p, 2 * b) : raw(s.both);
  detail::resize_discard(offsets, std::size_t(n) + 1);
  thrust::fill_n(detail::nosync(), offsets.begin(), std::size_t(n) + 1, uint64_t(0));
  detail::resize_discard(neighbors, 2 * p);
  if (rows) detail::resize_discard(*rows, 2 * p);
  for_each_index(2 * p, pair_keys::SplitRows{sorted, 2 * p, b, n, raw(offsets),
                                             raw(neighbors), rows ? raw(*rows) : nullptr});
  thrust::inclusive_scan(detail::policy(s.alloc), offsets.begin(), offsets.end(), offsets.begin(),
                         thrust::maximum<uint64_t>());
  // The sort's two buffers (16 bytes per entry) are kept for the next call, unless they
  // are large: then the caller's memory after the lists matters more than one cudaMalloc
  // per call (the simulator at 1e8 bodies; docs/perf-log.md, "the simulator at 1e8
  // proteins fits").
  if (double(2 * sizeof(uint64_t) * s.both.size()) > kKeepListBuffersBytes) {
    detail::release(s.both);
    detail::release(s.both_alt);
  }
  s.phase.mark("neighbour lists");
  if (s.phase.on) std::fprintf(stderr, "    lists of %u bodies, %llu pairs\n", n, (unsigned long long)p);
  s.phase.flush();
}

// The instantiations of this compile (see the file's start).
#if NESTSIM_PAIR_FINDER_DIM == 2
template void PairFinder<NESTSIM_PAIR_FINDER_REAL>::State::hsx<2>(
    const BroadphaseOptions&, const BodyArrays<NESTSIM_PAIR_FINDER_REAL>&, uint32_t);
#else
extern template void PairFinder<NESTSIM_PAIR_FINDER_REAL>::State::hsx<2>(
    const BroadphaseOptions&, const BodyArrays<NESTSIM_PAIR_FINDER_REAL>&, uint32_t);
template class PairFinder<NESTSIM_PAIR_FINDER_REAL>;
#endif

}  // namespace nestsim::device

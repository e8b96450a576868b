// The extent of the bodies (centres, boxes, radii), the space a grid covers and the
// rounding pad; on the GPU one pass whose last block finishes the plan.
#pragma once
#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#if defined(NESTSIM_BACKEND_CUDA)
#include <cub/block/block_reduce.cuh>
#endif

#include <cfloat>
#include <cstdint>
#include <limits>

#include "common/bodies.cuh"
#include "common/buffers.cuh"
#include "nestsim/broadphase.h"
#include "nestsim/device/check.cuh"

namespace nestsim::detail {

// Extent of the bodies: centres and boxes per axis, smallest, largest and summed radius.
struct Extent {
  double centre_lo[3], centre_hi[3], box_lo[3], box_hi[3];
  double rmin, rmax, rsum, absmax;
};

struct MergeExtent {
  NESTSIM_HD Extent operator()(const Extent& a, const Extent& b) const {
    Extent m;
    for (int k = 0; k < 3; ++k) {
      m.centre_lo[k] = a.centre_lo[k] < b.centre_lo[k] ? a.centre_lo[k] : b.centre_lo[k];
      m.centre_hi[k] = a.centre_hi[k] > b.centre_hi[k] ? a.centre_hi[k] : b.centre_hi[k];
      m.box_lo[k] = a.box_lo[k] < b.box_lo[k] ? a.box_lo[k] : b.box_lo[k];
      m.box_hi[k] = a.box_hi[k] > b.box_hi[k] ? a.box_hi[k] : b.box_hi[k];
    }
    m.rmin = a.rmin < b.rmin ? a.rmin : b.rmin;
    m.rmax = a.rmax > b.rmax ? a.rmax : b.rmax;
    m.rsum = a.rsum + b.rsum;
    m.absmax = a.absmax > b.absmax ? a.absmax : b.absmax;
    return m;
  }
};

template <class Real>
struct BodyExtent {
  BodyArrays<Real> b;
  int dim;
  NESTSIM_HD Extent operator()(uint32_t i) const {
    Real p[3] = {0, 0, 0};
    b.load(i, dim, p);
    return of(p, b.radius[i], dim);
  }
  // The extent of one body at p (axes past dim 0) with radius rr.
  NESTSIM_HD static Extent of(const Real* p, Real rr, int dim) {
    Extent m;
    const double r = double(rr);
    m.absmax = 0;
    for (int k = 0; k < 3; ++k) {
      const double x = k < dim ? double(p[k]) : 0.0;
      m.centre_lo[k] = m.centre_hi[k] = x;
      m.box_lo[k] = k < dim ? x - r : 0.0;
      m.box_hi[k] = k < dim ? x + r : 0.0;
      const double ax = x < 0 ? -x : x;
      m.absmax = ax > m.absmax ? ax : m.absmax;
    }
    m.rmin = m.rmax = m.rsum = r;
    return m;
  }
};

inline Extent empty_extent() {
  const double big = std::numeric_limits<double>::max();
  return Extent{{big, big, big}, {-big, -big, -big}, {big, big, big}, {-big, -big, -big},
                big, 0.0, 0.0, 0.0};
}

template <class Real, class Policy>
Extent extent_of(const Policy& exec, const BodyArrays<Real>& bodies, uint32_t n, int dim) {
  return thrust::transform_reduce(exec, thrust::counting_iterator<uint32_t>(0),
                                  thrust::counting_iterator<uint32_t>(n),
                                  BodyExtent<Real>{bodies, dim}, empty_extent(), MergeExtent{});
}

#if defined(NESTSIM_BACKEND_CUDA)
// True, in every thread of the block, for the grid's last block to get here: a ticket
// counter (`done`, zero before the launch, wrapped back to 0 by the last ticket for the
// next one). Each thread's writes before the call are visible device-wide (a fence)
// before its block counts itself, so the last block reads every block's results (from
// L2: ld.cg). All threads of each block call it, once per launch.
__device__ inline bool last_block(unsigned* done) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicInc(done, gridDim.x - 1) == gridDim.x - 1;
  __syncthreads();
  return last;
}

constexpr int kExtentThreads = 256;

// Bodies each thread loads before it merges them: the loop is latency-bound at 2 blocks
// per SM, and kExtentUnroll bodies' loads in flight at once take 1e7 bodies' extent from
// 110 us (ncu, one body per iteration: 1.7 TB/s) towards the bandwidth (H100;
// docs/performance.md, "The plan's per-body kernels").
constexpr int kExtentUnroll = 4;

// One thread's share of the extent while it loads (extent_blocks): the minima and maxima
// of centres, radii and |x| in the bodies' precision, where they are exact (a minimum of
// floats converts to the minimum of their doubles), the boxes (x - r, x + r) and the
// radii's sum in double as BodyExtent::of computes them; 9 floats and 7 doubles where a
// per-body Extent and its merge would hold 16 doubles, which spill (docs/performance.md,
// "The plan kernels' arithmetic"). The same values
// as merging BodyExtent::of body by body into init.
template <class Real>
struct ThreadExtent {
  // Empty: infinities, which merged_into turns into init's values.
  static constexpr Real kInf = std::numeric_limits<Real>::infinity();
  static constexpr double kInfD = std::numeric_limits<double>::infinity();
  Real centre_lo[3] = {kInf, kInf, kInf}, centre_hi[3] = {-kInf, -kInf, -kInf};
  Real rmin = kInf, rmax = -kInf, absmax = 0;
  double box_lo[3] = {kInfD, kInfD, kInfD}, box_hi[3] = {-kInfD, -kInfD, -kInfD};
  double rsum = 0;
  NESTSIM_HD void add(const Real* p, Real r, int dim) {
    const double rd = double(r);
    Real body_abs = 0;  // as BodyExtent::of
    for (int k = 0; k < 3; ++k) {
      const Real x = k < dim ? p[k] : Real(0);
      centre_lo[k] = centre_lo[k] < x ? centre_lo[k] : x;
      centre_hi[k] = centre_hi[k] > x ? centre_hi[k] : x;
      const double bl = k < dim ? double(x) - rd : 0.0, bh = k < dim ? double(x) + rd : 0.0;
      box_lo[k] = box_lo[k] < bl ? box_lo[k] : bl;
      box_hi[k] = box_hi[k] > bh ? box_hi[k] : bh;
      const Real ax = x < Real(0) ? -x : x;
      body_abs = ax > body_abs ? ax : body_abs;
    }
    rmin = rmin < r ? rmin : r;
    rmax = rmax > r ? rmax : r;
    rsum += rd;
    absmax = absmax > body_abs ? absmax : body_abs;
  }
  // The share as an Extent merged into init (init's values where the thread had no body).
  NESTSIM_HD Extent merged_into(const Extent& init) const {
    Extent m;
    for (int k = 0; k < 3; ++k) {
      m.centre_lo[k] = double(centre_lo[k]);
      m.centre_hi[k] = double(centre_hi[k]);
      m.box_lo[k] = box_lo[k];
      m.box_hi[k] = box_hi[k];
    }
    m.rmin = double(rmin);
    m.rmax = double(rmax);
    m.rsum = rsum;
    m.absmax = double(absmax);
    return MergeExtent{}(init, m);
  }
};

// Each thread gathers a strided share of the bodies in registers (ThreadExtent), each
// block merges its threads (cub::BlockReduce) into one Extent per block, in out[block].
// Then the last block to finish (a ticket counter, `done`, zero before and after the
// launch) merges the blocks' results and calls finish(total) in its thread 0: the level
// plan (hsx/level_plan.cuh) in the same launch, not a kernel of its own, which saves a
// launch on the critical path (docs/performance.md, "The level plan on the
// device, one read-back"); before that, every thread of that block calls
// finish.share(thread, threads), the plan's work that the block can split (zeroing the
// histograms).
template <class Real, class Finish>
__global__ void __launch_bounds__(kExtentThreads)
    extent_blocks(BodyArrays<Real> bodies, uint32_t n, int dim, Extent init, Extent* out,
                  unsigned* done, Finish finish) {
  using BlockReduce = cub::BlockReduce<Extent, kExtentThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const MergeExtent merge;
  ThreadExtent<Real> mine;
  const uint32_t stride = gridDim.x * kExtentThreads;
  for (uint64_t base = uint64_t(blockIdx.x) * kExtentThreads + threadIdx.x; base < n;
       base += uint64_t(kExtentUnroll) * stride) {
    Real p[kExtentUnroll][3], r[kExtentUnroll];
#pragma unroll
    for (int u = 0; u < kExtentUnroll; ++u) {
      const uint64_t i = base + uint64_t(u) * stride;
      p[u][0] = p[u][1] = p[u][2] = r[u] = 0;
      if (i < n) {
        bodies.load(uint32_t(i), dim, p[u]);
        r[u] = bodies.radius[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kExtentUnroll; ++u)
      if (base + uint64_t(u) * stride < n) mine.add(p[u], r[u], dim);
  }
  const Extent total = BlockReduce(temp).Reduce(mine.merged_into(init), merge);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
  if (!last_block(done)) return;  // its barriers also end the block's use of temp
  finish.share(threadIdx.x, kExtentThreads);
  Extent acc = init;
  for (uint32_t k = threadIdx.x; k < gridDim.x; k += kExtentThreads) {
    // From L2 (ld.cg): written by other blocks.
    Extent e;
    const double* src = reinterpret_cast<const double*>(out + k);
    double* dst = reinterpret_cast<double*>(&e);
    for (std::size_t w = 0; w < sizeof(Extent) / sizeof(double); ++w) dst[w] = __ldcg(src + w);
    acc = merge(acc, e);
  }
  const Extent all = BlockReduce(temp).Reduce(acc, merge);
  if (threadIdx.x == 0) finish(all);
}

// Launches extent_blocks into scratch (grown as needed), whose last block calls
// finish(extent of all bodies) on the device. A single pass over the bodies: a generic
// reduction of this 128-byte type costs several times more. `done` is one counter,
// zeroed once when allocated (the kernel leaves it at zero).
template <class Real, class Finish>
void extent_async(const BodyArrays<Real>& bodies, uint32_t n, int dim,
                  thrust::device_vector<Extent>& scratch, thrust::device_vector<unsigned>& done,
                  Finish finish) {
  const uint32_t blocks = std::max<uint32_t>(
      1, std::min<uint32_t>((n + kExtentThreads - 1) / kExtentThreads, 264));
  ensure_size(scratch, blocks);
  if (done.empty()) done.assign(1, 0u);
  extent_blocks<Real><<<blocks, kExtentThreads>>>(bodies, n, dim, empty_extent(),
                                                  thrust::raw_pointer_cast(scratch.data()),
                                                  thrust::raw_pointer_cast(done.data()), finish);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}
#endif

// What the rounding pad and the grids need of the space, in a form device code can take.
struct PadSpace {
  int dim = 3;
  bool periodic = false;
  double size[3] = {0, 0, 0};
};
inline PadSpace pad_space(const Domain& dom, int dim) {
  PadSpace s;
  s.dim = dim;
  s.periodic = dom.periodic;
  for (int a = 0; a < 3; ++a) s.size[a] = dom.size[a];
  return s;
}

// Largest extent of the space a grid must cover: the box edge when periodic, else the
// bodies' boxes.
NESTSIM_HD inline double space_span(const Extent& e, const PadSpace& s) {
  double span = 0;
  for (int a = 0; a < s.dim; ++a) {
    const double w = s.periodic ? s.size[a] : e.box_hi[a] - e.box_lo[a];
    span = w > span ? w : span;
  }
  return span;
}

// Rounding pad: covers the error of the exact test in the body precision (positions,
// minimum image, squares) and of the cell geometry in double, so that no pair the exact
// test accepts can fall outside the cells searched.
template <class Real>
NESTSIM_HD double rounding_pad(const Extent& e, const PadSpace& s) {
  const double eps = sizeof(Real) == sizeof(float) ? double(FLT_EPSILON) : DBL_EPSILON;
  return 64.0 * eps * (e.absmax + space_span(e, s) + 2.0 * e.rmax) + DBL_MIN;
}
template <class Real>
double rounding_pad(const Extent& e, const Domain& dom, int dim) {
  return rounding_pad<Real>(e, pad_space(dom, dim));
}

}  // namespace nestsim::detail

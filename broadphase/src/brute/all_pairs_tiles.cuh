// All pairs on the GPU in tiles of shared memory (HSX's path for small n).
#pragma once
#include <algorithm>
#include <cstdint>

#include "common/bodies.cuh"
#include "common/pair_sink.cuh"
#include "nestsim/device/check.cuh"
#include "nestsim/pair_mapping.h"

namespace nestsim::detail {

#if defined(NESTSIM_BACKEND_CUDA)
// All pairs on the GPU in tiles, the N-body pattern: a block of kTile threads takes
// rows [I kTile, (I + 1) kTile) against columns [J kTile, ...) held in shared memory,
// I <= J, every thread reading the same column at once (a broadcast); diagonal tiles
// test only t > row. Block k -> tile pair (I, J) by the gpu-mapping-function seed's
// square-root mapping (pair_mapping.h) over tiles + 1 indices, J = b - 1. Pairs through
// the fused sink (pair_sink.cuh, run_pair_step). Tiles of kTile = 128 columns, or of
// kSmallTile = 32 where 128-wide tiles would give fewer than kSmallTileBlocks blocks: at
// ~1e3 bodies (the simulator's per-step list build of a small model) 55 blocks of 128
// threads leave most SMs idle and each thread tests 128 columns in a row. The small
// tiles' rows are split among kSmallTileSplit threads, each testing every
// kSmallTileSplit-th column: one thread's 32 tests in a row, chains of FP64 latency,
// took ~30,000 cycles (1,201 bodies on an H200: 34 us for 741 blocks of one warp, 1.3
// warps per scheduler; docs/performance.md, "One item per thread in the step's loops").
constexpr uint32_t kTile = 128;
constexpr uint32_t kSmallTile = 32;
constexpr uint32_t kSmallTileSplit = 4;
constexpr uint64_t kSmallTileBlocks = 512;

template <class Real, int Dim>
struct TileRow {
  const detail::PackedBody<Real>* column;
  const Real* column_q;
  Space<Real> space;
  Real p[3], r, q;
  uint32_t row, first_column, t0, count, stride;
  template <class Emitter>
  NESTSIM_HD void walk(uint32_t, Emitter& e) const {
    for (uint32_t t = t0; t < count; t += stride) {
      const detail::PackedBody<Real> b = column[t];
      const Real pb[3] = {b.x, b.y, b.z};
      if (detail::exact_pair(space, p, r, q, pb, b.r, column_q[t])) e.emit(row, first_column + t);
    }
  }
};

// A block of Tile * Split threads: thread x takes row x % Tile of the tile and the
// columns t = s, s + Split, ... (s = x / Tile).
template <class Real, int Dim, uint32_t Tile, uint32_t Split>
__global__ void __launch_bounds__(Tile * Split)
    all_pairs_tiles_kernel(BodyArrays<Real> bodies, Space<Real> space, uint32_t n, uint32_t tiles,
                           uint64_t tile_pairs, PairSink sink) {
  __shared__ detail::PackedBody<Real> column[Tile];
  __shared__ Real column_q[Tile];
  const uint32_t r = threadIdx.x % Tile, s = threadIdx.x / Tile;
  for (uint64_t k = blockIdx.x; k < tile_pairs; k += gridDim.x) {
    uint32_t I = 0, J = 0;
    pair_from_index(k, tiles + 1, I, J);
    --J;
    const uint32_t c = J * Tile + threadIdx.x;
    __syncthreads();  // the previous tile is read
    if (threadIdx.x < Tile && c < n) {
      Real pc[3] = {0, 0, 0};
      bodies.load(c, Dim, pc);
      column[threadIdx.x] = detail::PackedBody<Real>{pc[0], pc[1], pc[2], bodies.radius[c]};
      column_q[threadIdx.x] = bodies.thickness[c];
    }
    __syncthreads();
    const uint32_t i = I * Tile + r;
    if (i >= n) continue;
    // The first column of this thread's share: s, or on a diagonal tile the first
    // t > r with t = s mod Split.
    uint32_t t0 = s;
    if (I == J) t0 = r + 1 + (s + Split - (r + 1) % Split) % Split;
    TileRow<Real, Dim> row{column, column_q, space, {0, 0, 0}, bodies.radius[i],
                           bodies.thickness[i], i, J * Tile, t0,
                           n - J * Tile < Tile ? n - J * Tile : Tile, Split};
    bodies.load(i, Dim, row.p);
    detail::run_pair_step<false>(row, 0u, sink);
  }
}

template <class Real, int Dim, uint32_t Tile, uint32_t Split>
void launch_all_pairs_tiles(const BodyArrays<Real>& bodies, const Space<Real>& space, uint32_t n,
                            const PairSink& sink) {
  const uint32_t tiles = (n + Tile - 1) / Tile;
  const uint64_t tile_pairs = uint64_t(tiles) * (tiles + 1) / 2;
  const uint32_t blocks = uint32_t(std::min<uint64_t>(tile_pairs, uint64_t(1) << 30));
  all_pairs_tiles_kernel<Real, Dim, Tile, Split>
      <<<blocks, Tile * Split>>>(bodies, space, n, tiles, tile_pairs, sink);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
}

template <class Real, int Dim>
void all_pairs_tiles(const BodyArrays<Real>& bodies, const Space<Real>& space, uint32_t n,
                     unsigned long long* total, uint64_t* out, uint64_t capacity) {
  PairSink sink;
  sink.out = out;
  sink.total = total;
  sink.capacity = capacity;
  const uint64_t tiles = (uint64_t(n) + kTile - 1) / kTile;
  if (tiles * (tiles + 1) / 2 < kSmallTileBlocks)
    launch_all_pairs_tiles<Real, Dim, kSmallTile, kSmallTileSplit>(bodies, space, n, sink);
  else
    launch_all_pairs_tiles<Real, Dim, kTile, 1>(bodies, space, n, sink);
}
#endif

}  // namespace nestsim::detail

// The GPU's ceilings for the memory patterns of HSX's sort into cells (CUDA backend
// only; docs/performance.md, "The sort's memory ceilings"): what moving N 32-byte body
// records costs when they go to, or come from, random places, against a streaming copy of
// the same bytes.
//   bench_memory [--sizes 1e5,1e6,1e7] [--repeats K]
// Kernels, one thread per record (BodyRecord<float> is 32 bytes, one sector):
//   copy      dst[k] = src[k]                          (streaming floor)
//   scatter   dst[perm[k]] = src[k]                    (a permutation)
//   gather    dst[k] = src[perm[k]]                    (the radix path's GatherSorted)
//   ranks     rank[k] = atomicAdd(&count[bucket[k]], 1)  (BinGroups' atomics, table
//             of 1.9 N buckets, as HSX's exponential scenes have)
//   place     dst[start[bucket[k]] + rank[k]] = src[k]  (PlaceSorted)
//   ranks in order, plain / per warp: the atomics with buckets in order (bucket[k] =
//             k / 4: four neighbours per bucket, as spatially ordered bodies share
//             cells), one atomic per thread, or one per bucket and warp (a labelled
//             partition; measured and rejected for BinGroups, the same section);
//             "ranks/warp" the same per-warp variant on the random buckets
// Each median of K launches timed with events, in microseconds.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_memory: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CHECK_CUDA(x) check((x), #x)

struct alignas(32) Record {
  uint4 a, b;
};

__global__ void copy_kernel(const Record* src, Record* dst, uint32_t n) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) dst[k] = src[k];
}
__global__ void scatter_kernel(const Record* src, const uint32_t* perm, Record* dst, uint32_t n) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) dst[perm[k]] = src[k];
}
__global__ void gather_kernel(const Record* src, const uint32_t* perm, Record* dst, uint32_t n) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) dst[k] = src[perm[k]];
}
__global__ void ranks_kernel(const uint32_t* bucket, uint32_t* count, uint32_t* rank, uint32_t n) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) rank[k] = atomicAdd(&count[bucket[k]], 1u);
}
__global__ void ranks_warp_kernel(const uint32_t* bucket, uint32_t* count, uint32_t* rank,
                                  uint32_t n) {
  namespace cg = cooperative_groups;
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const uint32_t b = bucket[k];
  const cg::coalesced_group peers = cg::labeled_partition(cg::coalesced_threads(), b);
  uint32_t first = 0;
  if (peers.thread_rank() == 0) first = atomicAdd(&count[b], peers.size());
  rank[k] = peers.shfl(first, 0) + peers.thread_rank();
}
__global__ void place_kernel(const uint32_t* bucket, const uint32_t* rank, const uint32_t* start,
                             const Record* src, Record* dst, uint32_t n) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) dst[start[bucket[k]] + rank[k]] = src[k];
}

template <class Launch>
double median_us(int repeats, Launch launch) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  launch();  // warm-up
  CHECK_CUDA(cudaGetLastError());
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    CHECK_CUDA(cudaEventRecord(a));
    launch();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1000.0 * ms);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, std::max<std::size_t>(1, host.size()) * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

void run(uint32_t n, int repeats) {
  const uint32_t table = uint32_t(uint64_t(n) * 19 / 10);
  std::mt19937 rng(12345 + n);
  std::vector<uint32_t> perm(n), bucket(n);
  for (uint32_t i = 0; i < n; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  for (uint32_t i = 0; i < n; ++i) bucket[i] = uint32_t(rng() % table);
  std::vector<uint32_t> start(std::size_t(table) + 1, 0);
  for (uint32_t i = 0; i < n; ++i) ++start[bucket[i] + 1];
  for (uint32_t b = 0; b < table; ++b) start[b + 1] += start[b];

  Record *src = nullptr, *dst = nullptr;
  uint32_t *count = nullptr, *rank = nullptr;
  CHECK_CUDA(cudaMalloc(&src, std::size_t(n) * sizeof(Record)));
  CHECK_CUDA(cudaMalloc(&dst, std::size_t(n) * sizeof(Record)));
  CHECK_CUDA(cudaMalloc(&count, (std::size_t(table) + 1) * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&rank, std::size_t(n) * sizeof(uint32_t)));
  CHECK_CUDA(cudaMemset(src, 1, std::size_t(n) * sizeof(Record)));
  uint32_t* d_perm = device_copy(perm);
  uint32_t* d_bucket = device_copy(bucket);
  uint32_t* d_start = device_copy(start);
  const uint32_t threads = 256, blocks = (n + threads - 1) / threads;

  const double copy = median_us(repeats, [&] { copy_kernel<<<blocks, threads>>>(src, dst, n); });
  const double scatter =
      median_us(repeats, [&] { scatter_kernel<<<blocks, threads>>>(src, d_perm, dst, n); });
  const double gather =
      median_us(repeats, [&] { gather_kernel<<<blocks, threads>>>(src, d_perm, dst, n); });
  const double clear = median_us(repeats, [&] {
    CHECK_CUDA(cudaMemsetAsync(count, 0, (std::size_t(table) + 1) * sizeof(uint32_t)));
  });
  const double ranks = median_us(repeats, [&] {
    CHECK_CUDA(cudaMemsetAsync(count, 0, (std::size_t(table) + 1) * sizeof(uint32_t)));
    ranks_kernel<<<blocks, threads>>>(d_bucket, count, rank, n);
  }) - clear;
  const double place = median_us(repeats, [&] {
    place_kernel<<<blocks, threads>>>(d_bucket, rank, d_start, src, dst, n);
  });
  std::vector<uint32_t> ordered(n);
  for (uint32_t i = 0; i < n; ++i) ordered[i] = i / 4;
  uint32_t* d_ordered = device_copy(ordered);
  const double ranks_ordered = median_us(repeats, [&] {
    CHECK_CUDA(cudaMemsetAsync(count, 0, (std::size_t(table) + 1) * sizeof(uint32_t)));
    ranks_kernel<<<blocks, threads>>>(d_ordered, count, rank, n);
  }) - clear;
  const double ranks_ordered_warp = median_us(repeats, [&] {
    CHECK_CUDA(cudaMemsetAsync(count, 0, (std::size_t(table) + 1) * sizeof(uint32_t)));
    ranks_warp_kernel<<<blocks, threads>>>(d_ordered, count, rank, n);
  }) - clear;
  const double ranks_random_warp = median_us(repeats, [&] {
    CHECK_CUDA(cudaMemsetAsync(count, 0, (std::size_t(table) + 1) * sizeof(uint32_t)));
    ranks_warp_kernel<<<blocks, threads>>>(d_bucket, count, rank, n);
  }) - clear;
  CHECK_CUDA(cudaFree(d_ordered));
  std::printf("%10u %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", n, copy, scatter,
              gather, ranks, ranks_random_warp, place, ranks_ordered, ranks_ordered_warp);
  for (void* p : {static_cast<void*>(src), static_cast<void*>(dst), static_cast<void*>(count),
                  static_cast<void*>(rank), static_cast<void*>(d_perm),
                  static_cast<void*>(d_bucket), static_cast<void*>(d_start)})
    CHECK_CUDA(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint32_t> sizes = {100000, 1000000, 10000000};
  int repeats = 21;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--sizes" && k + 1 < argc) {
      sizes.clear();
      std::stringstream in(argv[++k]);
      std::string item;
      while (std::getline(in, item, ',')) sizes.push_back(uint32_t(std::stod(item)));
    } else if (a == "--repeats" && k + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++k]));
    } else {
      std::fprintf(stderr, "usage: bench_memory [--sizes 1e5,1e6,1e7] [--repeats K]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("# bench_memory, %s, L2 %d MB; median us of %d launches; 32-byte records\n",
              prop.name, prop.l2CacheSize >> 20, repeats);
  std::printf("%10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "N", "copy", "scatter", "gather",
              "ranks", "ranks/warp", "place", "ord.ranks", "ord./warp");
  for (uint32_t n : sizes) run(n, repeats);
  return 0;
}

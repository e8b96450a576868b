// LatticeCounter: the O(N) lattice counts of Saldanha, de Souza: "High Performance
// Algorithms for Counting Collisions and Pairwise Interactions" (section III, Algorithms
// 1 and 2) on the backend, behind the launch/fetch API of the "Elf Collision Count"
// README (docs/design.md, "The papers").
// Asynchrony per backend: see nestsim/testing/lattice.h.
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "lattice_kernels.cuh"
#include "nestsim/device/check.cuh"
#include "nestsim/testing/lattice.h"

#if defined(NESTSIM_BACKEND_CUDA)
#include <thrust/system/cuda/execution_policy.h>
#else
#include <future>
#include <mutex>
#endif

namespace nestsim {

struct LatticeCounter::Impl {
  detail::SiteMap map;
  uint64_t sites = 0;
  thrust::device_vector<uint32_t> space;
#if defined(NESTSIM_BACKEND_CUDA)
  cudaStream_t stream = nullptr;
  ~Impl() {
    if (stream) cudaStreamDestroy(stream);
  }
#else
  std::mutex busy;  // one call at a time on the shared space array
#endif

  uint32_t* space_ptr() { return thrust::raw_pointer_cast(space.data()); }

  // Throws naming the first bead outside [-a, a]^dim.
  void validate(const std::vector<Bead>& beads) const {
    if (beads.size() > std::numeric_limits<uint32_t>::max())
      throw std::invalid_argument("lattice counts take at most 2^32 - 1 beads");
    for (std::size_t i = 0; i < beads.size(); ++i) {
      const Bead& b = beads[i];
      if (map.inside(b.x) && map.inside(b.y) && (map.dim == 2 || map.inside(b.z))) continue;
      std::ostringstream msg;
      msg << "bead " << i << " at (" << b.x << ", " << b.y;
      if (map.dim == 3) msg << ", " << b.z;
      msg << ") lies outside the lattice space [" << -map.a << ", " << map.a << "]^" << map.dim;
      throw std::invalid_argument(msg.str());
    }
  }
};

namespace {

enum class Relation { collisions, contacts };

// One call of Algorithm 1 or 2 (section III): initialise the sites it reads, then count.
// Each for_each completes before the next starts (stream order on CUDA), which is the
// barrier between the seed's loops.
template <class Policy>
void run_count(const Policy& policy, const detail::SiteMap& map, uint32_t* space,
               const Bead* beads, uint32_t n, Relation relation, unsigned long long* total) {
  if (n == 0) return;
  const thrust::counting_iterator<uint32_t> first(0);
  const bool contacts = relation == Relation::contacts;
  thrust::for_each_n(policy, first, n, detail::ClearSites{map, space, beads, contacts});
  if (contacts) {
    thrust::for_each_n(policy, first, n, detail::PlaceBeads{map, space, beads});
    thrust::for_each_n(policy, first, n, detail::CountContacts{map, space, beads, total});
  } else {
    thrust::for_each_n(policy, first, n, detail::CountCollisions{map, space, beads, total});
  }
}

}  // namespace

struct CountPromise::State {
  std::shared_ptr<LatticeCounter::Impl> owner;  // keeps the space array alive
  bool halve = false;                           // contacts are seen from both beads
#if defined(NESTSIM_BACKEND_CUDA)
  Bead* beads = nullptr;
  unsigned long long* total = nullptr;
  cudaEvent_t done = nullptr;

  ~State() {
    if (done) cudaEventSynchronize(done);
    if (beads) cudaFree(beads);
    if (total) cudaFree(total);
    if (done) cudaEventDestroy(done);
  }
  uint64_t wait() {
    NESTSIM_CUDA_CHECK(cudaEventSynchronize(done));
    unsigned long long host = 0;
    NESTSIM_CUDA_CHECK(cudaMemcpy(&host, total, sizeof host, cudaMemcpyDeviceToHost));
    return halve ? host / 2 : host;
  }
#else
  std::future<uint64_t> result;
  uint64_t wait() {
    const uint64_t count = result.get();
    return halve ? count / 2 : count;
  }
#endif
};

CountPromise::CountPromise() = default;
CountPromise::CountPromise(std::unique_ptr<State> state) : state_(std::move(state)) {}
CountPromise::~CountPromise() = default;
CountPromise::CountPromise(CountPromise&&) noexcept = default;
CountPromise& CountPromise::operator=(CountPromise&&) noexcept = default;

bool CountPromise::valid() const { return state_ != nullptr; }

uint64_t CountPromise::fetch() {
  if (!state_) throw std::logic_error("CountPromise::fetch: nothing launched, or already fetched");
  std::unique_ptr<State> state = std::move(state_);
  return state->wait();
}

LatticeCounter::LatticeCounter(int32_t half_extent, int dim) {
  if (dim != 2 && dim != 3)
    throw std::invalid_argument("lattice dimension must be 2 or 3, not " + std::to_string(dim));
  if (half_extent < 0)
    throw std::invalid_argument("lattice half extent must be >= 0, not " +
                                std::to_string(half_extent));
  const uint64_t side = 2 * uint64_t(half_extent) + 1;
  const long double sites = dim == 3 ? (long double)side * side * side : (long double)side * side;
  if (sites * kBytesPerSite > (long double)std::numeric_limits<std::size_t>::max() / 2)
    throw std::length_error("lattice space of " + std::to_string(double(sites)) +
                            " sites does not fit in memory");
  auto impl = std::make_shared<Impl>();
  impl->map.a = half_extent;
  impl->map.dim = dim;
  impl->map.side = side;
  impl->sites = dim == 3 ? side * side * side : side * side;
  impl->space.assign(impl->sites, 0u);  // zeroed once; calls re-initialise what they touch
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
#endif
  impl_ = std::move(impl);
}

LatticeCounter::~LatticeCounter() = default;
LatticeCounter::LatticeCounter(LatticeCounter&&) noexcept = default;
LatticeCounter& LatticeCounter::operator=(LatticeCounter&&) noexcept = default;

int32_t LatticeCounter::half_extent() const { return impl_->map.a; }
int LatticeCounter::dim() const { return impl_->map.dim; }
uint64_t LatticeCounter::site_count() const { return impl_->sites; }
uint64_t LatticeCounter::space_bytes() const { return impl_->sites * kBytesPerSite; }

const char* LatticeCounter::backend_name() {
#if defined(NESTSIM_BACKEND_CUDA)
  return "CUDA";
#else
  return "CPU (Thrust/OpenMP)";
#endif
}

namespace {

CountPromise launch(const std::shared_ptr<LatticeCounter::Impl>& impl,
                    const std::vector<Bead>& beads, Relation relation) {
  impl->validate(beads);
  auto state = std::make_unique<CountPromise::State>();
  state->owner = impl;
  state->halve = relation == Relation::contacts;
  const uint32_t n = static_cast<uint32_t>(beads.size());
#if defined(NESTSIM_BACKEND_CUDA)
  cudaStream_t stream = impl->stream;
  NESTSIM_CUDA_CHECK(cudaMalloc(&state->total, sizeof(unsigned long long)));
  if (n) NESTSIM_CUDA_CHECK(cudaMalloc(&state->beads, sizeof(Bead) * n));
  NESTSIM_CUDA_CHECK(cudaEventCreateWithFlags(&state->done, cudaEventDisableTiming));
  NESTSIM_CUDA_CHECK(cudaMemsetAsync(state->total, 0, sizeof(unsigned long long), stream));
  // From pageable memory the copy returns once the beads are staged: the caller may
  // release its vector.
  if (n)
    NESTSIM_CUDA_CHECK(cudaMemcpyAsync(state->beads, beads.data(), sizeof(Bead) * n,
                                       cudaMemcpyHostToDevice, stream));
  run_count(thrust::cuda::par_nosync.on(stream), impl->map, impl->space_ptr(), state->beads, n,
            relation, state->total);
  NESTSIM_CUDA_CHECK(cudaGetLastError());
  NESTSIM_CUDA_CHECK(cudaEventRecord(state->done, stream));
#else
  state->result = std::async(std::launch::async, [impl, relation, n, copy = beads]() {
    std::lock_guard<std::mutex> hold(impl->busy);
    unsigned long long total = 0;
    run_count(thrust::device, impl->map, impl->space_ptr(), copy.data(), n, relation, &total);
    return uint64_t(total);
  });
#endif
  return CountPromise(std::move(state));
}

}  // namespace

CountPromise LatticeCounter::launch_collisions(const std::vector<Bead>& beads) {
  return launch(impl_, beads, Relation::collisions);
}
CountPromise LatticeCounter::launch_contacts(const std::vector<Bead>& beads) {
  return launch(impl_, beads, Relation::contacts);
}
uint64_t LatticeCounter::count_collisions(const std::vector<Bead>& beads) {
  return launch_collisions(beads).fetch();
}
uint64_t LatticeCounter::count_contacts(const std::vector<Bead>& beads) {
  return launch_contacts(beads).fetch();
}

}  // namespace nestsim

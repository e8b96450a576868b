// The plain-C++ Broadphase class over the device PairFinder.
#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/device/pair_finder.cuh"
#include "nestsim/device/check.cuh"

#if defined(NESTSIM_BACKEND_CPU)
#include <omp.h>
#endif

namespace nestsim {

namespace {

// Thrust's copies take the address of the first element even of an empty range, which
// for a std::vector's iterator binds a reference to null (UBSan): empty ranges are
// handled here without them.
template <class T>
void to_device(const std::vector<T>& from, thrust::device_vector<T>& to) {
  if (from.empty())
    to.clear();
  else
    to.assign(from.begin(), from.end());
}

template <class T>
std::vector<T> to_host(const thrust::device_vector<T>& from) {
  std::vector<T> to(from.size());
  if (!to.empty()) thrust::copy(from.begin(), from.end(), to.begin());
  return to;
}

}  // namespace

template <class Real>
struct Broadphase<Real>::Impl {
  explicit Impl(const BroadphaseOptions& o) : finder(o) {}
  device::PairFinder<Real> finder;
  thrust::device_vector<Real> pos[3], radius, thickness;
  uint32_t n = 0;

  device::SphereView<Real> view() const {
    device::SphereView<Real> v;
    for (int a = 0; a < 3; ++a) v.pos[a] = thrust::raw_pointer_cast(pos[a].data());
    v.radius = thrust::raw_pointer_cast(radius.data());
    v.thickness = thrust::raw_pointer_cast(thickness.data());
    v.n = n;
    return v;
  }
};

template <class Real>
Broadphase<Real>::Broadphase(const BroadphaseOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
template <class Real>
Broadphase<Real>::~Broadphase() = default;
template <class Real>
Broadphase<Real>::Broadphase(Broadphase&&) noexcept = default;
template <class Real>
Broadphase<Real>& Broadphase<Real>::operator=(Broadphase&&) noexcept = default;

template <class Real>
const BroadphaseOptions& Broadphase<Real>::options() const {
  return impl_->finder.options();
}

template <class Real>
void Broadphase<Real>::upload(const SphereSet<Real>& bodies) {
  const int dim = options().domain.dim;
  bodies.validate(dim);
  check_supported(bodies, options());
  if (bodies.size() > 0xffffffffu - 1)
    throw std::invalid_argument("at most 2^32 - 2 bodies are supported");
  impl_->n = static_cast<uint32_t>(bodies.size());
  const std::vector<Real>* src[3] = {&bodies.x, &bodies.y, &bodies.z};
  for (int a = 0; a < 3; ++a) {
    if (a < dim)
      to_device(*src[a], impl_->pos[a]);
    else
      impl_->pos[a].clear();
  }
  to_device(bodies.radius, impl_->radius);
  to_device(bodies.thickness, impl_->thickness);
}

template <class Real>
std::size_t Broadphase<Real>::body_count() const {
  return impl_->n;
}

template <class Real>
uint64_t Broadphase<Real>::find() {
  return impl_->finder.find(impl_->view(), false);
}

template <class Real>
uint64_t Broadphase<Real>::count() {
  return impl_->finder.find(impl_->view(), true);
}

template <class Real>
uint64_t Broadphase<Real>::pair_count() const {
  return impl_->finder.pair_count();
}

template <class Real>
PairList Broadphase<Real>::pairs() const {
  impl_->finder.sort_keys();  // where find() left them in the order found
  const uint64_t p = impl_->finder.pair_count();
  std::vector<uint64_t> keys(p);
  if (p > 0) thrust::copy_n(impl_->finder.keys().begin(), p, keys.begin());
  PairList out;
  out.i.resize(p);
  out.j.resize(p);
  for (uint64_t k = 0; k < p; ++k) {
    out.i[k] = device::pair_first(keys[k]);
    out.j[k] = device::pair_second(keys[k]);
  }
  return out;
}

template <class Real>
NeighbourLists Broadphase<Real>::neighbour_lists() const {
  thrust::device_vector<uint64_t> offsets;
  thrust::device_vector<uint32_t> neighbours, rows;
  impl_->finder.neighbour_lists(impl_->n, offsets, neighbours, &rows);
  NeighbourLists out;
  out.offsets = to_host(offsets);
  out.neighbours = to_host(neighbours);
  out.rows = to_host(rows);
  return out;
}

namespace {

// Times `repeats` calls of call() (on the GPU with events around each, on the CPU with
// the steady clock).
template <class Call>
Timings time_calls(int repeats, Call call) {
  Timings t;
#if defined(NESTSIM_BACKEND_CUDA)
  cudaEvent_t start, stop;
  NESTSIM_CUDA_CHECK(cudaEventCreate(&start));
  NESTSIM_CUDA_CHECK(cudaEventCreate(&stop));
  for (int r = 0; r < repeats; ++r) {
    NESTSIM_CUDA_CHECK(cudaEventRecord(start));
    call();
    NESTSIM_CUDA_CHECK(cudaEventRecord(stop));
    NESTSIM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    NESTSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    t.ms.push_back(ms);
  }
  NESTSIM_CUDA_CHECK(cudaEventDestroy(start));
  NESTSIM_CUDA_CHECK(cudaEventDestroy(stop));
#else
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    t.ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
#endif
  return t;
}

}  // namespace

template <class Real>
Timings Broadphase<Real>::time(int repeats, bool count_only) {
  auto call = [&] { return impl_->finder.find(impl_->view(), count_only); };
  call();  // warm-up: allocations, first-touch
  return time_calls(repeats, call);
}

template <class Real>
Timings Broadphase<Real>::time_floor(int repeats, int dim) const {
  const std::size_t bytes =
      std::size_t(impl_->n) * std::size_t(dim + 2) * sizeof(Real) + pair_count() * sizeof(uint64_t);
  thrust::device_vector<unsigned char> from(std::max<std::size_t>(bytes, 1)), to(from.size());
  auto call = [&] { thrust::copy(from.begin(), from.end(), to.begin()); };
  call();
  return time_calls(repeats, call);
}

template <class Real>
std::string Broadphase<Real>::backend_name() {
#if defined(NESTSIM_BACKEND_CUDA)
  int dev = 0;
  NESTSIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  NESTSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return std::string("CUDA (") + prop.name + ")";
#else
  return "CPU (Thrust/OpenMP, " + std::to_string(omp_get_max_threads()) + " threads)";
#endif
}

template <class Real>
PairList find_pairs(const SphereSet<Real>& bodies, const BroadphaseOptions& options) {
  Broadphase<Real> finder(options);
  finder.upload(bodies);
  finder.find();
  return finder.pairs();
}

template class Broadphase<float>;
template class Broadphase<double>;
template PairList find_pairs(const SphereSet<float>&, const BroadphaseOptions&);
template PairList find_pairs(const SphereSet<double>&, const BroadphaseOptions&);

}  // namespace nestsim

// The engine's data-parallel loops: one thread per slot or per list entry (Thrust on the
// device), and raw pointers of device vectors for the functors' views.
#pragma once
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>

#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"

namespace nestsim::sim::detail {

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

// f(i) for i in [0, n), through nestsim::detail::on_items_on (device/exec.cuh): on the
// CPU with teams that follow the cores other programs leave free, and on the calling
// thread below serial_items() (nestsim/tuning.h).
template <class F, class Index>
void for_each_item(Index n, const F& f) {
  if (n == 0) return;
  nestsim::detail::on_items_on(thrust::device, uint64_t(n), [&](const auto& exec) {
    thrust::for_each_n(exec, thrust::counting_iterator<Index>(0), n, f);
  });
}

template <class F>
void for_each_slot(uint32_t n, F f) {
  for_each_item(n, f);
}

template <class F>
void for_each_index(uint64_t n, F f) {
  for_each_item(n, f);
}

// Waits for the calling thread's stream only: replicas on other threads keep running.
inline void device_sync() {
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
#endif
}

}  // namespace nestsim::sim::detail

// The engine's data-parallel loops: one thread per slot or per list entry (Thrust on the
// device), and raw pointers of device vectors for the functors' views.
#pragma once
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstddef>
#include <cstdint>

#if defined(NESTSIM_BACKEND_CUDA)
#include <thrust/system/cuda/execution_policy.h>
#endif

#include "nestsim/device/check.cuh"
#include "nestsim/device/exec.cuh"

namespace nestsim::sim::detail {

// Counts one wait of the host for the device (nestsim::sim::detail::host_syncs(),
// simulation.h): every device_sync() and every read-back below. Counted on the CPU
// backend too, where the waits cost nothing, so that tests see what a GPU step waits for.
void count_host_sync();

// The policy of the step's loops, fills and copies. On CUDA it does not synchronise
// after each call (Thrust's thrust::device waits for every kernel): the work queues on
// the calling thread's stream and the host waits only where it reads a result back.
// On the CPU, the device system (OpenMP) as before.
inline auto step_policy() {
#if defined(NESTSIM_BACKEND_CUDA)
  return thrust::cuda::par_nosync;
#else
  return thrust::device;
#endif
}

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

// f(i) for i in [0, n): on the GPU one item per thread on the calling thread's stream
// (nestsim::detail::launch_items, device/exec.cuh); on the CPU through
// nestsim::detail::on_items_on, with teams that follow the cores other programs leave
// free, and on the calling thread below serial_items() (nestsim/tuning.h).
template <class F, class Index>
void for_each_item(Index n, const F& f) {
  if (n == 0) return;
#if defined(NESTSIM_BACKEND_CUDA)
  nestsim::detail::launch_items(n, f);
#else
  nestsim::detail::on_items_on(step_policy(), uint64_t(n), [&](const auto& exec) {
    thrust::for_each_n(exec, thrust::counting_iterator<Index>(0), n, f);
  });
#endif
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
  count_host_sync();
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
#endif
}

// Element i of a device vector, copied to the host (the host waits for the work queued
// before it).
template <class T>
T read_back(const thrust::device_vector<T>& v, std::size_t i) {
  count_host_sync();
  return v[i];
}

}  // namespace nestsim::sim::detail

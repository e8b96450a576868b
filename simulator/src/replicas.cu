// Replicas: copies of a model on host threads of one process (nestsim/sim/replicas.h).
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "nestsim/device/check.cuh"
#include "nestsim/sim/replicas.h"

namespace nestsim::sim {
namespace {

#if defined(NESTSIM_BACKEND_CUDA)
// Replicas a GPU runs at a time by default: each host thread keeps one copy's chain of
// launches going, and 8 fill the device's idle time between a small model's launches
// without more threads than a GPU host's cores.
constexpr int kGpuReplicaWorkers = 8;

int cores() { return std::max(1, int(std::thread::hardware_concurrency())); }
#endif

}  // namespace

void finish_thread_work() {
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
#endif
}

int default_replica_workers() {
#if defined(NESTSIM_BACKEND_CUDA)
  return std::min(kGpuReplicaWorkers, cores());
#elif defined(_OPENMP)
  return std::max(1, omp_get_max_threads());  // the process's threads (OMP_NUM_THREADS)
#else
  return 1;
#endif
}

void for_each_replica(int count, const std::function<void(int)>& body, int workers) {
  if (count <= 0) return;
  if (workers <= 0) workers = default_replica_workers();
  workers = std::min(workers, count);
  if (workers == 1) {
    for (int r = 0; r < count; ++r) body(r);
    return;
  }
#if defined(NESTSIM_BACKEND_CUDA)
  int device = 0;
  NESTSIM_CUDA_CHECK(cudaGetDevice(&device));
#endif
#if defined(_OPENMP)
  const int team = std::max(1, omp_get_max_threads() / workers);
#endif
  std::atomic<int> next{0};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
  // A worker that cannot start (its device, its team) leaves the replicas to the others;
  // its error is reported only when no worker started, so no replica ran.
  std::vector<std::exception_ptr> start_errors(static_cast<std::size_t>(workers));
  std::vector<std::exception_ptr> end_errors(static_cast<std::size_t>(workers));
  auto work = [&](int w) {
    try {
#if defined(NESTSIM_BACKEND_CUDA)
      NESTSIM_CUDA_CHECK(cudaSetDevice(device));
#endif
#if defined(_OPENMP)
      omp_set_num_threads(team);
#endif
    } catch (...) {
      start_errors[std::size_t(w)] = std::current_exception();
      return;
    }
    for (int r = next++; r < count; r = next++) {
      try {
        body(r);
      } catch (...) {
        errors[std::size_t(r)] = std::current_exception();
      }
    }
    try {
      finish_thread_work();
    } catch (...) {
      end_errors[std::size_t(w)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(std::size_t(workers));
  for (int w = 0; w < workers; ++w) threads.emplace_back(work, w);
  for (auto& t : threads) t.join();
  if (next.load() == 0)
    for (const auto& e : start_errors)
      if (e) std::rethrow_exception(e);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (const auto& e : end_errors)
    if (e) std::rethrow_exception(e);
}

Replicas::Replicas(const std::vector<model::Setup>& setups, const SimulationOptions& options,
                   int workers)
    : sims_(setups.size()),
      workers_(workers > 0 ? workers : default_replica_workers()) {
  for_each_replica(
      size(),
      [&](int r) {
        sims_[std::size_t(r)] = std::make_unique<Simulation>(setups[std::size_t(r)], options);
      },
      workers_);
}

void Replicas::run(uint64_t steps) {
  for_each_replica(size(), [&](int r) { sims_[std::size_t(r)]->run(steps); }, workers_);
}

std::vector<model::Frame> Replicas::frames() const {
  std::vector<model::Frame> out(sims_.size());
  for_each_replica(size(), [&](int r) { out[std::size_t(r)] = sims_[std::size_t(r)]->frame(); },
                   workers_);
  return out;
}

}  // namespace nestsim::sim

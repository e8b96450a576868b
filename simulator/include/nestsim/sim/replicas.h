// Independent copies of a model run side by side in one process: replicas for the
// statistics of an ensemble, the validation suite's independent runs, Python's
// Simulation(model, replicas=R).
//
// A small model cannot fill a GPU: each step is a chain of short launches, and a run of
// one copy leaves most SMs idle between them. Replicas put R copies on R host threads at
// a time; the engine is compiled with per-thread default streams (nvcc
// --default-stream per-thread), so each thread's launches, copies and waits go to a
// stream of its own and the copies' kernels overlap on the device. On the CPU backend
// the copies share the cores, one OpenMP team each.
//
// Each copy is an ordinary Simulation of its own Setup: its results are those of a
// separate run of that Setup, bit for bit, whatever the number of workers (tested in
// tests/test_replicas.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nestsim/model/setup.h"
#include "nestsim/sim/simulation.h"

namespace nestsim::sim {

// Host threads that run replicas at a time by default: on the GPU enough to keep the
// device busy while each thread waits on its own launches, at most one per core; on the
// CPU the process's OpenMP threads (OMP_NUM_THREADS), one copy on each.
int default_replica_workers();

// Waits for the work the calling host thread queued on its per-thread default stream
// (nothing on the CPU backend). A worker thread calls it before it ends: a thread that
// exits with work still queued can stall for good in the CUDA driver's clean-up of the
// thread's stream when other processes share the GPU (driver 580 on an H200: 3 or 4 of 4
// pytest processes of tests/python/test_replicas.py side by side, every time; none with
// this wait, 8 of 8; dev/gpu_replicas_hang.sh reproduces it).
void finish_thread_work();

// body(r) for r in [0, count), on up to `workers` host threads (0: the default), each on
// the CUDA device of the caller. On the CPU backend each worker's OpenMP team is its
// share of the cores. After every call has ended, the exception of the lowest r that
// threw is rethrown.
void for_each_replica(int count, const std::function<void(int)>& body, int workers = 0);

// R simulations advanced together; setups[r] is replica r's setup (normally the setups
// of one model with the seeds seed, seed + 1, ..., each placed with its own seed).
class Replicas {
 public:
  explicit Replicas(const std::vector<model::Setup>& setups, const SimulationOptions& options = {},
                    int workers = 0);

  int size() const { return int(sims_.size()); }
  // Advances every replica `steps` steps, side by side.
  void run(uint64_t steps);
  // Every replica's state now (frames()[r] is replica r's), copied side by side.
  std::vector<model::Frame> frames() const;

  Simulation& operator[](int r) { return *sims_.at(std::size_t(r)); }
  const Simulation& operator[](int r) const { return *sims_.at(std::size_t(r)); }
  int workers() const { return workers_; }

 private:
  std::vector<std::unique_ptr<Simulation>> sims_;
  int workers_ = 1;
};

}  // namespace nestsim::sim

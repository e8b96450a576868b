// Who runs which member: rank 0 hands out member indices on request, one at a time, to
// its own member slots (threads: one per GPU, or several on the CPU) and to the other
// MPI ranks (one slot each, on its node-local GPU). A rank asks for the next member when
// its last one ends, with that member's outcome in the same message, so a slow member
// holds only its own slot (dynamic load balancing), and rank 0, the only writer of
// ensemble.h5, records each member as it ends.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ensemble/ensemble_member.h"

namespace nestsim::app {

struct SlotPlan {
  int jobs = 1;           // members at a time in this process
  int threads = 1;        // OpenMP threads per member (CPU backend)
  std::vector<int> gpus;  // per slot: the CUDA device, empty on the CPU
};

// What rank 0 does with members: the job for index m, and what to do when one ends.
struct Coordinator {
  std::vector<uint64_t> pending;  // indices to run, in order
  std::function<MemberJob(uint64_t)> job;
  std::function<void(uint64_t, const MemberOutcome&, int rank)> ended;
};

// Rank 0 (or the only process): runs the pending members on `plan`'s local slots and,
// with MPI, serves the other ranks; returns when every member has ended or `stop` is
// set and the running ones have stopped.
void coordinate(Coordinator& c, const SlotPlan& plan, int ranks, const std::atomic<int>& stop);

// Ranks other than 0: asks rank 0 for members until it has none left.
void serve_rank0(const std::function<MemberJob(uint64_t)>& job, const SlotPlan& plan,
                 const std::atomic<int>& stop);

// Sets the calling thread's OpenMP threads and CUDA device (gpu < 0: none).
void bind_slot(int threads, int gpu);

}  // namespace nestsim::app

// The frames of a run into its trajectory without stalling the steps: at each output
// step the state is copied aside (Simulation::snapshot()) and a thread of its own
// copies it to the host and writes it while the steps go on. At most `frames_in_flight`
// frames are taken and not yet written; the steps wait for room rather than drop one.
// frames_in_flight 0: each frame copied and written before the steps go on.
#pragma once
#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <memory>

#include "nestsim/io/h5md.h"
#include "nestsim/io/write_queue.h"
#include "nestsim/sim/simulation.h"

namespace nestsim::app {

class FrameOutput {
 public:
  struct Times {
    double waited = 0;  // the steps waiting for room in the queue
    double copy = 0;    // copies to the host and frames assembled (writer thread)
  };

  FrameOutput(io::H5mdWriter& writer, std::size_t frames_in_flight) : writer_(writer) {
    if (frames_in_flight == 0) return;
    // The writer thread starts with SIGINT and SIGTERM blocked: the thread that runs the
    // steps handles them (stops at the next frame).
    sigset_t stop, previous;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &previous);
    try {
      queue_ = std::make_unique<io::WriteQueue<sim::PendingFrame>>(
          frames_in_flight, [this](sim::PendingFrame& p) { store(p); });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      throw;
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  // The frame at the simulation's step, written now (frames_in_flight 0) or queued.
  // Throws the writer's error (io::WriteError: disk full, ...) of this or an earlier
  // frame.
  void write(const sim::Simulation& simulation) {
    if (!queue_) {
      writer_.write(simulation.frame());
      return;
    }
    const Clock::time_point start = Clock::now();
    queue_->wait_for_room();  // before the snapshot: its buffers count in the bound
    times_.waited += seconds_since(start);
    queue_->push(simulation.snapshot());
  }

  // Every frame taken is written (or the writer's error thrown); the writer thread stops.
  void finish() {
    if (queue_) queue_->finish();
  }

  // Read after finish().
  Times times() const { return times_; }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  void store(sim::PendingFrame& pending) {  // on the writer thread
    const Clock::time_point start = Clock::now();
    const model::Frame frame = pending.take();
    times_.copy += seconds_since(start);
    writer_.write(frame);
  }

  io::H5mdWriter& writer_;
  Times times_;
  std::unique_ptr<io::WriteQueue<sim::PendingFrame>> queue_;  // last: stops first
};

}  // namespace nestsim::app

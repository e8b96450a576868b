// Frames copied aside so that the steps go on while they reach the host
// (Simulation::snapshot(), PendingFrame). On CUDA a capture is a device-to-device copy
// of the slot arrays on the stream the steps run on (ordered after the step that made
// them, before the next one); the copy to pinned host memory runs later, on a stream of
// its own, from the thread that takes the frame. On the CPU backend a capture is a plain
// copy into host memory.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "nestsim/sim/simulation.h"
#include "state.cuh"

#if defined(NESTSIM_BACKEND_CUDA)
#include <cuda_runtime.h>
#endif

namespace nestsim::sim::detail {

// One frame's slot arrays: positions, radius, thickness (double), id (int64), images,
// kind, parent, membrane (int32): 72 bytes per slot.
class SnapshotBuffer {
 public:
  static constexpr std::size_t bytes_per_slot = 5 * 8 + 8 + 6 * 4;

  SnapshotBuffer() = default;
  ~SnapshotBuffer();
  SnapshotBuffer(const SnapshotBuffer&) = delete;
  SnapshotBuffer& operator=(const SnapshotBuffer&) = delete;

  // On the thread that runs the steps: the slot arrays of `state` copied aside.
  void capture(const BodyState& state);
  // On any thread, once per capture: waits for the copy to reach the host and fills the
  // per-slot fields of `f` as BodyState::download does.
  void assemble(model::Frame& f);

 private:
  template <class T>
  const T* field(std::size_t offset) const {
    return reinterpret_cast<const T*>(host_ + offset);
  }
  void reserve(std::size_t bytes);  // the capture's storage, grown when too small
  void to_host();                   // CUDA: the device copy into pinned host memory

  std::size_t slots_ = 0;     // of the last capture
  std::size_t capacity_ = 0;  // bytes of `device_` (CUDA) and `host_`
  char* host_ = nullptr;      // pinned (CUDA) or plain host memory
#if defined(NESTSIM_BACKEND_CUDA)
  char* device_ = nullptr;
  std::size_t host_capacity_ = 0;
  int device_id_ = 0;
  cudaEvent_t captured_ = nullptr;      // recorded after the device copy
  cudaStream_t copy_stream_ = nullptr;  // non-blocking: the steps never wait for it
#endif
};

// The buffers not in use, for reuse by later snapshots (allocating pinned memory is
// slow, and cudaFree synchronises the device).
class SnapshotPool {
 public:
  std::unique_ptr<SnapshotBuffer> acquire();
  void release(std::unique_ptr<SnapshotBuffer> buffer);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<SnapshotBuffer>> free_;
};

}  // namespace nestsim::sim::detail

namespace nestsim::sim {

struct PendingFrame::Impl {
  std::shared_ptr<detail::SnapshotPool> pool;
  std::unique_ptr<detail::SnapshotBuffer> buffer;  // back to the pool when taken
  model::Frame frame;  // step, time and counters; the per-slot fields come from the buffer
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();
};

}  // namespace nestsim::sim

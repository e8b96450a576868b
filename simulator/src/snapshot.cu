#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

#include "device_loops.cuh"
#include "nestsim/sim/simulation.h"
#include "snapshot.cuh"

namespace nestsim::sim::detail {

namespace {

// The fields of a capture, in their order in the buffer (8-byte ones first, so that
// every field stays aligned): start of each, for `n` slots.
struct Layout {
  std::size_t x[3], radius, thickness, id, image[3], kind, parent, membrane, end;
  explicit Layout(std::size_t n) {
    std::size_t at = 0;
    auto next = [&](std::size_t bytes) {
      const std::size_t start = at;
      at += bytes * n;
      return start;
    };
    for (auto& k : x) k = next(8);
    radius = next(8);
    thickness = next(8);
    id = next(8);
    for (auto& k : image) k = next(4);
    kind = next(4);
    parent = next(4);
    membrane = next(4);
    end = at;
  }
};

// The copy to the host in pieces, each waited for before the next is queued: a wait of
// the steps for the device (a read-back, a timed phase) then waits for one piece at most.
constexpr std::size_t kCopyPiece = std::size_t(2) << 20;  // ~0.1 ms over PCIe

}  // namespace

SnapshotBuffer::~SnapshotBuffer() {
#if defined(NESTSIM_BACKEND_CUDA)
  // Errors ignored: nothing can be done about them while freeing.
  if (device_) (void)cudaFree(device_);
  if (host_) (void)cudaFreeHost(host_);
  if (captured_) (void)cudaEventDestroy(captured_);
  if (copy_stream_) (void)cudaStreamDestroy(copy_stream_);
#else
  std::free(host_);
#endif
}

void SnapshotBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return;
#if defined(NESTSIM_BACKEND_CUDA)
  if (device_) NESTSIM_CUDA_CHECK(cudaFree(device_));
  device_ = nullptr;
  capacity_ = 0;
  NESTSIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device_), bytes));
  if (!captured_) NESTSIM_CUDA_CHECK(cudaEventCreateWithFlags(&captured_, cudaEventDisableTiming));
#else
  std::free(host_);
  host_ = static_cast<char*>(std::malloc(bytes));
  if (!host_) {
    capacity_ = 0;
    throw std::bad_alloc();
  }
#endif
  capacity_ = bytes;
}

void SnapshotBuffer::capture(const BodyState& s) {
  const std::size_t n = std::size_t(s.capacity);
  const Layout at(n);
  reserve(at.end);
  slots_ = n;
  if (n == 0) return;
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaGetDevice(&device_id_));
  // Stream 0, where Thrust runs the steps: the copy follows the step that made the
  // state and precedes the next.
  auto copy = [&](std::size_t offset, const auto& v) {
    NESTSIM_CUDA_CHECK(cudaMemcpyAsync(device_ + offset, raw(v), n * sizeof(*raw(v)),
                                       cudaMemcpyDeviceToDevice, 0));
  };
#else
  auto copy = [&](std::size_t offset, const auto& v) {
    std::memcpy(host_ + offset, raw(v), n * sizeof(*raw(v)));
  };
#endif
  for (int k = 0; k < 3; ++k) copy(at.x[k], s.x[k]);
  copy(at.radius, s.radius);
  copy(at.thickness, s.thickness);
  copy(at.id, s.id);
  for (int k = 0; k < 3; ++k) copy(at.image[k], s.image[k]);
  copy(at.kind, s.kind);
  copy(at.parent, s.parent);
  copy(at.membrane, s.membrane);
#if defined(NESTSIM_BACKEND_CUDA)
  NESTSIM_CUDA_CHECK(cudaEventRecord(captured_, 0));
#endif
}

void SnapshotBuffer::to_host() {
#if defined(NESTSIM_BACKEND_CUDA)
  const std::size_t bytes = Layout(slots_).end;
  NESTSIM_CUDA_CHECK(cudaSetDevice(device_id_));  // this thread may not have used it yet
  if (host_capacity_ < bytes) {
    if (host_) NESTSIM_CUDA_CHECK(cudaFreeHost(host_));
    host_ = nullptr;
    host_capacity_ = 0;
    NESTSIM_CUDA_CHECK(
        cudaHostAlloc(reinterpret_cast<void**>(&host_), bytes, cudaHostAllocDefault));
    host_capacity_ = bytes;
  }
  if (!copy_stream_)
    NESTSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
  NESTSIM_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, captured_, 0));
  for (std::size_t done = 0; done < bytes; done += kCopyPiece) {
    const std::size_t piece = std::min(kCopyPiece, bytes - done);
    NESTSIM_CUDA_CHECK(
        cudaMemcpyAsync(host_ + done, device_ + done, piece, cudaMemcpyDeviceToHost, copy_stream_));
    NESTSIM_CUDA_CHECK(cudaStreamSynchronize(copy_stream_));
  }
#endif
}

void SnapshotBuffer::assemble(model::Frame& f) {
  const std::size_t n = slots_;
  if (n > 0) to_host();
  const Layout at(n);
  const double* x[3] = {field<double>(at.x[0]), field<double>(at.x[1]), field<double>(at.x[2])};
  const int32_t* image[3] = {field<int32_t>(at.image[0]), field<int32_t>(at.image[1]),
                             field<int32_t>(at.image[2])};
  const double* radius = field<double>(at.radius);
  const double* thickness = field<double>(at.thickness);
  const int64_t* id = field<int64_t>(at.id);
  const int32_t* kind = field<int32_t>(at.kind);
  const int32_t* parent = field<int32_t>(at.parent);
  const int32_t* membrane = field<int32_t>(at.membrane);
  f.position.resize(n);
  f.image.resize(n);
  f.parent.resize(n);
  f.membrane.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    f.position[i] = {x[0][i], x[1][i], x[2][i]};
    f.image[i] = {image[0][i], image[1][i], image[2][i]};
    f.parent[i] = parent[i] >= 0 ? id[std::size_t(parent[i])] : -1;
    f.membrane[i] = membrane[i] >= 0 ? id[std::size_t(membrane[i])] : -1;
  }
  f.id.assign(id, id + n);
  f.kind.assign(kind, kind + n);
  f.radius.assign(radius, radius + n);
  f.thickness.assign(thickness, thickness + n);
}

std::unique_ptr<SnapshotBuffer> SnapshotPool::acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) return std::make_unique<SnapshotBuffer>();
  std::unique_ptr<SnapshotBuffer> b = std::move(free_.back());
  free_.pop_back();
  return b;
}

void SnapshotPool::release(std::unique_ptr<SnapshotBuffer> buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(buffer));
}

}  // namespace nestsim::sim::detail

namespace nestsim::sim {

PendingFrame::PendingFrame(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PendingFrame::~PendingFrame() = default;
PendingFrame::PendingFrame(PendingFrame&&) noexcept = default;
PendingFrame& PendingFrame::operator=(PendingFrame&&) noexcept = default;

PendingFrame::Impl::~Impl() {
  if (buffer) pool->release(std::move(buffer));
}

uint64_t PendingFrame::step() const {
  if (!impl_) throw std::logic_error("PendingFrame: moved from");
  return impl_->frame.step;
}

model::Frame PendingFrame::take() {
  if (!impl_ || !impl_->buffer) throw std::logic_error("PendingFrame: taken before");
  model::Frame f = std::move(impl_->frame);
  impl_->buffer->assemble(f);
  impl_->pool->release(std::move(impl_->buffer));
  return f;
}

}  // namespace nestsim::sim

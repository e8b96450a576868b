// A writer thread behind a bounded queue, so that output does not stall the steps:
// push() hands an item to the thread, which passes the items to the sink one at a time,
// in the order pushed. At most `depth` items are in flight (queued, or in the sink):
// push() waits for room and never drops one. The first exception the sink throws stops
// the thread (the items queued after it are not passed on) and is rethrown on the
// pushing thread by its next push(), wait_for_room() or finish().
//
//   WriteQueue<Item> queue(2, [&](Item& item) { store(item); });
//   queue.push(make_item());  // waits while 2 are in flight
//   queue.finish();           // every item pushed is stored (or the sink's error thrown)
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace nestsim::io {

template <class Item>
class WriteQueue {
 public:
  // depth >= 1: the items in flight at most.
  WriteQueue(std::size_t depth, std::function<void(Item&)> sink)
      : depth_(depth), sink_(std::move(sink)) {
    if (depth_ == 0) throw std::invalid_argument("WriteQueue: depth must be at least 1");
    thread_ = std::thread([this] { drain(); });
  }
  // Passes every item pushed to the sink (a sink's error is not rethrown here), then
  // stops the thread.
  ~WriteQueue() { stop(); }
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // Waits until fewer than `depth` items are in flight; rethrows the sink's error.
  void wait_for_room() {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return in_flight_ < depth_ || error_; });
    if (error_) std::rethrow_exception(error_);
  }

  // Queues `item` once there is room; rethrows the sink's error (the item is then
  // not stored).
  void push(Item item) {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return in_flight_ < depth_ || error_; });
    if (error_) std::rethrow_exception(error_);
    if (stopping_) throw std::logic_error("WriteQueue: push after finish");
    queue_.push_back(std::move(item));
    ++in_flight_;
    work_.notify_one();
  }

  // Waits until every item pushed has been passed to the sink, stops the thread and
  // rethrows the sink's error, if any.
  void finish() {
    stop();
    if (error_) std::rethrow_exception(error_);
  }

  // Items queued or in the sink now.
  std::size_t in_flight() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_flight_;
  }

 private:
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and nothing is left
      std::optional<Item> item(std::move(queue_.front()));
      queue_.pop_front();
      lock.unlock();
      std::exception_ptr error;
      try {
        sink_(*item);
      } catch (...) {
        error = std::current_exception();
      }
      item.reset();  // released before the room is signalled: memory stays within the bound
      lock.lock();
      if (error) {
        error_ = error;
        in_flight_ = 0;
        queue_.clear();
        room_.notify_all();
        return;
      }
      --in_flight_;
      room_.notify_all();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  const std::size_t depth_;
  std::function<void(Item&)> sink_;
  mutable std::mutex mutex_;
  std::condition_variable work_, room_;
  std::deque<Item> queue_;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace nestsim::io

// The writer thread's bounded queue (io/write_queue.h): a full queue makes the producer
// wait, nothing is dropped, the order is kept, the sink's error reaches the producer,
// and finish() (or the destructor) stores every item pushed.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "nestsim/io/h5md.h"
#include "nestsim/io/write_queue.h"

using nestsim::io::WriteError;
using nestsim::io::WriteQueue;

namespace {

// A sink that takes `delay` per item and records what it stored, in order.
struct SlowSink {
  explicit SlowSink(int milliseconds) : delay(milliseconds) {}
  std::chrono::milliseconds delay;
  std::vector<int> stored;
  std::atomic<int> completed{0};
  void operator()(int& item) {
    std::this_thread::sleep_for(delay);
    stored.push_back(item);
    ++completed;
  }
};

}  // namespace

TEST_CASE("a full queue makes the producer wait; nothing dropped, order kept") {
  for (const std::size_t depth : {std::size_t(1), std::size_t(2), std::size_t(3)}) {
    CAPTURE(depth);
    SlowSink sink(15);
    std::vector<int> completed_at_push;  // items stored when push(i) returned
    std::size_t most_in_flight = 0;
    {
      WriteQueue<int> queue(depth, [&](int& item) { sink(item); });
      for (int i = 0; i < 12; ++i) {
        queue.push(i);
        completed_at_push.push_back(sink.completed.load());
        most_in_flight = std::max(most_in_flight, queue.in_flight());
      }
      queue.finish();
    }
    std::vector<int> expected(12);
    for (int i = 0; i < 12; ++i) expected[std::size_t(i)] = i;
    CHECK(sink.stored == expected);
    CHECK(most_in_flight <= depth);
    // push(i) returns only once item i - depth is stored: at most `depth` in flight,
    // however fast the producer is.
    for (int i = int(depth); i < 12; ++i) {
      CAPTURE(i);
      CHECK(completed_at_push[std::size_t(i)] >= i - int(depth) + 1);
    }
  }
}

TEST_CASE("the sink's error reaches the producer with its type; later items not stored") {
  std::vector<int> stored;
  WriteQueue<int> queue(2, [&](int& item) {
    if (item == 3) throw WriteError("out.h5: cannot write frame 3: the disk is full", 3, 30);
    stored.push_back(item);
  });
  bool thrown = false;
  try {
    for (int i = 0; i < 50; ++i) {
      queue.push(i);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    queue.finish();
  } catch (const WriteError& e) {
    thrown = true;
    CHECK(std::string(e.what()) == "out.h5: cannot write frame 3: the disk is full");
    CHECK(e.frames == 3);
    CHECK(e.last_step == 30);
  }
  CHECK(thrown);
  CHECK(stored == std::vector<int>{0, 1, 2});
  CHECK_THROWS_AS(queue.wait_for_room(), WriteError);  // it stays stopped
  CHECK_THROWS_AS(queue.finish(), WriteError);
}

TEST_CASE("finish() and the destructor store every item pushed before they return") {
  SlowSink sink(20);
  {
    WriteQueue<int> queue(3, [&](int& item) { sink(item); });
    for (int i = 0; i < 3; ++i) queue.push(i);
    CHECK(sink.completed.load() < 3);  // still in flight
    queue.finish();
    CHECK(sink.stored == std::vector<int>{0, 1, 2});
    CHECK(queue.in_flight() == 0);
    CHECK_THROWS_AS(queue.push(3), std::logic_error);
  }
  SlowSink later(20);
  {
    WriteQueue<int> queue(2, [&](int& item) { later(item); });
    queue.push(7);
    queue.push(8);
  }
  CHECK(later.stored == std::vector<int>{7, 8});
  CHECK_THROWS_AS(WriteQueue<int>(0, [](int&) {}), std::invalid_argument);
}

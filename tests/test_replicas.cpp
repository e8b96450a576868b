// Replicas (nestsim/sim/replicas.h): copies run side by side on host threads give each
// copy's separate run, bit for bit, whatever the number of workers; errors reach the
// caller.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "frame_checks.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/replicas.h"
#include "nestsim/sim/simulation.h"

using namespace nestsim;
using nestsim::testing::check_same_frame;
using nestsim::testing::same_bytes;

namespace {

// The default model with seeds 40, 41, ... (placement and noise): reactions, budding and
// fusion change the bodies, their parents and membranes between frames, so a copy that
// saw another's state would differ.
std::vector<model::Setup> default_setups(int count) {
  model::Model model = model::load_model(NESTSIM_SOURCE_DIR "/models/default.yaml");
  std::vector<model::Setup> out;
  for (int r = 0; r < count; ++r) {
    model.seed = 40 + uint64_t(r);
    out.push_back(model::make_setup(model));
  }
  return out;
}


}  // namespace

TEST_CASE("replicas side by side are their separate runs, bit for bit") {
  const int count = 4;
  const uint64_t steps = 150;
  const auto setups = default_setups(count);

  std::vector<model::Frame> separate;
  for (const auto& s : setups) {
    sim::Simulation one(s);
    one.run(steps);
    separate.push_back(one.frame());
  }
  // Different seeds give different runs: the comparison below can tell copies apart.
  CHECK_FALSE(same_bytes(separate[0].position, separate[1].position));

  for (int workers : {1, 3, count}) {
    CAPTURE(workers);
    sim::Replicas replicas(setups, {}, workers);
    CHECK(replicas.size() == count);
    replicas.run(steps / 3);
    replicas.run(steps - steps / 3);
    const auto frames = replicas.frames();
    REQUIRE(frames.size() == std::size_t(count));
    for (int r = 0; r < count; ++r) {
      CAPTURE(r);
      check_same_frame(frames[std::size_t(r)], separate[std::size_t(r)]);
    }
  }
}

TEST_CASE("for_each_replica runs every index once and rethrows the lowest failure") {
  std::vector<std::atomic<int>> calls(37);
  sim::for_each_replica(37, [&](int r) { calls[std::size_t(r)]++; }, 5);
  for (const auto& c : calls) CHECK(c.load() == 1);

  std::atomic<int> ran{0};
  try {
    sim::for_each_replica(
        20,
        [&](int r) {
          ran++;
          if (r == 7 || r == 13) throw std::runtime_error("replica " + std::to_string(r));
        },
        4);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "replica 7");
  }
  CHECK(ran.load() == 20);  // the others still ran
}

TEST_CASE("a replica whose setup is invalid is reported") {
  auto setups = default_setups(3);
  setups[1].dt = -1;
  CHECK_THROWS_AS(sim::Replicas(setups, {}, 3), std::invalid_argument);
}

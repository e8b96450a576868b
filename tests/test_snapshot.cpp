// Simulation::snapshot(): a frame copied aside while the steps go on is bitwise the
// frame Simulation::frame() gives at the same step, whenever and on whichever thread it
// is taken, and after the simulation is gone.
#include <doctest/doctest.h>

#include <cstring>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/io/h5md.h"
#include "frame_checks.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"

using namespace nestsim;
using nestsim::testing::check_same_frame;
using nestsim::testing::same_bytes;

namespace {

// The default model: reactions, budding and fusion change the bodies, their parents and
// membranes between frames.
model::Setup default_setup() {
  return model::make_setup(model::load_model(NESTSIM_SOURCE_DIR "/models/default.yaml"));
}


}  // namespace

TEST_CASE("a snapshot taken later, on another thread, is the frame of its step") {
  sim::Simulation simulation(default_setup());
  std::vector<model::Frame> direct;
  std::vector<sim::PendingFrame> pending;
  for (int k = 0; k < 3; ++k) {
    simulation.run(40);
    pending.push_back(simulation.snapshot());
    direct.push_back(simulation.frame());
    CHECK(pending.back().step() == simulation.step());
  }
  simulation.run(40);  // the state moves on; the snapshots must not
  REQUIRE(direct[0].position != direct[2].position);
  // Taken out of order, one on another thread.
  check_same_frame(pending[2].take(), direct[2]);
  const model::Frame first = std::async(std::launch::async, [&] { return pending[0].take(); }).get();
  check_same_frame(first, direct[0]);
  check_same_frame(pending[1].take(), direct[1]);
  CHECK_THROWS_AS(pending[1].take(), std::logic_error);
  // The buffers are reused: a later snapshot is again the frame of its step.
  simulation.run(10);
  sim::PendingFrame again = simulation.snapshot();
  check_same_frame(again.take(), simulation.frame());
}

TEST_CASE("a snapshot outlives its simulation and survives a restore") {
  model::Setup setup = default_setup();
  model::Frame direct;
  sim::PendingFrame pending = [&] {
    sim::Simulation simulation(setup);
    simulation.run(25);
    sim::PendingFrame p = simulation.snapshot();
    direct = simulation.frame();
    simulation.restore(io::frame_from_setup(setup));  // new slot arrays
    simulation.run(5);
    return p;
  }();
  check_same_frame(pending.take(), direct);
}

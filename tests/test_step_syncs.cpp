// The host's waits for the device in a step (nestsim::sim::detail::host_syncs()): a small
// model's step on the GPU costs launches, and every wait drains the device's queue. A
// step without reactions and list builds waits once: for the lists' validity check, the
// bounds of the predictor's and the corrector's moves read back together; with
// reactions, once more for the step's reaction counts. The counter
// counts the engine's waits on the CPU backend too (where they cost nothing), so these
// checks run without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;

namespace {

// The waits of `steps` steps of `sim` (after one step that settles the buffers).
uint64_t syncs_of(Simulation& sim, uint64_t steps) {
  sim.run(1);
  const uint64_t before = detail::host_syncs();
  sim.run(steps);
  return detail::host_syncs() - before;
}

bool same_positions(const Frame& a, const Frame& b) {
  return a.step == b.step && a.id == b.id && a.position.size() == b.position.size() &&
         std::memcmp(a.position.data(), b.position.data(), a.position.size() * sizeof(Vec)) == 0;
}

}  // namespace

TEST_CASE("a step with soft forces and valid lists waits for the device once") {
  const Setup s = crowded_cell(300, 5);
  REQUIRE(s.reactions.empty());
  SimulationOptions thick;
  thick.skin = 20.0;  // the lists outlive the counted steps
  Simulation sim(s, thick);
  const uint64_t rebuilds = sim.times().rebuilds;
  const uint64_t steps = 10;
  const uint64_t syncs = syncs_of(sim, steps);
  REQUIRE(sim.times().rebuilds == rebuilds);
  MESSAGE("waits per step: " << double(syncs) / double(steps));
  CHECK(syncs <= steps);  // the predictor's and the corrector's bounds, read together
}

TEST_CASE("a step without soft forces waits once (no corrector)") {
  const Setup s = crowded_cell(300, 5, /*repulsion=*/0);
  SimulationOptions thick;
  thick.skin = 20.0;
  Simulation sim(s, thick);
  const uint64_t steps = 10;
  CHECK(syncs_of(sim, steps) <= steps);
}

TEST_CASE("a list build adds at most one wait of the engine's own") {
  // When the predictor's moves outran the lists, the corrector's bound read again on the
  // new ones. The sibling entries' count stays on the device (lists of up to 2^20
  // entries, NeighbourLists::compact_siblings).
  const Setup s = crowded_cell(300, 5);
  SimulationOptions thin;
  thin.skin = 0.05;  // rebuilt every few steps
  Simulation sim(s, thin);
  sim.run(1);
  const uint64_t rebuilds = sim.times().rebuilds;
  const uint64_t steps = 30;
  const uint64_t syncs = syncs_of(sim, steps);
  const uint64_t built = sim.times().rebuilds - rebuilds;
  CHECK(built > 0);
  MESSAGE("waits: " << syncs << " in " << steps << " steps with " << built << " builds");
  CHECK(syncs <= steps + built);
}

TEST_CASE("timed phases wait for the device at each phase and change nothing else") {
  const Setup s = crowded_cell(300, 5);
  SimulationOptions plain, timed;
  plain.skin = timed.skin = 20.0;
  timed.phase_times = true;
  Simulation a(s, plain), b(s, timed);
  const uint64_t steps = 10;
  const uint64_t waits_plain = syncs_of(a, steps), waits_timed = syncs_of(b, steps);
  CHECK(waits_timed > waits_plain + steps);
  CHECK_FALSE(a.times().timed);
  CHECK(a.times().integrate == 0);
  CHECK(b.times().timed);
  CHECK(b.times().integrate > 0);
  CHECK(same_positions(a.frame(), b.frame()));
}

TEST_CASE("a step with reactions and compartment events waits twice unless events happen") {
  // models/default.yaml: binding, unbinding (births), budding, fusion, and the lysosome's
  // reactions. A step waits for its lists' bounds and once for the reactions' counts
  // (candidates, births, and upper bounds of the events that restructure, fuse or bud);
  // more only when those counts say events may happen or the lists are rebuilt.
  const Setup s = nestsim::model::make_setup(
      nestsim::model::load_model(NESTSIM_SOURCE_DIR "/models/default.yaml"));
  REQUIRE_FALSE(s.reactions.empty());
  Simulation sim(s);
  sim.run(1);
  const uint64_t steps = 200;
  uint64_t quiet = 0, quiet_waits = 0, total = 0, max_quiet = 0;
  std::vector<uint64_t> events = sim.frame().reaction_events;
  for (uint64_t k = 0; k < steps; ++k) {
    const uint64_t rebuilds = sim.times().rebuilds;
    const uint64_t before = detail::host_syncs();
    sim.run(1);
    const uint64_t waits = detail::host_syncs() - before;
    total += waits;
    const std::vector<uint64_t> now = sim.frame().reaction_events;
    if (now == events && sim.times().rebuilds == rebuilds) {
      ++quiet;
      quiet_waits += waits;
      max_quiet = std::max(max_quiet, waits);
    }
    events = now;
  }
  MESSAGE("waits per step: " << double(total) / double(steps) << "; " << quiet
                             << " steps without events or list builds: "
                             << double(quiet_waits) / double(std::max<uint64_t>(quiet, 1))
                             << " a step, at most " << max_quiet);
  REQUIRE(quiet > steps / 2);
  // Bounds (1, or 2 when the predictor's moves are checked at once) and the counts (1);
  // a candidate that did not happen may add the event counts' read (1) or a phase's
  // candidate list (2).
  CHECK(max_quiet <= 5);
  CHECK(double(quiet_waits) <= 2.25 * double(quiet));
}

// Placement: a validated Model -> the engine's initial state (Setup), resolving
// `place:` deterministically from the model's seed. Rules in models/README.md.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>

#include "nestsim/model/model.h"
#include "nestsim/model/setup.h"

namespace nestsim::model {

// Random positions tried for one body before a placement is declared impossible.
inline constexpr int placement_attempts = 10000;

// The most slots (bodies and room for new ones) a run holds: the engine numbers slots
// with 32-bit signed integers.
inline constexpr uint64_t max_slots = (uint64_t(1) << 31) - 1;

// The slot capacity given to a trajectory of `bodies` bodies when the model does not
// set simulation.capacity: room for reactions to double the body count.
inline uint64_t default_capacity(uint64_t bodies) {
  return bodies * 2 > bodies + 64 ? bodies * 2 : bodies + 64;
}

// Thrown by make_setup when its `stop` asked it to give up (a signal to the program).
class PlacementStopped : public std::runtime_error {
 public:
  PlacementStopped() : std::runtime_error("stopped while placing the bodies") {}
};

// Builds the initial state. Same model and seed -> the same bodies, bit for bit.
// Throws ModelError (located at the `place:` entry) when bodies cannot be placed:
// an `at:` body crossing a membrane, overlapping another or outside the box, or a
// region too crowded to take `count` more bodies. `stop`, when given, is asked between
// entries and every 1024 bodies; true throws PlacementStopped.
Setup make_setup(const Model& model, const std::function<bool()>& stop = {});

// Kinds, box, units and run parameters only (no bodies): what a resumed run rebuilds
// before it loads the bodies from the trajectory's last frame.
Setup make_setup_without_bodies(const Model& model);

}  // namespace nestsim::model

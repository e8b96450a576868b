// The slot arrays on the host, as a Setup or a Frame gives them, checked and completed
// before they go to the device (state.cu). Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nestsim/sim/simulation.h"

namespace nestsim::sim::detail {

// Host copies of the slot arrays (the same fields as a Frame, in slot indices; parent
// and membrane hold slots).
struct HostSlots {
  std::vector<double> x[3], radius, thickness, diffusion;
  std::vector<int32_t> image[3];
  std::vector<int64_t> id;
  std::vector<int32_t> kind, parent, membrane;
  std::vector<uint8_t> compartment;

  void resize(std::size_t n);
};

[[noreturn]] void invalid(const std::string& what);

// The constants of a setup (dimension, box, dt against the stiffest contact, kinds) and
// the options; throws std::invalid_argument saying what is wrong.
void validate_setup(const model::Setup& setup, const SimulationOptions& options);

// The initial bodies in their slots, validated and prepared (see prepare()).
HostSlots slots_of_setup(const model::Setup& setup, bool spatial_slots);

// A frame's bodies in their slots (slot = the frame's index), validated and prepared;
// bound bodies keep their positions bitwise.
HostSlots slots_of_frame(const model::Setup& setup, const model::Frame& frame);

}  // namespace nestsim::sim::detail

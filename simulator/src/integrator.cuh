// The moves of one Brownian-dynamics step (integrator_kernels.cuh): Heun's predictor and
// corrector, the impermeability tests, carrying, and the periodic images.
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>

#include "slot_view.cuh"
#include "state.cuh"

namespace nestsim::sim::detail {

// The proposed own moves (v.move): the predictor, or with v.force_pred Heun's corrector.
void propose_moves(const SlotView& v);
// Heun's predicted positions (into x_next): the view to compute F(x*) at, into
// force_pred.
SlotView predicted_view(const SlotView& v, BodyState& state);
// The view at the predicted positions already in x_next (no kernel): the predictor's
// forces again, with other lists.
SlotView predicted_positions(const SlotView& v, BodyState& state);
// The view of Heun's corrector: the drift of (F + F*) / 2.
SlotView corrector_view(const SlotView& v, BodyState& state);
// Impermeability tests of the proposals: a failing move becomes zero (v.accepted).
void accept_moves(const SlotView& v);
// The accepted moves applied (carrying, bound bodies): x becomes the new positions,
// x_next the old ones.
void apply_moves(const SlotView& v, BodyState& state);
// The periodic images after this step's moves and events, from the positions `before`
// (and, when events may have changed the slots, the ids `id_before`).
void update_images(const SlotView& v, BodyState& state,
                   thrust::device_vector<double> (&before)[3], const int64_t* id_before);
// The initial (or restored) state must satisfy the invariants that the steps keep,
// touching included, to within the rounding of the events that make touching states:
// throws std::invalid_argument naming a body that intersects a membrane.
void check_membranes(const SlotView& v, BodyState& state);

}  // namespace nestsim::sim::detail

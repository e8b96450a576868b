#include "integrator.cuh"

#include <thrust/fill.h>
#include <thrust/host_vector.h>

#include <string>

#include "device_loops.cuh"
#include "host_slots.h"
#include "integrator_kernels.cuh"

namespace nestsim::sim::detail {

void propose_moves(const SlotView& v) { for_each_slot(v.n, Propose{v}); }

SlotView predicted_view(const SlotView& v, BodyState& state) {
  Predict p{v};
  for (int k = 0; k < 3; ++k) p.x_pred[k] = raw(state.x_next[k]);
  for_each_slot(v.n, p);
  SlotView predicted = v;
  for (int k = 0; k < 3; ++k) {
    predicted.x[k] = raw(state.x_next[k]);
    predicted.force[k] = raw(state.force_pred[k]);
  }
  return predicted;
}

SlotView corrector_view(const SlotView& v, BodyState& state) {
  SlotView corrector = v;
  for (int k = 0; k < 3; ++k) corrector.force_pred[k] = raw(state.force_pred[k]);
  return corrector;
}

void accept_moves(const SlotView& v) {
  for_each_slot(v.n, AcceptParent{v});
  for_each_index(v.sib_count, AcceptSibling{v});
  for_each_slot(v.n, AcceptApply{v});
}

void apply_moves(const SlotView& v, BodyState& state) {
  for_each_slot(v.n, Apply{v});
  for_each_slot(v.n, ApplyBound{v});
  for (int k = 0; k < 3; ++k) state.x[k].swap(state.x_next[k]);
}

void update_images(const SlotView& v, BodyState& state,
                   thrust::device_vector<double> (&before)[3], const int64_t* id_before) {
  if (v.reflective) return;  // images count periodic crossings
  UpdateImage u{v};
  for (int k = 0; k < 3; ++k) {
    u.before[k] = raw(before[k]);
    u.image[k] = raw(state.image[k]);
  }
  u.id_before = id_before;
  for_each_slot(v.n, u);
}

void check_membranes(const SlotView& v, BodyState& state) {
  for (int k = 0; k < 3; ++k) thrust::fill(state.move[k].begin(), state.move[k].end(), 0.0);
  thrust::fill(state.rejections.begin(), state.rejections.end(), 0u);
  accept_moves(v);
  thrust::host_vector<uint32_t> r(state.rejections.begin(), state.rejections.begin() + state.used);
  thrust::fill(state.rejections.begin(), state.rejections.end(), 0u);
  for (uint32_t i = 0; i < state.used; ++i)
    if (r[i])
      invalid("body " + std::to_string(int64_t(state.id[i])) +
              " intersects a membrane: a body's whole ball must lie in its parent's lumen "
              "(distance from the parent's centre + radius <= r - q of the parent) and "
              "off every sibling compartment (distance >= the sum of the radii)");
}

}  // namespace nestsim::sim::detail

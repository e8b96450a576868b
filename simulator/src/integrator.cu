#include "integrator.cuh"

#include <thrust/fill.h>
#include <thrust/host_vector.h>

#include <cmath>
#include <string>

#include "device_loops.cuh"
#include "host_slots.h"
#include "integrator_kernels.cuh"

namespace nestsim::sim::detail {

void propose_moves(const SlotView& v) {
  if (v.kind_step)
    for_each_slot(v.n, Propose<true>{v});
  else
    for_each_slot(v.n, Propose<false>{v});
}

SlotView predicted_view(const SlotView& v, BodyState& state) {
  Predict p{v};
  for (int k = 0; k < 3; ++k) p.x_pred[k] = raw(state.x_next[k]);
  for_each_slot(v.n, p);
  return predicted_positions(v, state);
}

SlotView predicted_positions(const SlotView& v, BodyState& state) {
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
  if (v.contacts == uint8_t(model::Contacts::hard)) for_each_index(v.nbr_count, AcceptContact{v});
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

namespace {

// The initial or restored state is checked with the rule the moves keep (AcceptParent,
// AcceptSibling), less the rounding of the events that make touching states: a bud is put
// at distance lumen - r from its parent's centre and a pushed protein at distance r_i + r_j
// from its sibling, each a few roundings off exactly touching, and later carried moves
// round again. The steps go on from such a state (a move that leaves it is accepted), so
// a resume must too. kRestSlack, relative to the lengths compared (radii and the
// coordinates' magnitude), is far above that rounding (~1e-16 per operation) and far
// below any overlap that physics could make.
constexpr double kRestSlack = 1e-9;

NESTSIM_HD double magnitude(const SlotView& v, uint32_t i) {
  double m = 0;
  NESTSIM_AXES(k, v.dim) m = fmax(m, fabs(v.x[k][i]));
  return m;
}

// reject[i] = 1 when body i's ball is not in its parent's lumen.
struct ParentAtRest {
  SlotView v;
  NESTSIM_HD void operator()(uint32_t i) const {
    v.reject[i] = 0;
    const int32_t p = v.empty(i) || v.membrane[i] >= 0 ? -1 : v.parent[i];
    if (p < 0) return;
    double rel[3] = {0, 0, 0};
    v.delta(v.x, i, uint32_t(p), rel);
    const double room = v.lumen(uint32_t(p)) - v.radius[i];
    const double slack =
        kRestSlack * (v.radius[p] + fmax(magnitude(v, i), magnitude(v, uint32_t(p))));
    if (!(room >= -slack && sqrt(v.norm2(rel)) <= room + slack)) v.reject[i] = 1;
  }
};

// reject[i] = 1 when body i's ball meets a sibling compartment's (or, a compartment, a
// sibling's).
struct SiblingAtRest {
  SlotView v;
  NESTSIM_HD void operator()(uint64_t e) const {
    if (e >= *v.sib_total) return;
    const uint32_t i = v.sib_rows[e], j = v.sibs[e];
    if (v.empty(i) || v.membrane[i] >= 0 || v.empty(j) || v.membrane[j] >= 0 ||
        v.parent[j] != v.parent[i] || (!v.compartment[i] && !v.compartment[j]))
      return;
    const double need = v.radius[i] + v.radius[j];
    double d[3] = {0, 0, 0};
    v.delta(v.x, i, j, d);
    const double slack = kRestSlack * (need + fmax(magnitude(v, i), magnitude(v, j)));
    if (sqrt(v.norm2(d)) < need - slack) v.reject[i] = 1;
  }
};

}  // namespace

void check_membranes(const SlotView& v, BodyState& state) {
  for_each_slot(v.n, ParentAtRest{v});
  for_each_index(v.sib_count, SiblingAtRest{v});
  count_host_sync();  // the verdicts come back to the host
  thrust::host_vector<uint8_t> r(state.reject.begin(), state.reject.begin() + state.used);
  thrust::fill(state.reject.begin(), state.reject.end(), uint8_t(0));
  for (uint32_t i = 0; i < state.used; ++i)
    if (r[i])
      invalid("body " + std::to_string(int64_t(state.id[i])) +
              " intersects a membrane: a body's whole ball must lie in its parent's lumen "
              "(distance from the parent's centre + radius <= r - q of the parent) and "
              "off every sibling compartment (distance >= the sum of the radii)");
}

}  // namespace nestsim::sim::detail

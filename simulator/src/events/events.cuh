// Compartment events, after the reactions of a step: fusion ("V + Y -> Y") and budding
// ("S on X -> V + S' on V"), each checked exactly against every body before it happens
// (event_list.cuh). The candidates are the winners of the step's claims.
#pragma once
#include <thrust/count.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <functional>

#include "device_loops.cuh"
#include "events/event_list.cuh"
#include "reactions/rules.h"
#include "state.cuh"

namespace nestsim::sim::detail {

class CompartmentEvents {
 public:
  // Per-slot marks for `capacity` slots (sized once).
  void fit(uint64_t capacity, const RuleTable& rules);
  // Per slot: the Y a fusion's V merges into (-1 none), marked by the pair reactions.
  int32_t* fuse_into() { return raw(fuse_into_); }

  // This step's fusions (fusion.cuh): checked against every body, then executed. The
  // positions move (x and x_next swapped): `remake` gives the view afterwards.
  void fuse(const ReactionView& r, BodyState& state,
            const std::function<ReactionView()>& remake);
  // This step's buds (budding.cuh, pushing.cuh): checked against every body and each
  // other, then the new compartments born in free slots (state.used and next_id grow).
  void bud(ReactionView r, BodyState& state, thrust::device_vector<uint32_t>& free_slots,
           uint64_t& next_id, uint64_t step);

 private:
  // The candidates of one phase of events, in slot order.
  template <class Pred>
  EventList event_list(uint32_t used, Pred pred) {
    const auto first = thrust::counting_iterator<uint32_t>(0);
    count_host_sync();  // the count comes back (the step's counts skip phases without candidates)
    const std::size_t count = std::size_t(thrust::count_if(thrust::device, first, first + used, pred));
    EventList e;
    if (count == 0) return e;
    if (slot_.size() < count) grow(count);
    thrust::copy_if(thrust::device, first, first + used, slot_.begin(), pred);
    e.count = uint32_t(count);
    e.slot = raw(slot_);
    e.target = raw(target_);
    e.rule = raw(rule_);
    for (int k = 0; k < 3; ++k) e.centre[k] = raw(centre_[k]);
    e.mid = raw(mid_);
    e.aux = raw(aux_);
    e.blocked = raw(blocked_);
    e.ev_v = raw(ev_v_);
    e.ev_y = raw(ev_y_);
    return e;
  }
  void grow(std::size_t count);

  uint64_t capacity_ = 0;
  thrust::device_vector<int32_t> fuse_into_, ev_v_, ev_y_, target_, rule_;
  thrust::device_vector<uint32_t> slot_, fits_, rank_;
  thrust::device_vector<double> centre_[3], mid_, aux_;
  thrust::device_vector<unsigned long long> blocked_;
  thrust::device_vector<uint32_t> push_count_, push_list_;  // budding in a crowd
  thrust::device_vector<int32_t> push_by_;
};

inline void CompartmentEvents::fit(uint64_t capacity, const RuleTable& rules) {
  if (capacity_ == capacity) return;
  capacity_ = capacity;
  const std::size_t n = std::size_t(capacity);
  if (rules.fusion_rules)
    for (auto* b : {&fuse_into_, &ev_v_, &ev_y_}) b->assign(n, -1);
  if (rules.bud_rules) {
    push_count_.assign(n, 0u);
    push_by_.assign(n, -1);
  }
}

inline void CompartmentEvents::grow(std::size_t count) {
  const std::size_t room = std::max<std::size_t>(2 * count, 64);
  for (auto* b : {&slot_, &fits_, &rank_}) b->resize(room);
  for (auto* b : {&target_, &rule_}) b->resize(room);
  for (auto* b : {&centre_[0], &centre_[1], &centre_[2], &mid_, &aux_}) b->resize(room);
  blocked_.resize(room);
}

}  // namespace nestsim::sim::detail

#include <thrust/count.h>
#include <thrust/fill.h>
#include <thrust/scan.h>

#include <algorithm>

#include "events/budding.cuh"
#include "events/events.cuh"

namespace nestsim::sim::detail {

namespace {
struct Buds {
  const int32_t* uni_rule;
  const DeviceRule* rules;
  NESTSIM_HD bool operator()(uint32_t s) const { return uni_rule[s] >= 0 && rules[uni_rule[s]].bud; }
};
// Proteins counted in exactly one bud's ball: pushed if that bud happens.
struct Pushed {
  const uint32_t* count;
  NESTSIM_HD bool operator()(uint32_t s) const { return count[s] == 1; }
};
}  // namespace

void CompartmentEvents::bud(ReactionView r, BodyState& state,
                            thrust::device_vector<uint32_t>& free_slots, uint64_t& next_id,
                            uint64_t step) {
  const uint32_t used = state.used;
  EventList e = event_list(used, Buds{r.uni_rule, r.rules});
  if (e.count == 0) return;
  for_each_slot(e.count, BudSetup{r, e});
  PushView push;
  push.count = raw(push_count_);
  push.by = raw(push_by_);
  for_each_slot(used, BudCheck{r, e, push});
  for_each_slot(used, PushPlan{r, e, push});
  const auto first = thrust::counting_iterator<uint32_t>(0);
  count_host_sync();  // the count comes back
  push.n = uint32_t(thrust::count_if(thrust::device, first, first + used, Pushed{push.count}));
  if (push.n > 0) {
    if (push_list_.size() < push.n) push_list_.resize(std::max<std::size_t>(2 * push.n, 64));
    thrust::copy_if(thrust::device, first, first + used, push_list_.begin(), Pushed{push.count});
    push.list = raw(push_list_);
    for_each_slot(used, PushCheck{r, e, push});
  }
  for_each_slot(e.count, BudPairs{r, e, raw(fits_)});
  thrust::exclusive_scan(step_policy(), fits_.begin(), fits_.begin() + e.count, rank_.begin(), 0u);
  const uint32_t born = read_back(rank_, e.count - 1) + read_back(fits_, e.count - 1);
  if (born > 0) {
    const uint32_t last = state.gather_free_slots(free_slots, born, "buds", step);
    r.free_slots = raw(free_slots);
    r.next_id = next_id;
    for_each_slot(e.count, BudExecute{r, e, raw(fits_), raw(rank_)});
    for_each_slot(push.n, PushApply{r, e, push, raw(fits_)});
    state.used = std::max(state.used, last + 1);
    next_id += born;
  }
  thrust::fill_n(step_policy(), push_count_.begin(), state.used, 0u);
}

}  // namespace nestsim::sim::detail

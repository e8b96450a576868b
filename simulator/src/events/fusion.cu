#include <thrust/swap.h>

#include "events/events.cuh"
#include "events/fusion.cuh"

namespace nestsim::sim::detail {

namespace {
struct FusesInto {
  const int32_t* into;
  NESTSIM_HD bool operator()(uint32_t s) const { return into[s] >= 0; }
};
}  // namespace

void CompartmentEvents::fuse(const ReactionView& r, BodyState& state,
                             const std::function<ReactionView()>& remake) {
  const uint32_t used = state.used;
  EventList e = event_list(used, FusesInto{raw(fuse_into_)});
  if (e.count == 0) return;
  for_each_slot(e.count, RuleOfFusion{r, e});
  e.ghost_proteins = raw(fits_);
  e.ghost_children = raw(rank_);
  for_each_slot(e.count, FusionSetup{r, e});
  for_each_slot(used, FusionCheck{r, e});
  for_each_slot(e.count, FusionGhost{e});
  for_each_slot(used, FusionMove{r, e});
  for (int k = 0; k < 3; ++k) state.x[k].swap(state.x_next[k]);
  const ReactionView moved = remake();
  for_each_slot(used, FusionApplyLumen{moved, e});
  for_each_slot(used, FusionApplyMembrane{moved, e});
  for_each_slot(e.count, FusionDone{moved, e});
}

}  // namespace nestsim::sim::detail

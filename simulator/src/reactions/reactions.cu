#include "reactions/reactions.cuh"

#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/host_vector.h>
#include <thrust/scan.h>

#include <algorithm>

#include "device_loops.cuh"
#include "host_slots.h"
#include "reactions/execute.cuh"

namespace nestsim::sim::detail {

void Reactions::set_rules(const RuleTable& table) {
  table_ = table;
  const std::vector<DeviceRule>& host = table_.rules;
  // thrust::copy of an empty range binds a reference to a null element (UBSan).
  if (host.empty()) rules_.clear(); else rules_.assign(host.begin(), host.end());
  const KindTable& k = table_.kinds;
  kind_radius_.assign(k.radius.begin(), k.radius.end());
  kind_thickness_.assign(k.thickness.begin(), k.thickness.end());
  kind_diffusion_.assign(k.diffusion.begin(), k.diffusion.end());
  kind_compartment_.assign(k.compartment.begin(), k.compartment.end());
  kind_membrane_.assign(k.membrane.begin(), k.membrane.end());
  if (events_.size() != host.size()) events_.assign(host.size(), 0ull);
}

void Reactions::fit(uint64_t capacity) {
  const std::size_t n = std::size_t(capacity);
  if (claim_.size() == n) return;
  claim_.resize(n);
  uni_rule_.resize(n);
  birth_.resize(n + 1);
  birth_rank_.resize(n + 1);
  free_slots_.resize(std::max<std::size_t>(n, 1));
  pair_counter_.resize(1);
  if (pair_a_.empty())
    for (auto* b : {&pair_a_, &pair_b_}) b->resize(1024);
  if (pair_rule_.empty()) pair_rule_.resize(1024);
}

ReactionView Reactions::view(const SlotView& v, BodyState& s, NeighbourLists& lists) {
  ReactionView r;
  r.v = v;
  r.rules = raw(rules_);
  r.rule_count = int(rules_.size());
  r.kind = raw(s.kind);
  r.kind_radius = raw(kind_radius_);
  r.kind_thickness = raw(kind_thickness_);
  r.kind_diffusion = raw(kind_diffusion_);
  r.kind_compartment = raw(kind_compartment_);
  r.kind_membrane = raw(kind_membrane_);
  r.claim = raw(claim_);
  r.uni_rule = raw(uni_rule_);
  r.pair_a = raw(pair_a_);
  r.pair_b = raw(pair_b_);
  r.pair_rule = raw(pair_rule_);
  r.pair_count = raw(pair_counter_);
  r.pair_capacity = pair_a_.size();
  r.nbr_row = lists.rows();
  r.id = raw(s.id);
  r.parent = raw(s.parent);
  r.membrane = raw(s.membrane);
  r.radius = raw(s.radius);
  r.thickness = raw(s.thickness);
  r.diffusion = raw(s.diffusion);
  r.compartment = raw(s.compartment);
  r.birth = raw(birth_);
  r.birth_rank = raw(birth_rank_);
  r.free_slots = raw(free_slots_);
  r.events = raw(events_);
  return r;
}

Reactions::Outcome Reactions::react(ReactionView& r, BodyState& s, NeighbourLists& lists,
                                    uint64_t& next_id, uint64_t step) {
  Outcome o;
  const uint32_t used = s.used;
  for_each_slot(used, UniCandidates{r});
  if (table_.pair_rules && lists.entries() > 0) {
    for (;;) {
      pair_counter_[0] = 0ull;
      r.pair_capacity = pair_a_.size();
      for_each_index(lists.entries(), PairCandidates{r});
      o.pairs = pair_counter_[0];
      if (o.pairs <= pair_a_.size()) break;
      for (auto* b : {&pair_a_, &pair_b_}) b->resize(std::size_t(2 * o.pairs));
      pair_rule_.resize(std::size_t(2 * o.pairs));
      r.pair_a = raw(pair_a_);
      r.pair_b = raw(pair_b_);
      r.pair_rule = raw(pair_rule_);
    }
    // Candidates were appended in any order; nothing depends on it: the claims are
    // maxima and the winning events touch disjoint bodies.
    for_each_index(o.pairs, ClaimPairs{r});
  }
  birth_[used] = 0u;
  for_each_slot(used, UniWinner{r});
  thrust::exclusive_scan(nestsim::detail::policy(alloc_), birth_.begin(),
                         birth_.begin() + used + 1, birth_rank_.begin(), 0u);
  o.births = birth_rank_[used];
  if (o.births > 0) {
    const uint32_t last = s.gather_free_slots(free_slots_, o.births, "new bodies", step);
    r.free_slots = raw(free_slots_);
    for_each_slot(used, ExecuteUni{r});
    s.used = std::max(s.used, last + 1);
    next_id += o.births;
  } else {
    for_each_slot(used, ExecuteUni{r});
  }
  if (o.pairs > 0) for_each_index(o.pairs, ExecutePairs{r});
  return o;
}

unsigned long long Reactions::restructuring_events() const {
  thrust::host_vector<unsigned long long> e(events_.begin(), events_.end());
  unsigned long long total = 0;
  for (std::size_t k = 0; k < e.size(); ++k)
    if (table_.restructures[k]) total += e[k];
  return total;
}

bool Reactions::changed_lists(uint32_t births) {
  const unsigned long long seen = restructuring_events();
  const bool changed = births > 0 || seen != events_seen_;
  events_seen_ = seen;
  return changed;
}

std::vector<uint64_t> Reactions::event_counts() const {
  std::vector<uint64_t> counts(events_.size());
  thrust::copy(events_.begin(), events_.end(), counts.begin());
  return counts;
}

void Reactions::restore_counts(const std::vector<uint64_t>& counts) {
  thrust::fill(events_.begin(), events_.end(), 0ull);
  if (!counts.empty()) {
    if (counts.size() != events_.size())
      invalid("restore: the frame counts events of another set of reaction rules");
    thrust::copy(counts.begin(), counts.end(), events_.begin());
  }
  events_seen_ = restructuring_events();
}

}  // namespace nestsim::sim::detail

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

namespace {
// The step's counts (Reactions::counts_), reset on the device and read back together.
enum Count { kPairs = 0, kBirths, kRestructuring, kFusions, kBuds, kCounts };
}  // namespace

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
  std::vector<uint8_t> restructures(table_.restructures.begin(), table_.restructures.end());
  if (restructures.empty()) restructures_.clear();
  else restructures_.assign(restructures.begin(), restructures.end());
}

void Reactions::fit(uint64_t capacity) {
  const std::size_t n = std::size_t(capacity);
  if (claim_.size() == n) return;
  claim_.resize(n);
  uni_rule_.resize(n);
  birth_.resize(n + 1);
  birth_rank_.resize(n + 1);
  free_slots_.resize(std::max<std::size_t>(n, 1));
  counts_.resize(kCounts);
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
  r.pair_count = raw(counts_);  // kPairs
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

namespace {

// ClaimPairs over the candidates the device counted, launched over the buffer's capacity
// (the host does not know the count yet; beyond the capacity the step is retried).
struct ClaimCounted {
  ReactionView r;
  NESTSIM_HD void operator()(uint64_t c) const {
    if (c < *r.pair_count && c < r.pair_capacity) ClaimPairs{r}(c);
  }
};

// Upper bounds of the step's events, for the host to skip what cannot happen: the
// one-reactant winners and the two-reactant candidates of rules that restructure (every
// event that changes what the lists were built from is one of them), the fusion
// candidates and the bud winners. After UniWinner and the claims.
struct CountWinners {
  ReactionView r;
  const uint8_t* restructures = nullptr;
  unsigned long long* counts = nullptr;
  NESTSIM_HD void operator()(uint32_t i) const {
    const int k = r.uni_rule[i];
    if (k < 0) return;
    if (restructures[k]) atomic_fetch_add(&counts[kRestructuring], 1ull);
    if (r.rules[k].bud) atomic_fetch_add(&counts[kBuds], 1ull);
  }
};
struct CountPairKinds {
  ReactionView r;
  const uint8_t* restructures = nullptr;
  unsigned long long* counts = nullptr;
  NESTSIM_HD void operator()(uint64_t c) const {
    if (!(c < counts[kPairs] && c < r.pair_capacity)) return;
    const int k = r.pair_rule[c];
    if (restructures[k]) atomic_fetch_add(&counts[kRestructuring], 1ull);
    if (r.rules[k].fusion) atomic_fetch_add(&counts[kFusions], 1ull);
  }
};
// The births (the scan's total) into the counts.
struct CopyBirths {
  const uint32_t* rank = nullptr;
  uint32_t used = 0;
  unsigned long long* counts = nullptr;
  NESTSIM_HD void operator()(uint32_t) const { counts[kBirths] = rank[used]; }
};
// birth[used] = 0 (the scan's last term) and the counts zeroed, without a copy from the
// host.
struct ResetCounts {
  uint32_t* birth = nullptr;
  uint32_t used = 0;
  unsigned long long* counts = nullptr;
  NESTSIM_HD void operator()(uint32_t) const {
    birth[used] = 0u;
    for (int c = 0; c < kCounts; ++c) counts[c] = 0ull;
  }
};

}  // namespace

// The host waits once: the counts read back together after the claims, before anything
// changes a body. When the pair candidates overflowed their buffer, the buffers grow and
// the step's candidates are found again (the same: they depend on the step's random
// words and the positions alone).
Reactions::Outcome Reactions::react(ReactionView& r, BodyState& s, NeighbourLists& lists,
                                    uint64_t& next_id, uint64_t step) {
  Outcome o;
  const uint32_t used = s.used;
  unsigned long long* counts = raw(counts_);
  const bool pairs = table_.pair_rules && lists.entries() > 0;
  unsigned long long got[kCounts];
  for (;;) {
    for_each_slot(1, ResetCounts{raw(birth_), used, counts});
    for_each_slot(used, UniCandidates{r});
    r.pair_count = counts + kPairs;
    r.pair_capacity = pair_a_.size();
    if (pairs) {
      for_each_index(lists.entries(), PairCandidates{r});
      // Candidates were appended in any order; nothing depends on it: the claims are
      // maxima and the winning events touch disjoint bodies.
      for_each_index(r.pair_capacity, ClaimCounted{r});
    }
    for_each_slot(used, UniWinner{r});
    thrust::exclusive_scan(nestsim::detail::policy(alloc_), birth_.begin(),
                           birth_.begin() + used + 1, birth_rank_.begin(), 0u);
    for_each_slot(1, CopyBirths{raw(birth_rank_), used, counts});
    for_each_slot(used, CountWinners{r, raw(restructures_), counts});
    if (pairs) for_each_index(r.pair_capacity, CountPairKinds{r, raw(restructures_), counts});
    count_host_sync();  // the counts come back together
    thrust::copy_n(counts_.begin(), kCounts, got);
    if (got[kPairs] <= pair_a_.size()) break;
    for (auto* b : {&pair_a_, &pair_b_}) b->resize(std::size_t(2 * got[kPairs]));
    pair_rule_.resize(std::size_t(2 * got[kPairs]));
    r.pair_a = raw(pair_a_);
    r.pair_b = raw(pair_b_);
    r.pair_rule = raw(pair_rule_);
  }
  o.pairs = got[kPairs];
  o.births = uint32_t(got[kBirths]);
  o.restructuring = got[kRestructuring];
  o.fusions = got[kFusions];
  o.buds = got[kBuds];
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
  count_host_sync();  // the event counts come back
  thrust::host_vector<unsigned long long> e(events_.begin(), events_.end());
  unsigned long long total = 0;
  for (std::size_t k = 0; k < e.size(); ++k)
    if (table_.restructures[k]) total += e[k];
  return total;
}

bool Reactions::changed_lists(const Outcome& o) {
  // Without a candidate of a restructuring rule no such event happened (births are
  // events of one): the counts are not read.
  if (o.restructuring == 0 && o.births == 0) return false;
  const unsigned long long seen = restructuring_events();
  const bool changed = o.births > 0 || seen != events_seen_;
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

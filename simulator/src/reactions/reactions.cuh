// The reactions of a step (reaction_view.cuh outlines them): candidates, claims and the
// winners executed, after the moves. Compartment events (fusion, budding) follow in
// events/.
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>
#include <vector>

#include "neighbour_lists.cuh"
#include "nestsim/device/exec.cuh"
#include "reactions/reaction_view.cuh"
#include "reactions/rules.h"
#include "state.cuh"

namespace nestsim::sim::detail {

class Reactions {
 public:
  explicit Reactions(nestsim::detail::CachingAllocator& alloc) : alloc_(alloc) {}

  // The rules on the device; the event counts start at zero.
  void set_rules(const RuleTable& table);
  const RuleTable& table() const { return table_; }
  bool any() const { return !table_.rules.empty(); }

  // Buffers for `capacity` slots (sized once).
  void fit(uint64_t capacity);
  // The reaction part of a view (slot arrays from v; fuse_into and next_id are set by
  // the caller).
  ReactionView view(const SlotView& v, BodyState& state, NeighbourLists& lists);

  struct Outcome {
    uint64_t pairs = 0;   // two-reactant candidates
    uint32_t births = 0;  // bodies born in free slots
    // Upper bounds: candidates and winners of rules that restructure, fusion candidates,
    // bud winners (0: no such event this step).
    uint64_t restructuring = 0, fusions = 0, buds = 0;
  };
  // This step's reactions at the new positions; new bodies take free slots (state.used
  // and next_id grow). `r` is updated to the buffers used (free slots, candidates). The
  // host waits once for the step's counts (twice more when bodies are born).
  Outcome react(ReactionView& r, BodyState& state, NeighbourLists& lists, uint64_t& next_id,
                uint64_t step);
  // Did this step's events change what the lists were built from (births, or events of
  // rules that restructure)? Reads the event counts back only when `o` had candidates of
  // such rules.
  bool changed_lists(const Outcome& o);

  thrust::device_vector<uint32_t>& free_slots() { return free_slots_; }
  std::vector<uint64_t> event_counts() const;  // per rule, since step 0
  // Counts restored from a frame (empty: zero); throws if they are of other rules.
  void restore_counts(const std::vector<uint64_t>& counts);

 private:
  unsigned long long restructuring_events() const;

  nestsim::detail::CachingAllocator& alloc_;
  RuleTable table_;
  thrust::device_vector<DeviceRule> rules_;
  thrust::device_vector<double> kind_radius_, kind_thickness_, kind_diffusion_;
  thrust::device_vector<uint8_t> kind_compartment_, kind_membrane_;
  thrust::device_vector<unsigned long long> claim_, counts_, events_;
  thrust::device_vector<uint8_t> restructures_;  // per rule (RuleTable::restructures)
  thrust::device_vector<int32_t> uni_rule_, pair_rule_;
  thrust::device_vector<uint32_t> birth_, birth_rank_, free_slots_, pair_a_, pair_b_;
  unsigned long long events_seen_ = 0;  // of the rules that restructure
};

}  // namespace nestsim::sim::detail

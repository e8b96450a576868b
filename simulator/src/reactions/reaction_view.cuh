// Reactions on the device, after the moves of a step (reactions.cu drives it):
//   UniCandidates   one thread per body: the one-reactant rules that match its kind and
//                   site fire together with probability 1 - exp(-sum(rate) dt); one of
//                   them is chosen with probability rate / sum(rate);
//   PairCandidates  one thread per neighbour-list entry (i < j): two-reactant rules
//                   (Doi model: within the reaction radius, probability 1 - exp(-rate
//                   dt) per step), appended to a candidate buffer;
//   Claim           every candidate claims its reactants with a random 64-bit priority
//                   (atomic max): 32 random bits above a tag that is unique among the
//                   events competing for that body (0 for its own one-reactant event,
//                   partner slot + 1 for a pair), so the maximum is unique;
//   Execute         an event whose priority is the maximum at each of its reactants
//                   happens; the others do not (they may fire in a later step).
// A body reacts at most once per step; which of several candidate events happens is
// decided by the random priorities (no bias by slot or order), and everything is keyed
// by (seed, step, ids), so a run is deterministic for its seed.
//
// Products (decisions documented in models/README.md): the first product takes the
// slot and id of the first reactant (a body changing state keeps its identity), the
// second product the second reactant's, or a new slot and a new id when the rule has
// one reactant; reactants without a product are removed (id -1). A product with site
// `any` takes the location (lumen or membrane) of the reactant it replaces, or, when
// one reactant is bound and the product is a membrane species, that membrane; `on K`
// binds it to the compartment of kind K that holds (or binds) the reactant, nearest
// first, at the point of K's mid-surface on the ray from K's centre; `in K` from a body
// on K's membrane releases it just inside, `outside K` just outside (by the product's
// radius, when that stays clear of other compartments).
#pragma once
#include <cmath>
#include <cstdint>

#include "nestsim/sim/philox.h"
#include "reactions/device_rule.h"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

struct ReactionView {
  SlotView v;
  const DeviceRule* rules = nullptr;
  int rule_count = 0;
  int32_t* kind = nullptr;          // per slot, mutable (conversions)
  const double* kind_radius = nullptr;     // per kind
  const double* kind_thickness = nullptr;  // per kind
  const double* kind_diffusion = nullptr;  // per kind
  const uint8_t* kind_compartment = nullptr;
  const uint8_t* kind_membrane = nullptr;
  unsigned long long* claim = nullptr;  // per slot, 0 = none
  int32_t* uni_rule = nullptr;          // per slot, -1 none
  // Pair candidates: (slot a, slot b, rule), appended.
  uint32_t* pair_a = nullptr;
  uint32_t* pair_b = nullptr;
  int32_t* pair_rule = nullptr;
  unsigned long long* pair_count = nullptr;  // one counter
  uint64_t pair_capacity = 0;
  const uint32_t* nbr_row = nullptr;
  // Mutable views of the slot arrays that events change.
  int64_t* id = nullptr;
  int32_t* parent = nullptr;
  int32_t* membrane = nullptr;
  double* radius = nullptr;
  double* thickness = nullptr;
  double* diffusion = nullptr;
  uint8_t* compartment = nullptr;
  // Births: per slot 0/1, scanned into ranks; the free slots before this step's events.
  uint32_t* birth = nullptr;
  const uint32_t* birth_rank = nullptr;
  const uint32_t* free_slots = nullptr;
  uint64_t next_id = 0;
  unsigned long long* events = nullptr;  // per rule, cumulative
  int32_t* fuse_into = nullptr;          // per slot: a fusion's V -> its Y (-1 none)

  // Does body i (a live slot) satisfy a reactant's site?
  NESTSIM_HD bool at_site(uint32_t i, uint8_t where, int32_t comp_kind) const {
    const int32_t m = v.membrane[i];
    switch (where) {
      case kIn: return m < 0 && v.parent[i] >= 0 && kind[v.parent[i]] == comp_kind;
      case kOn: return m >= 0 && kind[m] == comp_kind;
      case kOutside: {
        if (m >= 0 && kind[m] == comp_kind) return false;
        for (int32_t p = v.parent[i], d = 0; p >= 0 && d < kMaxDepth; p = v.parent[p], ++d)
          if (kind[p] == comp_kind) return false;
        return true;
      }
      default: return true;
    }
  }
  NESTSIM_HD bool eligible(uint32_t i, int k) const;  // a one-reactant rule k for body i
  NESTSIM_HD bool matches(uint32_t i, const DeviceRule& r, int k) const {
    return kind[i] == r.reactant[k] && at_site(i, r.reactant_where[k], r.reactant_compartment[k]);
  }
};

NESTSIM_HD inline bool placeable(const ReactionView& r, uint32_t i, const DeviceRule& rule);
NESTSIM_HD inline bool ReactionView::eligible(uint32_t i, int k) const {
  return rules[k].reactants == 1 && matches(i, rules[k], 0) && placeable(*this, i, rules[k]);
}

}  // namespace nestsim::sim::detail

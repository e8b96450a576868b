// The reaction rules of a setup compiled for the device: validated, kinds and sites
// resolved, and what the neighbour lists must reach for them. Plain C++.
#pragma once
#include <cstdint>
#include <vector>

#include "nestsim/model/setup.h"
#include "reactions/device_rule.h"

namespace nestsim::sim::detail {

// Per kind, the fields a product takes.
struct KindTable {
  std::vector<double> radius, thickness, diffusion;  // thickness == radius for species
  std::vector<uint8_t> compartment, membrane;
};

struct RuleTable {
  std::vector<DeviceRule> rules;
  // Does an event of rule k change what the lists or Accept's compaction were built
  // from (new bodies, locations, a larger radius)? Then the lists are rebuilt.
  std::vector<bool> restructures;
  // Per kind, how far beyond touching the lists must reach for the rules (a pair of
  // kinds a, b is listed out to reach[a] + reach[b] beyond contact).
  std::vector<double> reach;
  KindTable kinds;
  bool pair_rules = false, fusion_rules = false, bud_rules = false;
};

// Throws std::invalid_argument naming the rule and what is wrong.
RuleTable compile_rules(const model::Setup& setup);

}  // namespace nestsim::sim::detail

// A reaction rule as the device sees it: kinds and sites resolved to integers (plain
// C++: rules.cpp compiles them on the host).
#pragma once
#include <cstdint>

namespace nestsim::sim::detail {

struct DeviceRule {
  int32_t reactant[2] = {-1, -1};
  uint8_t reactant_where[2] = {0, 0};
  int32_t reactant_compartment[2] = {-1, -1};
  int32_t product[2] = {-1, -1};
  uint8_t product_where[2] = {0, 0};
  int32_t product_compartment[2] = {-1, -1};
  int reactants = 0, products = 0;
  bool binding = false;  // species + compartment kind -> species on that compartment
  bool bud = false;      // S on X -> V + S' on V | in V (reactant 0; product 0 is V)
  bool fusion = false;   // V + Y -> Y: compartment V merges into compartment Y
  double probability = 0;  // 1 - exp(-rate dt)
  double rate = 0;
  double radius = 0;
  double spread = 0;  // A -> B + C of a free A: C uniform in the ball of this radius around B
  // Reaction::equilibrium_products: C's offset weighted by e^{-U(r)}, U = repulsion / 2
  // (contact - r)^2 below contact (0 repulsion: uniform), and under hard contacts kept
  // clear of the bodies C excludes.
  bool equilibrium_spread = false;
  double spread_contact = 0, spread_repulsion = 0;
};

constexpr int kMaxRules = 64;
constexpr uint8_t kAny = 0, kIn = 1, kOn = 2, kOutside = 3;

}  // namespace nestsim::sim::detail

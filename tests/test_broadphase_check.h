// One broad-phase configuration checked against the brute-force reference (reference.h)
// in both directions: no missed pair, no false pair, sorted, count == find.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "reference.h"

namespace nestsim::testing {

// The library's result for one configuration, checked against the reference; returns
// the pairs.
template <class Real>
std::vector<Pair> check_method(const std::string& label, const SphereSet<Real>& bodies,
                               const BroadphaseOptions& o, const std::vector<Pair>& reference) {
  Broadphase<Real> finder(o);
  finder.upload(bodies);
  const uint64_t counted = finder.count();
  const uint64_t found = finder.find();
  const std::vector<Pair> result = to_pairs(finder.pairs());
  const Difference d = compare(reference, result);
  INFO(label << ": " << d.describe());
  CHECK(d.missed.empty());
  CHECK(d.spurious.empty());
  CHECK(sorted_unique_ordered(result));
  CHECK(found == result.size());
  CHECK(counted == found);
  return result;
}

}  // namespace nestsim::testing

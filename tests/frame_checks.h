// Bitwise comparison of two frames (doctest CHECKs, one per field), for tests that claim
// a run is another run bit for bit: snapshots against frames, replicas against
// separate runs.
#pragma once
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "nestsim/model/setup.h"

namespace nestsim::testing {

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

inline void check_same_frame(const model::Frame& a, const model::Frame& b) {
  CHECK(a.step == b.step);
  CHECK(std::memcmp(&a.time, &b.time, sizeof a.time) == 0);
  CHECK(a.next_id == b.next_id);
  CHECK(a.broadphase_pairs == b.broadphase_pairs);
  CHECK(a.reaction_events == b.reaction_events);
  CHECK(same_bytes(a.position, b.position));
  CHECK(same_bytes(a.image, b.image));
  CHECK(a.id == b.id);
  CHECK(a.kind == b.kind);
  CHECK(same_bytes(a.radius, b.radius));
  CHECK(same_bytes(a.thickness, b.thickness));
  CHECK(a.parent == b.parent);
  CHECK(a.membrane == b.membrane);
}

}  // namespace nestsim::testing

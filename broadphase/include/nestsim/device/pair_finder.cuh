// Device-side broad phase, for code that keeps its bodies on the device (the
// simulator). Needs Thrust; compiled by nvcc (CUDA backend) or as C++ (CPU backend).
// The plain-C++ interface is nestsim/broadphase.h.
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>
#include <memory>

#include "nestsim/broadphase.h"
#include "nestsim/hd.h"

namespace nestsim::device {

// Raw device pointers to bodies in structure-of-arrays form (z unused in 2D).
template <class Real>
struct SphereView {
  const Real* pos[3] = {nullptr, nullptr, nullptr};
  const Real* radius = nullptr;
  const Real* thickness = nullptr;
  uint32_t n = 0;
};

// A pair (a, b) packed as (min << 32) | max, so that sorting keys sorts by (i, j).
NESTSIM_HD inline uint64_t pair_key(uint32_t a, uint32_t b) {
  return a < b ? (uint64_t(a) << 32) | b : (uint64_t(b) << 32) | a;
}
NESTSIM_HD inline uint32_t pair_first(uint64_t key) { return uint32_t(key >> 32); }
NESTSIM_HD inline uint32_t pair_second(uint64_t key) { return uint32_t(key & 0xffffffffu); }

template <class Real>
class PairFinder {
 public:
  explicit PairFinder(const BroadphaseOptions& options);
  ~PairFinder();
  PairFinder(PairFinder&&) noexcept;
  PairFinder& operator=(PairFinder&&) noexcept;

  const BroadphaseOptions& options() const { return options_; }
  // A new skin for the next find() (>= 0); the buffers are kept.
  void set_skin(double skin) {
    options_.skin = skin;
    options_.validate();
  }

  // Finds every pair among the bodies. Unless count_only, keys() then holds the
  // pairs as pair_key()s, sorted ascending (options().sort_pairs; else in the order
  // found until sort_keys()). Returns the number of pairs. The bodies must satisfy
  // 0 <= thickness <= radius (predicates.h; Broadphase::upload validates them).
  uint64_t find(const SphereView<Real>& bodies, bool count_only = false);
  // Sorts keys() ascending if the last find() left them in the order found.
  void sort_keys();

  // The pairs of the last find(); only the first pair_count() entries are valid.
  const thrust::device_vector<uint64_t>& keys() const;
  uint64_t pair_count() const;

  // CSR neighbour lists (both directions, each row ascending) of the last find() over
  // n bodies; with `rows`, also the row of each entry (rows[k] = b for every k in
  // [offsets[b], offsets[b + 1])). `exact`: neighbours and rows sized to the 2
  // pair_count() entries; else at least that (nestsim::detail::grow_discard), for a
  // caller that keeps them from call to call and counts its entries itself.
  void neighbour_lists(uint32_t n, thrust::device_vector<uint64_t>& offsets,
                      thrust::device_vector<uint32_t>& neighbours,
                      thrust::device_vector<uint32_t>* rows = nullptr, bool exact = true) const;

  struct State;

 private:
  BroadphaseOptions options_;
  std::unique_ptr<State> state_;
};

extern template class PairFinder<float>;
extern template class PairFinder<double>;

}  // namespace nestsim::device

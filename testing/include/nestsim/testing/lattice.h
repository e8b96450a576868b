// Beads on an integer lattice: O(N) counting of collisions and contacts with a space
// array, the sequential O(N) approach of Saldanha, de Souza: "High Performance
// Algorithms for Counting Collisions and Pairwise Interactions" (ICCS 2019, section III,
// Algorithms 1 and 2), run data-parallel on the backend, with the asynchronous
// launch/fetch API of that paper's code, the "Elf Collision Count" README
// (docs/design.md, "The papers"). Plain C++ header: the device code stays behind the class.
//
//   nestsim::LatticeCounter counter(/*half_extent=*/64, /*dim=*/3);  // space allocated once
//   uint64_t c = counter.count_collisions(beads);                     // reused by every call
//   nestsim::CountPromise p = counter.launch_contacts(beads);          // returns at once
//   ...                                                                // other work
//   uint64_t k = p.fetch();                                            // waits, then counts
//
// The space (section III): S^dim with S = {-a, ..., a}, a = half_extent, so each axis
// has 2a + 1 sites and the space (2a + 1)^dim sites. In 2D the z coordinate of a bead is
// ignored.
//
// Memory cost: the space array holds one 32-bit counter per site, kBytesPerSite = 4
// bytes per site, 4 (2a + 1)^dim bytes in all, allocated on the device in the
// constructor and kept until the counter (and every promise it issued) is destroyed.
// a = 64 in 3D: 8.6 MB; a = 256: 541 MB; a = 1000: 32 GB. (The seed uses one char per
// site; a 32-bit counter is the smallest word that device atomics update.) Each call
// also takes 16 bytes per bead of scratch.
//
// Relations (the seed's definitions, section III):
//  - a collision is a pair of beads on the same site (Algorithm 1); k beads on one site
//    make k (k - 1) / 2 collisions;
//  - a contact is a pair of beads on neighbouring sites: sites one lattice step apart
//    along one axis, the 6 face neighbours in 3D (Algorithm 2), 4 in 2D. Beads on the
//    same site are not in contact.
//
// Asynchrony: launch_*() validates the beads on the host (throwing at once), copies
// them and starts the work; the returned CountPromise::fetch() waits for it.
//  - CUDA backend: the work is queued on the counter's own stream (the bead copy, the
//    kernels, an event); fetch() waits for that event only.
//  - CPU backend: the work runs on a std::async thread (Thrust on OpenMP inside it);
//    fetch() joins it.
// Work launched on one counter runs one call at a time (stream order on CUDA, a lock on
// the CPU), because the calls share the space array; every call re-initialises the
// sites it touches before counting (the seed's initialisation pattern), so no call sees
// the marks of another. A promise keeps its counter's space alive; destroying a promise
// that was not fetched waits for its work.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace nestsim {

// A bead on the integer lattice (z ignored in 2D).
struct Bead {
  int32_t x = 0, y = 0, z = 0;
};

// The result of a launched count: fetch() waits for the work and returns the count
// (once; a second fetch() throws std::logic_error).
class CountPromise {
 public:
  CountPromise();
  ~CountPromise();
  CountPromise(CountPromise&&) noexcept;
  CountPromise& operator=(CountPromise&&) noexcept;
  CountPromise(const CountPromise&) = delete;
  CountPromise& operator=(const CountPromise&) = delete;

  bool valid() const;  // launched and not yet fetched
  uint64_t fetch();

  struct State;
  explicit CountPromise(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

class LatticeCounter {
 public:
  static constexpr std::size_t kBytesPerSite = 4;

  // Allocates (and zeroes) the space array of (2 half_extent + 1)^dim sites. Throws
  // std::invalid_argument for dim not 2 or 3 or half_extent < 0, std::length_error when
  // the site count does not fit the address space.
  explicit LatticeCounter(int32_t half_extent, int dim = 3);
  ~LatticeCounter();
  LatticeCounter(LatticeCounter&&) noexcept;
  LatticeCounter& operator=(LatticeCounter&&) noexcept;
  LatticeCounter(const LatticeCounter&) = delete;
  LatticeCounter& operator=(const LatticeCounter&) = delete;

  int32_t half_extent() const;
  int dim() const;
  uint64_t site_count() const;   // (2a + 1)^dim
  uint64_t space_bytes() const;  // site_count() * kBytesPerSite

  // Algorithm 1. Throws std::invalid_argument naming the first bead outside the space
  // (its index and coordinates).
  uint64_t count_collisions(const std::vector<Bead>& beads);
  // Algorithm 2. Same error as above.
  uint64_t count_contacts(const std::vector<Bead>& beads);

  // The same counts, asynchronously (see the header comment). The beads are copied
  // before launch_*() returns.
  CountPromise launch_collisions(const std::vector<Bead>& beads);
  CountPromise launch_contacts(const std::vector<Bead>& beads);

  // "CPU (Thrust/OpenMP)" or "CUDA".
  static const char* backend_name();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// The quadratic references (all pairs), for tests and benchmarks: the README seed's
// basic sequential loop, with the relations above.
uint64_t count_collisions_quadratic(const std::vector<Bead>& beads, int dim = 3);
uint64_t count_contacts_quadratic(const std::vector<Bead>& beads, int dim = 3);

// The README seed's procedural form: count_collisions_launch(vector, n) sizes a space
// to the beads (a = the largest |coordinate|, so 4 (2a + 1)^3 bytes) and launches;
// count_collisions_fetch(promise) waits and returns the count.
using CollisionCountPromise = CountPromise;
CollisionCountPromise count_collisions_launch(const Bead* beads, std::size_t n);
uint64_t count_collisions_fetch(CollisionCountPromise& promise);

}  // namespace nestsim

// nestsim broad phase: all intersecting pairs among nested hollow spheres (HSX) or
// solid spheres (SSX). Plain C++ header: the device code stays behind the class.
//
//   nestsim::SphereSet<double> bodies = ...;              // host, structure of arrays
//   nestsim::BroadphaseOptions options;                     // hollow, open 3D space
//   nestsim::Broadphase<double> finder(options);
//   finder.upload(bodies);
//   uint64_t n = finder.find();                             // pairs stay on the device
//   nestsim::PairList pairs = finder.pairs();               // sorted, i < j
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/tuning.h"

namespace nestsim {

// Which relation defines a pair: the hollow one (HSX, equation 3) or the solid one
// (SSX, equation 4). See predicates.h.
enum class Overlap { hollow, solid };

// Which algorithm finds the pairs. Every method returns exactly the same pairs.
enum class Method {
  hsx,    // the multi-level grid of the HSX paper, Algorithm 1 (sections 3-4)
  brute,  // the plain parallel double loop: the reference
  // The seeds' brute-force schedules (nestsim/device/pairwise.cuh):
  brute_tiled,     // row per item, segments of 1024 (pairwise seed, Algorithm 3, section V)
  brute_balanced,  // circular schedule (pairwise seed, Algorithm 4, with the even-N rule)
  brute_mapping,   // index -> pair mapping + 1-bit mask (gpu-mapping-function seed, 3.2-3.4)
  // Solid-sphere baseline grids (docs/design.md; src/solid_grids.cuh); exact test
  // on every candidate, so they also serve hollow mode:
  grid_uniform,  // uniform grid, cell >= largest diameter, 27 (9 in 2D) neighbour cells
  grid_aabb,     // multi-cell AABB grid (as chrono::collide), cell ~ mean diameter
};

const char* to_string(Method method);
// Parses a method name as the command line spells it; throws std::invalid_argument.
Method method_from_string(const std::string& name);
// The names of all methods, in the order of the enum.
std::vector<std::string> method_names();

// The space: 2D or 3D, open or a periodic box [lo, lo + size) (minimum image).
struct Domain {
  int dim = 3;
  bool periodic = false;
  std::array<double, 3> lo{0, 0, 0};
  std::array<double, 3> size{0, 0, 0};  // used when periodic; every used edge > 0
};

struct BroadphaseOptions {
  Overlap overlap = Overlap::hollow;
  Method method = Method::hsx;
  Domain domain;
  // Verlet skin: every body is searched with outer radius r + skin and lumen radius
  // r - q - skin (thickness min(q + 2 skin, r + skin)), so that a list built now still
  // holds every pair after each body moved at most skin / 2.
  double skin = 0;
  // Variants of Method::brute_mapping, for benchmarks; the pairs do not change. The
  // lazy mapping a = k / N, b = k % N instead of the square root (gpu-mapping-function
  // seed, section 3.2.2), and one byte per pair instead of one bit (section 3.4).
  bool mapping_lazy = false;
  bool mapping_byte_mask = false;
  // Method::hsx over at most this many bodies tests all pairs instead (one pass: tiles
  // in shared memory on a GPU, the balanced circular schedule on the CPU; below a few
  // 10^4 bodies the grid's fixed cost of sorts and launches is more than n^2 / 2 exact
  // tests on a GPU); the pairs do not change. -1 (automatic): tuning.hsx.small_n, the
  // backend's measured crossover, and all pairs too when so many bodies share grid
  // cells that the grid cannot win (concentric shells; tuning.hsx.grid_test_cost);
  // 0: always the grid.
  int64_t hsx_small_n = -1;
  // How the grids (hsx, grid_uniform) sort the bodies into cells; the pairs do not
  // change. counting: one pass of atomics on the cell table (HSX paper section 4.1);
  // radix: a radix sort of the bodies' cell numbers, no atomics (docs/performance.md,
  // "The radix sort into cells").
  // automatic: radix from tuning.cell_sort.radix_min_n bodies on (2e6 on the GPU, 1e5
  // on the CPU), else counting.
  enum class GridSort { automatic, counting, radix };
  GridSort grid_sort = GridSort::automatic;
  // Whether find() leaves the pairs on the device sorted by (i, j) (true), or in the
  // order the method found them (false: unspecified, and for hsx, grid_uniform and
  // grid_aabb different from call to call; still every pair once, i < j). The pairs are
  // the same; pairs() and neighbour_lists() sort in either case. false saves the pair
  // sort (docs/performance.md, "Pairs left in the order found") where the caller sorts
  // anyway or needs no order, as the simulator's neighbour lists, or the HSX paper's and
  // chrono::collide's own outputs.
  bool sort_pairs = true;
  // Where each path of the algorithms starts and how the work is cut (tuning.h); the
  // pairs do not depend on it. The defaults are the backend's measured ones.
  Tuning tuning = default_tuning();

  void validate() const;  // throws std::invalid_argument with what is wrong
};

// Bodies on the host, structure of arrays; z is ignored (may be empty) in 2D.
template <class Real>
struct SphereSet {
  std::vector<Real> x, y, z, radius, thickness;

  std::size_t size() const { return radius.size(); }
  void resize(std::size_t n);
  void push_back(Real px, Real py, Real pz, Real r, Real q);
  // Throws BodyError naming the first bad body (index, field, value).
  void validate(int dim) const;
};

// A body that a search cannot take: what() is "body I: what is wrong".
class BodyError : public std::invalid_argument {
 public:
  BodyError(std::size_t body, const std::string& what)
      : std::invalid_argument("body " + std::to_string(body) + ": " + what), body_(body) {}
  std::size_t body() const { return body_; }

 private:
  std::size_t body_;
};

// The range a search supports in the arithmetic Real, where squared distances neither
// overflow nor underflow and the grids' cell numbers stay far inside 64 bits: every
// |coordinate|, radius + skin and periodic box edge is 0 or between min_extent<Real>()
// and max_extent<Real>() (1e-130 to 1e150 in double, 1e-12 to 1e18 in float; the
// smallest nonzero difference of two coordinates, an ulp of the smaller, then squares
// to a normal number); in a periodic box, every edge at least 2^-30 of the largest
// radius + skin, and every coordinate within 2^30 edges of the box. check_supported()
// (called by upload()) refuses anything else, so that no search answers wrong in
// silence.
template <class Real>
constexpr double max_extent() {
  return sizeof(Real) == sizeof(float) ? 1e18 : 1e150;
}
template <class Real>
constexpr double min_extent() {
  return sizeof(Real) == sizeof(float) ? 1e-12 : 1e-130;
}
constexpr double kMinEdgePerReach = 0x1p-30;
constexpr double kMaxEdgesFromBox = 0x1p30;

// Throws BodyError for a body outside the supported range, std::invalid_argument for
// a skin or a box outside it; the message states the range.
template <class Real>
void check_supported(const SphereSet<Real>& bodies, const BroadphaseOptions& options);

// Pairs (i[k], j[k]) with i[k] < j[k], sorted by (i, j).
struct PairList {
  std::vector<uint32_t> i, j;
  std::size_t size() const { return i.size(); }
};

// Per-body neighbour lists in compressed sparse rows: the neighbours of body b are
// neighbours[offsets[b] .. offsets[b + 1]), ascending; each pair appears in both lists.
// rows[k] is the body whose list holds entry k (the same lists as coordinates: entry k
// is the pair (rows[k], neighbours[k])).
struct NeighbourLists {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> neighbours;
  std::vector<uint32_t> rows;
};

// Timings of repeated calls, in milliseconds (device events on the CUDA backend).
struct Timings {
  std::vector<double> ms;
  double median() const;
  double min() const;
};

template <class Real>
class Broadphase {
 public:
  explicit Broadphase(const BroadphaseOptions& options);
  ~Broadphase();
  Broadphase(Broadphase&&) noexcept;
  Broadphase& operator=(Broadphase&&) noexcept;
  Broadphase(const Broadphase&) = delete;
  Broadphase& operator=(const Broadphase&) = delete;

  const BroadphaseOptions& options() const;

  // Copies the bodies to the device (validating them first: SphereSet::validate,
  // check_supported).
  void upload(const SphereSet<Real>& bodies);
  std::size_t body_count() const;

  // Finds the pairs and keeps them on the device; returns their number.
  uint64_t find();
  // Counts the pairs without storing them.
  uint64_t count();

  // The number of pairs of the last find() or count().
  uint64_t pair_count() const;
  // The pairs of the last find(), copied to the host, sorted by (i, j) (the device's
  // copy is sorted first where options().sort_pairs is false).
  PairList pairs() const;
  NeighbourLists neighbour_lists() const;

  // Runs find() (or count()) once to warm up, then `repeats` times, timing each call.
  Timings time(int repeats, bool count_only);
  // The floor of a find() (docs/performance.md): one copy, on the same device, of as many bytes as
  // it must read and write at the least: the uploaded bodies' centres (dim), radii and
  // thicknesses, and the pairs of the last find() (8 bytes each).
  Timings time_floor(int repeats, int dim) const;

  // "CPU (Thrust/OpenMP, N threads)" or "CUDA (device name)".
  static std::string backend_name();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// One-shot helper: upload, find, copy back.
template <class Real>
PairList find_pairs(const SphereSet<Real>& bodies, const BroadphaseOptions& options);

extern template class Broadphase<float>;
extern template class Broadphase<double>;
extern template struct SphereSet<float>;
extern template struct SphereSet<double>;

}  // namespace nestsim

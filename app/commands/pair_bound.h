// An upper bound on the pairs of a scene, in O(n), so that `nestsim pairs` refuses a
// search whose pairs cannot fit in memory before it starts (1e6 coincident spheres have
// 5e11 pairs) instead of running out of memory after minutes.
//
// Bodies whose diameter (with the skin) is at most w, the diameter at the 99.9th
// percentile, are binned in cells of width >= w: two of them can meet only in the same
// or neighbouring cells, so the pairs within a cell and between neighbouring cells bound
// theirs (exact for coincident bodies). The few larger bodies are counted against every
// body. Periodic boxes wrap the cells. Solid and hollow pairs alike are bounded (hollow
// pairs are a subset of solid ones).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <unordered_map>
#include <unistd.h>
#include <vector>

#include "nestsim/broadphase.h"

namespace nestsim::app {

// Host memory one pair of `nestsim pairs` may take on its way out: the pair list (two
// 32-bit ids), its copy from the search and the sort's buffers, rounded up.
constexpr double kBytesPerPair = 32;

// The memory the system can give now (MemAvailable), else the physical memory.
inline double available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
}

inline double pair_upper_bound(const SphereSet<double>& b, const Domain& domain, double skin) {
  const std::size_t n = b.size();
  if (n < 2) return 0;
  std::vector<double> diameter(n);
  for (std::size_t i = 0; i < n; ++i) diameter[i] = 2 * (b.radius[i] + skin);
  std::vector<double> sorted = diameter;
  const std::size_t q = std::size_t(0.999 * double(n - 1));
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(q), sorted.end());
  double w = sorted[q];
  if (!(w > 0)) w = 1;  // points meet only where they coincide: any width bounds them
  const int dim = domain.dim;
  // Cells per axis: a periodic axis wraps at m cells of width L / m >= w.
  int64_t wrap[3] = {0, 0, 0};
  if (domain.periodic)
    for (int a = 0; a < dim; ++a)
      wrap[a] = std::max<int64_t>(1, int64_t(std::min(1e15, std::floor(domain.size[a] / w))));
  const double width[3] = {domain.periodic ? domain.size[0] / double(wrap[0]) : w,
                           domain.periodic ? domain.size[1] / double(wrap[1]) : w,
                           domain.periodic && dim == 3 ? domain.size[2] / double(wrap[2]) : w};
  auto cell_of = [&](double x, int a) {
    const double c = std::floor((x - domain.lo[a]) / width[a]);
    const int64_t k = int64_t(std::max(-1e15, std::min(1e15, c)));  // far cells merge
    return wrap[a] > 0 ? ((k % wrap[a]) + wrap[a]) % wrap[a] : k;
  };
  struct Key {
    int64_t c[3];
    bool operator==(const Key& o) const { return c[0] == o.c[0] && c[1] == o.c[1] && c[2] == o.c[2]; }
  };
  struct Hash {
    std::size_t operator()(const Key& k) const {  // unsigned: wraps, no overflow
      return std::size_t(uint64_t(k.c[0]) * 73856093u) ^ std::size_t(uint64_t(k.c[1]) * 19349663u) ^
             std::size_t(uint64_t(k.c[2]) * 83492791u);
    }
  };
  std::unordered_map<Key, double, Hash> cells;
  double large = 0;
  const double* x[3] = {b.x.data(), b.y.data(), b.z.data()};
  for (std::size_t i = 0; i < n; ++i) {
    if (diameter[i] > w) {
      large += 1;
      continue;
    }
    Key k{{0, 0, 0}};
    for (int a = 0; a < dim; ++a) k.c[a] = cell_of(x[a][i], a);
    cells[k] += 1;
  }
  double bound = large * double(n - 1);
  for (const auto& [key, count] : cells) {
    bound += count * (count - 1) / 2;
    // Each distinct neighbouring cell once (a wrap of fewer than 3 cells repeats some).
    std::vector<Key> seen;
    const int span_z = dim == 3 ? 1 : 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -span_z; dz <= span_z; ++dz) {
          Key o = key;
          const int d[3] = {dx, dy, dz};
          for (int a = 0; a < dim; ++a) {
            o.c[a] += d[a];
            if (wrap[a] > 0) o.c[a] = ((o.c[a] % wrap[a]) + wrap[a]) % wrap[a];
          }
          if (o == key || std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
          seen.push_back(o);
          const auto it = cells.find(o);
          if (it != cells.end()) bound += count * it->second / 2;  // each pair seen twice
        }
  }
  return bound;
}

}  // namespace nestsim::app

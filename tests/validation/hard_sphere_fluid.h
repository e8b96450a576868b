// The hard-sphere fluid's contact value g(sigma+) measured in frames, two ways, for
// validation_large_step (docs/validation.md, "Large steps: contacts and nesting").
//
// Insertion route (scaled-particle theory, exact for hard spheres): p0(l), the chance
// that a random point has no centre within l, falls as -d ln p0 / dl = 4 pi l^2 rho G(l),
// and at l = sigma the empty ball is a sphere of the fluid, so G(sigma) = g(sigma+). As
// -dp0/dl is the area of the union of the balls of radius l per volume, this gives
//     g(sigma+) = <exposed> / <free>,
// exposed: the fraction of the spheres of radius sigma around the centres that lies
// farther than sigma from every other centre; free: the fraction of the box farther than
// sigma from every centre (low density: 1 + 2.5 phi, as Carnahan-Starling). Both are
// sampled with random points; they average over the whole box, so one frame gives ~1%
// where the pairs in a thin shell give ~10%.
//
// Pair route: ordered pairs in shells of width w from contact against the ideal count,
// a fit of ln g weighted by the counts, extrapolated to contact.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stats.h"

namespace nestsim::validation {

// Centres in cells of a periodic cubic box, for "is a centre within r of this point".
class CentreCells {
 public:
  CentreCells(const std::vector<Vec>& x, double box, double reach) : x_(x), box_(box) {
    n_ = std::max(1, int(std::floor(box / reach)));
    cells_.resize(std::size_t(n_) * std::size_t(n_) * std::size_t(n_));
    for (std::size_t i = 0; i < x.size(); ++i) cells_[index(x[i])].push_back(i);
  }
  // Is a centre other than `skip` closer than r to p (r <= reach)?
  bool covered(const Vec& p, double r, std::size_t skip) const {
    const int a = cell(p[0]), b = cell(p[1]), c = cell(p[2]);
    const int lo = n_ < 3 ? 0 : -1, hi = n_ < 3 ? n_ - 1 : 1;
    const Vec box{box_, box_, box_};
    for (int da = lo; da <= hi; ++da)
      for (int db = lo; db <= hi; ++db)
        for (int dc = lo; dc <= hi; ++dc)
          for (std::size_t j :
               cells_[at((a + da + n_) % n_, (b + db + n_) % n_, (c + dc + n_) % n_)])
            if (j != skip && norm2(periodic_delta(p, x_[j], box)) < r * r) return true;
    return false;
  }
  int block(const Vec& p, int blocks) const {  // p's block of blocks^3 cubes
    const auto k = [&](double v) {
      const double u = v / box_ - std::floor(v / box_);
      return std::min(blocks - 1, int(u * blocks));
    };
    return k(p[0]) + blocks * (k(p[1]) + blocks * k(p[2]));
  }

 private:
  int cell(double v) const {
    const double u = v / box_ - std::floor(v / box_);
    return std::min(n_ - 1, int(u * n_));
  }
  std::size_t at(int a, int b, int c) const {
    return (std::size_t(a) * std::size_t(n_) + std::size_t(b)) * std::size_t(n_) + std::size_t(c);
  }
  std::size_t index(const Vec& p) const { return at(cell(p[0]), cell(p[1]), cell(p[2])); }
  const std::vector<Vec>& x_;
  double box_;
  int n_ = 1;
  std::vector<std::vector<std::size_t>> cells_;
};

// n non-overlapping spheres of diameter sigma at uniform random places, each kept when
// it clears those before (random sequential addition; its jamming limit is phi 0.38):
// a start nearer the fluid than a lattice.
inline std::vector<Vec> random_sequential(int n, double box, double sigma, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, box);
  const int m = std::max(1, int(std::floor(box / sigma)));
  std::vector<std::vector<std::size_t>> cells(std::size_t(m) * m * m);
  const auto cell = [&](double v) { return std::min(m - 1, int(v / box * m)); };
  std::vector<Vec> x;
  const Vec b{box, box, box};
  while (int(x.size()) < n) {
    const Vec p{u(rng), u(rng), u(rng)};
    const int a = cell(p[0]), c = cell(p[1]), d = cell(p[2]);
    bool clear = true;
    for (int da = -1; da <= 1 && clear; ++da)
      for (int dc = -1; dc <= 1 && clear; ++dc)
        for (int dd = -1; dd <= 1 && clear; ++dd)
          for (std::size_t j :
               cells[(std::size_t((a + da + m) % m) * m + (c + dc + m) % m) * m + (d + dd + m) % m])
            if (norm2(periodic_delta(p, x[j], b)) < sigma * sigma) clear = false;
    if (!clear) continue;
    cells[(std::size_t(a) * m + c) * m + d].push_back(x.size());
    x.push_back(p);
  }
  return x;
}

// Sums per block of space, over frames, for both routes.
struct ContactSums {
  static constexpr int kShells = 5;
  struct Block {
    double exposed = 0, surface = 0, free = 0, volume = 0;
    std::array<double, kShells> pairs{};
  };
  std::vector<Block> blocks;
  uint64_t overlaps = 0, pairs_checked = 0;
  double worst = -INFINITY;  // largest sigma - r over the pairs
  int frames = 0;
};

// One frame's samples: `surface` random points on each sphere of radius sigma, `volume`
// random points in the box, the pairs in shells of `width` from contact, the overlaps.
inline void add_frame(ContactSums& s, const std::vector<Vec>& x, double box, double sigma,
                      double width, int blocks, int surface, int volume, std::mt19937_64& rng) {
  if (s.blocks.empty()) s.blocks.resize(std::size_t(blocks * blocks * blocks));
  const CentreCells cells(x, box, sigma + ContactSums::kShells * width);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> u(0, box);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ContactSums::Block& b = s.blocks[std::size_t(cells.block(x[i], blocks))];
    for (int k = 0; k < surface; ++k) {
      const Vec d{normal(rng), normal(rng), normal(rng)};
      const double l = std::sqrt(norm2(d));
      const Vec p{x[i][0] + sigma * d[0] / l, x[i][1] + sigma * d[1] / l,
                  x[i][2] + sigma * d[2] / l};
      b.exposed += cells.covered(p, sigma, i) ? 0 : 1;
      b.surface += 1;
    }
  }
  for (int k = 0; k < volume; ++k) {
    const Vec p{u(rng), u(rng), u(rng)};
    ContactSums::Block& b = s.blocks[std::size_t(cells.block(p, blocks))];
    b.free += cells.covered(p, sigma, SIZE_MAX) ? 0 : 1;
    b.volume += 1;
  }
  for_close_pairs(x, Vec{box, box, box}, sigma + ContactSums::kShells * width,
                  [&](std::size_t i, std::size_t, double r) {
                    s.worst = std::max(s.worst, sigma - r);
                    if (r < sigma * (1 - 1e-9)) ++s.overlaps;
                    const int sh = int(std::floor((r - sigma) / width));
                    if (sh >= 0 && sh < ContactSums::kShells)
                      s.blocks[std::size_t(cells.block(x[i], blocks))].pairs[std::size_t(sh)] += 2;
                  });
  // Every pair closer than the cutoff was tested for overlap; count all pairs once.
  s.pairs_checked += x.size() * (x.size() - 1) / 2;
  ++s.frames;
}

// g(sigma+) by the insertion route from the blocks whose `use` is set.
inline double insertion_contact(const ContactSums& s, const std::vector<bool>& use) {
  double e = 0, a = 0, f = 0, v = 0;
  for (std::size_t k = 0; k < s.blocks.size(); ++k)
    if (use[k])
      e += s.blocks[k].exposed, a += s.blocks[k].surface, f += s.blocks[k].free,
          v += s.blocks[k].volume;
  return (e / a) / (f / v);
}

// g(sigma+) by the pair route (n spheres at number density rho) from the used blocks,
// scaled to the whole box.
inline double pair_contact(const ContactSums& s, const std::vector<bool>& use, int n, double rho,
                           double sigma, double width) {
  std::array<double, ContactSums::kShells> c{};
  double used = 0;
  for (std::size_t k = 0; k < s.blocks.size(); ++k)
    if (use[k]) {
      used += 1;
      for (int h = 0; h < ContactSums::kShells; ++h)
        c[std::size_t(h)] += s.blocks[k].pairs[std::size_t(h)];
    }
  const double scale = double(s.blocks.size()) / used;
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int h = 0; h < ContactSums::kShells; ++h) {
    const double r0 = sigma + h * width, r1 = r0 + width, x = (h + 0.5) * width;
    const double ideal = n * rho * 4.0 / 3.0 * kPi * (r1 * r1 * r1 - r0 * r0 * r0) * s.frames;
    const double w = c[std::size_t(h)] * scale;
    if (!(w > 0)) return NAN;
    const double y = std::log(w / ideal);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  return std::exp((sy - slope * sx) / sw);
}

// The estimate from all blocks and its jackknife standard error (leave one block out).
template <class F>
std::pair<double, double> jackknife(const ContactSums& s, F estimate) {
  const std::size_t nb = s.blocks.size();
  std::vector<bool> use(nb, true);
  const double all = estimate(use);
  std::vector<double> jack;
  for (std::size_t l = 0; l < nb; ++l) {
    use[l] = false;
    jack.push_back(estimate(use));
    use[l] = true;
  }
  double jm = 0, jv = 0;
  for (double v : jack) jm += v / double(nb);
  for (double v : jack) jv += (v - jm) * (v - jm);
  return {all, std::sqrt((double(nb) - 1) / double(nb) * jv)};
}

}  // namespace nestsim::validation

// The host's plan of HSX: levels grouped (plan_groups), the level base chosen among
// the phases (choose_level_base).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hsx/level_plan.cuh"
#include "nestsim/tuning.h"

namespace nestsim::detail {

// One group of levels: bodies [begin, end) in group order are its small set.
struct Group {
  int top_level;  // its cell width is d0 * 2^top_level
  uint32_t begin, end;
  bool brute;     // brute force over [begin, n): the last few large bodies
};


// The host's part of find() between two GPU phases (the GPU waits for it): the rim
// estimate of every level in one pass, not a sum of pow() terms per candidate top
// (those cost 10-15 us per find; docs/performance.md, "The host's plan in one pass").
// rim[t] = sum over b > t of histogram[b] growth^(b - t)
//        = growth (histogram[t + 1] + rim[t + 1]); rest[t] the bodies above t.
// The groups go to out[0, count), count returned; at most `limit` of them (each group
// takes at least one level, the brute-force remainder one more: kMaxGroups serve all).
constexpr int kMaxGroups = kLevels + 1;
// A level is merged into the next group while its large bodies would walk more than
// t.rim_per_small rim cells per small body; t.brute_remainder bodies or fewer left are
// one brute-force group.
inline int plan_groups(const HsxTuning& t, const uint32_t* histogram, int dim, uint32_t n,
                       Group* out, int limit) {
  const double growth = dim == 3 ? 4.0 : 2.0;  // rim cells per level step down
  double rim[kLevels];
  uint64_t rest[kLevels];
  rim[kLevels - 1] = 0;
  rest[kLevels - 1] = 0;
  for (int l = kLevels - 2; l >= 0; --l) {
    rest[l] = rest[l + 1] + histogram[l + 1];
    rim[l] = growth * (double(histogram[l + 1]) + rim[l + 1]);
  }
  int count = 0;
  uint32_t begin = 0;
  int k = 0;
  while (begin < n && count < limit) {
    if (n - begin <= t.brute_remainder && count > 0) {
      out[count++] = {k, begin, n, true};
      break;
    }
    uint64_t members = 0;
    int top = k;
    for (; top < kLevels; ++top) {
      members += histogram[top];
      if (members == 0) continue;
      if (rest[top] == 0 || rim[top] <= t.rim_per_small * double(members)) break;
    }
    if (top >= kLevels) top = kLevels - 1;
    out[count++] = {top, begin, begin + uint32_t(members), false};
    begin += uint32_t(members);
    k = top + 1;
  }
  return count;
}

// The level base (tuning: cell_spacing, phase_min_n, phases_tried, forced_phase,
// cell_grow_max, cell_shrink_max). The first group's cell width over its members' mean
// spacing (the side of the centres' box per member) that the base aims at: finer cells
// cost large items and table cells, coarser ones candidates per body. cell_spacing 0
// keeps phase 0 (d0 from the smallest diameter, as Algorithm 1 line 1); below
// phase_min_n bodies phase 0 serves (there the find is launch-bound, and a relevel is
// a launch more). Where even the best phase leaves the first group's cells finer
// (sparse scenes) or coarser (dense scenes) than cell_spacing, every group's cells grow
// by 2^(i/4), i <= cell_grow_max, or shrink by 2^(-i/4), i <= cell_shrink_max, to come
// closest; members' radii stay bounded by d / 2 whatever the cells.
using LevelCounts = std::array<uint32_t, kLevels>;

struct LevelBase {
  int phase = 0;
  double d0 = 0;
  LevelCounts histogram{};  // of the natural levels at d0
  std::vector<Group> groups;
  double cell_fraction = 1;  // cell width / group's top diameter
  double cells_per_spacing = 0;  // the first group's, as chosen
};

// The phase whose first group's cells come closest to t.cell_spacing mean spacings (a
// factor either way); phase 0 unless another is strictly closer (a flat or empty box,
// say). Each phase is judged by plan_groups' first group of its histogram, on the stack
// (the host's critical path: no allocation per phase); the chosen one is planned whole.
inline LevelBase choose_level_base(const HsxTuning& t, const LevelPlan& plan, int dim,
                                   uint32_t n) {
  double volume = 1;
  for (int k = 0; k < dim; ++k) volume *= plan.bounds.centre_hi[k] - plan.bounds.centre_lo[k];
  auto d0_of = [&](int j) { return std::ldexp(plan.d0[j % kPhases], j / kPhases); };
  auto histogram_of = [&](int j, LevelCounts& h) {
    h.fill(0);
    for (int l = 0; l < kLevels; ++l)  // levels j / kPhases lower, the lowest merged into 0
      h[std::max(0, l - j / kPhases)] += plan.histogram[j % kPhases][l];
  };
  auto cells_per_spacing = [&](int j, const LevelCounts& h) {
    Group g{0, 0, 0, false};
    plan_groups(t, h.data(), dim, n, &g, 1);
    const double spacing = std::pow(volume / double(std::max(1u, g.end - g.begin)), 1.0 / dim);
    return std::ldexp(d0_of(j), g.top_level) * t.cell_fraction / spacing;
  };
  // Level 63 holds every diameter from d0 2^62 up (infinite ones too), so it would not
  // shift down with the base: no derived phase then.
  auto valid = [&](int j) {
    return j < kPhases || plan.histogram[j % kPhases][kLevels - 1] == 0;
  };
  const int forced_phase = t.forced_phase;
  const bool forced = forced_phase >= 0 && forced_phase < kPhases * kOctaves && valid(forced_phase);
  const bool choose = !forced && t.cell_spacing > 0 && double(n) >= t.phase_min_n;
  const int phases_tried = std::min(t.phases_tried, kPhases * kOctaves);
  LevelBase best;
  best.cell_fraction = t.cell_fraction;
  best.phase = forced ? forced_phase : 0;
  histogram_of(best.phase, best.histogram);
  best.cells_per_spacing = cells_per_spacing(best.phase, best.histogram);
  if (choose) {
    double best_miss = std::fabs(std::log(best.cells_per_spacing / t.cell_spacing));
    LevelCounts h;
    for (int j = 1; j < phases_tried; ++j) {
      if (!valid(j)) continue;
      histogram_of(j, h);
      const double ratio = cells_per_spacing(j, h);
      const double miss = std::fabs(std::log(ratio / t.cell_spacing));
      if (miss < best_miss) {
        best.phase = j;
        best.histogram = h;
        best.cells_per_spacing = ratio;
        best_miss = miss;
      }
    }
  }
  best.d0 = d0_of(best.phase);
  best.groups.resize(kMaxGroups);
  best.groups.resize(std::size_t(plan_groups(t, best.histogram.data(), dim, n,
                                             best.groups.data(), kMaxGroups)));
  // Cells still finer or coarser than t.cell_spacing spacings: the nearest 2^(i/4) towards
  // it, i in [-cell_shrink_max, cell_grow_max]. (A flat or empty box has no finite ratio.)
  const double ratio = best.cells_per_spacing;
  if (choose && ratio > 0 && std::isfinite(ratio)) {
    const int steps = std::clamp(int(std::lround(4.0 * std::log2(t.cell_spacing / ratio))),
                                 -t.cell_shrink_max, t.cell_grow_max);
    const double scale = std::exp2(0.25 * steps);
    best.cell_fraction *= scale;
    best.cells_per_spacing *= scale;
  }
  return best;
}

}  // namespace nestsim::detail

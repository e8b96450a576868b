// Benchmarks that reproduce the figure families of the HSX paper (section 5, Figs 5-12).
//   bench_figures [--family size|density|uniform|thickness|pairs|concentric|all]
//                 [--out DIR] [--max-n N] [--fixed-n N] [--repeats K]
//                 [--precision float|double] [--baseline-overlap solid|hollow]
//                 [--point-budget SECONDS] [--no-plot]
// Each family writes DIR/fig_<family>.csv (device and parameters in '#' lines at the top)
// and, through tools/plot_bench.py, DIR/fig_<family>.png. Results: docs/performance.md.
//
// HSX always runs in hollow mode (its problem). The baselines (grid_aabb, the chrono-style
// AABB grid; grid_uniform; brute) run in solid mode by default, which is what chrono
// computes in the paper's comparisons; --baseline-overlap hollow makes them report the
// HSX pairs instead (same exact test after their candidates).
//
// A (method, N) point is skipped, with the reason in the CSV, when its predicted time per
// call (extrapolated from the previous N of the same series, or for grid_uniform from
// the number of candidate tests) exceeds the point budget, or when an SSX run would have
// to store more than 5e7 pairs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"

#ifndef NESTSIM_PLOT_SCRIPT
#define NESTSIM_PLOT_SCRIPT "tools/plot_bench.py"
#endif

using namespace nestsim;

namespace {

constexpr double kMaxStoredPairs = 5e7;

struct Config {
  std::string family = "all", out = "bench_figures_out", precision = "float";
  std::size_t max_n = 100000;
  std::size_t fixed_n = 30000;
  int repeats = 5;
  Overlap baseline = Overlap::solid;
  double point_budget_s = 5;
  bool plot = true;
};

struct Row {
  std::string series, scene;
  int dim = 3;
  double phi = 0, q_ratio = 0;
  std::string method, overlap;
  std::size_t n = 0;
  double median_ms = -1, min_ms = -1;
  uint64_t pairs = 0;
  std::string status = "ok", note;
};

const char* overlap_name(Overlap o) { return o == Overlap::hollow ? "hollow" : "solid"; }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Sizes 1, 2, 5 x 10^k from `lo` up to `hi` (and hi itself when it is not on the grid).
std::vector<std::size_t> sizes(std::size_t lo, std::size_t hi) {
  std::vector<std::size_t> out;
  for (double d = 1; d <= 1e12; d *= 10)
    for (double m : {1.0, 2.0, 5.0}) {
      const auto n = std::size_t(m * d);
      if (n >= lo && n <= hi) out.push_back(n);
    }
  if (out.empty() || out.back() != hi) out.push_back(hi);
  return out;
}

// Candidate tests of the uniform grid: N times the bodies in the 3^dim cells around a
// body (fewer when the box holds fewer cells), cell width = largest diameter.
double uniform_grid_tests(const scenes::Scene& s) {
  const auto& b = s.bodies;
  double rmax = 0;
  for (double r : b.radius) rmax = std::max(rmax, r);
  const double n = double(b.size());
  double cells = 1, around = 1;
  for (int a = 0; a < s.domain.dim; ++a) {
    const double k = std::max(1.0, std::floor(s.domain.size[a] / std::max(2 * rmax, 1e-300)));
    cells *= k;
    around *= std::min(3.0, k);
  }
  return n * around * n / cells;
}

class Runner {
 public:
  Runner(const Config& c, const std::string& backend) : c_(c), backend_(backend) {
    cpu_ = backend_.rfind("CPU", 0) == 0;
    // Rough exact tests per second of a grid's candidate loop, for the grid_uniform guard.
    tests_per_s_ = cpu_ ? 1e8 : 2e10;
  }
  virtual ~Runner() = default;
  const std::string& backend() const { return backend_; }
  virtual bool measure(const scenes::Scene& s, Method m, Overlap o, int repeats, Row& r) = 0;
  virtual uint64_t count(const scenes::Scene& s, Overlap o) = 0;

  // Times one point unless its prediction is absurd; `key` names the series for the
  // extrapolation from its previous point.
  Row point(const std::string& key, const scenes::Scene& s, Method m, Overlap o, Row r,
            double expected_pairs = -1) {
    r.method = to_string(m);
    r.overlap = overlap_name(o);
    r.n = s.bodies.size();
    r.dim = s.domain.dim;
    const double budget_ms = c_.point_budget_s * 1e3;
    double predicted_ms = -1;
    auto last = last_.find(key);
    if (last != last_.end()) {
      const auto& h = last->second;
      double slope = 1.0;
      if (h.size() >= 2) {
        const auto& a = h[h.size() - 2];
        const auto& b = h.back();
        if (b.second > 0 && a.second > 0 && b.first > a.first)
          slope = std::log(b.second / a.second) / std::log(b.first / a.first);
      }
      slope = std::clamp(slope, 1.0, 2.5);
      predicted_ms = h.back().second * std::pow(double(r.n) / h.back().first, slope);
    }
    if (m == Method::grid_uniform) {
      const double ms = uniform_grid_tests(s) / tests_per_s_ * 1e3;
      predicted_ms = std::max(predicted_ms, ms);
    }
    if (o == Overlap::solid && expected_pairs > kMaxStoredPairs) {
      r.status = "skipped";
      r.note = "would store " + fmt("%.3g", expected_pairs) + " pairs (> 5e7; memory)";
    } else if (skipped_.count(key)) {
      r.status = "skipped";
      r.note = "a smaller N of this series was already skipped";
    } else if (predicted_ms > budget_ms) {
      r.status = "skipped";
      r.note = "predicted " + fmt("%.3g", predicted_ms / 1e3) + " s per call > budget " +
               fmt("%.3g", c_.point_budget_s) + " s";
    }
    if (r.status == "skipped") {
      skipped_[key] = true;
    } else {
      int reps = c_.repeats;
      if (predicted_ms > 0)
        reps = std::clamp(int(budget_ms / predicted_ms) - 1, 1, c_.repeats);
      if (!measure(s, m, o, reps, r)) {
        skipped_[key] = true;
      } else {
        last_[key].push_back({double(r.n), std::max(r.median_ms, 1e-3)});
      }
    }
    std::printf("  %-22s %-13s %-6s %9zu %11.4f %11.4f %13llu %s %s\n", r.series.c_str(),
                r.method.c_str(), r.overlap.c_str(), r.n, r.median_ms, r.min_ms,
                static_cast<unsigned long long>(r.pairs), r.status.c_str(), r.note.c_str());
    std::fflush(stdout);
    return r;
  }

  // Forgets the series of the previous family.
  void reset() {
    last_.clear();
    skipped_.clear();
  }

 private:
  const Config& c_;
  std::string backend_;
  bool cpu_ = true;
  double tests_per_s_ = 1e8;
  std::map<std::string, std::vector<std::pair<double, double>>> last_;
  std::map<std::string, bool> skipped_;
};

template <class Real>
class RunnerT : public Runner {
 public:
  explicit RunnerT(const Config& c) : Runner(c, Broadphase<Real>::backend_name()) {}

  bool measure(const scenes::Scene& s, Method m, Overlap o, int repeats, Row& r) override {
    try {
      Broadphase<Real> finder(options(s, m, o));
      finder.upload(scenes::converted<Real>(s.bodies));
      const Timings t = finder.time(repeats, false);
      r.median_ms = t.median();
      r.min_ms = t.min();
      r.pairs = finder.pair_count();
      return true;
    } catch (const std::exception& e) {  // e.g. out of device memory
      r.status = "skipped";
      r.note = std::string("failed: ") + e.what();
      for (char& ch : r.note)
        if (ch == ',' || ch == '\n') ch = ';';
      return false;
    }
  }

  uint64_t count(const scenes::Scene& s, Overlap o) override {
    Broadphase<Real> finder(options(s, Method::hsx, o));
    finder.upload(scenes::converted<Real>(s.bodies));
    return finder.count();
  }

 private:
  static BroadphaseOptions options(const scenes::Scene& s, Method m, Overlap o) {
    BroadphaseOptions opt;
    opt.method = m;
    opt.overlap = o;
    opt.domain.dim = s.domain.dim;
    return opt;
  }
};

// Pairs whose axis-aligned bounding boxes [c - r, c + r] overlap (closed intervals),
// counted on the host with a multi-cell grid: each box is entered in every cell it
// touches (cell width twice the mean diameter), and a pair counts only in the cell of
// the lower corner of the two boxes' intersection, that is at the larger start cell on
// every axis, so each pair counts once.
uint64_t count_aabb_pairs(const SphereSet<double>& b, int dim) {
  const std::size_t n = b.size();
  if (n < 2) return 0;
  const std::vector<double>* pos[3] = {&b.x, &b.y, &b.z};
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, rsum = 0;
  for (int a = 0; a < dim; ++a) {
    lo[a] = 1e300;
    hi[a] = -1e300;
    for (std::size_t i = 0; i < n; ++i) {
      lo[a] = std::min(lo[a], (*pos[a])[i] - b.radius[i]);
      hi[a] = std::max(hi[a], (*pos[a])[i] + b.radius[i]);
    }
  }
  for (double r : b.radius) rsum += r;
  double width = std::max(4.0 * rsum / double(n), 1e-12);
  uint64_t cells[3] = {1, 1, 1};
  for (int a = 0; a < dim; ++a)
    cells[a] = uint64_t(std::floor((hi[a] - lo[a]) / width)) + 1;
  std::vector<uint32_t> start(3 * n), stop(3 * n);
  std::vector<std::pair<uint64_t, uint32_t>> entries;
  entries.reserve(8 * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = 0; a < 3; ++a) {
      if (a < dim) {
        const double x = (*pos[a])[i];
        start[3 * i + a] = uint32_t(std::min<double>(
            double(cells[a] - 1), std::floor((x - b.radius[i] - lo[a]) / width)));
        stop[3 * i + a] = uint32_t(std::min<double>(
            double(cells[a] - 1), std::floor((x + b.radius[i] - lo[a]) / width)));
      } else {
        start[3 * i + a] = stop[3 * i + a] = 0;
      }
    }
    for (uint64_t z = start[3 * i + 2]; z <= stop[3 * i + 2]; ++z)
      for (uint64_t y = start[3 * i + 1]; y <= stop[3 * i + 1]; ++y)
        for (uint64_t x = start[3 * i]; x <= stop[3 * i]; ++x)
          entries.push_back({x + cells[0] * (y + cells[1] * z), uint32_t(i)});
  }
  std::sort(entries.begin(), entries.end());
  uint64_t count = 0;
  for (std::size_t e0 = 0; e0 < entries.size();) {
    std::size_t e1 = e0;
    while (e1 < entries.size() && entries[e1].first == entries[e0].first) ++e1;
    const uint64_t key = entries[e0].first;
    const uint64_t cell[3] = {key % cells[0], (key / cells[0]) % cells[1],
                              key / (cells[0] * cells[1])};
    for (std::size_t p = e0; p < e1; ++p) {
      const uint32_t i = entries[p].second;
      for (std::size_t q = p + 1; q < e1; ++q) {
        const uint32_t j = entries[q].second;
        bool ok = true;
        for (int a = 0; a < dim && ok; ++a) {
          const double d = std::abs((*pos[a])[i] - (*pos[a])[j]);
          ok = d <= b.radius[i] + b.radius[j] &&
               std::max(start[3 * i + a], start[3 * j + a]) == cell[a];
        }
        count += ok;
      }
    }
    e0 = e1;
  }
  return count;
}

uint64_t count_aabb_pairs_brute(const SphereSet<double>& b, int dim) {
  const std::vector<double>* pos[3] = {&b.x, &b.y, &b.z};
  uint64_t count = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    for (std::size_t j = i + 1; j < b.size(); ++j) {
      bool ok = true;
      for (int a = 0; a < dim && ok; ++a)
        ok = std::abs((*pos[a])[i] - (*pos[a])[j]) <= b.radius[i] + b.radius[j];
      count += ok;
    }
  return count;
}

uint64_t seed_for(std::size_t n, double phi) { return 12345 + n + uint64_t(phi * 1e6); }

class Family {
 public:
  Family(const Config& c, Runner& run, const std::string& name) : c_(c), run_(run), name_(name) {
    run.reset();
    std::printf("# family %s\n", name.c_str());
    std::printf("  %-22s %-13s %-6s %9s %11s %11s %13s %s\n", "series", "method", "mode", "N",
                "median_ms", "min_ms", "pairs", "status");
  }
  void param(const std::string& line) { params_.push_back(line); }
  void add(const Row& r) { rows_.push_back(r); }

  void write() const {
    const std::string path = c_.out + "/fig_" + name_ + ".csv";
    std::ofstream out(path);
    out << "# nestsim bench_figures family=" << name_ << "\n";
    out << "# device=" << run_.backend() << "\n";
    out << "# precision=" << c_.precision << " repeats=" << c_.repeats
        << " max_n=" << c_.max_n << " fixed_n=" << c_.fixed_n
        << " baseline_overlap=" << overlap_name(c_.baseline)
        << " point_budget_s=" << c_.point_budget_s << "\n";
    for (const std::string& p : params_) out << "# " << p << "\n";
    out << "series,scene,dim,volume_fraction,thickness_ratio,method,overlap,n,median_ms,"
           "min_ms,pairs,status,note\n";
    for (const Row& r : rows_) {
      out << r.series << "," << r.scene << "," << r.dim << "," << r.phi << "," << r.q_ratio
          << "," << r.method << "," << r.overlap << "," << r.n << ",";
      if (r.status == "ok" && r.median_ms >= 0)
        out << r.median_ms << "," << r.min_ms << "," << r.pairs;
      else if (r.status == "ok")  // a count only
        out << ",," << r.pairs;
      else
        out << ",,";
      out << "," << r.status << "," << r.note << "\n";
    }
    std::printf("# wrote %s\n", path.c_str());
  }

 private:
  const Config& c_;
  Runner& run_;
  std::string name_;
  std::vector<std::string> params_;
  std::vector<Row> rows_;
};

const Method kBaselines[] = {Method::grid_aabb, Method::grid_uniform};

// Figs 5, 6 (dense / sparse, 3D) and 11 (2D and 3D scaling, semi-dense).
void family_size(const Config& c, Runner& run) {
  Family f(c, run, "size");
  f.param("scene=exponential radii (mean 1; cut 20; 20% solid; others q = 0.2 r); "
          "dense phi=0.3 and sparse phi=0.03 in 3D; semi-dense phi=0.1 in 2D and 3D (Fig 11)");
  for (double phi : {0.3, 0.03}) {
    const std::string series = phi > 0.1 ? "dense" : "sparse";
    for (std::size_t n : sizes(1000, c.max_n)) {
      const scenes::Scene s = scenes::exponential(n, phi, 3, seed_for(n, phi));
      Row base;
      base.series = series;
      base.scene = "exponential";
      base.phi = phi;
      base.q_ratio = 0.2;
      f.add(run.point(series + "/hsx", s, Method::hsx, Overlap::hollow, base));
      for (Method m : kBaselines)
        f.add(run.point(series + "/" + to_string(m), s, m, c.baseline, base));
    }
  }
  for (int dim : {3, 2}) {
    const std::string series = "semidense_" + std::to_string(dim) + "d";
    for (std::size_t n : sizes(1000, c.max_n)) {
      const scenes::Scene s = scenes::exponential(n, 0.1, dim, seed_for(n, 0.1) + dim);
      Row base;
      base.series = series;
      base.scene = "exponential";
      base.phi = 0.1;
      base.q_ratio = 0.2;
      f.add(run.point(series + "/hsx", s, Method::hsx, Overlap::hollow, base));
      f.add(run.point(series + "/grid_aabb", s, Method::grid_aabb, c.baseline, base));
    }
  }
  f.write();
}

// Fig 7: time against the volume fraction at fixed N.
void family_density(const Config& c, Runner& run) {
  Family f(c, run, "density");
  const std::size_t n = std::min(c.fixed_n, c.max_n);
  f.param("scene=exponential radii (mean 1; cut 20; 20% solid; others q = 0.2 r); 3D; N=" +
          std::to_string(n) + "; volume fraction = sum of body volumes / box volume");
  for (double phi : {0.01, 0.03, 0.1, 0.3, 1.0, 3.0}) {
    const scenes::Scene s = scenes::exponential(n, phi, 3, seed_for(n, phi));
    Row base;
    base.series = "exponential";
    base.scene = "exponential";
    base.phi = phi;
    base.q_ratio = 0.2;
    // Keyed by method only: the extrapolation treats phi as the size axis (rough).
    f.add(run.point("hsx", s, Method::hsx, Overlap::hollow, base));
    for (Method m : kBaselines) f.add(run.point(to_string(m), s, m, c.baseline, base));
  }
  f.write();
}

// Fig 8: equal radii, time against N.
void family_uniform(const Config& c, Runner& run) {
  Family f(c, run, "uniform");
  f.param("scene=equal radii r=1; q = 0.2 r; 3D; dense phi=0.3 and sparse phi=0.03");
  for (double phi : {0.3, 0.03}) {
    const std::string series = phi > 0.1 ? "dense" : "sparse";
    for (std::size_t n : sizes(1000, c.max_n)) {
      const scenes::Scene s = scenes::equal_radii(n, phi, 3, seed_for(n, phi));
      Row base;
      base.series = series;
      base.scene = "equal_radii";
      base.phi = phi;
      base.q_ratio = 0.2;
      f.add(run.point(series + "/hsx", s, Method::hsx, Overlap::hollow, base));
      for (Method m : kBaselines)
        f.add(run.point(series + "/" + to_string(m), s, m, c.baseline, base));
    }
  }
  f.write();
}

// Fig 9: thickness ratio q/r from 0 to 1 at fixed N: time and pair counts.
void family_thickness(const Config& c, Runner& run) {
  Family f(c, run, "thickness");
  const std::size_t n = std::min(c.fixed_n, c.max_n);
  const double phi = 0.3;
  f.param("scene=exponential radii (mean 1; cut 20), all bodies q = ratio * r (no solid "
          "fraction); 3D; phi=0.3; N=" + std::to_string(n) +
          "; series time: hsx hollow and grid_aabb hollow/solid; series count: pairs of "
          "HSX (hollow), SSX (solid) and AABB overlaps (host grid count)");
  uint64_t aabb = 0;
  for (int k = 0; k <= 10; ++k) {
    const double ratio = 0.1 * k;
    // Same radii and positions for every ratio: same seed, only the thickness differs.
    const scenes::Scene s = scenes::exponential(n, phi, 3, seed_for(n, phi), 1.0, 20.0, 0.0,
                                                ratio);
    Row base;
    base.series = "time";
    base.scene = "exponential";
    base.phi = phi;
    base.q_ratio = ratio;
    f.add(run.point("hsx" + std::to_string(k), s, Method::hsx, Overlap::hollow, base));
    f.add(run.point("aabb_h" + std::to_string(k), s, Method::grid_aabb, Overlap::hollow, base));
    f.add(run.point("aabb_s" + std::to_string(k), s, Method::grid_aabb, Overlap::solid, base));
    Row cnt = base;
    cnt.series = "count";
    cnt.n = n;
    cnt.method = "hsx";
    cnt.overlap = "hollow";
    const uint64_t hsx = cnt.pairs = run.count(s, Overlap::hollow);
    f.add(cnt);
    cnt.overlap = "solid";
    const uint64_t ssx = cnt.pairs = run.count(s, Overlap::solid);
    f.add(cnt);
    if (k == 0) aabb = count_aabb_pairs(s.bodies, 3);
    cnt.method = "aabb_host";
    cnt.overlap = "aabb";
    cnt.pairs = aabb;
    f.add(cnt);
    std::printf("  q/r=%.1f pairs: hsx %llu ssx %llu aabb %llu\n", ratio,
                static_cast<unsigned long long>(hsx), static_cast<unsigned long long>(ssx),
                static_cast<unsigned long long>(aabb));
  }
  f.write();
}

// Fig 10: pairs reported by HSX, SSX and the AABB overlap test against N.
void family_pairs(const Config& c, Runner& run) {
  Family f(c, run, "pairs");
  f.param("scene=exponential radii (mean 1; cut 20; 20% solid; others q = 0.2 r); 3D; "
          "phi=0.3 and 0.03; HSX/SSX counted with Broadphase::count (method hsx, hollow/"
          "solid); AABB = pairs of overlapping bounding boxes counted on the host with a "
          "multi-cell grid (cell 2x mean diameter, each pair in the cell of the lower "
          "corner of the boxes' intersection), checked against an O(N^2) count at N=1000");
  for (double phi : {0.3, 0.03}) {
    const std::string series = phi > 0.1 ? "dense" : "sparse";
    for (std::size_t n : sizes(1000, c.max_n)) {
      const scenes::Scene s = scenes::exponential(n, phi, 3, seed_for(n, phi));
      Row r;
      r.series = series;
      r.scene = "exponential";
      r.phi = phi;
      r.q_ratio = 0.2;
      r.n = n;
      r.method = "hsx";
      r.overlap = "hollow";
      r.pairs = run.count(s, Overlap::hollow);
      f.add(r);
      const uint64_t hsx = r.pairs;
      r.overlap = "solid";
      r.pairs = run.count(s, Overlap::solid);
      f.add(r);
      const uint64_t ssx = r.pairs;
      r.method = "aabb_host";
      r.overlap = "aabb";
      r.pairs = count_aabb_pairs(s.bodies, 3);
      if (n <= 1000) {
        const uint64_t check = count_aabb_pairs_brute(s.bodies, 3);
        if (check != r.pairs) {
          std::fprintf(stderr, "bench_figures: AABB grid count %llu != brute count %llu\n",
                       static_cast<unsigned long long>(r.pairs),
                       static_cast<unsigned long long>(check));
          std::exit(1);
        }
      }
      f.add(r);
      std::printf("  %-8s N=%9zu pairs: hsx %llu ssx %llu aabb %llu\n", series.c_str(), n,
                  static_cast<unsigned long long>(hsx), static_cast<unsigned long long>(ssx),
                  static_cast<unsigned long long>(r.pairs));
      std::fflush(stdout);
    }
  }
  f.write();
}

// Fig 12: concentric shells; HSX (0 pairs) against the SSX baselines (n(n-1)/2 pairs).
void family_concentric(const Config& c, Runner& run) {
  Family f(c, run, "concentric");
  f.param("scene=concentric shells, radii 1..N, q=0.5, 3D; HSX hollow finds 0 pairs, "
          "the baselines in " + std::string(overlap_name(c.baseline)) +
          " mode; SSX stores N(N-1)/2 pairs, capped at 5e7 (N <= 10000)");
  for (std::size_t n : sizes(100, c.max_n)) {
    const scenes::Scene s = scenes::concentric(n, 3);
    Row base;
    base.series = "concentric";
    base.scene = "concentric";
    base.q_ratio = 0;
    const double ssx = 0.5 * double(n) * double(n - 1);
    f.add(run.point("hsx", s, Method::hsx, Overlap::hollow, base, 0));
    for (Method m : {Method::grid_aabb, Method::grid_uniform, Method::brute})
      f.add(run.point(to_string(m), s, m, c.baseline, base,
                      c.baseline == Overlap::solid ? ssx : 0));
  }
  f.write();
}

bool has_matplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib, numpy' >/dev/null 2>&1") == 0;
}

template <class Real>
int run_all(const Config& c) {
  RunnerT<Real> run(c);
  std::printf("# nestsim bench_figures, backend %s, precision %s, repeats %d, max N %zu\n",
              run.backend().c_str(), c.precision.c_str(), c.repeats, c.max_n);
  const std::vector<std::pair<std::string, void (*)(const Config&, Runner&)>> families = {
      {"size", family_size},         {"density", family_density},
      {"uniform", family_uniform},   {"thickness", family_thickness},
      {"pairs", family_pairs},       {"concentric", family_concentric}};
  bool any = false;
  for (const auto& [name, fn] : families) {
    if (c.family != "all" && c.family != name) continue;
    any = true;
    const auto t0 = std::chrono::steady_clock::now();
    fn(c, run);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("# family %s took %.1f s\n", name.c_str(), s);
  }
  if (!any) {
    std::fprintf(stderr, "bench_figures: unknown family '%s'\n", c.family.c_str());
    return 2;
  }
  const std::string cmd = std::string("/usr/bin/python3 ") + NESTSIM_PLOT_SCRIPT + " '" +
                          c.out + "'" + (c.family == "all" ? "" : " --family " + c.family);
  if (!c.plot) {
    std::printf("# plots: %s\n", cmd.c_str());
  } else if (has_matplotlib()) {
    std::printf("# %s\n", cmd.c_str());
    std::fflush(stdout);
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "bench_figures: plot failed\n");
  } else {
    std::printf("# /usr/bin/python3 has no matplotlib; plot later with: %s\n", cmd.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "bench_figures: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--family") c.family = value();
    else if (a == "--out") c.out = value();
    else if (a == "--max-n") c.max_n = std::size_t(std::stod(value()));
    else if (a == "--fixed-n") c.fixed_n = std::size_t(std::stod(value()));
    else if (a == "--repeats") c.repeats = std::max(1, std::atoi(value().c_str()));
    else if (a == "--precision") c.precision = value();
    else if (a == "--point-budget") c.point_budget_s = std::stod(value());
    else if (a == "--no-plot") c.plot = false;
    else if (a == "--baseline-overlap") {
      const std::string v = value();
      c.baseline = v == "hollow" ? Overlap::hollow : Overlap::solid;
    } else {
      std::fprintf(stderr,
                   "usage: bench_figures [--family size|density|uniform|thickness|pairs|"
                   "concentric|all] [--out DIR] [--max-n N] [--fixed-n N] [--repeats K]\n"
                   "       [--precision float|double] [--baseline-overlap solid|hollow]"
                   " [--point-budget SECONDS] [--no-plot]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (c.precision != "float" && c.precision != "double") {
    std::fprintf(stderr, "bench_figures: --precision float|double\n");
    return 2;
  }
  if (c.max_n < 1000) c.max_n = 1000;
  mkdir(c.out.c_str(), 0755);  // one level; an existing folder is fine
  return c.precision == "double" ? run_all<double>(c) : run_all<float>(c);
}

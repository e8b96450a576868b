// The validation suite's statistics (tests/validation/, ctest label `validation`).
//
// Every check measures one statistic, computes its theory, its standard error and
//     z = (measured - theory) / se,
// runs two seeds, and prints one machine-readable line per seed,
//     VALIDATION|name|measured|theory|se|z|seed
// (tools/validation_table.py turns them into docs/validation.md's table). A check FAILS
// when any |z| > 4, or when |z| > 3 for both seeds: a statistic that is right misses
// with probability ~6e-5 (normal z; ~1e-3 where se comes from 20 blocks), one that is
// off by 4 se fails about half the time on one seed and almost surely over two.
//
// Geometric invariants (never a ball in a membrane, ...) are not statistics: they print
//     INVARIANT|name|violations|samples|worst|seed
// and fail on any violation.
//
// Seeds: NESTSIM_VALIDATION_SEED (default 1) and the one after it, so a sweep over many
// seeds (the false-alarm rate) needs no rebuild. NESTSIM_VALIDATION_SEEDS=1 runs only the
// first, so that a runner can spread the two seeds over processes (bench/gpu_validation.sh;
// tools/validation_table.py then applies the two-seed rule to their joined output).
#pragma once
#include <algorithm>
#include <chrono>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nestsim::validation {

constexpr double kPi = 3.14159265358979323846;

// The seeds of every check: two, or the first only (NESTSIM_VALIDATION_SEEDS=1).
inline std::vector<uint64_t> seeds() {
  uint64_t base = 1;
  if (const char* e = std::getenv("NESTSIM_VALIDATION_SEED")) base = std::strtoull(e, nullptr, 10);
  const char* count = std::getenv("NESTSIM_VALIDATION_SEEDS");
  if (count && std::string(count) == "1") return {base};
  return {base, base + 1};
}

// The engine's seed of variant `v` of a check at seed `seed` (distinct random streams for
// the variants of one check; the lines print `seed`).
inline uint64_t stream(uint64_t seed, uint64_t v) { return seed * 1000003ull + v * 7919ull + 1; }

struct Result {
  std::string name;
  double measured = 0, theory = 0, se = 0;
  uint64_t seed = 0;
  double z() const { return se > 0 ? (measured - theory) / se : (measured == theory ? 0 : INFINITY); }
};

// Collects the results of one test case, prints them and judges them per name.
class Ledger {
 public:
  void add(const std::string& name, double measured, double theory, double se, uint64_t seed) {
    Result r{name, measured, theory, se, seed};
    std::printf("VALIDATION|%s|%.7g|%.7g|%.4g|%.3f|%llu\n", name.c_str(), measured, theory, se, r.z(),
                (unsigned long long)seed);
    std::fflush(stdout);
    results_[name].push_back(r);
  }
  void invariant(const std::string& name, uint64_t violations, uint64_t samples, double worst,
                 uint64_t seed) {
    std::printf("INVARIANT|%s|%llu|%llu|%.3g|%llu\n", name.c_str(), (unsigned long long)violations,
                (unsigned long long)samples, worst, (unsigned long long)seed);
    std::fflush(stdout);
    if (violations) failures_.push_back(name + " (seed " + std::to_string(seed) + "): " +
                                        std::to_string(violations) + " violations");
  }
  // True when every statistic passes the rule above; `why` lists the failures.
  bool ok(std::string& why) const {
    std::vector<std::string> bad = failures_;
    for (const auto& [name, rs] : results_) {
      int over3 = 0;
      bool over4 = false;
      std::string zs;
      for (const Result& r : rs) {
        const double a = std::fabs(r.z());
        over3 += a > 3 ? 1 : 0;
        over4 = over4 || !(a <= 4);
        zs += " " + std::to_string(r.z());
      }
      if (over4 || (rs.size() >= 2 && over3 == int(rs.size())))
        bad.push_back(name + ": z =" + zs);
    }
    why.clear();
    for (const std::string& b : bad) why += b + "; ";
    return bad.empty();
  }

 private:
  std::map<std::string, std::vector<Result>> results_;
  std::vector<std::string> failures_;
};

// Prints "TIME|what|seconds|seed" when it goes out of scope (run times for the docs).
class Timer {
 public:
  Timer(std::string what, uint64_t seed) : what_(std::move(what)), seed_(seed) {}
  ~Timer() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("TIME|%s|%.2f|%llu\n", what_.c_str(), s, (unsigned long long)seed_);
    std::fflush(stdout);
  }

 private:
  std::string what_;
  uint64_t seed_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Mean and variance of independent samples (Welford).
struct Mean {
  double n = 0, m = 0, s = 0;
  void add(double x) {
    n += 1;
    const double d = x - m;
    m += d / n;
    s += d * (x - m);
  }
  double mean() const { return m; }
  double var() const { return n > 1 ? s / (n - 1) : 0; }
  double se() const { return n > 1 ? std::sqrt(var() / n) : INFINITY; }
};

// The mean of a correlated series and its standard error from `blocks` consecutive
// block means (independent when a block is much longer than the correlation time).
inline std::pair<double, double> block_mean(const std::vector<double>& series, int blocks) {
  const std::size_t n = series.size(), per = n / std::size_t(blocks);
  Mean b;
  for (int k = 0; k < blocks; ++k) {
    double s = 0;
    for (std::size_t i = std::size_t(k) * per; i < std::size_t(k + 1) * per; ++i) s += series[i];
    b.add(s / double(per));
  }
  return {b.mean(), b.se()};
}

// The mean of a correlated series (a time series of frames) and its standard error
// sqrt(2 tau_int var / n), tau_int the integrated autocorrelation time summed up to the
// first window W >= 5 tau_int (Sokal's automatic windowing; the series should be much
// longer than tau_int, which `tau` returns in frames).
inline std::pair<double, double> correlated_mean(const std::vector<double>& x, double* tau = nullptr) {
  const std::size_t n = x.size();
  double mean = 0;
  for (double v : x) mean += v;
  mean /= double(n);
  const auto c = [&](std::size_t t) {
    double s = 0;
    for (std::size_t i = 0; i + t < n; ++i) s += (x[i] - mean) * (x[i + t] - mean);
    return s / double(n - t);
  };
  const double c0 = c(0);
  if (!(c0 > 0)) return {mean, 0.0};
  double tau_int = 0.5;
  for (std::size_t t = 1; t < n / 2; ++t) {
    tau_int += c(t) / c0;
    if (double(t) >= 5 * tau_int) break;
  }
  if (tau) *tau = tau_int;
  return {mean, std::sqrt(2 * tau_int * c0 / double(n))};
}

using Vec = std::array<double, 3>;

// Minimum-image difference a - b in a periodic box (box[k] = 0: that axis is open).
inline Vec periodic_delta(const Vec& a, const Vec& b, const Vec& box) {
  Vec d;
  for (int k = 0; k < 3; ++k) {
    d[k] = a[k] - b[k];
    if (box[k] > 0) d[k] -= box[k] * std::floor(d[k] / box[k] + 0.5);
  }
  return d;
}
inline double norm2(const Vec& d) { return d[0] * d[0] + d[1] * d[1] + d[2] * d[2]; }

// Calls f(i, j, r) once for every pair i < j of points closer than `cutoff` in a periodic
// box (3D), by a cell list; independent of the engine's pair finder.
template <class F>
void for_close_pairs(const std::vector<Vec>& x, const Vec& box, double cutoff, F f) {
  int n[3];
  for (int k = 0; k < 3; ++k) n[k] = std::max(1, int(std::floor(box[k] / cutoff)));
  if (n[0] < 3 || n[1] < 3 || n[2] < 3) {  // small box: every pair
    for (std::size_t i = 0; i < x.size(); ++i)
      for (std::size_t j = i + 1; j < x.size(); ++j) {
        const double r2 = norm2(periodic_delta(x[i], x[j], box));
        if (r2 < cutoff * cutoff) f(i, j, std::sqrt(r2));
      }
    return;
  }
  const auto cell_of = [&](const Vec& p, int k) {
    const double u = p[k] / box[k] - std::floor(p[k] / box[k]);
    return std::min(n[k] - 1, int(u * n[k]));
  };
  std::vector<std::vector<std::size_t>> cells(std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]));
  const auto index = [&](int a, int b, int c) {
    return (std::size_t(a) * std::size_t(n[1]) + std::size_t(b)) * std::size_t(n[2]) + std::size_t(c);
  };
  for (std::size_t i = 0; i < x.size(); ++i) cells[index(cell_of(x[i], 0), cell_of(x[i], 1), cell_of(x[i], 2))].push_back(i);
  for (int a = 0; a < n[0]; ++a)
    for (int b = 0; b < n[1]; ++b)
      for (int c = 0; c < n[2]; ++c) {
        const auto& here = cells[index(a, b, c)];
        for (int da = -1; da <= 1; ++da)
          for (int db = -1; db <= 1; ++db)
            for (int dc = -1; dc <= 1; ++dc) {
              const auto& there = cells[index((a + da + n[0]) % n[0], (b + db + n[1]) % n[1], (c + dc + n[2]) % n[2])];
              for (std::size_t i : here)
                for (std::size_t j : there) {
                  if (!(i < j)) continue;
                  const double r2 = norm2(periodic_delta(x[i], x[j], box));
                  if (r2 < cutoff * cutoff) f(i, j, std::sqrt(r2));
                }
            }
      }
}

// Composite Simpson's rule of f over [a, b] with `n` (even) intervals.
template <class F>
double simpson(F f, double a, double b, int n = 2000) {
  n += n % 2;
  const double h = (b - a) / n;
  double s = f(a) + f(b);
  for (int i = 1; i < n; ++i) s += (i % 2 ? 4 : 2) * f(a + i * h);
  return s * h / 3;
}

}  // namespace nestsim::validation

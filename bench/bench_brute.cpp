// Brute-force schedules of the seeds (issue 5), timed end to end through Broadphase:
//   bench_brute [results.csv] [--max-n N] [--repeats K] [--precision float|double]
// 1. balanced vs straightforward (pairwise seed, section V: balanced > 12% faster for
//    N > 525,000 on a P100): Method::brute_balanced vs brute_tiled (and brute), counting
//    mode, the seed's "counting collisions", N up to 10^6;
// 2. index -> pair mapping with vs without square root (gpu-mapping-function seed,
//    Table 2: 2.25 vs 4.28 ms at 10K, 29.66 vs 58.24 ms at 100K objects);
// 3. one bit vs one byte per pair (same seed, Table 5), listing mode.
// Scene: exponential radii (HSX paper eq. 6), volume fraction 0.1, 3D. Times are the
// median and minimum of K calls after one warm-up (device events on CUDA). On the CPU
// backend N stops at --max-n (default 64000, well under a minute on 2 cores).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"

using namespace nestsim;

namespace {

struct Variant {
  std::string name;
  Method method;
  bool lazy = false;
  bool byte_mask = false;
};

struct Row {
  std::string experiment, variant;
  std::size_t n;
  bool count_only;
  double median_ms, min_ms;
  uint64_t pairs;
};


template <class Real>
Row measure(const std::string& experiment, const Variant& v, const SphereSet<Real>& bodies,
            bool count_only, int repeats) {
  BroadphaseOptions o;
  o.method = v.method;
  o.mapping_lazy = v.lazy;
  o.mapping_byte_mask = v.byte_mask;
  Broadphase<Real> finder(o);
  finder.upload(bodies);
  const Timings t = finder.time(repeats, count_only);
  const uint64_t pairs = count_only ? finder.count() : finder.find();
  const Row r{experiment, v.name, bodies.size(), count_only, t.median(), t.min(), pairs};
  const double tests = double(r.n) * double(r.n - 1) / 2;
  std::printf("%-12s %-22s %9zu %-5s %12.3f %12.3f %12llu %10.3g\n", experiment.c_str(),
              v.name.c_str(), r.n, count_only ? "count" : "list", r.median_ms, r.min_ms,
              static_cast<unsigned long long>(pairs), tests / (r.min_ms * 1e-3));
  std::fflush(stdout);
  return r;
}

std::vector<std::size_t> capped(std::vector<std::size_t> sizes, std::size_t max_n) {
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](std::size_t n) { return n > max_n; }),
              sizes.end());
  return sizes;
}

const Row* find_row(const std::vector<Row>& rows, const std::string& experiment,
                    const std::string& variant, std::size_t n) {
  for (const Row& r : rows)
    if (r.experiment == experiment && r.variant == variant && r.n == n) return &r;
  return nullptr;
}

template <class Real>
std::vector<Row> run(std::size_t max_n, int repeats) {
  std::vector<Row> rows;
  auto bodies_of = [](std::size_t n) {
    return scenes::converted<Real>(scenes::exponential(n, 0.1, 3, 1000 + n).bodies);
  };
  // Short calls are noisy: repeat them more.
  auto repeats_for = [&](std::size_t n) { return n <= 10000 ? std::max(repeats, 10) : repeats; };
  std::printf("%-12s %-22s %9s %-5s %12s %12s %12s %10s\n", "experiment", "variant", "N", "mode",
              "median_ms", "min_ms", "pairs", "tests/s");

  // 1. Balanced vs straightforward, counting.
  const std::vector<Variant> schedules = {{"brute", Method::brute},
                                          {"brute_tiled", Method::brute_tiled},
                                          {"brute_balanced", Method::brute_balanced}};
  const std::vector<std::size_t> schedule_sizes =
      capped({1000, 4000, 16000, 64000, 131072, 262144, 525001, 700000, 1000000}, max_n);
  for (std::size_t n : schedule_sizes) {
    const SphereSet<Real> bodies = bodies_of(n);
    for (const Variant& v : schedules)
      rows.push_back(measure("schedule", v, bodies, true, repeats_for(n)));
  }

  // 2. Mapping with vs without square root (the seed's Table 2 sizes), listing.
  const std::vector<Variant> mappings = {{"mapping_sqrt", Method::brute_mapping, false, false},
                                         {"mapping_lazy", Method::brute_mapping, true, false}};
  for (std::size_t n : capped({1000, 10000, 100000}, max_n)) {
    const SphereSet<Real> bodies = bodies_of(n);
    for (const Variant& v : mappings)
      rows.push_back(measure("mapping", v, bodies, false, repeats_for(n)));
  }

  // 3. One bit vs one byte per pair (the seed's Table 5 sizes), listing.
  const std::vector<Variant> masks = {{"mask_1bit", Method::brute_mapping, false, false},
                                      {"mask_1byte", Method::brute_mapping, false, true}};
  for (std::size_t n : capped({100, 1000, 5000, 7500, 20000}, max_n)) {
    const SphereSet<Real> bodies = bodies_of(n);
    for (const Variant& v : masks)
      rows.push_back(measure("mask", v, bodies, false, repeats_for(n)));
  }

  // Summary ratios (min times).
  std::printf("\nspeedups (min times):\n");
  for (std::size_t n : schedule_sizes) {
    const Row* t = find_row(rows, "schedule", "brute_tiled", n);
    const Row* b = find_row(rows, "schedule", "brute_balanced", n);
    if (t && b) std::printf("  N=%-9zu balanced vs tiled      %.3fx\n", n, t->min_ms / b->min_ms);
  }
  for (std::size_t n : {1000, 10000, 100000}) {
    const Row* s = find_row(rows, "mapping", "mapping_sqrt", n);
    const Row* l = find_row(rows, "mapping", "mapping_lazy", n);
    if (s && l) std::printf("  N=%-9zu sqrt vs lazy mapping   %.3fx\n", n, l->min_ms / s->min_ms);
  }
  for (std::size_t n : {100, 1000, 5000, 7500, 20000}) {
    const Row* bit = find_row(rows, "mask", "mask_1bit", n);
    const Row* byte = find_row(rows, "mask", "mask_1byte", n);
    if (bit && byte)
      std::printf("  N=%-9zu 1 bit vs 1 byte mask   %.3fx\n", n, byte->min_ms / bit->min_ms);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string csv_path, precision = "float";
    const bool cpu = Broadphase<float>::backend_name().rfind("CPU", 0) == 0;
    std::size_t max_n = cpu ? 64000 : 1000000;
    int repeats = cpu ? 2 : 5;
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      auto value = [&]() -> std::string {
        if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
        return argv[++a];
      };
      if (arg == "--max-n") max_n = std::size_t(std::stod(value()));
      else if (arg == "--repeats") repeats = std::stoi(value());
      else if (arg == "--precision") precision = value();
      else if (arg == "--help" || arg == "-h") {
        std::printf("bench_brute [results.csv] [--max-n N] [--repeats K] [--precision float|double]\n");
        return 0;
      } else if (!arg.empty() && arg[0] != '-') csv_path = arg;
      else throw std::invalid_argument("unknown argument " + arg);
    }
    if (repeats < 1) throw std::invalid_argument("--repeats must be >= 1");
    if (precision != "float" && precision != "double")
      throw std::invalid_argument("--precision must be float or double");
    std::printf("bench_brute: %s, %s, max N %zu, %d repeats\n",
                Broadphase<float>::backend_name().c_str(), precision.c_str(), max_n, repeats);
    const std::vector<Row> rows =
        precision == "float" ? run<float>(max_n, repeats) : run<double>(max_n, repeats);
    if (!csv_path.empty()) {
      std::ofstream csv(csv_path);
      if (!csv) throw std::runtime_error("cannot write " + csv_path);
      csv << "backend,precision,experiment,variant,n,mode,median_ms,min_ms,pairs\n";
      for (const Row& r : rows)
        csv << '"' << Broadphase<float>::backend_name() << "\"," << precision << ','
            << r.experiment << ',' << r.variant << ',' << r.n << ','
            << (r.count_only ? "count" : "list") << ',' << r.median_ms << ',' << r.min_ms << ','
            << r.pairs << '\n';
      std::printf("wrote %s\n", csv_path.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_brute: %s\n", e.what());
    return 1;
  }
}

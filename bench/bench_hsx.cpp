// HSX broad-phase benchmark (issue: foundation; HSX paper section 5 scenes).
//   bench_hsx [--sizes 1e5,1e6,1e7] [--repeats K] [--precision float|double]
//             [--brute-max-n N] [--csv FILE] [--seed S]
//             [--scene exponential|equal] [--dim 3|2] [--phis 0.1,0.3]
//             [--order random|morton] [--shells 1e4,1e6]
//             [--shell-scenes concentric,nested]
// Scenes: exponential radii (mean 1, cut at 20, 20% solid, others q = 0.2 r) at volume
// fraction 0.1 and 0.3 (the scene of N bodies from seed S + N, S = 12345 unless --seed:
// the spread of the timings over scenes); concentric shells and nested vesicles (--shells).
// Prints, per scene: median and minimum time per call (after one warm-up; device events
// on CUDA), pairs found, and the same
// for the brute-force reference where N <= --brute-max-n, and the floor (issue 5): one
// copy on the same device of the bytes a find() must read and write (centres, radii,
// thicknesses, pairs), with time / floor. Method hsx-any: the same search with the pairs
// left on the device in the order found (BroadphaseOptions::sort_pairs = false), as the
// HSX paper's code and chrono::collide return them; hsx sorts them by (i, j).
// --scene equal: equal radii r = 1 (q = 0.2 r) instead of exponential ones; --dim 2: in
// the plane; --phis: the volume fractions (A/B runs of tuning knobs on other scenes than
// the table's; the defaults give the README table). --order morton: the bodies stored in
// the Morton order of their centres (scenes::order_spatially), as the simulator stores
// them, instead of the generator's random order (scene names end in " morton").
// --shells: the sizes of the nested-shell scenes, concentric shells and a cell full of
// nested vesicles (scenes::nested; default 1e4 each); --shell-scenes: which of the two
// (default both), to time or profile one alone.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"

using namespace nestsim;

namespace {

struct Row {
  std::string scene, method;
  std::size_t n;
  double median_ms, min_ms;
  uint64_t pairs;
  double floor_ms;  // one device copy of the bytes a find() reads and writes (issue 5)
};


// The tuning of every search (--tune NAME=VALUE: a field of nestsim/tuning.h, for A/B
// measurements of one build).
Tuning& bench_tuning() {
  static Tuning tuning = default_tuning();
  return tuning;
}

template <class Real>
Row measure(const std::string& name, const scenes::Scene& s, Method method, int repeats,
            bool sort_pairs = true) {
  BroadphaseOptions o;
  o.tuning = bench_tuning();
  o.method = method;
  o.sort_pairs = sort_pairs;
  o.domain.dim = s.domain.dim;
  Broadphase<Real> finder(o);
  finder.upload(scenes::converted<Real>(s.bodies));
  const Timings t = finder.time(repeats, false);
  const uint64_t pairs = finder.pair_count();
  const double floor_ms = finder.time_floor(repeats, s.domain.dim).median();
  Row r{name, std::string(to_string(method)) + (sort_pairs ? "" : "-any"), s.bodies.size(),
        t.median(), t.min(), pairs, floor_ms};
  std::printf("%-28s %-8s %10zu %12.4f %12.4f %14llu %10.4f %8.1f\n", r.scene.c_str(),
              r.method.c_str(), r.n, r.median_ms, r.min_ms, static_cast<unsigned long long>(r.pairs),
              r.floor_ms, r.median_ms / std::max(r.floor_ms, 1e-9));
  std::fflush(stdout);
  return r;
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stod(item));
  return out;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> out;
  for (double v : parse_list(text)) out.push_back(std::size_t(v));
  return out;
}

struct SceneChoice {
  bool equal = false;  // equal radii instead of exponential ones
  int dim = 3;
  std::vector<double> phis = {0.1, 0.3};
  bool morton = false;  // --order morton
  std::vector<std::size_t> shells = {10000};  // --shells: concentric and nested sizes
  bool concentric = true, nested = true;      // --shell-scenes
};

constexpr uint64_t kDefaultSeed = 12345;

template <class Real>
int run(const std::vector<std::size_t>& sizes, int repeats, std::size_t brute_max,
        const std::string& csv, uint64_t seed, const SceneChoice& choice) {
  std::printf("# nestsim bench_hsx, backend %s, precision %s, repeats %d, seed %llu\n",
              Broadphase<Real>::backend_name().c_str(), sizeof(Real) == 4 ? "float" : "double",
              repeats, (unsigned long long)seed);
  std::printf("%-28s %-8s %10s %12s %12s %14s %10s %8s\n", "scene", "method", "N", "median_ms",
              "min_ms", "pairs", "floor_ms", "x_floor");
  std::vector<Row> rows;
  for (std::size_t n : sizes) {
    for (double phi : choice.phis) {
      scenes::Scene s = choice.equal ? scenes::equal_radii(n, phi, choice.dim, seed + n)
                                     : scenes::exponential(n, phi, choice.dim, seed + n);
      if (choice.morton) scenes::order_spatially(s);
      char name[64];
      std::snprintf(name, sizeof name, "%s%s phi=%.*f%s", choice.equal ? "equal" : "exponential",
                    choice.dim == 2 ? " 2d" : "", phi < 0.1 ? 2 : 1, phi,
                    choice.morton ? " morton" : "");
      rows.push_back(measure<Real>(name, s, Method::hsx, repeats));
      rows.push_back(measure<Real>(name, s, Method::hsx, repeats, false));
      if (n <= brute_max) rows.push_back(measure<Real>(name, s, Method::brute, repeats));
    }
  }
  for (std::size_t n : choice.shells) {
    if (choice.concentric) {
      const scenes::Scene c = scenes::concentric(n, 3);
      rows.push_back(measure<Real>("concentric shells", c, Method::hsx, repeats));
      if (c.bodies.size() <= brute_max)
        rows.push_back(measure<Real>("concentric shells", c, Method::brute, repeats));
    }
    if (!choice.nested) continue;
    const scenes::Scene v = scenes::nested(n, 3, seed + n);
    rows.push_back(measure<Real>("nested vesicles", v, Method::hsx, repeats));
    if (v.bodies.size() <= brute_max)
      rows.push_back(measure<Real>("nested vesicles", v, Method::brute, repeats));
  }
  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "# backend=" << Broadphase<Real>::backend_name()
        << " precision=" << (sizeof(Real) == 4 ? "float" : "double");
    if (seed != kDefaultSeed) out << " seed=" << seed;
    out << "\n";
    out << "scene,method,n,median_ms,min_ms,pairs,floor_ms\n";
    for (const Row& r : rows)
      out << r.scene << "," << r.method << "," << r.n << "," << r.median_ms << "," << r.min_ms
          << "," << r.pairs << "," << r.floor_ms << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::size_t> sizes = {100000, 1000000, 10000000};
  uint64_t seed = kDefaultSeed;
  int repeats = 10;
  std::size_t brute_max = 100000;
  std::string precision = "float", csv;
  SceneChoice choice;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "bench_hsx: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--sizes") sizes = parse_sizes(value());
    else if (a == "--shells") choice.shells = parse_sizes(value());
    else if (a == "--shell-scenes") {
      const std::string v = value();
      choice.concentric = v.find("concentric") != std::string::npos;
      choice.nested = v.find("nested") != std::string::npos;
      if (!choice.concentric && !choice.nested) {
        std::fprintf(stderr, "bench_hsx: bad --shell-scenes '%s' (concentric,nested)\n",
                     v.c_str());
        return 2;
      }
    }
    else if (a == "--repeats") repeats = std::atoi(value().c_str());
    else if (a == "--brute-max-n") brute_max = std::size_t(std::stod(value()));
    else if (a == "--precision") precision = value();
    else if (a == "--csv") csv = value();
    else if (a == "--seed") seed = std::stoull(value());
    else if (a == "--tune") {
      const std::string v = value();
      const std::size_t eq = v.find('=');
      try {
        if (eq == std::string::npos) throw std::invalid_argument("no '='");
        set_tuning_field(bench_tuning(), v.substr(0, eq), std::stod(v.substr(eq + 1)));
        bench_tuning().validate();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_hsx: bad --tune '%s' (%s); fields:", v.c_str(), e.what());
        for (const std::string& name : tuning_field_names()) std::fprintf(stderr, " %s", name.c_str());
        std::fprintf(stderr, "\n");
        return 2;
      }
    }
    else if (a == "--order") {
      const std::string v = value();
      if (v != "random" && v != "morton") {
        std::fprintf(stderr, "bench_hsx: bad --order '%s' (random|morton)\n", v.c_str());
        return 2;
      }
      choice.morton = v == "morton";
    }
    else if (a == "--scene" || a == "--dim" || a == "--phis") {
      const std::string v = value();
      if (a == "--phis") choice.phis = parse_list(v);
      else if (a == "--dim") choice.dim = std::stoi(v);
      else choice.equal = v == "equal";
      const bool phis_ok = !choice.phis.empty() &&
          std::all_of(choice.phis.begin(), choice.phis.end(), [](double p) { return p > 0; });
      if ((a == "--scene" && v != "equal" && v != "exponential") ||
          (choice.dim != 2 && choice.dim != 3) || !phis_ok) {
        std::fprintf(stderr, "bench_hsx: bad %s '%s' (--scene exponential|equal, --dim 2|3, "
                     "--phis positive fractions)\n", a.c_str(), v.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: bench_hsx [--sizes 1e5,1e6,1e7] [--repeats K] [--precision float|double]"
                   " [--brute-max-n N] [--csv FILE] [--seed S]"
                   " [--scene exponential|equal] [--dim 3|2] [--phis 0.1,0.3]"
                   " [--order random|morton] [--shells 1e4,1e6]"
                   " [--shell-scenes concentric,nested] [--tune FIELD=VALUE ...]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  return precision == "double" ? run<double>(sizes, repeats, brute_max, csv, seed, choice)
                               : run<float>(sizes, repeats, brute_max, csv, seed, choice);
} catch (const std::invalid_argument&) {
  std::fprintf(stderr, "bench_hsx: a number was expected (--sizes, --brute-max-n, --seed, --dim, --phis)\n");
  return 2;
} catch (const std::out_of_range&) {
  std::fprintf(stderr, "bench_hsx: a number is out of range (--sizes, --brute-max-n, --seed, --dim, --phis)\n");
  return 2;
}

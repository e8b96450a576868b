// `nestsim pairs`: all intersecting pairs of a scene file.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "commands/output_file.h"
#include "commands/pair_bound.h"
#include "nestsim/broadphase.h"
#include "nestsim/io/scene_csv.h"

namespace nestsim::app {
namespace {

// kPairsHelp with its defaults filled in from the backends' tuning (nestsim/tuning.h).
std::string pairs_help() {
  const Tuning gpu = tuning_for(Backend::cuda), cpu = tuning_for(Backend::cpu);
  auto number = [](double v) {  // 15000, 256; 2e6 rather than 2e+06
    char text[32];
    const int k = v >= 1e5 ? int(std::floor(std::log10(v))) : 0;
    const double m = v / std::pow(10.0, k);
    if (k > 0 && m == std::floor(m)) std::snprintf(text, sizeof text, "%.0fe%d", m, k);
    else std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  std::string help = kPairsHelp;
  auto fill = [&](const std::string& key, const std::string& value) {
    const std::size_t at = help.find(key);
    if (at != std::string::npos) help.replace(at, key.size(), value);
  };
  fill("@SMALL_N@", number(gpu.hsx.small_n) + " on a GPU, " + number(cpu.hsx.small_n) +
                        " on the CPU");
  fill("@RADIX_MIN@", number(gpu.cell_sort.radix_min_n) + " bodies on a GPU, from " +
                          number(cpu.cell_sort.radix_min_n) + " on the CPU");
  return help;
}

}  // namespace

const char* const kPairsHelp =
    "usage: nestsim pairs SCENE.csv [--solid] [--box Lx,Ly[,Lz] [--periodic]]\n"
    "                     [--precision float|double] [--method NAME] [--skin S]\n"
    "                     [--hsx-small-n N] [--grid-sort auto|counting|radix]\n"
    "                     [--count] [--bench K] [--any-order] [-o PAIRS.csv]\n"
    "\n"
    "Finds every pair of intersecting bodies in SCENE.csv: hollow spheres intersect when\n"
    "they touch (|xi - xj| <= ri + rj) and neither lies inside the other's lumen\n"
    "(|xi - xj| < r - q - r_other), equations (1)-(3) of the HSX paper.\n"
    "\n"
    "SCENE.csv     header 'x,y,z,radius,thickness' (3D) or 'x,y,radius,thickness' (2D),\n"
    "              one body per row; the row index (0-based, header excluded) is its id;\n"
    "              0 <= thickness <= radius (thickness == radius: a solid sphere).\n"
    "--solid       solid-sphere intersection (SSX, equation 4) instead of hollow\n"
    "--box L       the box [0, Lx) x [0, Ly) (x [0, Lz)); without --periodic every centre\n"
    "              must lie inside it, with --periodic positions are wrapped and\n"
    "              distances are minimum-image\n"
    "--periodic    make the box periodic (needs --box)\n"
    "--precision   arithmetic of the search, float or double (default double)\n"
    "--method NAME the algorithm; every one gives the same pairs (names below)\n"
    "--skin S      enlarge every radius by S and shrink every lumen by S (default 0)\n"
    "--hsx-small-n N  hsx tests all pairs when there are at most N bodies (default: the\n"
    "              backend's measured crossover, @SMALL_N@; 0: always\n"
    "              the grid); the pairs do not change\n"
    "--grid-sort S how hsx and grid_uniform sort bodies into cells: counting (atomics on\n"
    "              the cell table), radix (a radix sort of the cell numbers), or auto\n"
    "              (default: radix from @RADIX_MIN@, else\n"
    "              counting); the pairs do not change\n"
    "--count       print only the number of pairs\n"
    "--bench K     after one warm-up call, time K calls of the search and print\n"
    "              'median_ms=... min_ms=... pairs=...' (no file input/output timed)\n"
    "--any-order   the search leaves its pairs in the order found, without the final\n"
    "              sort of the pairs (what --bench then times); the output is sorted\n"
    "              either way\n"
    "-o FILE       write the pairs to FILE instead of standard output: a regular file\n"
    "              is replaced when complete (a link is followed); a FIFO or a\n"
    "              character device is written through; - is standard output\n"
    "\n"
    "Supported range (the pairs are exact inside it, and anything outside is refused):\n"
    "|coordinates|, radius + skin and box edges 0 or from 1e-130 to 1e150 in double\n"
    "(1e-12 to 1e18 in float); a periodic box's edges at least 2^-30 of the largest\n"
    "radius + skin.\n"
    "\n"
    "Output: CSV with header 'i,j', one pair per line, i < j, sorted by (i, j).\n"
    "Errors in SCENE.csv are reported as 'SCENE.csv:LINE: what is wrong' with exit\n"
    "code 2, and no output file is left behind.\n";

namespace {

struct PairsArgs {
  std::string scene, output;
  bool solid = false, periodic = false, count = false, has_box = false, any_order = false;
  std::vector<double> box;
  std::string precision = "double";
  Method method = Method::hsx;
  double skin = 0;
  int64_t hsx_small_n = -1;
  BroadphaseOptions::GridSort grid_sort = BroadphaseOptions::GridSort::automatic;
  int bench = 0;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

double parse_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw UsageError(flag + ": '" + text + "' is not a finite number");
  return v;
}

PairsArgs parse(const std::vector<std::string>& args) {
  PairsArgs p;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    auto value = [&]() -> const std::string& {
      if (k + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++k];
    };
    if (a == "--solid") p.solid = true;
    else if (a == "--periodic") p.periodic = true;
    else if (a == "--count") p.count = true;
    else if (a == "--any-order") p.any_order = true;
    else if (a == "--box") {
      p.has_box = true;
      std::stringstream in(value());
      std::string item;
      while (std::getline(in, item, ',')) p.box.push_back(parse_number("--box", item));
      if (p.box.size() < 2 || p.box.size() > 3)
        throw UsageError("--box takes Lx,Ly or Lx,Ly,Lz");
      for (double L : p.box)
        if (!(L > 0)) throw UsageError("--box: every edge must be > 0");
    } else if (a == "--precision") {
      p.precision = value();
      if (p.precision != "float" && p.precision != "double")
        throw UsageError("--precision must be float or double, not '" + p.precision + "'");
    } else if (a == "--method") {
      try {
        p.method = method_from_string(value());
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--method: ") + e.what());
      }
    } else if (a == "--skin") {
      p.skin = parse_number("--skin", value());
      if (p.skin < 0) throw UsageError("--skin must be >= 0");
    } else if (a == "--hsx-small-n") {
      const std::string& v = value();
      long long n = 0;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || ptr != v.data() + v.size() || n < 0)
        throw UsageError("--hsx-small-n needs a whole number >= 0, not '" + v + "'");
      p.hsx_small_n = n;
    } else if (a == "--grid-sort") {
      const std::string& v = value();
      using GridSort = BroadphaseOptions::GridSort;
      if (v == "auto") p.grid_sort = GridSort::automatic;
      else if (v == "counting") p.grid_sort = GridSort::counting;
      else if (v == "radix") p.grid_sort = GridSort::radix;
      else throw UsageError("--grid-sort must be auto, counting or radix, not '" + v + "'");
    } else if (a == "--bench") {
      const std::string& v = value();
      int k2 = 0;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), k2);
      if (ec != std::errc() || ptr != v.data() + v.size() || k2 < 1)
        throw UsageError("--bench needs a positive whole number, not '" + v + "'");
      p.bench = k2;
    } else if (a == "-o" || a == "--output") {
      p.output = value();
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option '" + a + "'");
    } else if (p.scene.empty()) {
      p.scene = a;
    } else {
      throw UsageError("more than one scene file given ('" + p.scene + "', '" + a + "')");
    }
  }
  if (p.scene.empty()) throw UsageError("no scene file given");
  if (p.periodic && !p.has_box) throw UsageError("--periodic needs --box");
  return p;
}

void write_pairs(OutputFile& out, const PairList& pairs) {
  std::string buffer = "i,j\n";
  buffer.reserve(1 << 20);
  char num[32];
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    auto r = std::to_chars(num, num + sizeof num, pairs.i[k]);
    buffer.append(num, r.ptr);
    buffer.push_back(',');
    r = std::to_chars(num, num + sizeof num, pairs.j[k]);
    buffer.append(num, r.ptr);
    buffer.push_back('\n');
    if (buffer.size() > (1 << 20) - 64) {
      out.write(buffer.data(), buffer.size());
      buffer.clear();
    }
  }
  out.write(buffer.data(), buffer.size());
}

template <class Real>
int run(const PairsArgs& p, const io::Scene& scene, const Domain& domain) {
  // The output is checked (and a FIFO opened) before the search.
  std::optional<OutputFile> out;
  if (!p.output.empty() && p.bench == 0 && !p.count) out.emplace(p.output);
  SphereSet<Real> bodies;
  bodies.resize(scene.bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    bodies.x[i] = Real(scene.bodies.x[i]);
    bodies.y[i] = Real(scene.bodies.y[i]);
    bodies.z[i] = Real(scene.bodies.z[i]);
    bodies.radius[i] = Real(scene.bodies.radius[i]);
    bodies.thickness[i] = std::min(Real(scene.bodies.thickness[i]), bodies.radius[i]);
  }
  BroadphaseOptions options;
  options.overlap = p.solid ? Overlap::solid : Overlap::hollow;
  options.method = p.method;
  options.domain = domain;
  options.skin = p.skin;
  options.hsx_small_n = p.hsx_small_n;
  options.grid_sort = p.grid_sort;
  options.sort_pairs = !p.any_order;
  // The pairs are stored: refused when they cannot fit in memory. The bound counts solid
  // overlaps, so for solid spheres it is close and the refusal comes before any search;
  // hollow spheres nested in each other overlap as solids without being pairs (1e5 nested
  // vesicles: a bound of 2e9 against 25,112 pairs), so there the pairs are first counted
  // by a search, and only a count that cannot fit is refused.
  const double memory = p.count ? 0 : available_memory();
  bool hollow_search = false;
  if (options.overlap == Overlap::hollow)
    for (std::size_t i = 0; i < scene.bodies.size() && !hollow_search; ++i)
      hollow_search = scene.bodies.thickness[i] < scene.bodies.radius[i];
  auto refuse = [&](const char* pairs_are, double pairs, const char* searched) {
    char what[400];
    std::snprintf(what, sizeof what,
                  "%s: %s %.3g pairs, more than the %.3g GB of available memory can hold at "
                  "%.0f bytes a pair; %s (--count counts them without storing them)",
                  p.scene.c_str(), pairs_are, pairs, memory / 1e9, kBytesPerPair, searched);
    throw std::invalid_argument(what);
  };
  bool count_first = false;
  if (!p.count) {
    const double bound = pair_upper_bound(scene.bodies, domain, p.skin);
    if (bound * kBytesPerPair > memory) {
      if (!hollow_search)
        refuse("up to (bodies within a diameter of each other)", bound, "nothing was searched");
      count_first = true;
    }
  }
  Broadphase<Real> finder(options);
  finder.upload(bodies);
  if (count_first) {
    const double pairs = double(finder.count());
    if (pairs * kBytesPerPair > memory) refuse("it has", pairs, "they were counted, not stored");
  }

  if (p.bench > 0) {
    const Timings t = finder.time(p.bench, p.count);
    const uint64_t n = p.count ? finder.count() : finder.find();
    std::printf("median_ms=%.4f min_ms=%.4f pairs=%llu\n", t.median(), t.min(),
                static_cast<unsigned long long>(n));
    return 0;
  }
  if (p.count) {
    std::printf("%llu\n", static_cast<unsigned long long>(finder.count()));
    return 0;
  }
  finder.find();
  const PairList pairs = finder.pairs();
  if (!out) out.emplace("-");
  write_pairs(*out, pairs);
  out->commit();
  return 0;
}

}  // namespace

int pairs_command(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << pairs_help() << "\nMethods (--method):\n"
              << "  hsx             nested hollow-sphere grid, HSX paper Algorithm 1 (default)\n"
              << "  brute           plain parallel double loop: the reference\n"
              << "  brute_tiled     straightforward brute force in segments of 1024 bodies\n"
              << "  brute_balanced  balanced circular schedule (pairwise seed, Algorithm 4)\n"
              << "  brute_mapping   thread index -> pair mapping with 1-bit result masks\n"
              << "  grid_uniform    uniform grid, one cell per body (solid spheres, filtered)\n"
              << "  grid_aabb       multi-cell AABB grid in the style of chrono::collide\n";
    return 0;
  }
  PairsArgs p;
  try {
    p = parse(args);
  } catch (const UsageError& e) {
    std::cerr << "nestsim pairs: " << e.what() << "\n\n" << pairs_help();
    return 2;
  }
  try {
    io::Scene scene = io::read_scene_csv(p.scene);
    Domain domain;
    domain.dim = scene.dim;
    domain.periodic = p.periodic;
    if (p.has_box) {
      if (int(p.box.size()) != scene.dim)
        throw io::InputError(p.scene, 1, "the scene is " + std::to_string(scene.dim) +
                                             "D but --box gives " + std::to_string(p.box.size()) +
                                             " edges");
      for (int a = 0; a < scene.dim; ++a) domain.size[a] = p.box[a];
      io::apply_box(p.scene, scene, domain);
    }
    try {
      return p.precision == "float" ? run<float>(p, scene, domain) : run<double>(p, scene, domain);
    } catch (const BodyError& e) {  // located at the body's line
      throw io::InputError(p.scene, e.body() < scene.lines.size() ? scene.lines[e.body()] : 0,
                           e.what());
    }
  } catch (const io::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "nestsim pairs: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace nestsim::app

// CPU comparison with peer libraries (issue 5): our HSX broad phase (CPU backend,
// Thrust on OpenMP) against CGAL and Bullet from Debian, in one run, on bench_hsx's
// scenes (exponential radii, mean 1 cut at 20, 20% solid, others q = 0.2 r, volume
// fraction 0.1 and 0.3; scenes::exponential with bench_hsx's seeds).
//
//   OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive bench_peers [--sizes 1e5,1e6] [--repeats K]
//                                             [--csv FILE] [--bullet deferred|immediate|both]
//
// What each method computes, and what is timed (one warm-up call, then K timed calls;
// best-of-K and median of the whole call, steady_clock):
//  - nestsim hsx:  Broadphase<float>, Method::hsx, hollow relation: upload + find (the
//    finder object is reused between calls, as the simulator reuses it).
//  - nestsim hsx (cold): the same with a new Broadphase object per call (construct +
//    upload + find: no buffers kept from an earlier call).
//  - nestsim ssx:  the same finder with the solid relation (what CGAL and Bullet report).
//  - CGAL:   CGAL::box_self_intersection_d (CGAL 5, Box_intersection_d package,
//    Zomorodian-Edelsbrunner streamed segment tree) over one Box_with_info_d<double, 3>
//    per sphere, then the exact sphere test on each reported box pair. It is CGAL's
//    all-pairs box intersection for one set, the tool CGAL offers for this job (no
//    sphere-specific broad phase exists in CGAL). Sequential_tag: one thread (the
//    Parallel_tag variant needs TBB and is not used).
//  - Bullet: btDbvtBroadphase (Bullet's default dynamic AABB tree broad phase, as
//    btDiscreteDynamicsWorld uses it): createProxy per sphere, calculateOverlappingPairs,
//    then the exact sphere test over the overlapping-pair cache. One thread.
//    Two ways to drive it, both run by default (--bullet both): immediate (Bullet's
//    default) finds the pairs of each proxy while it is inserted; deferred
//    (m_deferedcollide = true) inserts all proxies, then collides the tree with itself in
//    calculateOverlappingPairs (faster for a one-shot query).
// The peers' timed call covers everything from the float sphere arrays to the list of
// HSX pairs: boxes/proxies built, tree, query, exact test, pairs written to a vector
// (and the SSX pairs counted). Tearing the structures down is not timed (for any method).
//
// Exactness: the peers' boxes are the spheres' boxes widened outward by r * 2^-17 (much
// more than the float test's rounding, so no pair the float test accepts can be missed;
// CGAL in double, Bullet in btScalar = float rounded outward), and their exact test is
// nestsim's own float predicate (predicates.h: Space::distance2, hsx_intersect,
// ssx_intersect) on the same float bodies. So each peer must report exactly our HSX pair
// set (compared pair by pair) and our SSX count; a difference makes the program exit 1.
// A peer that is not installed is compiled out (NESTSIM_HAVE_CGAL / NESTSIM_HAVE_BULLET,
// set by bench/CMakeLists.txt) and reported as skipped.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "nestsim/broadphase.h"
#include "nestsim/predicates.h"
#include "nestsim/testing/scenes.h"

#if NESTSIM_HAVE_CGAL
#include <CGAL/Box_intersection_d/Box_with_info_d.h>
#include <CGAL/box_intersection_d.h>
#include <CGAL/version.h>
#endif
#if NESTSIM_HAVE_BULLET
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>
#include <LinearMath/btScalar.h>
#endif

using namespace nestsim;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

uint64_t key(uint32_t a, uint32_t b) {
  return a < b ? (uint64_t(a) << 32 | b) : (uint64_t(b) << 32 | a);
}

// One method on one scene.
struct Row {
  std::string scene, method, threads, precision, relation;
  std::size_t n = 0;
  double median_ms = 0, min_ms = 0;
  uint64_t hsx = 0, ssx = 0, aabb = 0;  // pairs; 0 where the method does not compute it
  std::string check;                    // "reference", "ok" or "MISMATCH ..."
};

// The K timed calls of one method: best and median.
struct Times {
  std::vector<double> ms;
  double min() const { return *std::min_element(ms.begin(), ms.end()); }
  double median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    const std::size_t k = s.size();
    return k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
  }
};

// Runs `call` once untimed (warm-up: first touch, allocator), then `repeats` times timed;
// `teardown` (untimed) runs after every call.
Times time_calls(int repeats, const std::function<void()>& call,
                 const std::function<void()>& teardown) {
  call();
  teardown();
  Times t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    call();
    t.ms.push_back(ms_since(t0));
    teardown();
  }
  return t;
}

#if NESTSIM_HAVE_CGAL || NESTSIM_HAVE_BULLET
// What a peer hands back: its HSX pairs (keys, unsorted), its SSX count, its box pairs.
struct PeerResult {
  std::vector<uint64_t> hsx;
  uint64_t ssx = 0, aabb = 0;
  void clear() {
    hsx.clear();
    hsx.shrink_to_fit();
    ssx = aabb = 0;
  }
};

// The exact test every peer applies to its candidate pairs: nestsim's float predicates
// on the same float bodies our broad phase reads (bit-identical rounding).
struct ExactTest {
  const SphereSet<float>* b;
  Space<float> space;  // open 3D space: distance2 is the plain squared distance

  explicit ExactTest(const SphereSet<float>& bodies) : b(&bodies) { space.dim = 3; }

  void operator()(uint32_t i, uint32_t j, PeerResult& out) const {
    ++out.aabb;
    const float pi[3] = {b->x[i], b->y[i], b->z[i]};
    const float pj[3] = {b->x[j], b->y[j], b->z[j]};
    const float d2 = space.distance2(pi, pj);
    const float ri = b->radius[i], rj = b->radius[j];
    if (!ssx_intersect(d2, ri, rj)) return;
    ++out.ssx;
    if (hsx_intersect(d2, ri, b->thickness[i], rj, b->thickness[j])) out.hsx.push_back(key(i, j));
  }
};

// The box of a float sphere, widened by r * 2^-17 (about 64 float ulps of r): the float
// test can only accept pairs whose true distance is within a few ulps of r_i + r_j.
double widened(float r) { return double(r) + std::ldexp(double(r), -17); }

// Rounds a double outward to float.
float down(double v) {
  float f = float(v);
  if (double(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}
float up(double v) {
  float f = float(v);
  if (double(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

// Compares a peer's pairs with ours; returns "ok" or what differs.
std::string check_peer(PeerResult& got, const std::vector<uint64_t>& ours_hsx, uint64_t ours_ssx) {
  std::sort(got.hsx.begin(), got.hsx.end());
  const std::size_t dup =
      got.hsx.size() - std::size_t(std::unique(got.hsx.begin(), got.hsx.end()) - got.hsx.begin());
  std::vector<uint64_t> missing, extra;
  std::set_difference(ours_hsx.begin(), ours_hsx.end(), got.hsx.begin(), got.hsx.end(),
                      std::back_inserter(missing));
  std::set_difference(got.hsx.begin(), got.hsx.end(), ours_hsx.begin(), ours_hsx.end(),
                      std::back_inserter(extra));
  if (missing.empty() && extra.empty() && dup == 0 && got.ssx == ours_ssx) return "ok";
  std::ostringstream s;
  s << "MISMATCH hsx missing=" << missing.size() << " extra=" << extra.size()
    << " duplicates=" << dup << " ssx " << got.ssx << " vs ours " << ours_ssx;
  if (!missing.empty())
    s << " (first missing " << (missing[0] >> 32) << "-" << (missing[0] & 0xffffffffu) << ")";
  if (!extra.empty())
    s << " (first extra " << (extra[0] >> 32) << "-" << (extra[0] & 0xffffffffu) << ")";
  return s.str();
}

#endif  // NESTSIM_HAVE_CGAL || NESTSIM_HAVE_BULLET

#if NESTSIM_HAVE_CGAL
// CGAL 5 Box_intersection_d: Box_with_info_d<double, 3, Info> is a Bbox_3 with an
// explicit id (for the self-intersection's duplicate suppression) and our body index as
// its info. box_self_intersection_d(begin, end, callback) reports each intersecting box
// pair once (closed boxes, default cutoff 10); it copies the box range internally.
using CgalBox = CGAL::Box_intersection_d::Box_with_info_d<double, 3, uint32_t>;

void cgal_call(const SphereSet<float>& b, const ExactTest& test, std::vector<CgalBox>& boxes,
               PeerResult& out) {
  const std::size_t n = b.size();
  boxes.clear();
  boxes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = widened(b.radius[i]);
    double lo[3] = {double(b.x[i]) - r, double(b.y[i]) - r, double(b.z[i]) - r};
    double hi[3] = {double(b.x[i]) + r, double(b.y[i]) + r, double(b.z[i]) + r};
    boxes.emplace_back(lo, hi, uint32_t(i));
  }
  CGAL::box_self_intersection_d<CGAL::Sequential_tag>(
      boxes.begin(), boxes.end(),
      [&](const CgalBox& p, const CgalBox& q) { test(p.info(), q.info(), out); });
}
#endif

#if NESTSIM_HAVE_BULLET
// Bullet 3 btDbvtBroadphase (btBroadphaseInterface): createProxy(aabbMin, aabbMax,
// shapeType, userPtr, group, mask, dispatcher) per sphere (userPtr = body index), then
// calculateOverlappingPairs(nullptr); the pairs are in its btHashedOverlappingPairCache.
// We own the pair cache so that teardown can swap in a btNullPairCache: destroyProxy
// otherwise scans every cached pair per proxy (quadratic).
struct BulletRun {
  btHashedOverlappingPairCache* cache = nullptr;
  btNullPairCache null_cache;
  btDbvtBroadphase* broadphase = nullptr;
  std::vector<btBroadphaseProxy*> proxies;
  bool deferred = false;

  void call(const SphereSet<float>& b, const ExactTest& test, PeerResult& out) {
    const std::size_t n = b.size();
    cache = new btHashedOverlappingPairCache();
    broadphase = new btDbvtBroadphase(cache);
    broadphase->m_deferedcollide = deferred;
    proxies.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double r = widened(b.radius[i]);
      const btVector3 lo(btScalar(down(double(b.x[i]) - r)), btScalar(down(double(b.y[i]) - r)),
                         btScalar(down(double(b.z[i]) - r)));
      const btVector3 hi(btScalar(up(double(b.x[i]) + r)), btScalar(up(double(b.y[i]) + r)),
                         btScalar(up(double(b.z[i]) + r)));
      proxies.push_back(broadphase->createProxy(
          lo, hi, SPHERE_SHAPE_PROXYTYPE, reinterpret_cast<void*>(uintptr_t(i)),
          int(btBroadphaseProxy::DefaultFilter), int(btBroadphaseProxy::AllFilter), nullptr));
    }
    broadphase->calculateOverlappingPairs(nullptr);
    const btBroadphasePairArray& pairs = cache->getOverlappingPairArray();
    for (int k = 0; k < pairs.size(); ++k)
      test(uint32_t(reinterpret_cast<uintptr_t>(pairs[k].m_pProxy0->m_clientObject)),
           uint32_t(reinterpret_cast<uintptr_t>(pairs[k].m_pProxy1->m_clientObject)), out);
  }

  void teardown() {
    if (broadphase) {
      broadphase->m_paircache = &null_cache;  // its pair removals are no-ops
      for (btBroadphaseProxy* p : proxies) broadphase->destroyProxy(p, nullptr);
      delete broadphase;  // does not delete a pair cache it was given
      broadphase = nullptr;
    }
    proxies.clear();
    delete cache;
    cache = nullptr;
  }

  BulletRun() = default;
  BulletRun(const BulletRun&) = delete;
  BulletRun& operator=(const BulletRun&) = delete;
  ~BulletRun() { teardown(); }
};
#endif

Row make_row(const std::string& scene, std::size_t n, const std::string& method,
             const std::string& threads, const std::string& precision,
             const std::string& relation, const Times& t) {
  Row r;
  r.scene = scene;
  r.n = n;
  r.method = method;
  r.threads = threads;
  r.precision = precision;
  r.relation = relation;
  r.median_ms = t.median();
  r.min_ms = t.min();
  return r;
}

void print_header() {
  std::printf("%-22s %9s %-22s %-8s %11s %11s %11s %11s %12s %9s  %s\n", "scene", "N", "method",
              "threads", "min_ms", "median_ms", "hsx_pairs", "ssx_pairs", "aabb_pairs",
              "vs_ours", "check");
}

void print_row(const Row& r, double ours_min) {
  char ratio[32] = "";
  if (ours_min > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r.min_ms / ours_min);
  auto num = [](uint64_t v) { return v ? std::to_string(v) : std::string("-"); };
  std::printf("%-22s %9zu %-22s %-8s %11.1f %11.1f %11s %11s %12s %9s  %s\n", r.scene.c_str(), r.n,
              r.method.c_str(), r.threads.c_str(), r.min_ms, r.median_ms, num(r.hsx).c_str(),
              num(r.ssx).c_str(), num(r.aabb).c_str(), ratio, r.check.c_str());
  std::fflush(stdout);
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::size_t(std::stod(item)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {100000, 1000000};
  int repeats = 5;
  std::string csv, bullet_mode = "both";
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "bench_peers: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--sizes") sizes = parse_sizes(value());
    else if (a == "--repeats") repeats = std::atoi(value().c_str());
    else if (a == "--csv") csv = value();
    else if (a == "--bullet") bullet_mode = value();
    else {
      std::fprintf(stderr,
                   "usage: bench_peers [--sizes 1e5,1e6] [--repeats K] [--csv FILE]"
                   " [--bullet deferred|immediate|both]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (repeats < 1 || sizes.empty() ||
      (bullet_mode != "immediate" && bullet_mode != "deferred" && bullet_mode != "both")) {
    std::fprintf(stderr, "bench_peers: --repeats must be >= 1, --sizes non-empty, "
                         "--bullet deferred, immediate or both\n");
    return 2;
  }

  const std::string ours_threads = std::to_string(omp_get_max_threads());
  const char* omp_env = std::getenv("OMP_NUM_THREADS");
  std::printf("# nestsim bench_peers: HSX broad phase vs CGAL and Bullet, best-of-%d and median,"
              " one warm-up call each\n",
              repeats);
  std::printf("# ours: %s, float (OMP_NUM_THREADS=%s)\n",
              Broadphase<float>::backend_name().c_str(), omp_env ? omp_env : "unset");
#if NESTSIM_HAVE_CGAL
  std::printf("# CGAL %s: box_self_intersection_d (Sequential_tag, 1 thread), double boxes,"
              " then nestsim's float sphere test\n",
              CGAL_VERSION_STR);
#else
  std::printf("CGAL: not installed (apt-get install libcgal-dev), skipped\n");
#endif
#if NESTSIM_HAVE_BULLET
  std::printf("# Bullet %d: btDbvtBroadphase (%s collide, 1 thread), %s AABBs, then nestsim's"
              " float sphere test\n",
              btGetVersion(), bullet_mode == "both" ? "deferred and immediate" : bullet_mode.c_str(),
              sizeof(btScalar) == 4 ? "float" : "double");
#else
  std::printf("Bullet: not installed (apt-get install libbullet-dev), skipped\n");
#endif
  std::printf("# vs_ours: best time / best time of nestsim hsx on the same scene\n");
  print_header();

  std::vector<Row> rows;
  bool all_ok = true;
  for (std::size_t n : sizes) {
    for (double phi : {0.1, 0.3}) {
      const scenes::Scene s = scenes::exponential(n, phi, 3, 12345 + n);  // bench_hsx's seeds
      const SphereSet<float> bodies = scenes::converted<float>(s.bodies);
      char scene[64];
      std::snprintf(scene, sizeof scene, "exponential phi=%.1f", phi);

      // Ours, hollow (the reference pair set) and solid.
      BroadphaseOptions o;
      o.method = Method::hsx;
      o.domain.dim = 3;
      o.overlap = Overlap::hollow;
      Broadphase<float> hsx(o);
      Row ours = make_row(scene, n, "nestsim hsx", ours_threads, "float", "hsx",
                          time_calls(repeats, [&] { hsx.upload(bodies); hsx.find(); }, [] {}));
      const PairList list = hsx.pairs();
      std::vector<uint64_t> ours_hsx(list.size());
      for (std::size_t k = 0; k < list.size(); ++k) ours_hsx[k] = key(list.i[k], list.j[k]);
      std::sort(ours_hsx.begin(), ours_hsx.end());
      ours.hsx = ours_hsx.size();
      ours.check = "reference";
      const double ours_min = ours.min_ms;
      print_row(ours, ours_min);
      rows.push_back(ours);

      uint64_t cold_pairs = 0;
      Row cold = make_row(scene, n, "nestsim hsx (cold)", ours_threads, "float", "hsx",
                          time_calls(repeats, [&] {
                            Broadphase<float> fresh(o);
                            fresh.upload(bodies);
                            cold_pairs = fresh.find();
                          }, [] {}));
      cold.hsx = cold_pairs;
      cold.check = cold_pairs == ours_hsx.size() ? "same count" : "MISMATCH count";
      if (cold_pairs != ours_hsx.size()) all_ok = false;
      print_row(cold, ours_min);
      rows.push_back(cold);

      o.overlap = Overlap::solid;
      Broadphase<float> ssx(o);
      Row solid = make_row(scene, n, "nestsim ssx", ours_threads, "float", "ssx",
                           time_calls(repeats, [&] { ssx.upload(bodies); ssx.find(); }, [] {}));
      const uint64_t ours_ssx = ssx.pair_count();
      solid.ssx = ours_ssx;
      solid.check = "reference";
      print_row(solid, ours_min);
      rows.push_back(solid);

#if NESTSIM_HAVE_CGAL || NESTSIM_HAVE_BULLET
      const ExactTest test(bodies);
      PeerResult got;
#endif
#if NESTSIM_HAVE_CGAL
      {
        std::vector<CgalBox> boxes;
        Row r = make_row(scene, n, "CGAL box_self_inters.", "1", "double", "aabb+hsx+ssx",
                         time_calls(repeats, [&] { got.clear(); cgal_call(bodies, test, boxes, got); },
                                    [] {}));
        r.hsx = got.hsx.size();
        r.ssx = got.ssx;
        r.aabb = got.aabb;
        r.check = check_peer(got, ours_hsx, ours_ssx);
        if (r.check != "ok") all_ok = false;
        print_row(r, ours_min);
        rows.push_back(r);
      }
#endif
#if NESTSIM_HAVE_BULLET
      for (const bool deferred : {true, false}) {
        if (bullet_mode != "both" && (bullet_mode == "deferred") != deferred) continue;
        BulletRun bullet;
        bullet.deferred = deferred;
        Row r = make_row(scene, n, deferred ? "Bullet Dbvt deferred" : "Bullet Dbvt immediate", "1",
                         sizeof(btScalar) == 4 ? "float" : "double", "aabb+hsx+ssx",
                         time_calls(repeats, [&] { got.clear(); bullet.call(bodies, test, got); },
                                    [&] { bullet.teardown(); }));
        r.hsx = got.hsx.size();
        r.ssx = got.ssx;
        r.aabb = got.aabb;
        r.check = check_peer(got, ours_hsx, ours_ssx);
        if (r.check != "ok") all_ok = false;
        print_row(r, ours_min);
        rows.push_back(r);
      }
#endif
    }
  }

  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "# nestsim bench_peers, ours: " << Broadphase<float>::backend_name()
        << ", repeats=" << repeats << ", bullet=" << bullet_mode << "\n";
    out << "scene,n,method,threads,precision,relation,min_ms,median_ms,hsx_pairs,ssx_pairs,"
           "aabb_pairs,peer_over_ours_min,check\n";
    auto blank = [](uint64_t v) { return v ? std::to_string(v) : std::string(); };
    double ours_min = 1;
    for (const Row& r : rows) {
      if (r.method == "nestsim hsx") ours_min = r.min_ms;
      out << r.scene << "," << r.n << "," << r.method << "," << r.threads << "," << r.precision
          << "," << r.relation << "," << r.min_ms << "," << r.median_ms << "," << blank(r.hsx)
          << "," << blank(r.ssx) << "," << blank(r.aabb) << "," << r.min_ms / ours_min << ","
          << r.check << "\n";
    }
  }
  if (!all_ok) {
    std::fprintf(stderr, "bench_peers: a peer's pairs differ from ours (see check column)\n");
    return 1;
  }
  return 0;
}

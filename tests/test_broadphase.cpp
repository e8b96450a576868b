// Every broad-phase method against the brute-force reference (reference.h), on every
// scene family, in both precisions and both relations, in both directions: no missed
// pair and no false pair.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/predicates.h"
#include "nestsim/testing/scenes.h"
#include "reference.h"
#include "scene_cases.h"
#include "test_broadphase_check.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

constexpr int64_t kAlwaysAllPairs = int64_t(1) << 40;

template <class Real>
void check_scene(const SceneCase& c) {
  const scenes::Scene scene = c.make();
  const SphereSet<Real> bodies = convert<Real>(scene.bodies);
  const char* precision = sizeof(Real) == 4 ? "float" : "double";
  std::vector<Pair> by_overlap[2];
  for (Overlap overlap : {Overlap::hollow, Overlap::solid}) {
    const auto reference = reference_pairs(bodies, options_for(scene, overlap, Method::hsx, c.skin));
    for (const std::string& name : method_names()) {
      const Method method = method_from_string(name);
      const std::string label = c.name + " / " + precision + " / " +
                                (overlap == Overlap::hollow ? "hollow" : "solid") + " / " + name;
      BroadphaseOptions o = options_for(scene, overlap, method, c.skin);
      using GridSort = BroadphaseOptions::GridSort;
      if (method == Method::hsx) {
        // Both of HSX's paths, whatever the backend's crossover: the grid (with either
        // sort into cells), and all pairs.
        o.hsx_small_n = 0;
        o.grid_sort = GridSort::radix;
        check_method(label + " (grid, radix sort)", bodies, o, reference);
        o.grid_sort = GridSort::counting;
        by_overlap[overlap == Overlap::hollow ? 0 : 1] = check_method(label + " (grid)", bodies, o, reference);
        // find() leaving the pairs in the order found; pairs() sorts them.
        o.sort_pairs = false;
        check_method(label + " (grid, pairs in the order found)", bodies, o, reference);
        o.sort_pairs = true;
        o.hsx_small_n = kAlwaysAllPairs;
        check_method(label + " (all pairs)", bodies, o, reference);
        continue;
      }
      if (method == Method::grid_uniform) {
        o.grid_sort = GridSort::radix;
        check_method(label + " (radix sort)", bodies, o, reference);
        o.grid_sort = GridSort::counting;
      }
      check_method(label, bodies, o, reference);
    }
  }
  // HSX pairs == SSX pairs filtered by the hollow test (the regression against
  // solid-sphere baselines), on the library's own results.
  const auto& hollow = by_overlap[0];
  const auto& solid = by_overlap[1];
  const auto all = reference_pairs(bodies, options_for(scene, Overlap::hollow, Method::hsx, c.skin));
  std::vector<Pair> filtered;
  std::set_intersection(solid.begin(), solid.end(), all.begin(), all.end(),
                        std::back_inserter(filtered));
  INFO(c.name << ": HSX vs filtered SSX");
  CHECK(filtered == hollow);
  CHECK(hollow.size() <= solid.size());
}

}  // namespace

TEST_CASE("every method equals the brute-force reference on every scene family") {
  for (const SceneCase& c : scene_cases()) {
    SUBCASE(c.name.c_str()) {
      check_scene<double>(c);
      check_scene<float>(c);
    }
  }
}

TEST_CASE("order_spatially: the same bodies, in ascending Morton keys of their centres") {
  for (int dim : {2, 3}) {
    const scenes::Scene before = scenes::exponential(5000, 0.2, dim, 31);
    scenes::Scene after = before;
    scenes::order_spatially(after);
    REQUIRE(after.bodies.size() == before.bodies.size());
    // A permutation: the multisets of (x, y, z, r, q) agree.
    auto rows = [](const SphereSet<double>& b) {
      std::vector<std::array<double, 5>> r(b.size());
      for (std::size_t i = 0; i < b.size(); ++i)
        r[i] = {b.x[i], b.y[i], b.z[i], b.radius[i], b.thickness[i]};
      std::sort(r.begin(), r.end());
      return r;
    };
    CHECK(rows(after.bodies) == rows(before.bodies));
    // Keys ascending, recomputed here from the bit definition (1024 cells per axis).
    auto key = [&](std::size_t i) {
      const double* c[3] = {&after.bodies.x[i], &after.bodies.y[i], &after.bodies.z[i]};
      uint64_t k = 0;
      for (int a = 0; a < dim; ++a) {
        const double f = (*c[a] - after.domain.lo[a]) / after.domain.size[a];
        const uint64_t cell = std::min<uint64_t>(1023, uint64_t(std::max(0.0, f) * 1024));
        for (int bit = 0; bit < 10; ++bit) k |= ((cell >> bit) & 1u) << (bit * dim + a);
      }
      return k;
    };
    std::size_t descents = 0;
    for (std::size_t i = 1; i < after.bodies.size(); ++i) descents += key(i) < key(i - 1);
    CHECK(descents == 0);
    // and the generator's order was not already sorted (the check can fail)
    std::size_t before_descents = 0;
    for (std::size_t i = 1; i < before.bodies.size(); ++i)
      before_descents += before.bodies.x[i] < before.bodies.x[i - 1];
    CHECK(before_descents > 0);
  }
}

TEST_CASE("concentric shells: SSX gives n(n-1)/2 pairs, HSX none") {
  const std::size_t n = 200;
  for (int dim : {2, 3})
  for (int64_t small_n : {int64_t(0), kAlwaysAllPairs}) {
    const scenes::Scene s = scenes::concentric(n, dim);
    BroadphaseOptions o;
    o.domain.dim = dim;
    o.hsx_small_n = small_n;
    Broadphase<double> finder(o);
    finder.upload(s.bodies);
    CHECK(finder.find() == 0);
    o.overlap = Overlap::solid;
    Broadphase<double> solid(o);
    solid.upload(s.bodies);
    CHECK(solid.find() == n * (n - 1) / 2);
  }
}

TEST_CASE("many concentric shells: the automatic mode gives the same (no) pairs") {
  // Beyond both backends' all-pairs size, so the automatic mode goes through its
  // crowded-cell check (all shells share one cell of the top group; on the GPU it picks
  // all pairs, on the CPU, whose cost ratio is 1, the grid) and must still
  // find exactly the analytic result: nested shells 1 apart with thickness 0.5 never
  // intersect. The grid path on concentric shells is checked above (hsx_small_n = 0).
  const std::size_t n = 25000;
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const scenes::Scene s = scenes::concentric(n, dim);
    BroadphaseOptions o;
    o.domain.dim = dim;
    Broadphase<float> finder(o);
    finder.upload(convert<float>(s.bodies));
    CHECK(finder.find() == 0);
    CHECK(finder.count() == 0);
  }
  // One shell per ring touching its neighbour: thickness 1 makes shell k (radius k + 1)
  // reach the lumen of shell k + 1 (radius k + 2, lumen k + 1): n - 1 pairs (k, k + 1).
  scenes::Scene s = scenes::concentric(n, 3);
  for (auto& q : s.bodies.thickness) q = 1.0;
  BroadphaseOptions o;
  Broadphase<double> finder(o);
  finder.upload(s.bodies);
  REQUIRE(finder.find() == n - 1);
  const PairList pairs = finder.pairs();
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < pairs.size(); ++k)
    if (pairs.i[k] != k || pairs.j[k] != k + 1) ++wrong;
  CHECK(wrong == 0);
}

TEST_CASE("neighbour lists hold every pair in both directions, ascending") {
  const scenes::Scene s = scenes::cell_like(2000, 30);
  // The sort's buffers kept for the next call (the default) or freed after each
  // (list_keep_bytes 0, as above 2 GiB).
  const double keep_default = BroadphaseOptions{}.tuning.device.list_keep_bytes;
  for (double keep : {keep_default, 0.0})
  for (bool sort_pairs : {true, false}) {
  CAPTURE(sort_pairs);
  CAPTURE(keep);
  BroadphaseOptions o;
  o.sort_pairs = sort_pairs;
  o.hsx_small_n = 0;  // the grid, whose pairs come in the order found
  o.tuning.device.list_keep_bytes = keep;
  Broadphase<double> finder(o);
  finder.upload(s.bodies);
  const uint64_t found = finder.find();
  // Twice: the second call reuses (or, with list_keep_bytes 0, reallocates) the sort's
  // buffers of the first.
  const NeighbourLists once = finder.neighbour_lists();
  const NeighbourLists lists = finder.neighbour_lists();
  CHECK(lists.offsets == once.offsets);
  CHECK(lists.neighbours == once.neighbours);
  CHECK(lists.rows == once.rows);
  const std::vector<Pair> pairs = reference_pairs(s.bodies, o);
  REQUIRE(found == pairs.size());
  const std::size_t n = s.bodies.size();
  REQUIRE(lists.offsets.size() == n + 1);
  REQUIRE(lists.neighbours.size() == 2 * pairs.size());
  REQUIRE(lists.rows.size() == lists.neighbours.size());
  CHECK(lists.offsets[0] == 0);
  CHECK(lists.offsets[n] == lists.neighbours.size());
  std::size_t wrong_rows = 0;
  for (std::size_t b = 0; b < n; ++b)
    for (uint64_t k = lists.offsets[b]; k < lists.offsets[b + 1]; ++k)
      if (lists.rows[k] != b) ++wrong_rows;
  CHECK(wrong_rows == 0);
  std::vector<std::vector<uint32_t>> expected(n);
  for (const Pair& p : pairs) {
    expected[p.first].push_back(p.second);
    expected[p.second].push_back(p.first);
  }
  std::size_t wrong = 0;
  for (std::size_t b = 0; b < n; ++b) {
    std::sort(expected[b].begin(), expected[b].end());
    const std::vector<uint32_t> got(lists.neighbours.begin() + long(lists.offsets[b]),
                                    lists.neighbours.begin() + long(lists.offsets[b + 1]));
    if (got != expected[b]) ++wrong;
  }
  CHECK(wrong == 0);
  }
  // No pairs (nested shells 1 apart, thickness 0.5): every list empty.
  const scenes::Scene shells = scenes::concentric(300, 3);
  BroadphaseOptions o;
  o.hsx_small_n = 0;
  o.sort_pairs = false;
  Broadphase<double> finder(o);
  finder.upload(shells.bodies);
  REQUIRE(finder.find() == 0);
  const NeighbourLists lists = finder.neighbour_lists();
  CHECK(lists.offsets == std::vector<uint64_t>(shells.bodies.size() + 1, 0));
  CHECK(lists.neighbours.empty());
  CHECK(lists.rows.empty());
}

// The lists that the pairs define: each body's row its partners, ascending.
NeighbourLists lists_of_pairs(const std::vector<Pair>& pairs, std::size_t n) {
  std::vector<std::vector<uint32_t>> rows(n);
  for (const Pair& p : pairs) {
    rows[p.first].push_back(p.second);
    rows[p.second].push_back(p.first);
  }
  NeighbourLists l;
  l.offsets.push_back(0);
  for (std::size_t b = 0; b < n; ++b) {
    std::sort(rows[b].begin(), rows[b].end());
    l.neighbours.insert(l.neighbours.end(), rows[b].begin(), rows[b].end());
    l.rows.insert(l.rows.end(), rows[b].size(), uint32_t(b));
    l.offsets.push_back(l.neighbours.size());
  }
  return l;
}

TEST_CASE("neighbour lists counted into rows, long rows and short, are the sorted lists") {
  // A shell of radius 100 whose wall (thickness 2) holds 3,000 small bodies, beside
  // 2,000 more in its lumen and outside: one row of 3,000 entries, the rest short. On
  // the GPU few entries are counted into rows (DeviceTuning::list_count_max_entries),
  // while the last call's longest row allowed it (list_rank_max_row): the first call
  // counts, the next ones sort (the default 1024) or count (no limit), and a limit of 4
  // sends even the short lists back to the sort. Every call is checked against the lists
  // of the reference pairs; on the CPU all are sorted.
  SphereSet<double> bodies;
  auto add = [&](double x, double y, double z, double r, double q) {
    bodies.x.push_back(x);
    bodies.y.push_back(y);
    bodies.z.push_back(z);
    bodies.radius.push_back(r);
    bodies.thickness.push_back(q);
  };
  add(0, 0, 0, 100, 2);
  const double golden = 2.399963229728653;  // the golden angle: points spread on a sphere
  for (int k = 0; k < 3000; ++k) {
    const double z = 1 - 2 * (k + 0.5) / 3000, rho = std::sqrt(1 - z * z);
    add(99 * rho * std::cos(golden * k), 99 * rho * std::sin(golden * k), 99 * z, 0.4, 0.4);
  }
  for (int k = 0; k < 2000; ++k) {  // rows of touching bodies in the lumen and beyond
    const double x = -150 + 1.5 * (k % 100), y = -60 + 6.0 * double(k / 100);
    add(x, y, 0, 0.8, 0.8);
  }
  BroadphaseOptions o;
  o.sort_pairs = false;
  const NeighbourLists expected = lists_of_pairs(reference_pairs(bodies, o), bodies.size());
  REQUIRE(expected.offsets[2] - expected.offsets[1] == 1);  // a wall body: the shell only
  REQUIRE(expected.offsets[1] - expected.offsets[0] >= 3000);
  REQUIRE(expected.neighbours.size() > 2 * 3000 + 2 * 1900);
  for (double max_row : {1024.0, 1e9, 4.0}) {
    for (double max_entries : {65536.0, 0.0}) {
      CAPTURE(max_row);
      CAPTURE(max_entries);
      o.tuning.device.list_rank_max_row = max_row;
      o.tuning.device.list_count_max_entries = max_entries;
      Broadphase<double> finder(o);
      finder.upload(bodies);
      REQUIRE(finder.find() == expected.neighbours.size() / 2);
      for (int call = 0; call < 3; ++call) {
        CAPTURE(call);
        const NeighbourLists lists = finder.neighbour_lists();
        CHECK(lists.offsets == expected.offsets);
        CHECK(lists.neighbours == expected.neighbours);
        CHECK(lists.rows == expected.rows);
      }
    }
  }
}

TEST_CASE("repeated calls on one finder give the same pairs") {
  const scenes::Scene a = scenes::exponential(3000, 0.3, 3, 40);
  const scenes::Scene b = scenes::cell_like(1000, 41);
  for (int64_t small_n : {int64_t(0), kAlwaysAllPairs}) {
  INFO("hsx_small_n = " << small_n);
  BroadphaseOptions o;
  o.hsx_small_n = small_n;
  Broadphase<double> finder(o);
  finder.upload(a.bodies);
  finder.find();
  const auto first = to_pairs(finder.pairs());
  finder.upload(b.bodies);
  finder.find();
  const auto other = to_pairs(finder.pairs());
  CHECK(other == reference_pairs(b.bodies, o));
  finder.upload(a.bodies);
  finder.find();
  CHECK(to_pairs(finder.pairs()) == first);
  CHECK(first == reference_pairs(a.bodies, o));
  }
}

TEST_CASE("invalid bodies and options are refused with a message") {
  SphereSet<double> b;
  b.push_back(0, 0, 0, 1, 2);  // thickness > radius
  BroadphaseOptions o;
  Broadphase<double> finder(o);
  CHECK_THROWS_WITH_AS(finder.upload(b), doctest::Contains("thickness"), std::invalid_argument);
  b.thickness[0] = 0.5;
  b.radius[0] = -1;
  CHECK_THROWS_AS(finder.upload(b), std::invalid_argument);
  b.radius[0] = 1;
  b.x[0] = std::nan("");
  CHECK_THROWS_AS(finder.upload(b), std::invalid_argument);
  BroadphaseOptions bad;
  bad.domain.periodic = true;  // edges 0
  CHECK_THROWS_AS(Broadphase<double>{bad}, std::invalid_argument);
  bad = BroadphaseOptions{};
  bad.domain.dim = 4;
  CHECK_THROWS_AS(Broadphase<double>{bad}, std::invalid_argument);
  bad = BroadphaseOptions{};
  bad.hsx_small_n = -2;
  CHECK_THROWS_WITH_AS(Broadphase<double>{bad}, doctest::Contains("hsx_small_n"),
                       std::invalid_argument);
  bad = BroadphaseOptions{};
  bad.tuning.hsx.cell_fraction = 1e-3;  // below 1/64
  CHECK_THROWS_WITH_AS(Broadphase<double>{bad}, doctest::Contains("hsx.cell_fraction"),
                       std::invalid_argument);
  bad = BroadphaseOptions{};
  bad.tuning.hsx.warp_slots = 9;
  CHECK_THROWS_WITH_AS(Broadphase<double>{bad}, doctest::Contains("hsx.warp_slots"),
                       std::invalid_argument);

  // Outside the supported range (check_supported): refused, naming the body and the range.
  SphereSet<double> far;
  far.push_back(0, 0, 0, 1, 0.5);
  far.push_back(0, 2e150, 0, 1, 0.5);
  try {
    finder.upload(far);
    FAIL("a coordinate of 2e150 was accepted");
  } catch (const BodyError& e) {
    CHECK(e.body() == 1);
    CHECK(std::string(e.what()).find("1e+150 in double") != std::string::npos);
  }
  SphereSet<float> single;
  single.push_back(0, 0, 0, 1, 0.5f);
  single.push_back(0, 0, 2e18f, 1, 0.5f);
  Broadphase<float> float_finder(o);
  CHECK_THROWS_WITH_AS(float_finder.upload(single), doctest::Contains("1e+18 in float"),
                       BodyError);
  single.z[1] = 1e-13f;  // below 1e-12: squared differences would underflow
  CHECK_THROWS_AS(float_finder.upload(single), BodyError);
  b.x[0] = 0;
  BroadphaseOptions skin;
  skin.skin = 1e155;
  Broadphase<double> skin_finder(skin);
  CHECK_THROWS_WITH_AS(skin_finder.upload(b), doctest::Contains("skin"), std::invalid_argument);
  BroadphaseOptions tiny_box;
  tiny_box.domain.periodic = true;
  tiny_box.domain.size = {1e-12, 1e-12, 1e-12};
  Broadphase<double> box_finder(tiny_box);
  CHECK_THROWS_WITH_AS(box_finder.upload(b), doctest::Contains("2^-30 of the largest radius"),
                       std::invalid_argument);
}

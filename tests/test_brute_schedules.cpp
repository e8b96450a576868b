// The seeds' brute-force schedules (Method::brute_tiled, brute_balanced, brute_mapping
// and the mapping's lazy / one-byte variants) against the independent host double loop
// of reference.h, on every scene family, both relations and precisions, in both
// directions: no missed pair and no false pair. Also counting == listing, and (CPU
// backend) the generic layer nestsim/device/pairwise.cuh with a non-geometric predicate.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <functional>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"
#include "reference.h"

#if defined(NESTSIM_BACKEND_CPU)
#include "nestsim/device/pairwise.cuh"
#endif

using namespace nestsim;
using namespace nestsim::testing;

namespace {

struct Variant {
  const char* name;
  Method method;
  bool lazy = false;
  bool byte_mask = false;
};

const Variant kVariants[] = {
    {"brute", Method::brute},
    {"brute_tiled", Method::brute_tiled},
    {"brute_balanced", Method::brute_balanced},
    {"brute_mapping", Method::brute_mapping},
    {"brute_mapping lazy", Method::brute_mapping, true, false},
    {"brute_mapping byte", Method::brute_mapping, false, true},
    {"brute_mapping lazy byte", Method::brute_mapping, true, true},
};

BroadphaseOptions options_for(const scenes::Scene& s, Overlap overlap, const Variant& v,
                              double skin) {
  BroadphaseOptions o;
  o.overlap = overlap;
  o.method = v.method;
  o.mapping_lazy = v.lazy;
  o.mapping_byte_mask = v.byte_mask;
  o.domain = s.domain;
  if (!o.domain.periodic) o.domain.size = {0, 0, 0};
  o.skin = skin;
  return o;
}

template <class Real>
void check_scene(const std::string& label, const scenes::Scene& scene, double skin = 0) {
  const SphereSet<Real> bodies = convert<Real>(scene.bodies);
  for (Overlap overlap : {Overlap::hollow, Overlap::solid}) {
    const Variant reference_variant{"reference", Method::brute};
    const std::vector<Pair> reference =
        reference_pairs(bodies, options_for(scene, overlap, reference_variant, skin));
    for (const Variant& v : kVariants) {
      const BroadphaseOptions o = options_for(scene, overlap, v, skin);
      Broadphase<Real> finder(o);
      finder.upload(bodies);
      const uint64_t counted = finder.count();
      const uint64_t found = finder.find();
      const std::vector<Pair> result = to_pairs(finder.pairs());
      const Difference d = compare(reference, result);
      const std::string what = label + " n=" + std::to_string(bodies.size()) + " " + v.name +
                               (overlap == Overlap::hollow ? " hollow: " : " solid: ") +
                               d.describe();
      INFO(what);
      CHECK(d.missed.empty());
      CHECK(d.spurious.empty());
      CHECK(sorted_unique_ordered(result));
      CHECK(found == result.size());
      CHECK(counted == found);
    }
  }
}

}  // namespace

TEST_CASE("method names round-trip") {
  for (Method m : {Method::brute_tiled, Method::brute_balanced, Method::brute_mapping})
    CHECK(method_from_string(to_string(m)) == m);
  const std::vector<std::string> names = method_names();
  for (const char* name : {"brute_tiled", "brute_balanced", "brute_mapping"})
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
}

TEST_CASE_TEMPLATE("brute schedules equal the reference on every scene family", Real, float,
                   double) {
  // Odd and even n: the balanced schedule's even-n rule (pairwise seed, section IV).
  check_scene<Real>("exponential 3D odd", scenes::exponential(301, 0.3, 3, 11));
  check_scene<Real>("exponential 3D even", scenes::exponential(300, 0.3, 3, 12));
  check_scene<Real>("exponential 2D", scenes::exponential(257, 0.4, 2, 13));
  check_scene<Real>("equal radii", scenes::equal_radii(200, 0.4, 3, 14));
  check_scene<Real>("equal radii 2D", scenes::equal_radii(151, 0.5, 2, 15));
  check_scene<Real>("concentric odd", scenes::concentric(9, 3));
  check_scene<Real>("concentric even", scenes::concentric(10, 3));
  check_scene<Real>("concentric 2D", scenes::concentric(12, 2));
  check_scene<Real>("cell_like", scenes::cell_like(240, 16));
  check_scene<Real>("contacts 3D", scenes::contacts(3));
  check_scene<Real>("contacts 2D", scenes::contacts(2));
  check_scene<Real>("log_uniform", scenes::log_uniform(222, 0.3, 3, 17, 0.1, 10.0));
  check_scene<Real>("skin", scenes::exponential(160, 0.2, 3, 18), 0.3);
  scenes::Scene periodic = scenes::exponential(240, 0.4, 3, 19);
  scenes::make_periodic(periodic);
  check_scene<Real>("periodic 3D", periodic);
  scenes::Scene periodic2 = scenes::equal_radii(199, 0.5, 2, 20);
  scenes::make_periodic(periodic2);
  check_scene<Real>("periodic 2D", periodic2, 0.1);
}

TEST_CASE_TEMPLATE("brute schedules with 0, 1, 2, 3 bodies", Real, float, double) {
  for (std::size_t n = 0; n <= 3; ++n) {
    check_scene<Real>("few exponential", scenes::exponential(n, 0.5, 3, 21 + n));
    check_scene<Real>("few concentric", scenes::concentric(n, 3));
  }
}

TEST_CASE("every pair exactly once for every n from 0 to 70 (all bodies overlap)") {
  // Coincident solid spheres: every pair intersects, so a pair scheduled twice or never
  // shows at once, for odd and even n alike.
  for (uint32_t n = 0; n <= 70; ++n) {
    SphereSet<double> bodies;
    for (uint32_t i = 0; i < n; ++i) bodies.push_back(0.5, 0.25, 0.125, 1.0, 1.0);
    std::vector<Pair> all;
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = i + 1; j < n; ++j) all.emplace_back(i, j);
    for (const Variant& v : kVariants) {
      scenes::Scene s;
      s.bodies = bodies;
      const BroadphaseOptions o = options_for(s, Overlap::hollow, v, 0);
      Broadphase<double> finder(o);
      finder.upload(bodies);
      const std::string what = "n=" + std::to_string(n) + " " + v.name;
      INFO(what);
      CHECK(finder.count() == all.size());
      CHECK(finder.find() == all.size());
      CHECK(to_pairs(finder.pairs()) == all);
    }
  }
}

#if defined(NESTSIM_BACKEND_CPU)
namespace {

// A symmetric predicate with no geometry: a + b divisible by 3, or neighbours.
struct SumDivisible {
  NESTSIM_HD bool operator()(uint32_t a, uint32_t b) const {
    return (a + b) % 3 == 0 || a + 1 == b || b + 1 == a;
  }
};

std::vector<uint64_t> reference_keys(uint32_t n) {
  std::vector<uint64_t> keys;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b)
      if (SumDivisible{}(a, b)) keys.push_back((uint64_t(a) << 32) | b);
  return keys;
}

std::vector<uint64_t> host(const thrust::device_vector<uint64_t>& keys, uint64_t count) {
  std::vector<uint64_t> out(count);
  if (count > 0) thrust::copy_n(keys.begin(), count, out.begin());  // none: no first element
  return out;
}

}  // namespace

TEST_CASE("generic layer: any symmetric predicate, counting and listing (CPU backend)") {
  using namespace nestsim::device;
  for (uint32_t n : {0u, 1u, 2u, 5u, 64u, 65u, 1100u, 2049u}) {
    const std::vector<uint64_t> expected = reference_keys(n);
    PairwiseBuffers buffers;
    thrust::device_vector<uint64_t> keys;
    INFO("n=" << n);
    CHECK(pairwise_count(RowSchedule{n}, SumDivisible{}) == expected.size());
    CHECK(pairwise_count(CircularSchedule{n}, SumDivisible{}) == expected.size());
    CHECK(pairwise_count(MappingSchedule<SqrtMapping>{{n}}, SumDivisible{}) == expected.size());
    CHECK(pairwise_count(MappingSchedule<LazyMapping>{{n}}, SumDivisible{}) == expected.size());
    uint64_t c = pairwise_list(RowSchedule{n}, SumDivisible{}, keys, buffers);
    CHECK(host(keys, c) == expected);
    c = pairwise_list(CircularSchedule{n}, SumDivisible{}, keys, buffers);
    CHECK(host(keys, c) == expected);
    c = pairwise_list(MappingSchedule<SqrtMapping>{{n}}, SumDivisible{}, keys, buffers);
    CHECK(host(keys, c) == expected);
    // Through the masks, in small batches (a batch boundary inside a row, many batches).
    // Tiny batches only where they stay few.
    const std::vector<uint64_t> batches =
        n <= 65 ? std::vector<uint64_t>{32, 96, 4096} : std::vector<uint64_t>{1u << 16, 1u << 22};
    for (uint64_t batch : batches) {
      INFO("batch=" << batch);
      c = pairwise_through_mask<1>(SqrtMapping{n}, SumDivisible{}, &keys, buffers, batch);
      CHECK(host(keys, c) == expected);
      c = pairwise_through_mask<8>(SqrtMapping{n}, SumDivisible{}, &keys, buffers, batch);
      CHECK(host(keys, c) == expected);
      c = pairwise_through_mask<1>(LazyMapping{n}, SumDivisible{}, &keys, buffers, batch);
      CHECK(host(keys, c) == expected);
      CHECK(pairwise_through_mask<1>(SqrtMapping{n}, SumDivisible{}, nullptr, buffers, batch) ==
            expected.size());
      CHECK(pairwise_through_mask<8>(LazyMapping{n}, SumDivisible{}, nullptr, buffers, batch) ==
            expected.size());
    }
  }
}

TEST_CASE("one-bit mask: bit k is the predicate of pair k, same as the byte mask") {
  using namespace nestsim::device;
  const uint32_t n = 203;
  const SqrtMapping mapping{n};
  const uint64_t indices = mapping.indices();
  PairwiseBuffers buffers;
  pairwise_mask<1>(mapping, SumDivisible{}, 0, indices, buffers);
  pairwise_mask<8>(mapping, SumDivisible{}, 0, indices, buffers);
  std::vector<uint32_t> words(mask_word_count(indices));
  thrust::copy_n(buffers.mask.begin(), words.size(), words.begin());
  std::vector<uint8_t> bytes(indices);
  thrust::copy_n(buffers.bytes.begin(), indices, bytes.begin());
  uint64_t k = 0, wrong = 0;
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = a + 1; b < n; ++b, ++k) {
      const bool expected = SumDivisible{}(a, b);
      wrong += mask_test(words.data(), k) != expected;
      wrong += bool(bytes[k]) != expected;
    }
  }
  CHECK(k == indices);
  CHECK(wrong == 0);
  // Bits past the last index stay clear.
  CHECK((words.back() >> (indices % 32)) == 0u);
}
#endif

// Lattice counts (nestsim/testing/lattice.h): the O(N) algorithms of the pairwise paper (Saldanha,
// de Souza 2019, section III, Algorithms 1 and 2) against the quadratic all-pairs
// references, on many random bead sets; the out-of-space error; a space array reused
// across calls; the launch/fetch API of the "Elf Collision Count" README and its example
// program (docs/design.md, "The papers").
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/testing/lattice.h"

using namespace nestsim;

namespace {

// n beads uniform in [-spread, spread]^dim (z = 0 in 2D), a tenth of them pushed onto
// a face of [-a, a]^dim so that the boundary sites are used.
std::vector<Bead> random_beads(std::mt19937_64& rng, std::size_t n, int dim, int32_t a,
                               int32_t spread) {
  std::uniform_int_distribution<int32_t> coord(-spread, spread);
  std::uniform_int_distribution<int> pick(0, 9);
  std::vector<Bead> beads(n);
  for (Bead& b : beads) {
    b.x = coord(rng);
    b.y = coord(rng);
    b.z = dim == 3 ? coord(rng) : 0;
    if (pick(rng) == 0) {
      int32_t* c[3] = {&b.x, &b.y, &b.z};
      *c[pick(rng) % dim] = pick(rng) % 2 ? a : -a;
    }
  }
  return beads;
}

// A random walk on the lattice from the origin, as the seed's experiments generate
// "random proteins" (section V); clamped to the space.
std::vector<Bead> random_chain(std::mt19937_64& rng, std::size_t n, int dim, int32_t a) {
  std::uniform_int_distribution<int> dir(0, 2 * dim - 1);
  std::vector<Bead> beads(n);
  Bead b;
  for (Bead& out : beads) {
    out = b;
    const int d = dir(rng);
    int32_t* c[3] = {&b.x, &b.y, &b.z};
    int32_t& v = *c[d / 2];
    v += d % 2 ? 1 : -1;
    if (v > a) v = a;
    if (v < -a) v = -a;
  }
  return beads;
}

}  // namespace

TEST_CASE("known counts: k beads on a site, chains and squares") {
  for (int dim : {2, 3}) {
    LatticeCounter counter(4, dim);
    CAPTURE(dim);
    // Five beads on one site: 10 collisions, no contact.
    std::vector<Bead> pile(5, Bead{1, -2, dim == 3 ? 3 : 0});
    CHECK(counter.count_collisions(pile) == 10);
    CHECK(counter.count_contacts(pile) == 0);
    // A straight chain of 9 beads across the whole axis, -4..4: 8 contacts.
    std::vector<Bead> chain;
    for (int32_t x = -4; x <= 4; ++x) chain.push_back({x, 4, 0});
    CHECK(counter.count_collisions(chain) == 0);
    CHECK(counter.count_contacts(chain) == 8);
    // The corners of a unit square: 4 contacts, the diagonals are not neighbours.
    std::vector<Bead> square{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    CHECK(counter.count_contacts(square) == 4);
    // Two beads on each of two neighbouring sites: 2 collisions, 4 contacts.
    std::vector<Bead> doubled{{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, {0, 1, 0}};
    CHECK(counter.count_collisions(doubled) == 2);
    CHECK(counter.count_contacts(doubled) == 4);
  }
}

TEST_CASE("O(N) counts equal the quadratic reference on random bead sets") {
  std::mt19937_64 rng(2024);
  struct Setting {
    const char* name;
    int32_t a, spread;
    std::size_t n;
  };
  const Setting settings[] = {
      {"dense", 3, 3, 400},       // many beads per site
      {"medium", 8, 8, 600},      // some collisions, many contacts
      {"sparse", 200, 200, 300},  // few of either
      {"corner", 1, 1, 50},       // every site on the boundary but one
      {"single site", 0, 0, 17},  // the space is one site
  };
  for (int dim : {2, 3}) {
    for (const Setting& s : settings) {
      LatticeCounter counter(s.a, dim);
      for (int trial = 0; trial < 8; ++trial) {
        const std::vector<Bead> beads = random_beads(rng, s.n + trial, dim, s.a, s.spread);
        CAPTURE(dim);
        CAPTURE(s.name);
        CAPTURE(trial);
        CHECK(counter.count_collisions(beads) == count_collisions_quadratic(beads, dim));
        CHECK(counter.count_contacts(beads) == count_contacts_quadratic(beads, dim));
      }
    }
    LatticeCounter counter(64, dim);
    for (int trial = 0; trial < 8; ++trial) {
      const std::vector<Bead> chain = random_chain(rng, 300, dim, 64);
      CAPTURE(dim);
      CHECK(counter.count_collisions(chain) == count_collisions_quadratic(chain, dim));
      CHECK(counter.count_contacts(chain) == count_contacts_quadratic(chain, dim));
    }
  }
}

TEST_CASE("the reference counts are not trivially zero on the random sets") {
  // Guards the comparison above against a generator that makes nothing to count.
  std::mt19937_64 rng(7);
  const std::vector<Bead> beads = random_beads(rng, 600, 3, 8, 8);
  CHECK(count_collisions_quadratic(beads, 3) > 10);
  CHECK(count_contacts_quadratic(beads, 3) > 10);
}

TEST_CASE("a bead outside the space is an error naming it") {
  LatticeCounter counter(4, 3);
  std::vector<Bead> beads{{0, 0, 0}, {4, -4, 4}, {1, 2, 3}, {5, 0, -2}, {9, 9, 9}};
  std::string what;
  try {
    counter.count_collisions(beads);
  } catch (const std::invalid_argument& e) {
    what = e.what();
  }
  CHECK(what.find("bead 3") != std::string::npos);
  CHECK(what.find("(5, 0, -2)") != std::string::npos);
  CHECK_THROWS_AS(counter.launch_contacts({{0, -5, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(counter.count_contacts({{0, 0, 5}}), std::invalid_argument);
  // In 2D z is ignored.
  LatticeCounter plane(4, 2);
  CHECK(plane.count_collisions({{4, 4, 100}, {4, 4, -100}}) == 1);
  CHECK_THROWS_AS(plane.count_collisions({{-5, 0, 0}}), std::invalid_argument);
  // The counter still works after the error.
  CHECK(counter.count_collisions({{4, 4, 4}, {4, 4, 4}}) == 1);
  CHECK_THROWS_AS(LatticeCounter(-1, 3), std::invalid_argument);
  CHECK_THROWS_AS(LatticeCounter(3, 4), std::invalid_argument);
}

TEST_CASE("the memory cost is as documented") {
  LatticeCounter counter(10, 3);
  CHECK(counter.site_count() == 21u * 21u * 21u);
  CHECK(counter.space_bytes() == 21u * 21u * 21u * LatticeCounter::kBytesPerSite);
  LatticeCounter plane(10, 2);
  CHECK(plane.site_count() == 21u * 21u);
}

TEST_CASE("one space array serves many calls without stale marks") {
  LatticeCounter counter(6, 3);
  // The same crowded site, counted again and again: a stale mark would grow the count.
  const std::vector<Bead> pile(4, Bead{2, 2, 2});
  for (int k = 0; k < 5; ++k) CHECK(counter.count_collisions(pile) == 6);
  // A contact count leaves its beads placed; a collision count on the neighbour site
  // afterwards must not see them, nor the other way round.
  CHECK(counter.count_contacts({{0, 0, 0}, {0, 0, 0}, {0, 0, 1}}) == 2);
  CHECK(counter.count_collisions({{0, 0, 1}}) == 0);
  CHECK(counter.count_contacts({{0, 0, 1}}) == 0);
  CHECK(counter.count_contacts({{1, 0, 1}, {0, 0, 1}}) == 1);
  // Random sets of different sizes and places, alternating relations.
  std::mt19937_64 rng(99);
  for (int k = 0; k < 30; ++k) {
    const std::vector<Bead> beads = random_beads(rng, 50 + 37 * (k % 7), 3, 6, k % 2 ? 6 : 2);
    CAPTURE(k);
    if (k % 3 == 0)
      CHECK(counter.count_contacts(beads) == count_contacts_quadratic(beads, 3));
    else
      CHECK(counter.count_collisions(beads) == count_collisions_quadratic(beads, 3));
  }
  CHECK(counter.count_collisions({}) == 0);
  CHECK(counter.count_contacts({}) == 0);
}

TEST_CASE("launch returns a promise; fetch waits and returns the count") {
  std::mt19937_64 rng(5);
  LatticeCounter counter(8, 3);
  std::vector<std::vector<Bead>> sets;
  std::vector<CountPromise> promises;
  for (int k = 0; k < 6; ++k) {
    sets.push_back(random_beads(rng, 300 + 50 * k, 3, 8, 4));
    promises.push_back(k % 2 ? counter.launch_contacts(sets.back())
                             : counter.launch_collisions(sets.back()));
  }
  // The caller may release its beads once launch returns.
  std::vector<std::vector<Bead>> kept = sets;
  for (auto& s : sets) s.assign(s.size(), Bead{100, 100, 100});
  for (int k = 5; k >= 0; --k) {  // fetched in reverse order
    REQUIRE(promises[k].valid());
    const uint64_t expected = k % 2 ? count_contacts_quadratic(kept[k], 3)
                                    : count_collisions_quadratic(kept[k], 3);
    CAPTURE(k);
    CHECK(promises[k].fetch() == expected);
    CHECK_FALSE(promises[k].valid());
    CHECK_THROWS_AS(promises[k].fetch(), std::logic_error);
  }
  CHECK_THROWS_AS(CountPromise().fetch(), std::logic_error);

  // A promise outlives its counter; a promise dropped unfetched waits for its work.
  CountPromise orphan;
  {
    LatticeCounter short_lived(2, 2);
    orphan = short_lived.launch_collisions({{1, 1, 0}, {1, 1, 0}, {1, 1, 0}});
    CountPromise dropped = short_lived.launch_contacts({{0, 0, 0}, {0, 1, 0}});
  }
  CHECK(orphan.fetch() == 3);
}

TEST_CASE("the README seed's procedural form") {
  const Bead vector[] = {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}};
  CollisionCountPromise promise = count_collisions_launch(vector, 4);
  CHECK(count_collisions_fetch(promise) == 2);
  const Bead far[] = {{-7, 3, 7}, {-7, 3, 7}, {-7, 3, 7}, {7, 7, 7}};
  CollisionCountPromise second = count_collisions_launch(far, 4);
  CHECK(count_collisions_fetch(second) == 3);
}

#ifdef NESTSIM_COLLISION_COUNT_EXAMPLE
TEST_CASE("examples/collision_count prints the README's line") {
  FILE* pipe = popen(NESTSIM_COLLISION_COUNT_EXAMPLE, "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), int(buffer.size()), pipe)) out += buffer.data();
  const int status = pclose(pipe);
  CHECK(status == 0);
  CHECK(out == "Collisions: 2\n");
}
#endif

// Reactions (simulator/src/reactions/) against analytic results: exponential decay,
// the Doi rate constant (Erban and Chapman 2009), conservation (no body reacts twice in
// one step), binding onto a membrane and transport between compartments.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <unordered_map>

#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim::sim;

using namespace nestsim::model;
using namespace nestsim::testing;

namespace {

constexpr double kPi = 3.14159265358979323846;

Reaction rule(const std::string& name, double rate, double radius, std::vector<Term> in,
              std::vector<Term> out) {
  Reaction r;
  r.name = name;
  r.rate = rate;
  r.radius = radius;
  r.reactants = std::move(in);
  r.products = std::move(out);
  return r;
}

Term term(uint32_t kind, Site::Where where = Site::Where::any, uint32_t compartment = 0) {
  Term t;
  t.kind = kind;
  t.site.where = where;
  t.site.compartment = compartment;
  return t;
}

std::size_t count_kind(const Frame& f, int32_t kind) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < f.id.size(); ++s) n += (f.id[s] >= 0 && f.kind[s] == kind) ? 1 : 0;
  return n;
}

void scatter(SetupBuilder& b, uint32_t kind, int count, double box, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, box);
  for (int k = 0; k < count; ++k) b.add(kind, {u(rng), u(rng), u(rng)});
}

}  // namespace

TEST_CASE("A -> B decays exponentially at the given rate; A -> 0 removes bodies") {
  SetupBuilder b(3, 40, Boundary::periodic, 0.001, 11);
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.2, 0.2, 1);
  const uint32_t c = b.kind("B", false, 0.2, 0.2, 1);
  const uint32_t d = b.kind("D", false, 0.2, 0.2, 1);
  std::mt19937_64 rng(3);
  scatter(b, a, 4000, 40, rng);
  scatter(b, d, 2000, 40, rng);
  b.s.reactions = {rule("convert", 2.0, 0, {term(a)}, {term(c)}),
                   rule("decay", 1.0, 0, {term(d)}, {})};
  Simulation sim(b.s);
  sim.run(250);  // t = 0.25
  const Frame f = sim.frame();
  const double p_a = std::exp(-2.0 * 0.25), p_d = std::exp(-1.0 * 0.25);
  const double left_a = double(count_kind(f, int32_t(a))), left_d = double(count_kind(f, int32_t(d)));
  CHECK(std::abs(left_a - 4000 * p_a) < 5 * std::sqrt(4000 * p_a * (1 - p_a)));
  CHECK(std::abs(left_d - 2000 * p_d) < 5 * std::sqrt(2000 * p_d * (1 - p_d)));
  CHECK(double(count_kind(f, int32_t(c))) == 4000 - left_a);  // conversion keeps the body
  REQUIRE(f.reaction_events.size() == 2);
  CHECK(f.reaction_events[0] == 4000 - uint64_t(left_a));
  CHECK(f.reaction_events[1] == 2000 - uint64_t(left_d));
  std::size_t present = 0;
  for (auto id : f.id) present += id >= 0 ? 1 : 0;
  CHECK(present == 6000 - (2000 - std::size_t(left_d)));
}

TEST_CASE("a first-order rule fires with 1 - exp(-k dt) per step, also at k dt >= 1") {
  // k dt = 1.5 and 0.5 (two competing rules on one kind: 1 - exp(-(k1 + k2) dt) in all,
  // split k1 : k2), 2 steps: the survivors are exp(-k t) of the bodies at any dt; the
  // first-order probability k dt would leave none (1.5 > 1) and exp(-k t) cannot be met
  // by any other per-step rule. 20,000 bodies: 5 sigma is 0.011 of the fraction.
  SetupBuilder b(3, 60, Boundary::periodic, 1.0, 12);
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.1, 0.1, 1e-3);
  const uint32_t d = b.kind("D", false, 0.1, 0.1, 1e-3);
  const uint32_t e = b.kind("E", false, 0.1, 0.1, 1e-3);
  const uint32_t x = b.kind("X", false, 0.1, 0.1, 1e-3);
  const uint32_t y = b.kind("Y", false, 0.1, 0.1, 1e-3);
  std::mt19937_64 rng(5);
  scatter(b, a, 20000, 60, rng);
  scatter(b, d, 20000, 60, rng);
  b.s.reactions = {rule("decay", 1.5, 0, {term(a)}, {}), rule("to_x", 0.2, 0, {term(d)}, {term(x)}),
                   rule("to_y", 0.3, 0, {term(d)}, {term(y)}), rule("unused", 1, 0, {term(e)}, {})};
  Simulation sim(b.s);
  sim.run(2);
  const Frame f = sim.frame();
  const double p_a = std::exp(-1.5 * 2), p_d = std::exp(-0.5 * 2);
  const double left_a = double(count_kind(f, int32_t(a))) / 20000, left_d = double(count_kind(f, int32_t(d))) / 20000;
  CHECK(std::abs(left_a - p_a) < 5 * std::sqrt(p_a * (1 - p_a) / 20000));
  CHECK(std::abs(left_d - p_d) < 5 * std::sqrt(p_d * (1 - p_d) / 20000));
  // The competing rules split the events 0.2 : 0.3.
  const double to_x = double(count_kind(f, int32_t(x))), to_y = double(count_kind(f, int32_t(y)));
  const double share = to_x / (to_x + to_y);
  CHECK(std::abs(share - 0.4) < 5 * std::sqrt(0.24 / (to_x + to_y)));
}

TEST_CASE("A -> B + C creates bodies with new ids in free slots") {
  SetupBuilder b(3, 30, Boundary::periodic, 0.001, 5);
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.2, 0.2, 1);
  const uint32_t p = b.kind("P", false, 0.2, 0.2, 1);
  const uint32_t q = b.kind("Q", false, 0.2, 0.2, 1);
  std::mt19937_64 rng(4);
  scatter(b, a, 500, 30, rng);
  b.s.capacity = 1200;
  b.s.reactions = {rule("split", 3.0, 0, {term(a)}, {term(p), term(q)})};
  Simulation sim(b.s);
  sim.run(400);
  const Frame f = sim.frame();
  const std::size_t split = count_kind(f, int32_t(p));
  CHECK(split > 300);
  CHECK(count_kind(f, int32_t(q)) == split);
  CHECK(count_kind(f, int32_t(a)) + split == 500);
  CHECK(f.next_id == 500 + split);
  std::vector<int> seen(f.next_id, 0);
  for (auto id : f.id)
    if (id >= 0) ++seen[std::size_t(id)];
  for (int n : seen) CHECK(n == 1);  // every id once: none reused, none lost
}

TEST_CASE("A + B -> C + B matches the Doi rate constant (Erban and Chapman 2009)") {
  // k = 4 pi D R (1 - sqrt(D / (lambda R^2)) tanh(sqrt(lambda R^2 / D))), D = D_A + D_B.
  // lambda R^2 / D = 1: the diffusion term matters (k is 0.72 x the reaction-limited
  // lambda 4/3 pi R^3) while the diffusion-limited transient, of relative size
  // ~ (k / 4 pi D R) R / sqrt(pi D t), stays near 2% over the window. B is a catalyst held
  // at n_b, so A decays at k [B].
  const double D = 1.0, R = 0.2, lambda = 25, box = 6.2;
  const int n_a = 4000, n_b = 400;
  const double g = std::sqrt(lambda * R * R / D);
  const double k = 4 * kPi * D * R * (1 - std::tanh(g) / g);
  const double rate = k * n_b / (box * box * box);
  SetupBuilder b(3, box, Boundary::periodic, 0.00025, 21);
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.05, 0.05, 0.5);
  const uint32_t cat = b.kind("B", false, 0.05, 0.05, 0.5);
  const uint32_t c = b.kind("C", false, 0.05, 0.05, 0.5);
  std::mt19937_64 rng(8);
  scatter(b, a, n_a, box, rng);
  scatter(b, cat, n_b, box, rng);
  b.s.reactions = {rule("doi", lambda, R, {term(a), term(cat)}, {term(c), term(cat)})};
  Simulation sim(b.s);
  sim.run(2000);  // t = 0.5
  const double early = double(count_kind(sim.frame(), int32_t(a)));
  sim.run(4800);  // t = 1.7
  const Frame f = sim.frame();
  const double late = double(count_kind(f, int32_t(a)));
  const double measured = std::log(early / late) / 1.2;
  MESSAGE("Doi: predicted decay rate " << rate << ", measured " << measured);
  CHECK(std::abs(measured - rate) < 0.1 * rate);
  CHECK(count_kind(f, int32_t(cat)) == std::size_t(n_b));
}

TEST_CASE("in a crowd, no body reacts twice in one step: A + B -> C conserves exactly") {
  SetupBuilder b(3, 12, Boundary::periodic, 0.001, 9);
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.3, 0.3, 1);
  const uint32_t bb = b.kind("B", false, 0.3, 0.3, 1);
  const uint32_t c = b.kind("C", false, 0.3, 0.3, 1);
  std::mt19937_64 rng(10);
  scatter(b, a, 1500, 12, rng);
  scatter(b, bb, 1000, 12, rng);
  // Every A has several B within reach: without conflict resolution a B would be used
  // by several A in one step.
  b.s.reactions = {rule("fast", 500, 1.0, {term(a), term(bb)}, {term(c)})};
  Simulation sim(b.s);
  for (int frame = 0; frame < 5; ++frame) {
    sim.run(2);
    const Frame f = sim.frame();
    const std::size_t used_a = 1500 - count_kind(f, int32_t(a)), used_b = 1000 - count_kind(f, int32_t(bb));
    CHECK(used_a == used_b);
    CHECK(count_kind(f, int32_t(c)) == used_a);
    CHECK(f.reaction_events[0] == used_a);
    if (frame == 0) CHECK(used_a > 100);
  }
  Simulation again(b.s);
  again.run(10);
  CHECK(again.frame().reaction_events == sim.frame().reaction_events);  // deterministic
}

TEST_CASE("binding puts a species on a membrane; transport moves it to an ancestor's") {
  SetupBuilder b(3, 100, Boundary::periodic, 0.001, 13);
  b.s.repulsion = 0;
  const uint32_t cell = b.kind("cell", true, 40, 2, 0);
  const uint32_t lyso = b.kind("lysosome", true, 10, 1, 0);
  const uint32_t ligand = b.kind("ligand", false, 0.5, 0.5, 5);
  const uint32_t bound = b.kind("bound", false, 0.5, 0.5, 1);
  b.s.kinds[bound].membrane = true;
  const uint32_t receptor = b.kind("receptor", false, 0.5, 0.5, 5);
  b.s.kinds[receptor].membrane = true;
  const uint32_t free_r = b.kind("free_receptor", false, 0.5, 0.5, 5);
  const int64_t c = b.add(cell, {50, 50, 50});
  const int64_t l = b.add(lyso, {50, 50, 50}, c);
  std::mt19937_64 rng(14);
  std::normal_distribution<double> n01(0, 1);
  for (int k = 0; k < 300; ++k) {  // ligands outside the cell, 0.1 off its outer surface
    Vec d{n01(rng), n01(rng), n01(rng)};
    const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    b.add(ligand, {50 + d[0] / len * 40.6, 50 + d[1] / len * 40.6, 50 + d[2] / len * 40.6});
  }
  for (int k = 0; k < 100; ++k) b.add(free_r, {50 + 3 + 0.01 * k, 50, 50}, l);  // in the lysosome
  b.s.reactions = {
      rule("binding", 200, 1.5, {term(ligand), term(cell)}, {term(bound, Site::Where::on, cell)}),
      rule("recycling", 50, 0, {term(free_r, Site::Where::in, lyso)},
           {term(receptor, Site::Where::on, cell)})};
  Simulation sim(b.s);
  sim.run(100);
  const Frame f = by_id(sim.frame());
  std::size_t on_cell = 0, recycled = 0;
  for (std::size_t i = 0; i < f.id.size(); ++i) {
    if (f.id[i] < 0) continue;
    if (f.kind[i] == int32_t(bound) || f.kind[i] == int32_t(receptor)) {
      CHECK(f.membrane[i] == c);
      CHECK(f.parent[i] == -1);
      const double r = std::sqrt(SetupBuilder::distance2(b.s, f.position[i], f.position[std::size_t(c)]));
      CHECK(std::abs(r - 39) < 1e-6);  // the mid-surface
      (f.kind[i] == int32_t(bound) ? on_cell : recycled) += 1;
    }
  }
  CHECK(on_cell > 100);
  CHECK(recycled > 90);
  CHECK(f.reaction_events[0] == on_cell);
  CHECK(f.reaction_events[1] == recycled);
}

namespace {

// Geometric consistency of a frame whose nesting changes (births, deaths, fusions),
// independent of the engine: by id, (A) every free body's centre (a compartment's whole
// mid-surface ball) is inside its parent's mid-surface, (B) outside its sibling
// compartments' mid-surface balls (and sibling compartments' balls are disjoint), every
// bound body sits on its membrane's mid-surface with its membrane's parent, and every
// parent or membrane is a live compartment. Returns the number of violations; `what`
// names the first.
std::size_t nesting_violations(const Setup& s, const Frame& f, std::string& what) {
  std::unordered_map<int64_t, std::size_t> slot;
  for (std::size_t i = 0; i < f.id.size(); ++i)
    if (f.id[i] >= 0) slot[f.id[i]] = i;
  const auto comp = [&](std::size_t i) { return s.kinds[std::size_t(f.kind[i])].compartment; };
  const auto mid = [&](std::size_t i) { return f.radius[i] - 0.5 * f.thickness[i]; };
  const auto dist = [&](std::size_t a, std::size_t b) {
    return std::sqrt(SetupBuilder::distance2(s, f.position[a], f.position[b]));
  };
  std::size_t bad = 0;
  const auto fail = [&](const std::string& w) {
    if (!bad++) what = "step " + std::to_string(f.step) + ": " + w;
  };
  std::vector<std::size_t> free_bodies;
  for (std::size_t i = 0; i < f.id.size(); ++i) {
    if (f.id[i] < 0) continue;
    const std::string who = "body " + std::to_string(f.id[i]);
    if (f.membrane[i] >= 0) {
      auto m = slot.find(f.membrane[i]);
      if (m == slot.end() || !comp(m->second)) {
        fail(who + " is bound to no live compartment");
        continue;
      }
      if (std::abs(dist(i, m->second) - mid(m->second)) > 1e-6 * (1 + mid(m->second)))
        fail(who + " is off its membrane's mid-surface");
      if (f.parent[i] != f.parent[m->second]) fail(who + " has not its membrane's parent");
      continue;
    }
    free_bodies.push_back(i);
    const double si = comp(i) ? mid(i) : 0.0;
    if (f.parent[i] >= 0) {
      auto p = slot.find(f.parent[i]);
      if (p == slot.end() || !comp(p->second)) {
        fail(who + " has no live parent compartment");
        continue;
      }
      if (!(dist(i, p->second) + si < mid(p->second))) fail(who + " is not inside its parent");
    }
  }
  for (std::size_t a = 0; a < free_bodies.size(); ++a)
    for (std::size_t b = a + 1; b < free_bodies.size(); ++b) {
      const std::size_t i = free_bodies[a], j = free_bodies[b];
      if (f.parent[i] != f.parent[j] || (!comp(i) && !comp(j))) continue;
      const double need = (comp(i) ? mid(i) : 0.0) + (comp(j) ? mid(j) : 0.0);
      if (dist(i, j) < need)
        fail("siblings " + std::to_string(f.id[i]) + " and " + std::to_string(f.id[j]) + " overlap");
    }
  return bad;
}

Vec on_sphere(const Vec& c, double r, std::mt19937_64& rng) {
  std::normal_distribution<double> n01(0, 1);
  Vec d{n01(rng), n01(rng), n01(rng)};
  const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  return {c[0] + d[0] / len * r, c[1] + d[1] / len * r, c[2] + d[2] / len * r};
}

}  // namespace

TEST_CASE("budding: new compartments carry their species; bodies conserved, nesting kept" *
          doctest::timeout(300)) {
  SetupBuilder b(3, 200, Boundary::periodic, 0.01, 31);
  b.s.repulsion = 10;
  b.s.dt_limit = DtLimit::stable;  // events are checked here, not contact statistics
  const uint32_t cell = b.kind("cell", true, 80, 4, 0);
  const uint32_t ves = b.kind("vesicle", true, 8, 1, 2);
  const uint32_t lyso = b.kind("lysosome", true, 20, 2, 0.5);
  const uint32_t cpx = b.kind("complex", false, 1.5, 1.5, 1);
  b.s.kinds[cpx].membrane = true;
  const uint32_t rec = b.kind("receptor", false, 1.5, 1.5, 1);
  b.s.kinds[rec].membrane = true;
  const uint32_t cargo = b.kind("cargo", false, 1, 1, 5);
  const uint32_t crowd = b.kind("crowd", false, 2, 2, 5);
  const Vec centre{100, 100, 100};
  const int64_t c = b.add(cell, centre);
  std::mt19937_64 rng(32);
  Vec p;
  for (int k = 0; k < 4; ++k)
    if (b.place(rng, 20, c, p)) b.add(lyso, p, c);
  for (int k = 0; k < 300; ++k)
    if (b.place(rng, 2, c, p)) b.add(crowd, p, c);
  const double m = b.mid(c);
  for (int k = 0; k < 40; ++k) b.add(cpx, on_sphere(centre, m, rng), -1, c);
  for (int k = 0; k < 20; ++k) b.add(rec, on_sphere(centre, m, rng), -1, c);
  b.s.capacity = b.s.bodies.size() + 100;
  b.s.reactions = {
      rule("bud", 5, 0, {term(cpx, Site::Where::on, cell)}, {term(ves), term(cpx, Site::Where::on, ves)}),
      rule("engulf", 5, 0, {term(rec, Site::Where::on, cell)},
           {term(ves, Site::Where::in, cell), term(cargo, Site::Where::in, ves)})};
  Simulation sim(b.s);
  for (int frame = 0; frame < 30; ++frame) {
    sim.run(20);
    const Frame f = sim.frame();
    std::string what;
    CHECK_MESSAGE(nesting_violations(b.s, f, what) == 0, what);
    const std::size_t vesicles = count_kind(f, int32_t(ves));
    REQUIRE(f.reaction_events.size() == 2);
    CHECK(vesicles == f.reaction_events[0] + f.reaction_events[1]);  // one per bud
    CHECK(count_kind(f, int32_t(cpx)) == 40);                        // carried, not lost
    CHECK(count_kind(f, int32_t(cargo)) == f.reaction_events[1]);
    CHECK(count_kind(f, int32_t(rec)) == 20 - f.reaction_events[1]);
    std::unordered_map<int64_t, int32_t> kind_of;
    for (std::size_t i = 0; i < f.id.size(); ++i)
      if (f.id[i] >= 0) kind_of[f.id[i]] = f.kind[i];
    std::unordered_map<int64_t, int> carried;
    for (std::size_t i = 0; i < f.id.size(); ++i) {
      if (f.id[i] < 0) continue;
      if (f.kind[i] == int32_t(cpx) && f.membrane[i] != int64_t(c)) {
        CHECK(kind_of[f.membrane[i]] == int32_t(ves));
        ++carried[f.membrane[i]];
      }
      if (f.kind[i] == int32_t(cargo)) {
        CHECK(kind_of[f.parent[i]] == int32_t(ves));
        ++carried[f.parent[i]];
      }
      if (f.kind[i] == int32_t(ves)) CHECK(f.parent[i] == c);
    }
    for (const auto& [v, n] : carried) CHECK(n == 1);  // each bud carries its one species
    CHECK(carried.size() == vesicles);
    if (frame == 29) {
      MESSAGE("buds: " << f.reaction_events[0] << " + " << f.reaction_events[1] << " of 60");
      CHECK(f.reaction_events[0] + f.reaction_events[1] > 30);
      CHECK(f.next_id == b.s.bodies.size() + vesicles);  // new ids, never reused
    }
  }
  Simulation again(b.s);
  again.run(600);
  CHECK(again.frame().id == sim.frame().id);  // deterministic for the seed
  CHECK(again.frame().position == sim.frame().position);
}

TEST_CASE("fusion: volume adds up, contents and membrane bodies move in, nesting kept" *
          doctest::timeout(300)) {
  SetupBuilder b(3, 140, Boundary::periodic, 0.005, 41);
  b.s.repulsion = 2;
  b.s.dt_limit = DtLimit::stable;  // events are checked here, not contact statistics
  const uint32_t cell = b.kind("cell", true, 60, 4, 0);
  const uint32_t lyso = b.kind("lysosome", true, 18, 2, 0.5);
  const uint32_t ves = b.kind("vesicle", true, 6, 1, 40);
  const uint32_t cargo = b.kind("cargo", false, 0.8, 0.8, 5);
  const uint32_t cpx = b.kind("complex", false, 1, 1, 1);
  b.s.kinds[cpx].membrane = true;
  const Vec centre{70, 70, 70};
  const int64_t c = b.add(cell, centre);
  std::mt19937_64 rng(42);
  Vec p;
  for (int k = 0; k < 2; ++k)
    if (b.place(rng, 18, c, p)) b.add(lyso, p, c);
  int vesicles = 0;
  for (int k = 0; k < 16; ++k) {
    if (!b.place(rng, 6, c, p)) continue;
    const int64_t v = b.add(ves, p, c);
    ++vesicles;
    b.add(cargo, {p[0] + 1, p[1], p[2]}, v);
    b.add(cargo, {p[0] - 1, p[1], p[2]}, v);
    b.add(cpx, on_sphere(p, b.mid(v), rng), -1, v);
  }
  b.s.reactions = {rule("fuse", 200, 1.0, {term(ves), term(lyso)}, {term(lyso)}),
                   rule("homotypic", 200, 0.5, {term(ves), term(ves)}, {term(ves)})};
  const auto lumen3 = [&](const Frame& f) {  // total lumen volume / (4/3 pi) inside the cell
    double v = 0;
    for (std::size_t i = 0; i < f.id.size(); ++i)
      if (f.id[i] >= 0 && f.kind[i] != int32_t(cell) && b.s.kinds[std::size_t(f.kind[i])].compartment)
        v += std::pow(f.radius[i] - f.thickness[i], 3);
    return v;
  };
  Simulation sim(b.s);
  const double v0 = lumen3(sim.frame());
  const std::size_t compartments0 = count_kind(sim.frame(), int32_t(ves)) + count_kind(sim.frame(), int32_t(lyso));
  for (int frame = 0; frame < 40; ++frame) {
    sim.run(100);
    const Frame f = sim.frame();
    std::string what;
    CHECK_MESSAGE(nesting_violations(b.s, f, what) == 0, what);
    CHECK(std::abs(lumen3(f) - v0) < 1e-9 * v0);  // l_Y'^3 = l_Y^3 + l_V^3
    const std::size_t compartments = count_kind(f, int32_t(ves)) + count_kind(f, int32_t(lyso));
    CHECK(compartments + f.reaction_events[0] + f.reaction_events[1] == compartments0);
    CHECK(count_kind(f, int32_t(lyso)) == 2);
    CHECK(count_kind(f, int32_t(cargo)) == std::size_t(2 * vesicles));  // moved in, not lost
    CHECK(count_kind(f, int32_t(cpx)) == std::size_t(vesicles));
    if (frame == 39) {
      MESSAGE("fusions: " << f.reaction_events[0] << " into lysosomes, " << f.reaction_events[1]
                          << " homotypic, of " << vesicles << " vesicles");
      CHECK(f.reaction_events[0] > 0);
      std::size_t in_lyso = 0, on_lyso = 0;
      std::unordered_map<int64_t, int32_t> kind_of;
      for (std::size_t i = 0; i < f.id.size(); ++i)
        if (f.id[i] >= 0) kind_of[f.id[i]] = f.kind[i];
      for (std::size_t i = 0; i < f.id.size(); ++i) {
        if (f.id[i] < 0) continue;
        if (f.kind[i] == int32_t(cargo) && kind_of[f.parent[i]] == int32_t(lyso)) ++in_lyso;
        if (f.kind[i] == int32_t(cpx) && kind_of[f.membrane[i]] == int32_t(lyso)) ++on_lyso;
      }
      CHECK(in_lyso > 0);
      CHECK(on_lyso > 0);
    }
  }
}

TEST_CASE("A + B <-> C reaches the detailed-balance equilibrium of the Doi model" *
          doctest::timeout(600)) {
  // C -> A + B puts B uniform in the reaction ball around A (the reverse rule's radius R),
  // so the chain satisfies detailed balance and, for point particles, c / (a b) =
  // p_on (4/3 pi R^3) / (p_off V) with the per-step probabilities p = 1 - exp(-rate dt)
  // (Erban and Chapman 2009, and the reversible Doi model of Frohner and Noe 2018).
  const double L = 10, R = 0.5, lambda = 20, k_off = 1, dt = 1e-3;
  const int N = 300;
  SetupBuilder b(3, L, Boundary::periodic, dt, 51);
  b.s.repulsion = 0;
  const uint32_t a = b.kind("A", false, 0.01, 0.01, 1);
  const uint32_t bb = b.kind("B", false, 0.01, 0.01, 1);
  const uint32_t c = b.kind("C", false, 0.01, 0.01, 1);
  std::mt19937_64 rng(52);
  scatter(b, a, N, L, rng);
  scatter(b, bb, N, L, rng);
  b.s.capacity = 2 * N + 64;
  b.s.reactions = {rule("on", lambda, R, {term(a), term(bb)}, {term(c)}),
                   rule("off", k_off, 0, {term(c)}, {term(a), term(bb)})};
  const double p_on = -std::expm1(-lambda * dt), p_off = -std::expm1(-k_off * dt);
  const double K = p_on * (4.0 / 3.0 * kPi * R * R * R) / (p_off * L * L * L);
  double lo = 0, hi = N;  // c = K (N - c)^2
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    (mid < K * (N - mid) * (N - mid) ? lo : hi) = mid;
  }
  const double expected = lo;
  Simulation sim(b.s);
  sim.run(2000);  // about 7 relaxation times
  double sum = 0;
  int frames = 0;
  for (int f = 0; f < 200; ++f) {
    sim.run(50);
    const Frame fr = sim.frame();
    const std::size_t nc = count_kind(fr, int32_t(c));
    REQUIRE(count_kind(fr, int32_t(a)) + nc == std::size_t(N));  // conserved
    REQUIRE(count_kind(fr, int32_t(bb)) + nc == std::size_t(N));
    sum += double(nc);
    ++frames;
  }
  const double measured = sum / frames;
  MESSAGE("A + B <-> C: expected <C> = " << expected << ", measured " << measured);
  CHECK(std::abs(measured - expected) < 0.04 * expected);
}

TEST_CASE("budding in a crowd pushes proteins aside, never across a membrane" *
          doctest::timeout(300)) {
  // 11% of the cell's lumen filled with proteins: ~20 of them meet a bud's ball (radius
  // 7, proteins 1.5), so without the push a bud would find its place empty with
  // probability ~e^-20, and none of the 40 would happen. With it ~16 happen in these 200
  // steps: the others wait while an earlier, slow vesicle (D 1) sits where a pushed
  // protein would go.
  SetupBuilder b(3, 160, Boundary::periodic, 0.005, 61);
  b.s.repulsion = 10;
  b.s.dt_limit = DtLimit::stable;  // events are checked here, not contact statistics
  const uint32_t cell = b.kind("cell", true, 50, 3, 0);
  const uint32_t ves = b.kind("vesicle", true, 7, 1, 1);
  const uint32_t lyso = b.kind("lysosome", true, 12, 1.5, 0.2);
  const uint32_t cpx = b.kind("complex", false, 1, 1, 0.5);
  b.s.kinds[cpx].membrane = true;
  const uint32_t crowd = b.kind("crowd", false, 1.5, 1.5, 2);
  const Vec centre{80, 80, 80};
  const int64_t c = b.add(cell, centre);
  std::mt19937_64 rng(62);
  Vec p;
  for (int k = 0; k < 3; ++k)
    if (b.place(rng, 12, c, p)) b.add(lyso, p, c);
  std::size_t crowders = 0;
  for (int k = 0; k < 3500; ++k)
    if (b.place(rng, 1.5, c, p, 50)) {
      b.add(crowd, p, c);
      ++crowders;
    }
  for (int k = 0; k < 40; ++k) b.add(cpx, on_sphere(centre, b.mid(c), rng), -1, c);
  b.s.capacity = b.s.bodies.size() + 64;
  b.s.reactions = {rule("bud", 20, 0, {term(cpx, Site::Where::on, cell)},
                        {term(ves), term(cpx, Site::Where::on, ves)})};
  Simulation sim(b.s);
  std::size_t buds = 0;
  for (int frame = 0; frame < 20; ++frame) {
    sim.run(10);
    const Frame f = sim.frame();
    std::string what;
    CHECK_MESSAGE(nesting_violations(b.s, f, what) == 0, what);
    CHECK(count_kind(f, int32_t(crowd)) == crowders);
    CHECK(count_kind(f, int32_t(cpx)) == 40);
    buds = f.reaction_events[0];
    CHECK(count_kind(f, int32_t(ves)) == buds);
  }
  MESSAGE("crowd: " << crowders << " proteins in the cell, " << buds << " buds of 40");
  CHECK(crowders > 2500);
  CHECK(buds > 10);
}

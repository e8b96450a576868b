// The receptor-recycling scenario (models/receptor_recycling.yaml, the HSX paper's
// Figure 1) loaded from its file and run on the engine: in every frame the receptors are
// conserved wherever they are, nothing is on the wrong side of a membrane (a geometric
// checker that knows nothing of how the engine keeps its invariants), and the event
// counters agree with the bodies; in its first 10,000 steps (20 us) a ligand binds, a
// vesicle buds and a vesicle fuses with a lysosome.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim;
using nestsim::testing::SetupBuilder;

namespace {

const std::string kScenario = NESTSIM_SOURCE_DIR "/models/receptor_recycling.yaml";
const std::string kDefault = NESTSIM_SOURCE_DIR "/models/default.yaml";

// Kind and rule indices by name, so the test follows the file.
uint32_t kind_of(const model::Setup& s, const std::string& name) {
  for (std::size_t k = 0; k < s.kinds.size(); ++k)
    if (s.kinds[k].name == name) return uint32_t(k);
  FAIL("the scenario has no kind '" << name << "'");
  return 0;
}

std::size_t rule_of(const model::Setup& s, const std::string& name) {
  for (std::size_t r = 0; r < s.reactions.size(); ++r)
    if (s.reactions[r].name == name) return r;
  FAIL("the scenario has no reaction '" << name << "'");
  return 0;
}

// A frame indexed by body id.
struct ById {
  const model::Setup& s;
  const model::Frame& f;
  std::unordered_map<int64_t, std::size_t> slot;
  ById(const model::Setup& setup, const model::Frame& frame) : s(setup), f(frame) {
    for (std::size_t i = 0; i < f.id.size(); ++i)
      if (f.id[i] >= 0) slot[f.id[i]] = i;
  }
  const model::Kind& kind(std::size_t i) const { return s.kinds[std::size_t(f.kind[i])]; }
  bool compartment(std::size_t i) const { return kind(i).compartment; }
  std::string name(std::size_t i) const { return kind(i).name + " " + std::to_string(f.id[i]); }
  double mid(std::size_t i) const { return f.radius[i] - 0.5 * f.thickness[i]; }
  double lumen(std::size_t i) const { return f.radius[i] - f.thickness[i]; }
  double dist(std::size_t a, std::size_t b) const {
    return std::sqrt(SetupBuilder::distance2(s, f.position[a], f.position[b]));
  }
  // The slot of a live compartment with this id, or -1.
  long live_compartment(int64_t id) const {
    const auto it = slot.find(id);
    return it != slot.end() && compartment(it->second) ? long(it->second) : -1;
  }
};

// Violations of the nesting geometry, by id, independent of the engine: every parent or
// membrane is a live compartment; a bound body is a membrane species on its membrane's
// mid-surface (r - q/2) with its membrane's parent; a free body is not a membrane
// species, its centre (a compartment: its whole mid-surface ball) lies inside its
// parent's mid-surface, and outside the mid-surface ball of every compartment that
// shares its parent. `what` names the first violation.
std::size_t nesting_violations(const ById& b, std::string& what) {
  const model::Frame& f = b.f;
  std::size_t bad = 0;
  const auto fail = [&](const std::string& w) {
    if (!bad++) what = "step " + std::to_string(f.step) + ": " + w;
  };
  const double eps = 1e-9;
  std::unordered_map<int64_t, std::vector<std::size_t>> free_by_parent, compartments_by_parent;
  for (std::size_t i = 0; i < f.id.size(); ++i) {
    if (f.id[i] < 0) continue;
    const std::string who = b.name(i);
    const bool membrane_species = b.kind(i).membrane;
    if (f.membrane[i] >= 0) {
      const long m = b.live_compartment(f.membrane[i]);
      if (m < 0) {
        fail(who + " is bound to no live compartment");
        continue;
      }
      if (!membrane_species) fail(who + " is bound but not a membrane species");
      const double off = std::abs(b.dist(i, std::size_t(m)) - b.mid(std::size_t(m)));
      if (off > 1e-6 * (1 + b.mid(std::size_t(m))))
        fail(who + " is " + std::to_string(off) + " off its membrane's mid-surface");
      if (f.parent[i] != f.parent[std::size_t(m)]) fail(who + " has not its membrane's parent");
      continue;
    }
    if (membrane_species) fail(who + " is a membrane species off any membrane");
    free_by_parent[f.parent[i]].push_back(i);
    if (b.compartment(i)) compartments_by_parent[f.parent[i]].push_back(i);
    if (f.parent[i] < 0) continue;
    const long p = b.live_compartment(f.parent[i]);
    if (p < 0) {
      fail(who + " has no live parent compartment");
      continue;
    }
    // The whole ball in the parent's lumen (the HSX relation: not in its membrane).
    const double reach = b.dist(i, std::size_t(p)) + f.radius[i];
    const double lumen = f.radius[std::size_t(p)] - f.thickness[std::size_t(p)];
    if (reach > lumen + eps)
      fail(who + " reaches " + std::to_string(reach) +
           " from its parent's centre, past its lumen " + std::to_string(lumen));
  }
  for (const auto& [parent, compartments] : compartments_by_parent)
    for (std::size_t c : compartments)
      for (std::size_t i : free_by_parent[parent]) {
        if (i == c) continue;
        const double need = f.radius[c] + f.radius[i];
        if (b.dist(i, c) < need - eps)
          fail(b.name(i) + " intersects " + b.name(c) + ", its sibling");
      }
  return bad;
}

// Receptors (free or with their ligand) by where they are: "receptor on vesicle", ...
std::map<std::string, std::size_t> receptors_by_place(const ById& b, uint32_t receptor,
                                                      uint32_t complex) {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < b.f.id.size(); ++i) {
    if (b.f.id[i] < 0 || (b.f.kind[i] != int32_t(receptor) && b.f.kind[i] != int32_t(complex)))
      continue;
    const long m = b.f.membrane[i] >= 0 ? b.live_compartment(b.f.membrane[i]) : -1;
    const std::string where = m >= 0 ? "on " + b.kind(std::size_t(m)).name : "off";
    ++out[b.kind(i).name + " " + where];
  }
  return out;
}

std::size_t count_kind(const model::Frame& f, uint32_t kind) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < f.id.size(); ++i) n += f.id[i] >= 0 && f.kind[i] == int32_t(kind);
  return n;
}

// Sum of l^3 (l = r - q, the lumen radius) over the compartments of these kinds: fusion
// keeps it (l_Y'^3 = l_Y^3 + l_V^3), every bud adds one vesicle's.
double lumen_cubed(const ById& b, const std::vector<uint32_t>& kinds) {
  double v = 0;
  for (std::size_t i = 0; i < b.f.id.size(); ++i)
    for (uint32_t k : kinds)
      if (b.f.id[i] >= 0 && b.f.kind[i] == int32_t(k)) v += std::pow(b.lumen(i), 3);
  return v;
}

}  // namespace

TEST_CASE("the default model is the receptor-recycling scenario") {
  const model::Model scenario = model::load_model(kScenario), fallback = model::load_model(kDefault);
  const model::Setup a = model::make_setup(scenario), b = model::make_setup(fallback);
  CHECK(fallback.output_file == "out.h5");  // ./build.sh run and the README read out.h5
  CHECK(a.box == b.box);
  CHECK(a.boundary == b.boundary);
  CHECK(a.dt == b.dt);
  CHECK(a.steps == b.steps);
  CHECK(a.seed == b.seed);
  CHECK(a.output_every == b.output_every);
  CHECK(a.repulsion == b.repulsion);
  CHECK(a.capacity == b.capacity);
  REQUIRE(a.kinds.size() == b.kinds.size());
  for (std::size_t k = 0; k < a.kinds.size(); ++k) {
    CAPTURE(a.kinds[k].name);
    CHECK(a.kinds[k].name == b.kinds[k].name);
    CHECK(a.kinds[k].compartment == b.kinds[k].compartment);
    CHECK(a.kinds[k].radius == b.kinds[k].radius);
    CHECK(a.kinds[k].thickness == b.kinds[k].thickness);
    CHECK(a.kinds[k].diffusion == b.kinds[k].diffusion);
    CHECK(a.kinds[k].membrane == b.kinds[k].membrane);
  }
  REQUIRE(a.bodies.size() == b.bodies.size());
  bool same_bodies = true;
  for (std::size_t i = 0; i < a.bodies.size(); ++i)
    same_bodies = same_bodies && a.bodies[i].kind == b.bodies[i].kind &&
                  a.bodies[i].position == b.bodies[i].position &&
                  a.bodies[i].parent == b.bodies[i].parent &&
                  a.bodies[i].membrane == b.bodies[i].membrane;
  CHECK(same_bodies);
  REQUIRE(scenario.reactions.size() == fallback.reactions.size());
  for (std::size_t r = 0; r < scenario.reactions.size(); ++r) {
    CHECK(scenario.reactions[r].name == fallback.reactions[r].name);
    CHECK(scenario.reactions[r].rule == fallback.reactions[r].rule);
    CHECK(scenario.reactions[r].rate == fallback.reactions[r].rate);
    CHECK(scenario.reactions[r].radius == fallback.reactions[r].radius);
  }
}

TEST_CASE("the nesting checker sees a body on the wrong side of a membrane") {
  const model::Setup setup = model::make_setup(model::load_model(kScenario));
  const model::Frame start = sim::Simulation(setup).frame();
  std::string what;
  REQUIRE(nesting_violations(ById(setup, start), what) == 0);
  const ById b(setup, start);
  // The body of a kind in the lowest slot.
  const auto first = [&](const std::string& kind) {
    const int32_t k = int32_t(kind_of(setup, kind));
    for (std::size_t i = 0; i < start.id.size(); ++i)
      if (start.id[i] >= 0 && start.kind[i] == k) return i;
    FAIL("no " << kind);
    return std::size_t(0);
  };
  const std::size_t cell = first("cell"), ilv = first("ilv");
  const auto broken = [&](std::size_t i, const std::array<double, 3>& to) {
    model::Frame g = start;
    g.position[i] = to;
    return nesting_violations(ById(setup, g), what);
  };
  const std::array<double, 3> centre = start.position[cell];
  SUBCASE("a crowder leaves the cell") {
    CHECK(broken(first("crowder"), {centre[0] + b.mid(cell) + 1, centre[1], centre[2]}) == 1);
  }
  SUBCASE("a ligand enters the cell") {
    CHECK(broken(first("ligand"), {centre[0] + b.mid(cell) - 1, centre[1], centre[2]}) == 1);
  }
  SUBCASE("a hydrolase enters an intraluminal vesicle") {
    std::size_t h = 0;  // a hydrolase sharing the vesicle's lysosome
    for (std::size_t i = 0; i < start.id.size(); ++i)
      if (start.id[i] >= 0 && start.kind[i] == int32_t(kind_of(setup, "hydrolase")) &&
          start.parent[i] == start.parent[ilv])
        h = i;
    REQUIRE(start.kind[h] == int32_t(kind_of(setup, "hydrolase")));
    CHECK(broken(h, start.position[ilv]) == 1);
  }
  SUBCASE("a receptor lifts off the membrane") {
    const std::size_t r = first("receptor");
    std::array<double, 3> off = start.position[r];
    for (int k = 0; k < 3; ++k) off[k] = centre[k] + (off[k] - centre[k]) * (1 + 1e-3);
    CHECK(broken(r, off) == 1);
  }
}

TEST_CASE(
    "receptor recycling, 10,000 steps: receptors conserved, membranes respected, "
    "binding, budding and fusion happen" *
    doctest::timeout(300)) {
  const model::Setup setup = model::make_setup(model::load_model(kScenario));
  const uint32_t cell = kind_of(setup, "cell"), lysosome = kind_of(setup, "lysosome");
  const uint32_t vesicle = kind_of(setup, "vesicle"), ligand = kind_of(setup, "ligand");
  const uint32_t receptor = kind_of(setup, "receptor"), complex = kind_of(setup, "complex");
  const std::size_t binding = rule_of(setup, "binding"), budding = rule_of(setup, "budding");
  const std::size_t fusion = rule_of(setup, "fusion"), degradation = rule_of(setup, "degradation");
  const std::size_t rules = setup.reactions.size();

  sim::Simulation sim(setup);
  const model::Frame first = sim.frame();
  const ById start(setup, first);
  const std::size_t receptors0 = count_kind(first, receptor) + count_kind(first, complex);
  const std::size_t ligands0 = count_kind(first, ligand) + count_kind(first, complex);
  const std::size_t vesicles0 = count_kind(first, vesicle),
                    lysosomes0 = count_kind(first, lysosome);
  const double volume0 = lumen_cubed(start, {lysosome, vesicle});
  const double bud_volume =
      std::pow(setup.kinds[vesicle].radius - setup.kinds[vesicle].thickness, 3);
  REQUIRE(receptors0 > 0);
  REQUIRE(count_kind(first, cell) == 1);
  std::string what;
  CHECK_MESSAGE(nesting_violations(start, what) == 0, what);

  const uint64_t steps = 10000, every = 500;
  model::Frame f;
  while (sim.step() < steps) {
    sim.run(every);
    f = sim.frame();
    const ById b(setup, f);
    CAPTURE(f.step);
    REQUIRE(f.reaction_events.size() == rules);  // one counter per rule, in file order
    const auto& events = f.reaction_events;

    // Receptors, free or bound to their ligand, wherever they are.
    const auto places = receptors_by_place(b, receptor, complex);
    std::size_t receptors = 0;
    for (const auto& [where, n] : places) {
      CHECK_MESSAGE(where.find(" off") == std::string::npos, where);
      receptors += n;
    }
    CHECK(receptors == receptors0);
    // Ligands: each is free, in a complex, or degraded (the only rule that removes one).
    CHECK(count_kind(f, ligand) + count_kind(f, complex) + events[degradation] == ligands0);
    // Compartments: one vesicle per bud, one less per fusion; lumen volume adds up.
    CHECK(count_kind(f, cell) == 1);
    CHECK(count_kind(f, lysosome) == lysosomes0);
    CHECK(count_kind(f, vesicle) + events[fusion] == vesicles0 + events[budding]);
    const double volume = lumen_cubed(b, {lysosome, vesicle});
    CHECK(volume == doctest::Approx(volume0 + double(events[budding]) * bud_volume).epsilon(1e-9));

    CHECK_MESSAGE(nesting_violations(b, what) == 0, what);
  }

  std::string summary;
  for (std::size_t r = 0; r < rules; ++r)
    summary += setup.reactions[r].name + " " + std::to_string(f.reaction_events[r]) + ", ";
  for (const auto& [where, n] : receptors_by_place(ById(setup, f), receptor, complex))
    summary += where + ": " + std::to_string(n) + ", ";
  MESSAGE("after " << f.step << " steps: " << summary);
  CHECK(f.reaction_events[binding] >= 1);
  CHECK(f.reaction_events[budding] >= 1);
  CHECK(f.reaction_events[fusion] >= 1);
}

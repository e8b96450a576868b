// Time-step classes (models/README.md, "Time-step classes"; nestsim/model/time_step.h):
// the `step:` key and `simulation.step_classes: auto`, the dt rules at K dt, and the
// moves of a kind of class K against an independent reference: the Philox draw of the
// step (nestsim/sim/philox.h) scaled by sqrt(2 D K dt), at the steps K divides, zero at
// the others; contents carried by a compartment at its own steps.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/philox.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim::model;
using namespace nestsim::sim;
using namespace nestsim::testing;

namespace {

// A cell of mid-surface radius 50 nm holding ligands (D 10) and receptors on its
// membrane (D 0.1), contacts `contacts`, with the lines `extra_sim` in `simulation:` and
// `ligand_step` / `receptor_step` as the kinds' `step:` (0: none).
std::string cell_model(double dt, const std::string& extra_sim, int ligand_step,
                       int receptor_step, const std::string& contacts = "none") {
  char text[2048];
  const std::string ls = ligand_step ? ", step: " + std::to_string(ligand_step) : "";
  const std::string rs = receptor_step ? ", step: " + std::to_string(receptor_step) : "";
  std::snprintf(text, sizeof text,
                "nestsim: 1\nunits: {length: nm, time: us}\n"
                "box: {size: [4000, 4000, 4000], boundary: periodic}\n"
                "simulation: {dt: %.17g, steps: 10, seed: 7, output: {every: 5, file: t.h5}%s}\n"
                "compartments:\n  cell: {radius: 51, thickness: 2, diffusion: 0.01}\n"
                "species:\n  ligand: {radius: 2.5, diffusion: 10%s}\n"
                "  receptor: {radius: 2.5, diffusion: 0.1, membrane: true%s}\n"
                "interactions: {contacts: %s}\n"
                "place:\n  - {compartment: cell, at: [2000, 2000, 2000]}\n"
                "  - {species: receptor, count: 5, on: cell}\n"
                "  - {species: ligand, count: 5, in: cell}\n",
                dt, extra_sim.c_str(), ls.c_str(), rs.c_str(), contacts.c_str());
  return text;
}

// A displacement read from positions of magnitude <= 2000 nm against its reference: equal
// to within the rounding of the positions (ulp 2.3e-13 there).
bool same_move(double measured, double reference) {
  return std::fabs(measured - reference) <= 1e-11;
}

std::string refusal(const std::string& text) {
  try {
    parse_model(text, "m.yaml");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("step classes: the step key, its values, and the classes a setup gets") {
  const Model m = parse_model(cell_model(0.1, "", 0, 8), "m.yaml");
  const Setup s = make_setup(m);
  CHECK(s.kinds[uint32_t(m.kind_index("cell"))].step == 1);
  CHECK(s.kinds[uint32_t(m.kind_index("ligand"))].step == 1);
  CHECK(s.kinds[uint32_t(m.kind_index("receptor"))].step == 8);
  for (const char* bad : {"3", "0", "2048", "-4", "two"}) {
    std::string text = cell_model(0.1, "", 0, 1);
    text.replace(text.find("membrane: true, step: 1"), 23, std::string("membrane: true, step: ") + bad);
    const std::string why = refusal(text);
    CHECK_MESSAGE(why.find("species.receptor.step") != std::string::npos, bad << ": " << why);
  }
  const std::string why = refusal(cell_model(0.1, ", step_classes: sometimes", 0, 0));
  CHECK_MESSAGE(why.find("simulation.step_classes") != std::string::npos, why);
}

// The membrane rule at K dt: 5 (K D) dt / R^2 <= 0.01, R = 50, D = 0.1: K dt <= 50 us.
TEST_CASE("step classes: a kind of class K is held to the dt rules at K dt") {
  CHECK(refusal(cell_model(6.25 * 0.99, "", 0, 8)).empty());
  const std::string m = refusal(cell_model(6.25 * 1.01, "", 0, 8));
  CHECK_MESSAGE(m.find("simulation.dt: too large for membrane diffusion") != std::string::npos, m);
  CHECK_MESSAGE(m.find("time-step class K counts at K dt") != std::string::npos, m);
  // Soft contacts: (D_a K_a + D_b K_b) x repulsion x dt <= 0.1 for the ligands (D 10):
  // with repulsion 10 and K = 2, dt <= 0.1 / (2 x 20 x 10) = 2.5e-4.
  std::string soft = cell_model(2.5e-4 * 0.99, "", 2, 0, "soft");
  CHECK(refusal(soft).empty());
  soft = cell_model(2.5e-4 * 1.01, "", 2, 0, "soft");
  CHECK(refusal(soft).find("too large for accurate contacts") != std::string::npos);
  // The engine refuses a setup built in code likewise, and a step that is no class.
  Setup s = make_setup(parse_model(cell_model(2.5e-4 * 0.99, "", 2, 0, "soft"), "m.yaml"));
  s.dt = 2.5e-4 * 1.01;
  CHECK_THROWS_AS(Simulation{s}, std::invalid_argument);
  s.dt = 1e-4;
  s.kinds[0].step = 3;
  CHECK_THROWS_AS(Simulation{s}, std::invalid_argument);
}

// The rule of time_step.h computed here from its text: K the largest power of two with
// K D <= D_max (10), K <= 64, and the membrane rule 5 K D dt / R^2 <= 0.01 (R = 50; the
// box is far larger than the images rule asks).
TEST_CASE("step classes: automatic classes follow the accuracy rule") {
  for (double dt : {0.01, 1.0, 4.0}) {
    const Model m = parse_model(cell_model(dt, ", step_classes: auto", 0, 0), "m.yaml");
    const std::vector<uint32_t> k = step_classes(m);
    const auto expect = [&](double D, bool membrane) {
      uint32_t c = 1;
      while (2 * c <= 64 && 2 * c * D <= 10 &&
             (!membrane || 5 * (2 * c) * D * dt / (50.0 * 50.0) <= 0.01))
        c *= 2;
      return c;
    };
    CAPTURE(dt);
    CHECK(k[std::size_t(m.kind_index("ligand"))] == 1);
    CHECK(k[std::size_t(m.kind_index("cell"))] == expect(0.01, false));  // 64
    CHECK(k[std::size_t(m.kind_index("receptor"))] == expect(0.1, true));
    CHECK(make_setup(m).kinds[std::size_t(m.kind_index("receptor"))].step ==
          expect(0.1, true));
  }
  // A kind's own `step:` stands under auto.
  const Model m = parse_model(cell_model(0.1, ", step_classes: auto", 0, 2), "m.yaml");
  CHECK(step_classes(m)[std::size_t(m.kind_index("receptor"))] == 2);
  // Without auto, kinds without `step:` are at 1.
  const Model g = parse_model(cell_model(0.1, "", 0, 0), "m.yaml");
  for (uint32_t c : step_classes(g)) CHECK(c == 1);
}

// Free bodies, no contacts, no forces: each move is the Philox draw of (seed, step, id)
// times sqrt(2 D K dt) at the steps K divides, and zero at the others.
TEST_CASE("step classes: moves at the class's steps, of K dt, against the Philox reference") {
  const double box = 1000, dt = 0.01;
  SetupBuilder b(3, box, Boundary::periodic, dt, 99);
  b.s.contacts = Contacts::none;
  const uint32_t steps[4] = {1, 2, 4, 8};
  const double D[4] = {10, 3, 1, 0.5};
  std::vector<uint32_t> kind_of;
  for (int c = 0; c < 4; ++c) {
    const uint32_t k = b.kind("k" + std::to_string(c), false, 1, 1, D[c]);
    b.s.kinds[k].step = steps[c];
    for (int n = 0; n < 5; ++n) {
      b.add(k, {100.0 + 150 * c, 100.0 + 150 * n, 500});
      kind_of.push_back(k);
    }
  }
  Simulation sim(b.s);
  std::vector<Vec> last = by_id(sim.frame()).position;
  uint64_t moved = 0, rested = 0;
  for (uint64_t step = 0; step < 24; ++step) {
    sim.run(1);
    const std::vector<Vec> now = by_id(sim.frame()).position;
    for (std::size_t i = 0; i < now.size(); ++i) {
      const uint32_t K = b.s.kinds[kind_of[i]].step;
      double z[4] = {0, 0, 0, 0};
      normals4(99, step, i, RandomPurpose::brownian, z);
      const bool moves = step % K == 0;
      const double sigma = moves ? std::sqrt(2 * b.s.kinds[kind_of[i]].diffusion * K * dt) : 0;
      for (int a = 0; a < 3; ++a) {
        const double d = now[i][std::size_t(a)] - last[i][std::size_t(a)];
        CHECK_MESSAGE(same_move(d, sigma * z[a]), d << " against " << sigma * z[a]);
      }
      (moves ? moved : rested) += 1;
    }
    last = now;
  }
  CHECK(moved == 24 * 5 + 12 * 5 + 6 * 5 + 3 * 5);
  CHECK(rested == 4 * 24 * 5 - moved);
}

// A compartment of class 8 carries its contents (class 1) at its own steps: a content's
// displacement over a step is its own draw plus the compartment's when the compartment
// moves (contacts none: no rejection in a roomy lumen).
TEST_CASE("step classes: contents move with their compartment at its steps") {
  const double dt = 0.01;
  SetupBuilder b(3, 2000, Boundary::periodic, dt, 5);
  b.s.contacts = Contacts::none;
  const uint32_t ves = b.kind("vesicle", true, 200, 2, 1);
  b.s.kinds[ves].step = 8;
  const uint32_t p = b.kind("p", false, 1, 1, 0.1);
  const int64_t v = b.add(ves, {1000, 1000, 1000});
  const int64_t c = b.add(p, {1000, 1000, 1000}, v);
  Simulation sim(b.s);
  std::vector<Vec> last = by_id(sim.frame()).position;
  for (uint64_t step = 0; step < 20; ++step) {
    sim.run(1);
    const std::vector<Vec> now = by_id(sim.frame()).position;
    double zv[4], zc[4];
    normals4(5, step, uint64_t(v), RandomPurpose::brownian, zv);
    normals4(5, step, uint64_t(c), RandomPurpose::brownian, zc);
    const double sv = step % 8 == 0 ? std::sqrt(2 * 1 * 8 * dt) : 0.0;
    const double sc = std::sqrt(2 * 0.1 * dt);
    for (int a = 0; a < 3; ++a) {
      const std::size_t ax = std::size_t(a);
      CHECK(same_move(now[std::size_t(v)][ax] - last[std::size_t(v)][ax], sv * zv[a]));
      CHECK(same_move(now[std::size_t(c)][ax] - last[std::size_t(c)][ax], sv * zv[a] + sc * zc[a]));
    }
    last = now;
  }
}

// models/large_step.yaml under `step_classes: auto`: the rule computed here from its
// kinds (D_max 45: ligand, vesicle; dt 1 us; the membrane rule with the ilv's mid-surface
// radius 23 nm binds the membrane species: 5 K D / 23^2 <= 0.01).
TEST_CASE("step classes: auto on models/large_step.yaml") {
  std::ifstream in(NESTSIM_SOURCE_DIR "/models/large_step.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string at = "  seed: 2017\n";
  REQUIRE(yaml.find(at) != std::string::npos);
  yaml.replace(yaml.find(at), at.size(), at + "  step_classes: auto\n");
  const Model m = parse_model(yaml, "large_step.yaml");
  const Setup s = make_setup(m);
  const auto expect = [&](const Kind& k) {
    uint32_t c = 1;
    const double R = 25 - 2;  // the ilv, the smallest compartment
    while (k.diffusion > 0 && 2 * c <= 64 && 2 * c * k.diffusion <= 45 &&
           (!k.membrane || 5 * (2 * c) * k.diffusion * 1.0 / (R * R) <= 0.01))
      c *= 2;
    return c;
  };
  for (const Kind& k : s.kinds) {
    MESSAGE(k.name << ": D " << k.diffusion << ", class " << k.step);
    CHECK_MESSAGE(k.step == expect(k), k.name);
  }
  CHECK(s.kinds[std::size_t(m.kind_index("lysosome"))].step == 64);
  CHECK(s.kinds[std::size_t(m.kind_index("vesicle"))].step == 1);
  CHECK(s.kinds[std::size_t(m.kind_index("receptor"))].step == 1);
}

// Model files: every error kind is located (file:line:column, key path), placements
// obey nesting, units and Stokes-Einstein convert correctly.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/rates.h"

using namespace nestsim;
using nestsim::model::ModelError;

namespace {

// A valid model whose lines are known: tests replace one line to break it.
const std::string base_model = R"(nestsim: 1
units: {length: nm, time: us}
box: {size: [400, 400, 400], boundary: periodic}
simulation: {dt: 5e-5, steps: 10, seed: 7, output: {every: 5, file: t.h5}}
compartments:
  cell: {radius: 150, thickness: 8, diffusion: 0}
  ves: {radius: 20, thickness: 4, diffusion: 1}
species:
  lig: {radius: 2, diffusion: 80}
  rec: {radius: 3, diffusion: 1, membrane: true}
place:
  - {compartment: cell, at: [200, 200, 200]}
  - {compartment: ves, count: 5, in: cell}
  - {species: rec, count: 50, on: cell}
  - {species: lig, count: 100, in: cell}
  - {species: lig, count: 20, in: ves}
  - {species: lig, count: 100, outside: cell}
)";

// base_model with line `line` (1-based) replaced by `text`.
std::string with_line(int line, const std::string& text) {
  std::string out;
  int n = 1;
  std::size_t start = 0;
  while (start < base_model.size()) {
    const std::size_t end = base_model.find('\n', start);
    out += (n == line ? text : base_model.substr(start, end - start)) + "\n";
    start = end + 1;
    ++n;
  }
  return out;
}

// Line `line` (1-based) of `text`.
std::string line_of(const std::string& text, long line) {
  std::size_t start = 0;
  for (long n = 1; n < line; ++n) start = text.find('\n', start) + 1;
  return text.substr(start, text.find('\n', start) - start);
}

// Parses and places `text` expecting an error at `line`, at the column where `token`
// first appears on that line, naming `key` and containing `what`.
void expect_error(const std::string& text, long line, const std::string& token,
                  const std::string& key, const std::string& what) {
  CAPTURE(text);
  const std::size_t found = line_of(text, line).find(token);
  REQUIRE(found != std::string::npos);
  const long column = long(found) + 1;
  try {
    model::make_setup(model::parse_model(text, "model.yaml"));
    FAIL("no error; expected " << what);
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    CAPTURE(msg);
    CHECK(e.line() == line);
    CHECK(e.column() == column);
    CHECK(e.key() == key);
    const std::string prefix = "model.yaml:" + std::to_string(line) + ":" +
                               std::to_string(column) + ": " + (key.empty() ? "" : key + ": ");
    CHECK(msg.rfind(prefix, 0) == 0);
    CHECK(msg.find(what) != std::string::npos);
  }
}

double distance(const std::array<double, 3>& a, const std::array<double, 3>& b,
                const std::array<double, 3>& box, bool periodic) {
  double s = 0;
  for (int d = 0; d < 3; ++d) {
    double dx = a[d] - b[d];
    if (periodic) dx -= box[d] * std::round(dx / box[d]);
    s += dx * dx;
  }
  return std::sqrt(s);
}

bool is_ancestor(const model::Setup& s, int64_t a, int64_t of) {
  for (int64_t p = s.bodies[of].parent; p >= 0; p = s.bodies[p].parent)
    if (p == a) return true;
  return false;
}

// Checks every nesting invariant of an initial state; returns the number of bodies
// checked against a parent lumen.
void check_nesting(const model::Setup& s) {
  const bool periodic = s.boundary == model::Boundary::periodic;
  const auto& bodies = s.bodies;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    const auto& k = s.kinds[b.kind];
    CAPTURE(i);
    for (int d = 0; d < 3; ++d) {
      CHECK(b.position[d] >= (periodic ? 0 : k.radius));
      CHECK(b.position[d] <= s.box[d] - (periodic ? 0 : k.radius));
    }
    if (b.membrane >= 0) {  // centred on the mid-surface of the membrane
      const auto& host = bodies[b.membrane];
      const auto& hk = s.kinds[host.kind];
      REQUIRE(hk.compartment);
      CHECK(k.membrane);
      CHECK(distance(b.position, host.position, s.box, periodic) ==
            doctest::Approx(hk.radius - hk.thickness / 2).epsilon(1e-12));
      CHECK(b.parent == host.parent);
    } else if (b.parent >= 0) {  // fully inside the parent's lumen
      const auto& p = bodies[b.parent];
      const auto& pk = s.kinds[p.kind];
      REQUIRE(pk.compartment);
      CHECK(distance(b.position, p.position, s.box, periodic) <=
            pk.radius - pk.thickness - k.radius + 1e-9);
    }
    // The parent is the innermost compartment whose lumen holds the body: no other
    // compartment that is not an ancestor holds it.
    for (std::size_t j = 0; j < bodies.size(); ++j) {
      if (j == i) continue;
      const auto& o = bodies[j];
      const auto& ok = s.kinds[o.kind];
      const double dist = distance(b.position, o.position, s.box, periodic);
      if (is_ancestor(s, int64_t(j), int64_t(i)) || int64_t(j) == b.membrane) continue;
      if (is_ancestor(s, int64_t(i), int64_t(j)) || int64_t(i) == o.membrane) continue;
      // Neither holds the other: the two solid spheres do not overlap.
      if (dist < k.radius + ok.radius) {
        CAPTURE(j);
        FAIL_CHECK("bodies overlap");
      }
    }
  }
}

}  // namespace

TEST_CASE("the base model loads with its values and defaults") {
  const model::Model m = model::parse_model(base_model, "model.yaml");
  CHECK(m.box == std::array<double, 3>{400, 400, 400});
  CHECK(m.periodic);
  CHECK(m.dt == 5e-5);
  CHECK(m.steps == 10);
  CHECK(m.seed == 7);
  CHECK(m.output_every == 5);
  CHECK(m.output_file == "t.h5");
  CHECK(m.repulsion == 10);  // default
  REQUIRE(m.kinds.size() == 4);
  CHECK(m.kinds[0].name == "cell");
  CHECK(m.kinds[0].compartment);
  CHECK(m.kinds[3].name == "rec");
  CHECK(m.kinds[3].membrane);
  CHECK(m.kinds[2].thickness == m.kinds[2].radius);
  REQUIRE(m.place.size() == 6);
  CHECK(m.place[1].region == model::Placement::Region::in);
  CHECK(m.place[1].target == "cell");
  CHECK(m.place[1].where.line == 13);
  CHECK(m.text == base_model);

  const model::Model minimal = model::parse_model(
      "nestsim: 1\nbox: {size: [10, 10, 10]}\nspecies: {a: {radius: 1, diffusion: 0.04}}\n"
      "place: [{species: a, at: [5, 5, 5]}]\n",
      "min.yaml");
  CHECK(minimal.dt == 0.1);
  CHECK(minimal.units.length == "nm");
  CHECK(minimal.units.time == "us");
  CHECK(minimal.periodic);
  CHECK(minimal.steps == 1000);
  CHECK(minimal.output_every == 100);
  CHECK(minimal.output_file == "out.h5");
}

TEST_CASE("errors name file, line, column and key") {
  SUBCASE("unknown key at the top") {
    expect_error(with_line(2, "unit: {length: nm}"), 2, "unit", "unit", "unknown key");
  }
  SUBCASE("unknown key in a kind") {
    expect_error(with_line(7, "  ves: {radius: 20, thikness: 4, diffusion: 1}"), 7, "thikness",
                 "compartments.ves.thikness", "unknown key");
  }
  SUBCASE("unknown key in a placement") {
    expect_error(with_line(13, "  - {compartment: ves, count: 5, inside: cell}"), 13, "inside",
                 "place[1].inside", "unknown key");
  }
  SUBCASE("a word where a number belongs") {
    expect_error(with_line(7, "  ves: {radius: abc, thickness: 4, diffusion: 1}"), 7, "abc",
                 "compartments.ves.radius", "expected a number, got 'abc'");
  }
  SUBCASE("a quoted number is a string") {
    expect_error(with_line(9, "  lig: {radius: '2', diffusion: 80}"), 9, "'2'",
                 "species.lig.radius", "expected a number");
  }
  SUBCASE("negative radius") {
    expect_error(with_line(9, "  lig: {radius: -2, diffusion: 80}"), 9, "-2",
                 "species.lig.radius", "expected a number > 0, got '-2'");
  }
  SUBCASE("negative diffusion") {
    expect_error(with_line(9, "  lig: {radius: 2, diffusion: -1}"), 9, "-1",
                 "species.lig.diffusion", ">= 0");
  }
  SUBCASE("thickness not below radius") {
    expect_error(with_line(7, "  ves: {radius: 20, thickness: 20, diffusion: 1}"), 7, "20, diffusion",
                 "compartments.ves.thickness", "expected a length < radius");
  }
  SUBCASE("a list where a map belongs") {
    expect_error(with_line(4, "simulation: [1, 2]"), 4, "[1", "simulation",
                 "expected a map, got a list");
  }
  SUBCASE("negative steps") {
    expect_error(with_line(4, "simulation: {steps: -5}"), 4, "-5", "simulation.steps",
                 "expected an integer >= 0, got '-5'");
  }
  SUBCASE("zero output interval") {
    expect_error(with_line(4, "simulation: {output: {every: 0}}"), 4, "0}",
                 "simulation.output.every", "expected an integer >= 1");
  }
  SUBCASE("unknown unit") {
    expect_error(with_line(2, "units: {length: km, time: us}"), 2, "km", "units.length",
                 "expected nm | um, got 'km'");
  }
  SUBCASE("unknown boundary") {
    expect_error(with_line(3, "box: {size: [400, 400, 400], boundary: open}"), 3, "open",
                 "box.boundary", "expected periodic | reflective");
  }
  SUBCASE("box with two edges") {
    expect_error(with_line(3, "box: {size: [400, 400]}"), 3, "[400", "box.size",
                 "expected a list of 3 numbers");
  }
  SUBCASE("zero box edge") {
    expect_error(with_line(3, "box: {size: [400, 0, 400]}"), 3, "0, 400]", "box.size[1]",
                 "expected a number > 0");
  }
  SUBCASE("missing box") {
    expect_error(with_line(3, "# no box"), 1, "nestsim", "box", "missing");
  }
  SUBCASE("wrong schema version") {
    expect_error(with_line(1, "nestsim: 2"), 1, "2", "nestsim", "expected schema version 1");
  }
  SUBCASE("duplicate key") {
    expect_error(with_line(9, "  lig: {radius: 2, radius: 3, diffusion: 80}"), 9, "radius: 3",
                 "species.lig.radius", "duplicate key");
  }
  SUBCASE("a name used for a compartment and a species") {
    expect_error(with_line(9, "  cell: {radius: 2, diffusion: 80}"), 9, "cell", "species.cell",
                 "already defined");
  }
  SUBCASE("in: naming no compartment kind") {
    expect_error(with_line(15, "  - {species: lig, count: 100, in: nucleus}"), 15, "nucleus",
                 "place[3].in", "'nucleus' names no compartment kind");
  }
  SUBCASE("in: naming a species") {
    expect_error(with_line(15, "  - {species: lig, count: 100, in: rec}"), 15, "rec",
                 "place[3].in", "'rec' names no compartment kind");
  }
  SUBCASE("in: a compartment kind not placed before") {
    expect_error(with_line(13, "  - {compartment: ves, count: 5, in: ves}"), 13, "ves}",
                 "place[1].in", "no 'ves' compartment is placed before");
  }
  SUBCASE("placing an unknown species") {
    expect_error(with_line(15, "  - {species: ligand, count: 100, in: cell}"), 15, "ligand",
                 "place[3].species", "'ligand' names no species");
  }
  SUBCASE("a placement with two regions") {
    expect_error(with_line(15, "  - {species: lig, count: 100, in: cell, outside: cell}"), 15,
                 "{", "place[3]", "exactly one of `at:`, `in:`, `on:`, `outside:`");
  }
  SUBCASE("compartment and species in one entry") {
    expect_error(with_line(15, "  - {species: lig, compartment: ves, in: cell}"), 15, "{",
                 "place[3]", "exactly one of `compartment:` or `species:`");
  }
  SUBCASE("a membrane species placed in a lumen") {
    expect_error(with_line(14, "  - {species: rec, count: 50, in: cell}"), 14, "{", "place[2]",
                 "must be placed with `on:`");
  }
  SUBCASE("a soluble species placed on a membrane") {
    expect_error(with_line(15, "  - {species: lig, count: 100, on: cell}"), 15, "cell}",
                 "place[3].on", "not a membrane species");
  }
  SUBCASE("at: with a count") {
    expect_error(with_line(12, "  - {compartment: cell, count: 2, at: [200, 200, 200]}"), 12,
                 "2,", "place[0].count", "`at:` places one body");
  }
  SUBCASE("zero count") {
    expect_error(with_line(15, "  - {species: lig, count: 0, in: cell}"), 15, "0,",
                 "place[3].count", "expected an integer >= 1");
  }
  SUBCASE("no diffusion and no medium") {
    expect_error(with_line(9, "  lig: {radius: 2}"), 9, "{", "species.lig.diffusion",
                 "missing");
  }
  SUBCASE("a kind too large for the box") {
    expect_error(with_line(6, "  cell: {radius: 200, thickness: 8, diffusion: 0}"), 6, "cell",
                 "compartments.cell.radius", "does not fit the box");
  }
  SUBCASE("YAML syntax error") {
    expect_error(with_line(9, "  lig: {radius: 2, diffusion: 80"), 10, ": {radius: 3", "", "YAML syntax");
  }
  SUBCASE("empty place") {
    const std::string text = with_line(11, "place: []");
    expect_error(text.substr(0, text.find("  - {compartment: cell")), 11, "[]", "place", "expected a list of placements");
  }
}

TEST_CASE("placement errors are located at the place entry") {
  SUBCASE("a lumen too crowded for the count") {
    expect_error(with_line(16, "  - {species: lig, count: 5000, in: ves}"), 16, "{", "place[4]",
                 "placement cannot fit: 5000 'lig' (radius 2) take a volume of");
  }
  SUBCASE("a body larger than the lumen") {
    expect_error(with_line(16, "  - {compartment: cell, count: 1, in: ves}"), 16, "{",
                 "place[4]", "placement cannot fit");
  }
  SUBCASE("at: crossing a membrane") {
    expect_error(with_line(13, "  - {compartment: ves, at: [200, 200, 345]}"), 13, "{",
                 "place[1]", "would cross its membrane");
  }
  SUBCASE("at: outside a reflective box") {
    std::string text = with_line(3, "box: {size: [400, 400, 400], boundary: reflective}");
    text = text.substr(0, text.find("  - {compartment: ves")) +
           "  - {species: lig, at: [1, 200, 200]}\n";
    expect_error(text, 13, "{", "place[1]", "does not lie inside the box");
  }
  // Errors from placement come through make_setup, not the parser.
  const auto place = [](const std::string& text) {
    return model::make_setup(model::parse_model(text, "model.yaml"));
  };
  CHECK_THROWS_AS(place(with_line(16, "  - {species: lig, count: 5000, in: ves}")), ModelError);
}

TEST_CASE("load_model reads a file and names it in errors") {
  const std::string path = "/tmp/nestsim_test_model_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream out(path);
    out << with_line(9, "  lig: {radius: 2, diffusion: fast}");
  }
  try {
    model::load_model(path);
    FAIL("no error");
  } catch (const ModelError& e) {
    CHECK(std::string(e.what()).rfind(path + ":9:31: species.lig.diffusion: expected a number >= 0, stokes-einstein or saffman-delbruck, got 'fast'", 0) == 0);
  }
  std::remove(path.c_str());
  try {
    model::load_model(path);
    FAIL("no error");
  } catch (const io::InputError& e) {
    CHECK(e.line() == 0);
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
  }
}

TEST_CASE("placements obey nesting") {
  const model::Model m = model::parse_model(base_model, "model.yaml");
  const model::Setup s = model::make_setup(m);
  REQUIRE(s.bodies.size() == 1 + 5 + 50 + 100 + 20 + 100);
  CHECK(s.capacity == model::default_capacity(s.bodies.size()));
  check_nesting(s);
  // Each entry's bodies have the parent kind the entry asks for.
  const auto& b = s.bodies;
  CHECK(b[0].parent == -1);
  for (int i = 1; i <= 5; ++i) CHECK(b[i].parent == 0);
  for (int i = 6; i < 56; ++i) CHECK(b[i].membrane == 0);
  for (int i = 56; i < 156; ++i) CHECK(b[i].parent == 0);
  for (int i = 156; i < 176; ++i) {
    REQUIRE(b[i].parent >= 1);
    CHECK(b[i].parent <= 5);
  }
  for (int i = 176; i < 276; ++i) {
    CHECK(b[i].parent == -1);
    CHECK(distance(b[i].position, b[0].position, s.box, true) >= 150 + 2);
  }

  SUBCASE("the default model") {
    const model::Setup d =
        model::make_setup(model::load_model(NESTSIM_SOURCE_DIR "/models/default.yaml"));
    CHECK(d.bodies.size() > 2000);
    CHECK(d.bodies.size() < 5000);
    check_nesting(d);
    // Three levels of nesting: cargo in a vesicle in an endosome/lysosome in the cell.
    int deepest = 0;
    for (std::size_t i = 0; i < d.bodies.size(); ++i) {
      int depth = 0;
      for (int64_t p = d.bodies[i].parent; p >= 0; p = d.bodies[p].parent) ++depth;
      deepest = std::max(deepest, depth);
    }
    CHECK(deepest == 3);
  }
  SUBCASE("a reflective box") {
    const model::Setup r = model::make_setup(model::parse_model(
        with_line(3, "box: {size: [400, 400, 400], boundary: reflective}"), "model.yaml"));
    CHECK(r.boundary == model::Boundary::reflective);
    check_nesting(r);
  }
  SUBCASE("a cell across the periodic boundary") {
    const model::Setup p = model::make_setup(model::parse_model(
        with_line(12, "  - {compartment: cell, at: [10, 390, 200]}"), "model.yaml"));
    check_nesting(p);
  }
  SUBCASE("at: finds the innermost lumen") {
    const model::Setup a = model::make_setup(model::parse_model(
        with_line(13, "  - {compartment: ves, at: [200, 200, 250]}\n"
                      "  - {species: lig, at: [200, 200, 255]}\n"
                      "  - {species: lig, at: [200, 200, 300]}"),
        "model.yaml"));
    CHECK(a.bodies[1].parent == 0);
    CHECK(a.bodies[2].parent == 1);  // in the vesicle
    CHECK(a.bodies[3].parent == 0);  // in the cell, outside the vesicle
  }
}

TEST_CASE("placement is a function of the seed") {
  const model::Model m = model::parse_model(base_model, "model.yaml");
  const model::Setup a = model::make_setup(m), b = model::make_setup(m);
  REQUIRE(a.bodies.size() == b.bodies.size());
  bool same = true;
  for (std::size_t i = 0; i < a.bodies.size(); ++i)
    same = same && a.bodies[i].position == b.bodies[i].position &&
           a.bodies[i].parent == b.bodies[i].parent;
  CHECK(same);
  model::Model other = m;
  other.seed = 8;
  const model::Setup c = model::make_setup(other);
  CHECK(c.bodies[100].position != a.bodies[100].position);
}

TEST_CASE("capacity") {
  const std::string text = with_line(4, "simulation: {dt: 5e-5, capacity: 1000}");
  CHECK(model::make_setup(model::parse_model(text, "m.yaml")).capacity == 1000);
  CHECK(model::default_capacity(10) == 74);
  CHECK(model::default_capacity(1000) == 2000);
  CHECK_THROWS_WITH_AS(
      model::make_setup(model::parse_model(with_line(4, "simulation: {dt: 5e-5, capacity: 10}"), "m.yaml")),
      doctest::Contains("simulation.capacity"), ModelError);
}

TEST_CASE("units and Stokes-Einstein") {
  // kB T / (6 pi eta r) at 300 K in water-like 1 mPa s, r = 2 nm: 1.09868557e-10 m^2/s.
  const double d_si = 1.380649e-23 * 300 / (6 * M_PI * 1e-3 * 2e-9);
  CHECK(d_si == doctest::Approx(1.09868557e-10).epsilon(1e-7));
  model::Units nm_us{"nm", "us"}, um_ms{"um", "ms"}, nm_ns{"nm", "ns"}, um_s{"um", "s"};
  CHECK(model::stokes_einstein(2, 300, 1e-3, nm_us) == doctest::Approx(109.868557).epsilon(1e-7));
  CHECK(model::stokes_einstein(0.002, 300, 1e-3, um_ms) ==
        doctest::Approx(0.109868557).epsilon(1e-7));
  CHECK(model::stokes_einstein(2, 300, 1e-3, nm_ns) == doctest::Approx(0.109868557).epsilon(1e-7));
  CHECK(model::stokes_einstein(0.002, 300, 1e-3, um_s) == doctest::Approx(109.868557).epsilon(1e-7));
  // Inversely proportional to radius and viscosity, proportional to temperature.
  CHECK(model::stokes_einstein(4, 600, 2e-3, nm_us) == doctest::Approx(109.868557 / 2).epsilon(1e-7));

  const std::string model = R"(nestsim: 1
units: {length: um, time: ms}
box: {size: [1, 1, 1]}
simulation: {dt: 0.001}
medium: {temperature: 300, viscosity: 0.001}
species:
  a: {radius: 0.002, diffusion: stokes-einstein}
  b: {radius: 0.002}
  c: {radius: 0.002, viscosity: 0.1}
  d: {radius: 0.002, diffusion: 3}
place: [{species: a, at: [0.5, 0.5, 0.5]}]
)";
  const model::Setup s = model::make_setup(model::parse_model(model, "se.yaml"));
  CHECK(s.length_unit == "um");
  CHECK(s.time_unit == "ms");
  CHECK(s.kinds[0].diffusion == doctest::Approx(0.109868557).epsilon(1e-7));
  CHECK(s.kinds[1].diffusion == doctest::Approx(0.109868557).epsilon(1e-7));  // default
  CHECK(s.kinds[2].diffusion == doctest::Approx(0.00109868557).epsilon(1e-7));
  CHECK(s.kinds[3].diffusion == 3);  // given: in model units, not converted

  expect_error(R"(nestsim: 1
box: {size: [1, 1, 1]}
medium: {temperature: -3}
)",
               3, "-3", "medium.temperature", "expected a number > 0");
}

TEST_CASE("the default medium is water at 37 C, with lipid bilayers") {
  const model::Medium medium;
  CHECK(medium.temperature == 310);
  CHECK(medium.viscosity == 0.00069);
  CHECK(medium.membrane_viscosity == 0.1);
  CHECK(medium.membrane_thickness_in(model::Units{"nm", "us"}) == doctest::Approx(4));
  CHECK(medium.membrane_thickness_in(model::Units{"um", "us"}) == doctest::Approx(0.004));
  // Stokes-Einstein in it, r = 2 nm: 1.380649e-23 x 310 / (6 pi 0.00069 2e-9) m^2/s.
  const std::string model = R"(nestsim: 1
box: {size: [100, 100, 100]}
interactions: {repulsion: 0}
medium: {}
species:
  a: {radius: 2}
place: [{species: a, at: [50, 50, 50]}]
)";
  const model::Model m = model::parse_model(model, "m.yaml");
  CHECK(model::diffusion_of(m.kinds[0], m) == doctest::Approx(164.53745178191664).epsilon(1e-12));
}

TEST_CASE("Saffman-Delbrueck for membrane species") {
  // kB T / (4 pi mu_m h) (ln(mu_m h / (mu a)) - gamma), hand-computed in SI.
  const auto sd = [](double a, double temperature, double mu, double mu_m, double h) {
    return 1.380649e-23 * temperature / (4 * M_PI * mu_m * h) *
           (std::log(mu_m * h / (mu * a)) - 0.57721566490153286);
  };
  // Defaults, a = 3 nm: 3.99064 um^2/s = 3.99064 nm^2/us.
  CHECK(sd(3e-9, 310, 0.00069, 0.1, 4e-9) * 1e12 == doctest::Approx(3.9906377036002).epsilon(1e-12));
  model::Units nm_us{"nm", "us"}, um_ms{"um", "ms"};
  CHECK(model::saffman_delbruck(3, 310, 0.00069, 0.1, 4, nm_us) ==
        doctest::Approx(3.9906377036002).epsilon(1e-12));
  CHECK(model::saffman_delbruck(0.002, 300, 1e-3, 0.2, 0.005, um_ms) ==
        doctest::Approx(sd(2e-9, 300, 1e-3, 0.2, 5e-9) * 1e9).epsilon(1e-12));
  CHECK(model::saffman_delbruck(0.002, 300, 1e-3, 0.2, 0.005, um_ms) ==
        doctest::Approx(0.001858116507495217).epsilon(1e-12));
  // The formula needs ln(mu_m h / (mu a)) > gamma.
  CHECK_THROWS_AS(model::saffman_delbruck(3, 310, 0.00069, 0.001, 1, nm_us), std::domain_error);

  const std::string model = R"(nestsim: 1
units: {length: nm, time: us}
box: {size: [400, 400, 400]}
interactions: {repulsion: 0}
medium: {}
compartments:
  cell: {radius: 150, thickness: 8, diffusion: 0}
species:
  free: {radius: 2}
  auto: {radius: 3, membrane: true}
  sd: {radius: 3, membrane: true, diffusion: saffman-delbruck}
  se: {radius: 3, membrane: true, diffusion: stokes-einstein}
  se_visc: {radius: 3, membrane: true, diffusion: stokes-einstein, viscosity: 0.069}
  given: {radius: 3, membrane: true, diffusion: 1}
place: [{compartment: cell, at: [200, 200, 200]}]
)";
  SUBCASE("which formula each kind gets") {
    const model::Model m = model::parse_model(model, "sd.yaml");
    const model::Setup s = model::make_setup(m);
    REQUIRE(s.kinds.size() == 7);
    CHECK(s.kinds[1].diffusion == doctest::Approx(164.53745178191664).epsilon(1e-12));  // SE
    CHECK(s.kinds[2].diffusion == doctest::Approx(3.9906377036002).epsilon(1e-12));  // SD: default
    CHECK(s.kinds[3].diffusion == doctest::Approx(3.9906377036002).epsilon(1e-12));  // SD: asked
    CHECK(s.kinds[4].diffusion == doctest::Approx(164.53745178191664 * 2 / 3).epsilon(1e-12));
    CHECK(s.kinds[5].diffusion == doctest::Approx(1.6453745178191664 * 2 / 3).epsilon(1e-12));
    CHECK(s.kinds[6].diffusion == 1);
    CHECK(model::uses_saffman_delbruck(m.kinds[2]));
    CHECK(model::uses_saffman_delbruck(m.kinds[3]));
    CHECK(!model::uses_saffman_delbruck(m.kinds[1]));
    CHECK(!model::uses_saffman_delbruck(m.kinds[4]));
    CHECK(!model::uses_saffman_delbruck(m.kinds[6]));
  }
  SUBCASE("the medium's membrane keys, in the model's length unit") {
    std::string text = model;
    text.replace(text.find("medium: {}"), 10,
                 "medium: {temperature: 300, viscosity: 0.001, membrane_viscosity: 0.2, "
                 "membrane_thickness: 5}");
    const model::Model m = model::parse_model(text, "sd.yaml");
    CHECK(m.medium.membrane_viscosity == 0.2);
    REQUIRE(m.medium.membrane_thickness);
    CHECK(*m.medium.membrane_thickness == 5);
    CHECK(model::diffusion_of(m.kinds[2], m) ==
          doctest::Approx(sd(3e-9, 300, 1e-3, 0.2, 5e-9) * 1e12).epsilon(1e-12));
  }
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = model;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  SUBCASE("saffman-delbruck on a free species or a compartment") {
    const std::string text = with("  free: {radius: 2}", "  free: {radius: 2, diffusion: saffman-delbruck}");
    expect_error(text, 9, "saffman", "species.free.diffusion",
                 "saffman-delbruck is for membrane species (membrane: true); a free species "
                 "takes stokes-einstein or a number");
    expect_error(with("diffusion: 0}", "diffusion: saffman-delbruck}"), 7, "saffman",
                 "compartments.cell.diffusion", "saffman-delbruck is for membrane species");
  }
  SUBCASE("a radius too large for the formula") {
    const std::string thin = with("medium: {}", "medium: {membrane_viscosity: 0.001, membrane_thickness: 1}");
    // mu_m h / (mu e^gamma) = 1e-12 / (0.00069 x 1.781) m = 0.814 nm < 3 nm.
    expect_error(thin, 10, "{", "species.auto.diffusion",
                 "Saffman-Delbrueck needs ln(mu_m h / (mu a)) > gamma = 0.5772, that is a "
                 "radius below 0.813709 nm");
    std::string asked = thin;
    asked.replace(asked.find("  auto: {radius: 3, membrane: true}\n"), 36, "");
    expect_error(asked, 10, "saffman", "species.sd.diffusion", "radius 3 is too large for it");
  }
  SUBCASE("a kind's viscosity is for Stokes-Einstein") {
    expect_error(with("auto: {radius: 3, membrane: true}", "auto: {radius: 3, membrane: true, viscosity: 0.1}"),
                 10, "0.1", "species.auto.viscosity",
                 "a kind's viscosity is the 3D viscosity of Stokes-Einstein");
  }
  SUBCASE("medium keys") {
    expect_error(with("medium: {}", "medium: {membrane_viscosity: 0}"), 5, "0}",
                 "medium.membrane_viscosity", "expected a number > 0, got '0'");
    expect_error(with("medium: {}", "medium: {membrane_thickness: -4}"), 5, "-4",
                 "medium.membrane_thickness", "expected a number > 0, got '-4'");
    expect_error(with("medium: {}", "medium: {membrane: 1}"), 5, "membrane:", "medium.membrane",
                 "unknown key (expected one of: membrane_thickness, membrane_viscosity, "
                 "temperature, viscosity)");
  }
  SUBCASE("a model built in code") {
    model::Model m = model::parse_model(model, "sd.yaml");
    m.kinds[1].derive = model::KindSpec::Derive::saffman_delbruck;  // `free`
    CHECK_THROWS_WITH_AS(model::validate(m),
                         doctest::Contains("species.free.diffusion: saffman-delbruck is for "
                                           "membrane species"),
                         ModelError);
    m = model::parse_model(model, "sd.yaml");
    m.kinds[2].viscosity = 0.1;
    CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("species.auto.viscosity"), ModelError);
    m = model::parse_model(model, "sd.yaml");
    m.medium.membrane_thickness = 0.5;
    m.medium.membrane_viscosity = 0.001;
    CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("species.auto.diffusion: Saffman-Delbrueck needs"),
                         ModelError);
    m = model::parse_model(model, "sd.yaml");
    m.medium.membrane_viscosity = -1;
    CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("medium: expected membrane_viscosity > 0"),
                         ModelError);
  }
}

// --- reactions ---------------------------------------------------------------------

namespace {

// A valid model with every supported form of rule; tests replace one line to break it.
const std::string reaction_model = R"(nestsim: 1
box: {size: [400, 400, 400]}
compartments:
  cell: {radius: 150, thickness: 8, diffusion: 0}
  lysosome: {radius: 30, thickness: 4, diffusion: 1}
species:
  ligand: {radius: 2, diffusion: 80}
  receptor: {radius: 3, diffusion: 1, membrane: true}
  complex: {radius: 4, diffusion: 1, membrane: true}
  ligand_bound: {radius: 2, diffusion: 1, membrane: true}
  dimer: {radius: 3, diffusion: 50}
  monomer: {radius: 2, diffusion: 80}
place:
  - {compartment: cell, at: [200, 200, 200]}
  - {compartment: lysosome, count: 2, in: cell}
  - {species: receptor, count: 10, on: cell}
  - {species: ligand, count: 10, outside: cell}
reactions:
  - {name: degradation, rule: "ligand in lysosome -> 0", rate: 1.0}
  - {name: binding,     rule: "ligand outside cell + receptor on cell -> complex on cell", rate: 50, radius: 4}
  - {name: capture,     rule: "ligand + cell -> ligand_bound on cell", rate: 10, radius: 3}
  - {name: recycling,   rule: "receptor in lysosome -> receptor on cell", rate: 0.1}
  - {name: unbinding,   rule: "complex on cell -> ligand outside cell + receptor on cell", rate: 0.01}
  - {name: split,       rule: "dimer -> monomer + monomer", rate: 0.5}
  - {name: dimerise,    rule: monomer + monomer -> dimer, rate: 2e-3, radius: 5}
  - {name: capture-2,   rule: "cell + ligand -> ligand_bound on cell", rate: 0, radius: 2.5}
  - name: release
    rule: "ligand_bound on cell -> ligand in cell"
    rate: 7
simulation: {dt: 5e-5}
)";

// reaction_model with line `line` (1-based) replaced by `text`.
std::string with_reaction(int line, const std::string& text) {
  std::string out;
  int n = 1;
  std::size_t start = 0;
  while (start < reaction_model.size()) {
    const std::size_t end = reaction_model.find('\n', start);
    out += (n == line ? text : reaction_model.substr(start, end - start)) + "\n";
    start = end + 1;
    ++n;
  }
  return out;
}

// Kind indices of reaction_model: compartments first, then species, in file order.
enum : uint32_t { cell, lysosome, ligand, receptor, complex_, ligand_bound, dimer, monomer };

using Where = model::Site::Where;

void check_term(const model::Term& t, uint32_t kind, Where where, uint32_t compartment = 0) {
  CHECK(t.kind == kind);
  CHECK(t.site.where == where);
  if (where != Where::any) CHECK(t.site.compartment == compartment);
}

}  // namespace

TEST_CASE("reactions parse into the Setup's rules") {
  const model::Model m = model::parse_model(reaction_model, "model.yaml");
  REQUIRE(m.reactions.size() == 9);
  CHECK(m.reactions[0].name == "degradation");
  CHECK(m.reactions[0].rule == "ligand in lysosome -> 0");
  CHECK(m.reactions[0].where.line == 19);
  CHECK(m.reactions[0].rule_at.line == 19);
  CHECK(m.reactions[0].rule_at.column == 31);
  CHECK(!m.reactions[0].radius);
  REQUIRE(m.reactions[1].reactants.size() == 2);
  CHECK(m.reactions[1].reactants[0].kind == "ligand");
  CHECK(m.reactions[1].reactants[0].where == model::RuleTerm::Where::outside);
  CHECK(m.reactions[1].reactants[0].compartment == "cell");
  CHECK(m.reactions[6].rule == "monomer + monomer -> dimer");  // a plain scalar
  CHECK(m.reactions[8].where.line == 27);                        // block style

  // Through make_setup_without_bodies and make_setup alike.
  for (const model::Setup& s : {model::make_setup_without_bodies(m), model::make_setup(m)}) {
    const auto& r = s.reactions;
    REQUIRE(r.size() == 9);
    REQUIRE(s.kinds.size() == 8);
    CHECK(s.kinds[complex_].name == "complex");
    CHECK(s.kinds[monomer].name == "monomer");

    CHECK(r[0].name == "degradation");
    CHECK(r[0].rate == 1.0);
    CHECK(r[0].radius == 0);
    REQUIRE(r[0].reactants.size() == 1);
    check_term(r[0].reactants[0], ligand, Where::in, lysosome);
    CHECK(r[0].products.empty());

    CHECK(r[1].name == "binding");
    CHECK(r[1].rate == 50);
    CHECK(r[1].radius == 4);
    REQUIRE(r[1].reactants.size() == 2);
    check_term(r[1].reactants[0], ligand, Where::outside, cell);
    check_term(r[1].reactants[1], receptor, Where::on, cell);
    REQUIRE(r[1].products.size() == 1);
    check_term(r[1].products[0], complex_, Where::on, cell);

    CHECK(r[2].name == "capture");
    CHECK(r[2].radius == 3);
    REQUIRE(r[2].reactants.size() == 2);
    check_term(r[2].reactants[0], ligand, Where::any);
    check_term(r[2].reactants[1], cell, Where::any);
    REQUIRE(r[2].products.size() == 1);
    check_term(r[2].products[0], ligand_bound, Where::on, cell);

    CHECK(r[3].rate == 0.1);
    check_term(r[3].reactants.at(0), receptor, Where::in, lysosome);
    check_term(r[3].products.at(0), receptor, Where::on, cell);

    CHECK(r[4].rate == 0.01);
    check_term(r[4].reactants.at(0), complex_, Where::on, cell);
    REQUIRE(r[4].products.size() == 2);
    check_term(r[4].products[0], ligand, Where::outside, cell);
    check_term(r[4].products[1], receptor, Where::on, cell);

    CHECK(r[5].rate == 0.5);
    check_term(r[5].reactants.at(0), dimer, Where::any);
    REQUIRE(r[5].products.size() == 2);
    check_term(r[5].products[0], monomer, Where::any);
    check_term(r[5].products[1], monomer, Where::any);

    CHECK(r[6].rate == 2e-3);
    CHECK(r[6].radius == 5);
    REQUIRE(r[6].reactants.size() == 2);
    check_term(r[6].reactants[0], monomer, Where::any);
    check_term(r[6].reactants[1], monomer, Where::any);
    check_term(r[6].products.at(0), dimer, Where::any);

    // Binding written compartment first is stored species first.
    CHECK(r[7].name == "capture-2");
    CHECK(r[7].rate == 0);
    CHECK(r[7].radius == 2.5);
    REQUIRE(r[7].reactants.size() == 2);
    check_term(r[7].reactants[0], ligand, Where::any);
    check_term(r[7].reactants[1], cell, Where::any);

    check_term(r[8].reactants.at(0), ligand_bound, Where::on, cell);
    check_term(r[8].products.at(0), ligand, Where::in, cell);
  }

  SUBCASE("no reactions section, or an empty one") {
    CHECK(model::make_setup(model::parse_model(base_model, "model.yaml")).reactions.empty());
    const std::string text =
        reaction_model.substr(0, reaction_model.find("reactions:")) + "simulation: {dt: 5e-5}\n";
    CHECK(model::parse_model(text, "model.yaml").reactions.empty());
    CHECK(model::parse_model(text + "reactions: []\n", "model.yaml").reactions.empty());
  }
  SUBCASE("spacing in rules is free") {
    const model::Model s = model::parse_model(
        with_reaction(24, "  - {name: split, rule: \"  dimer->monomer  +monomer \", rate: 0.5}"),
        "model.yaml");
    CHECK(s.reactions[5].rule == "dimer->monomer  +monomer");
    REQUIRE(s.reactions[5].products.size() == 2);
    CHECK(s.reactions[5].products[1].kind == "monomer");
  }
}

TEST_CASE("reaction errors name file, line, column and key") {
  // Line 19 is `  - {name: degradation, rule: "ligand in lysosome -> 0", rate: 1.0}`.
  const auto rule = [](const std::string& r) {
    return with_reaction(19, "  - {name: degradation, rule: \"" + r + "\", rate: 1.0}");
  };
  const auto rule2 = [](const std::string& r) {  // a two-reactant rule, with a radius
    return with_reaction(19, "  - {name: degradation, rule: \"" + r + "\", rate: 1.0, radius: 2}");
  };
  const std::string key = "reactions[0].rule";
  const std::string forms = "expected 'A -> B', 'A -> 0', 'A -> B + C', 'A + B -> C'";

  SUBCASE("reactions is not a list") {
    const std::string text = reaction_model.substr(0, reaction_model.find("reactions:")) +
                             "reactions: {degradation: 1}\n";
    expect_error(text, 18, "{", "reactions", "expected a list of reactions, got a map");
  }
  SUBCASE("an entry is not a map") {
    expect_error(with_reaction(19, "  - ligand -> 0"), 19, "ligand", "reactions[0]",
                 "expected a map");
  }
  SUBCASE("unknown key") {
    expect_error(with_reaction(19, "  - {name: d, rule: \"ligand -> 0\", rate: 1, k: 2}"), 19,
                 "k:", "reactions[0].k", "unknown key (expected one of: koff, kon, name, radius, rate, rule)");
  }
  SUBCASE("missing name, rule, rate") {
    expect_error(with_reaction(19, "  - {rule: \"ligand -> 0\", rate: 1}"), 19, "{",
                 "reactions[0].name", "missing");
    expect_error(with_reaction(19, "  - {name: d, rate: 1}"), 19, "{", "reactions[0].rule",
                 "missing");
    expect_error(with_reaction(19, "  - {name: d, rule: \"ligand -> 0\"}"), 19, "{",
                 "reactions[0].rate", "missing");
  }
  SUBCASE("a name that is no dataset name") {
    expect_error(with_reaction(19, "  - {name: a/b, rule: \"ligand -> 0\", rate: 1}"), 19,
                 "a/b", "reactions[0].name", "letters, digits, '_', '-', got 'a/b'");
  }
  SUBCASE("duplicate names") {
    expect_error(with_reaction(24, "  - {name: binding, rule: \"dimer -> monomer\", rate: 0.5}"),
                 24, "binding", "reactions[5].name",
                 "a reaction named 'binding' is already defined (reactions[1])");
  }
  SUBCASE("rate and radius") {
    expect_error(with_reaction(19, "  - {name: d, rule: \"ligand -> 0\", rate: -1}"), 19, "-1",
                 "reactions[0].rate", "expected a number >= 0, got '-1'");
    expect_error(with_reaction(19, "  - {name: d, rule: \"ligand -> 0\", rate: fast}"), 19,
                 "fast", "reactions[0].rate",
                 "expected a number (per time unit of the model) or a number with a time unit, "
                 "e.g. '0.5 /s' (/s, /ms, /us, /ns; also 1/s, s^-1), got 'fast'");
    expect_error(
        with_reaction(19, "  - {name: d, rule: \"ligand + dimer -> 0\", rate: 1, radius: 0}"),
        19, "0}", "reactions[0].radius", "expected a number > 0, got '0'");
  }
  SUBCASE("two reactants need a radius") {
    expect_error(rule("ligand + dimer -> monomer"), 19, "{", "reactions[0].radius",
                 "missing: a rule with two reactants needs a reaction radius");
    expect_error(with_reaction(21, "  - {name: capture, rule: \"ligand + cell -> ligand_bound on cell\", rate: 10}"),
                 21, "{", "reactions[2].radius", "missing");
  }
  SUBCASE("one reactant has no radius") {
    expect_error(rule2("ligand -> 0"), 19, "2}", "reactions[0].radius",
                 "a rule with one reactant has no reaction radius");
  }
  SUBCASE("a radius larger than half the box") {
    expect_error(with_reaction(25, "  - {name: dimerise, rule: monomer + monomer -> dimer, rate: 1, radius: 200}"),
                 25, "200", "reactions[6].radius", "does not fit the box");
  }
  SUBCASE("malformed rules") {
    expect_error(rule("ligand"), 19, "\"", key, "malformed rule 'ligand': no '->'; " + forms);
    expect_error(rule("ligand -> 0 -> 0"), 19, "\"", key, "more than one '->'");
    expect_error(rule("-> ligand"), 19, "\"", key, "nothing before '->'");
    expect_error(rule("ligand ->"), 19, "\"", key, "nothing after '->' (write 0 for no products)");
    expect_error(rule("ligand + -> 0"), 19, "\"", key, "an empty term among the reactants");
    expect_error(rule("ligand + dimer + monomer -> 0"), 19, "\"", key,
                 "3 reactants (at most 2)");
    expect_error(rule("dimer -> monomer + monomer + monomer"), 19, "\"", key,
                 "3 products (at most 2)");
    expect_error(rule("0 -> ligand"), 19, "\"", key, "'0' (nothing) can only be the products");
    expect_error(rule("ligand -> 0 + dimer"), 19, "\"", key, "'0' (nothing) stands alone");
    expect_error(rule("ligand at cell -> 0"), 19, "\"", key,
                 "expected in, on or outside after 'ligand', got 'at'");
    expect_error(rule("ligand in -> 0"), 19, "\"", key, "'ligand in' is not a term");
    expect_error(with_reaction(19, "  - {name: d, rule: [ligand, 0], rate: 1}"), 19, "[",
                 key, "expected a rule such as 'A + B -> C', got a list");
  }
  SUBCASE("unknown kinds") {
    expect_error(rule("ligan in lysosome -> 0"), 19, "\"", key,
                 "'ligan' in rule 'ligan in lysosome -> 0' names no kind");
    expect_error(rule("ligand -> monomer + dimmer"), 19, "\"", key, "'dimmer' in rule");
    expect_error(rule("ligand in nucleus -> 0"), 19, "\"", key,
                 "'nucleus' in rule 'ligand in nucleus -> 0' names no compartment kind");
    expect_error(rule("ligand in dimer -> 0"), 19, "\"", key,
                 "'dimer' in rule 'ligand in dimer -> 0' names no compartment kind");
  }
  SUBCASE("on K needs a membrane species") {
    expect_error(rule("ligand on cell -> 0"), 19, "\"", key,
                 "species 'ligand' is not a membrane species (membrane: true)");
    expect_error(rule("receptor on cell -> ligand on cell"), 19, "\"", key,
                 "rule 'receptor on cell -> ligand on cell': 'ligand on cell': species 'ligand' "
                 "is not a membrane species");
    expect_error(rule("lysosome on cell -> 0"), 19, "\"", key,
                 "compartment kind 'lysosome' cannot be on a membrane");
  }
  SUBCASE("a membrane species product goes on a membrane") {
    expect_error(rule("complex on cell -> receptor in cell"), 19, "\"", key,
                 "product 'receptor' is a membrane species: it goes `on` a compartment kind");
    expect_error(rule("complex on cell -> receptor outside cell"), 19, "\"", key,
                 "product 'receptor' is a membrane species");
    expect_error(rule("ligand -> receptor"), 19, "\"", key,
                 "product 'receptor' is a membrane species and no reactant is: say which "
                 "membrane it goes to, 'receptor on K'");
  }
  SUBCASE("budding and fusion: accepted forms, stored in the engine's order") {
    const auto setup_of = [](const std::string& text) {
      const model::Model m = model::parse_model(text, "model.yaml");
      return model::make_setup_without_bodies(m);
    };
    const model::Setup bud = setup_of(rule("complex on cell -> ligand in lysosome + lysosome"));
    const int lys = 1, cell = 0, lig = 2;
    REQUIRE(bud.kinds[std::size_t(lys)].name == "lysosome");
    REQUIRE(bud.kinds[std::size_t(lig)].name == "ligand");
    REQUIRE(bud.reactions[0].products.size() == 2);
    CHECK(bud.reactions[0].products[0].kind == uint32_t(lys));  // the new compartment first
    CHECK(bud.reactions[0].products[1].kind == uint32_t(lig));
    CHECK(bud.reactions[0].products[1].site.where == model::Site::Where::in);
    const model::Setup fuse = setup_of(rule2("lysosome + cell -> lysosome"));
    CHECK(fuse.reactions[0].reactants[0].kind == uint32_t(cell));  // the one that stays second
    CHECK(fuse.reactions[0].reactants[1].kind == uint32_t(lys));
    CHECK_NOTHROW(setup_of(rule("complex on cell -> lysosome + complex on lysosome")));
    CHECK_NOTHROW(setup_of(rule("complex on cell -> lysosome in cell + receptor on lysosome")));
    CHECK_NOTHROW(setup_of(rule2("lysosome + lysosome -> lysosome")));
  }
  SUBCASE("budding and fusion: malformed forms") {
    expect_error(rule("lysosome -> 0"), 19, "\"", key,
                 "rule 'lysosome -> 0': a compartment kind is a reactant only of fusion, 'V + Y -> Y'");
    expect_error(rule("cell -> cell + lysosome"), 19, "\"", key, "a reactant only of fusion");
    expect_error(rule2("lysosome + lysosome -> cell"), 19, "\"", key,
                 "two compartment kinds react only by fusion, 'V + Y -> Y'");
    expect_error(rule2("lysosome + cell -> cell + lysosome"), 19, "\"", key, "only by fusion");
    expect_error(rule2("ligand + lysosome -> lysosome"), 19, "\"", key,
                 "rule 'ligand + lysosome -> lysosome': a species reacts with compartment kind "
                 "'lysosome' only by binding, 'S + lysosome -> S2 on lysosome'");
    expect_error(rule2("ligand + cell -> ligand_bound on lysosome"), 19, "\"", key,
                 "only by binding");
    expect_error(rule2("ligand + cell -> ligand_bound on cell + ligand"), 19, "\"", key,
                 "only by binding");
    expect_error(rule("dimer -> lysosome"), 19, "\"", key,
                 "rule 'dimer -> lysosome': budding is 'S on X -> V + S2 on V'");
    expect_error(rule("ligand -> lysosome + ligand in lysosome"), 19, "\"", key,
                 "the budding species must be on a membrane");
    expect_error(rule("complex on cell -> lysosome + complex on cell"), 19, "\"", key,
                 "the carried species goes 'on lysosome' or 'in lysosome'");
    expect_error(rule("complex on cell -> lysosome in lysosome + ligand in lysosome"), 19, "\"",
                 key, "buds into the lumen of 'cell'");
  }
}

TEST_CASE("validate checks reactions of a model built in code") {
  model::Model m = model::parse_model(reaction_model, "model.yaml");
  m.reactions.clear();
  model::ReactionSpec x;
  x.name = "bind";
  x.rate = 3;
  x.radius = 2;
  x.reactants = {{"ligand", model::RuleTerm::Where::outside, "cell"}, {"cell", {}, ""}};
  x.products = {{"ligand_bound", model::RuleTerm::Where::on, "cell"}};
  m.reactions.push_back(x);
  model::validate(m);
  const model::Setup s = model::make_setup_without_bodies(m);
  REQUIRE(s.reactions.size() == 1);
  CHECK(s.reactions[0].radius == 2);
  check_term(s.reactions[0].reactants.at(0), ligand, Where::outside, cell);
  check_term(s.reactions[0].products.at(0), ligand_bound, Where::on, cell);

  m.reactions[0].products[0].compartment = "lysosome";
  CHECK_THROWS_WITH_AS(model::validate(m),
                       doctest::Contains("model.yaml: reactions[0].rule: rule 'ligand outside "
                                         "cell + cell -> ligand_bound on lysosome': a "
                                         "species reacts with compartment kind 'cell' only "
                                         "by binding"),
                       ModelError);
  m.reactions[0].products.clear();
  m.reactions[0].reactants.clear();
  CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("reactions[0].rule: malformed rule"),
                       ModelError);
  m.reactions[0] = x;
  m.reactions[0].radius.reset();
  CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("reactions[0].radius: missing"),
                       ModelError);
  m.reactions[0] = x;
  m.reactions[0].rate = -1;
  CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("reactions[0].rate"), ModelError);
}

// --- rates with units and kon ------------------------------------------------------

TEST_CASE("rates with a time unit convert to the model's time unit") {
  // Line 19: a rule with one reactant; line 25: `dimerise`, two (the Doi rate).
  const auto degradation = [](const std::string& rate) {
    return with_reaction(19, "  - {name: degradation, rule: \"ligand in lysosome -> 0\", rate: " +
                                 rate + "}");
  };
  const auto rate_of = [](const std::string& text, std::size_t rule) {
    return model::make_setup_without_bodies(model::parse_model(text, "model.yaml")).reactions.at(rule).rate;
  };
  // The model's time unit is us.
  CHECK(rate_of(degradation("0.5 /s"), 0) == doctest::Approx(5e-7).epsilon(1e-14));
  CHECK(rate_of(degradation("0.5/s"), 0) == doctest::Approx(5e-7).epsilon(1e-14));
  CHECK(rate_of(degradation("0.5 1/s"), 0) == doctest::Approx(5e-7).epsilon(1e-14));
  CHECK(rate_of(degradation("0.5 s^-1"), 0) == doctest::Approx(5e-7).epsilon(1e-14));
  CHECK(rate_of(degradation("\"0.5 /s\""), 0) == doctest::Approx(5e-7).epsilon(1e-14));
  CHECK(rate_of(degradation("2 /ms"), 0) == doctest::Approx(2e-3).epsilon(1e-14));
  CHECK(rate_of(degradation("3 /us"), 0) == 3);
  CHECK(rate_of(degradation("4 /ns"), 0) == doctest::Approx(4000).epsilon(1e-14));
  CHECK(rate_of(degradation("1.5"), 0) == 1.5);  // a bare number: per model time unit
  CHECK(rate_of(with_reaction(25, "  - {name: dimerise, rule: monomer + monomer -> dimer, "
                                  "rate: 20 /ms, radius: 5}"),
                6) == doctest::Approx(0.02).epsilon(1e-14));
  // Another model time unit: ms.
  const std::string ms = "nestsim: 1\nunits: {time: ms}";
  std::string text = degradation("0.5 /s");
  text.replace(0, 10, ms);
  CHECK(rate_of(text, 0) == doctest::Approx(5e-4).epsilon(1e-14));

  // What the file gave is kept, and printed by `nestsim run`.
  const model::Model m = model::parse_model(degradation("0.5 /s"), "model.yaml");
  CHECK(m.reactions[0].given == 0.5);
  CHECK(m.reactions[0].given_unit == "/s");
  CHECK(m.reactions[0].rate_at.line == 19);
  CHECK(m.reactions[0].rate_at.column == 64);
  CHECK(!m.reactions[0].kon);
  CHECK(model::describe_rate(m.reactions[0], m) == "degradation: rate 0.5 /s = 5e-07 /us");
  CHECK(model::describe_rate(m.reactions[1], m).empty());  // a bare number
  const model::Model two = model::parse_model(
      with_reaction(25, "  - {name: dimerise, rule: monomer + monomer -> dimer, rate: 20 /ms, radius: 5}"),
      "model.yaml");
  CHECK(model::describe_rate(two.reactions[6], two) ==
        "dimerise: rate 20 /ms = 0.02 /us (Doi rate at radius 5 nm)");
}

TEST_CASE("kon: a macroscopic rate constant converted to the Doi rate") {
  const auto dimerise = [](const std::string& kon) {
    return with_reaction(25, "  - {name: dimerise, rule: monomer + monomer -> dimer, kon: " + kon +
                                 ", radius: 5}");
  };
  // monomer + monomer: D = 80 + 80 nm^2/us, sigma = 5 nm; 1 /M/s = 1.66054e-6 nm^3/us.
  const double D = 160, sigma = 5, molar = 1.6605390671738467e-6;
  struct Case {
    std::string text;
    double kon;  // nm^3/us
  };
  for (const Case& c : {Case{"1e6 /M/s", 1e6 * molar}, Case{"1e6/M/s", 1e6 * molar},
                        Case{"1e6 1/M/s", 1e6 * molar}, Case{"1e6 M^-1 s^-1", 1e6 * molar},
                        Case{"1e3 /M/ms", 1e6 * molar}, Case{"2.5 nm^3/us", 2.5},
                        Case{"2.5e6 nm^3/s", 2.5}, Case{"2.5e-3 um^3/s", 2.5e-3 * 1e9 * 1e-6},
                        Case{"3 nm^3 us^-1", 3}, Case{"\"1e6 /M/s\"", 1e6 * molar}}) {
    CAPTURE(c.text);
    const model::Model m = model::parse_model(dimerise(c.text), "model.yaml");
    const model::ReactionSpec& x = m.reactions[6];
    REQUIRE(x.kon);
    CHECK(*x.kon == doctest::Approx(c.kon).epsilon(1e-12));
    CHECK(model::reactant_diffusion(x, m) == D);
    // Soft contacts: the Doi rate with the repulsion inside the contact (kon_calibration.h).
    const double contact = 2 * m.find_kind("monomer")->radius;
    const double lambda = model::doi_rate_for_kon_soft(c.kon, D, sigma, contact, m.repulsion);
    CHECK(model::reaction_rate(x, m) == doctest::Approx(lambda).epsilon(1e-12));
    CHECK(model::make_setup_without_bodies(m).reactions[6].rate ==
          doctest::Approx(lambda).epsilon(1e-12));
    CHECK(model::soft_doi_rate(lambda, D, sigma, contact, m.repulsion) == doctest::Approx(c.kon).epsilon(1e-9));
  }
  // 1e6 /M/s at sigma 5 nm, D 160 nm^2/us: lambda = 0.00317202474153403 /us (a 30-digit
  // root of Erban-Chapman, mpmath), ~lambda (4/3) pi sigma^3 = kon: reaction-limited.
  model::Model m = model::parse_model(dimerise("1e6 /M/s"), "model.yaml");
  m.repulsion = 0;  // no force inside the reaction ball: Erban-Chapman exactly
  CHECK(model::reaction_rate(m.reactions[6], m) ==
        doctest::Approx(0.00317202474153403468).epsilon(1e-12));
  CHECK(m.reactions[6].given == 1e6);
  CHECK(m.reactions[6].given_unit == "/M/s");
  CHECK(m.reactions[6].rate_at.line == 25);
  CHECK(model::describe_rate(m.reactions[6], m) ==
        "dimerise: kon 1e+06 /M/s = 1.66054 nm^3/us -> Doi rate 0.00317202 /us at radius 5 nm "
        "(D_A + D_B = 160 nm^2/us)");
  // kon 0 keeps the rule but never fires it.
  const model::Model zero = model::parse_model(dimerise("0 /M/s"), "model.yaml");
  CHECK(model::reaction_rate(zero.reactions[6], zero) == 0);
}

TEST_CASE("rate and kon errors are located") {
  const auto entry = [](int line, const std::string& name, const std::string& rule,
                        const std::string& rest) {
    return with_reaction(line, "  - {name: " + name + ", rule: \"" + rule + "\", " + rest + "}");
  };
  const auto dimerise = [&](const std::string& rest) {
    return entry(25, "dimerise", "monomer + monomer -> dimer", rest);
  };
  const auto degradation = [&](const std::string& rest) {
    return entry(19, "degradation", "ligand in lysosome -> 0", rest);
  };
  SUBCASE("rate with a unit") {
    expect_error(degradation("rate: 5 /min"), 19, "5 /min", "reactions[0].rate",
                 "unknown unit '/min': expected a number (per time unit of the model)");
    expect_error(degradation("rate: -1 /s"), 19, "-1", "reactions[0].rate",
                 "expected a rate >= 0, got '-1 /s'");
    expect_error(degradation("rate: 1e6 /M/s"), 19, "1e6", "reactions[0].rate",
                 "'/M/s' is the unit of a bimolecular rate constant: give it as kon:");
    expect_error(degradation("rate: /s"), 19, "/s", "reactions[0].rate", "expected a number");
  }
  SUBCASE("kon and rate: exactly one") {
    expect_error(dimerise("rate: 1, kon: 1e6 /M/s, radius: 5"), 25, "1e6", "reactions[6].kon",
                 "give either rate: (the Doi rate per pair in reach) or kon:");
    expect_error(dimerise("radius: 5"), 25, "{", "reactions[6].rate", "missing");
  }
  SUBCASE("kon: two reactants, with a rate constant's unit") {
    expect_error(degradation("kon: 1e6 /M/s"), 19, "1e6", "reactions[0].kon",
                 "kon: is the rate constant of a rule with two reactants");
    expect_error(dimerise("kon: 5, radius: 5"), 25, "5,", "reactions[6].kon",
                 "expected a number with a unit: per molar per time ('1e6 /M/s'");
    expect_error(dimerise("kon: 5 /s, radius: 5"), 25, "5 /s", "reactions[6].kon",
                 "'/s' is the unit of a rate per time: the Doi rate is given as rate:");
    expect_error(dimerise("kon: 5 /mM/s, radius: 5"), 25, "5 /mM/s", "reactions[6].kon",
                 "unknown unit '/mM/s'");
    expect_error(dimerise("kon: -5 /M/s, radius: 5"), 25, "-5", "reactions[6].kon",
                 "expected a rate constant >= 0, got '-5 /M/s'");
    expect_error(dimerise("kon: 1e6 /M/s"), 25, "{", "reactions[6].radius", "missing");
  }
  SUBCASE("kon: only for two free species") {
    // Fusion, a membrane species (binding onto a membrane takes kon: test_rates.cpp).
    expect_error(entry(21, "fusion", "lysosome + lysosome -> lysosome", "kon: 1e6 /M/s, radius: 3"),
                 21, "1e6", "reactions[2].kon", "'lysosome' is a compartment kind");
    expect_error(entry(20, "binding", "ligand outside cell + receptor on cell -> complex on cell",
                       "kon: 1e6 /M/s, radius: 4"),
                 20, "1e6", "reactions[1].kon",
                 "'receptor' is a membrane species: it moves in 2D and its membrane hides part "
                 "of the reaction ball, so no kon converts exactly: give the Doi rate with rate:");
  }
  SUBCASE("kon at or above the diffusion limit 4 pi D sigma") {
    // D = 160 nm^2/us, sigma = 5 nm: 10053.1 nm^3/us = 6.05412e+09 /M/s.
    expect_error(dimerise("kon: 1e10 /M/s, radius: 5"), 25, "1e10", "reactions[6].kon",
                 "kon 1e+10 /M/s = 16605.4 nm^3/us is at or above the diffusion limit 4 pi D "
                 "sigma = 10053.1 nm^3/us = 6.05412e+09 /M/s (D = D_A + D_B = 160 nm^2/us, "
                 "radius 5 nm): no Doi rate reaches it");
    // In the unit given: 1 um^3/s = 1e9 nm^3 / 1e6 us = 1000 nm^3/us.
    expect_error(dimerise("kon: 10.0531 um^3/s, radius: 5"), 25, "10.0531", "reactions[6].kon",
                 "kon 10.0531 um^3/s = 10053.1 nm^3/us is at or above the diffusion limit "
                 "4 pi D sigma = 10053.1 nm^3/us = 10.0531 um^3/s");
    // Just below it: accepted, a large Doi rate.
    const model::Model m = model::parse_model(dimerise("kon: 9000 nm^3/us, radius: 5"), "model.yaml");
    CHECK(model::reaction_rate(m.reactions[6], m) > 500);
  }
  SUBCASE("a model built in code") {
    model::Model m = model::parse_model(reaction_model, "model.yaml");
    m.reactions[6].kon = 1.0;  // dimerise, nm^3/us
    CHECK(model::reaction_rate(m.reactions[6], m) ==
          doctest::Approx(model::doi_rate_for_kon_soft(1.0, 160, 5, 2 * m.find_kind("monomer")->radius,
                                                    m.repulsion)).epsilon(1e-12));
    CHECK(model::describe_rate(m.reactions[6], m).rfind("dimerise: kon 1 nm^3/us -> Doi rate ", 0) == 0);
    m.reactions[6].kon = 2e4;
    CHECK_THROWS_WITH_AS(model::validate(m),
                         doctest::Contains("reactions[6].kon: kon 20000 nm^3/us is at or above "
                                           "the diffusion limit 4 pi D sigma = 10053.1 nm^3/us "
                                           "(D = D_A + D_B = 160 nm^2/us, radius 5 nm)"),
                         ModelError);
    m.reactions[6].kon = -1;
    CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("reactions[6].kon: expected a rate constant >= 0"),
                         ModelError);
    m = model::parse_model(reaction_model, "model.yaml");
    m.reactions[1].kon = 1.0;  // binding: a membrane species
    CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("reactions[1].kon: kon: converts"),
                         ModelError);
    m = model::parse_model(reaction_model, "model.yaml");
    m.reactions[0].kon = 1.0;  // one reactant
    CHECK_THROWS_WITH_AS(model::validate(m), doctest::Contains("reactions[0].kon: kon: is the rate "
                                                            "constant of a rule with two reactants"),
                         ModelError);
  }
}

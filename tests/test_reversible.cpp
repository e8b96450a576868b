// Reversible rules "A + B <-> C" with kon and koff (models/README.md, "Reversible
// rules"; nestsim/model/kon_calibration.h): read as a forward rule and its reverse, the
// reverse's unbinding probability per step q = p V koff / kon for each contact model,
// the engine's products of the reverse weighted for detailed balance, and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/model/rates.h"

using namespace nestsim;

namespace {

constexpr double pi = 3.14159265358979323846;

std::string model_yaml(const std::string& contacts, double dt, const std::string& reaction) {
  return "nestsim: 1\nunits: {length: nm, time: us}\nbox: {size: [100, 100, 100], boundary: reflective}\n"
         "simulation: {dt: " + std::to_string(dt) + ", steps: 10, dt_limit: stable}\n"
         "species:\n  A: {radius: 2.5, diffusion: 10}\n  B: {radius: 2.5, diffusion: 10}\n"
         "  C: {radius: 2.5, diffusion: 10}\n"
         "interactions: {contacts: " + contacts + ", repulsion: 1}\n"
         "place:\n  - {species: A, at: [50, 50, 50]}\n"
         "reactions:\n" + reaction;
}

const std::string bind = "  - {name: bind, rule: \"A + B <-> C\", kon: 1e8 /M/s, koff: 1e4 /s, radius: 5}\n";

// e^{-U} weighted ball by a crude midpoint sum (independent of the Simpson rule).
double weighted_ball(double R, double contact, double repulsion) {
  const int n = 400000;
  double v = 0;
  for (int i = 0; i < n; ++i) {
    const double r = (i + 0.5) * R / n, gap = contact - r;
    v += 4 * pi * r * r * (gap > 0 ? std::exp(-0.5 * repulsion * gap * gap) : 1.0) * R / n;
  }
  return v;
}

void expect_refusal(const std::string& text, const std::string& what) {
  try {
    model::parse_model(text, "m.yaml");
    FAIL("accepted");
  } catch (const model::ModelError& e) {
    CAPTURE(e.what());
    CHECK(std::string(e.what()).find(what) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("A + B <-> C reads as the forward rule and its reverse") {
  const model::Model m = model::parse_model(model_yaml("none", 1, bind), "m.yaml");
  REQUIRE(m.reactions.size() == 2);
  const model::ReactionSpec& f = m.reactions[0];
  const model::ReactionSpec& b = m.reactions[1];
  CHECK(f.name == "bind");
  CHECK(f.forward == -1);
  REQUIRE(f.kon);
  CHECK(*f.kon == doctest::Approx(1e8 * model::per_molar_second_in_model_units(model::Units{"nm", "us"})));
  REQUIRE(f.reactants.size() == 2);
  REQUIRE(f.products.size() == 1);
  CHECK(b.name == "bind_reverse");
  CHECK(b.rule == "C -> A + B");
  CHECK(b.forward == 0);
  REQUIRE(b.koff);
  CHECK(*b.koff == doctest::Approx(0.01));  // 1e4 /s in /us
  REQUIRE(b.reactants.size() == 1);
  CHECK(b.reactants[0].kind == "C");
  REQUIRE(b.products.size() == 2);
  CHECK(b.products[0].kind == "A");
  CHECK(b.products[1].kind == "B");
  const model::Setup s = model::make_setup(m);
  REQUIRE(s.reactions.size() == 2);
  CHECK(!s.reactions[0].equilibrium_products);
  CHECK(s.reactions[1].equilibrium_products);
  CHECK(s.reactions[1].name == "bind_reverse");
  // What `nestsim run` prints for the reverse: koff and what the engine runs.
  CHECK(model::describe_rate(b, m).find("bind_reverse: koff 10000 /s = 0.01 /us -> unbinding probability ") == 0);
}

TEST_CASE("the reverse rule's unbinding probability holds K = kon / koff: q = p V koff / kon") {
  const double kon = 1e8 * model::per_molar_second_in_model_units(model::Units{"nm", "us"}), koff = 0.01;
  for (const char* contacts : {"none", "hard"})
    for (double dt : {0.01, 0.1, 1.0, 10.0}) {
      CAPTURE(contacts);
      CAPTURE(dt);
      const model::Model m = model::parse_model(model_yaml(contacts, dt, bind), "m.yaml");
      const double sigma_b = model::andrews_bray_binding_radius(kon, 20, dt);
      const double q = 4.0 / 3 * pi * std::pow(sigma_b, 3) * koff / kon;  // p = 1
      CHECK(model::unbinding_step_probability(m.reactions[1], m) == doctest::Approx(q).epsilon(1e-12));
      const model::Setup s = model::make_setup(m);
      // The engine's per-step probability 1 - exp(-rate dt) is q.
      CHECK(-std::expm1(-s.reactions[1].rate * dt) == doctest::Approx(q).epsilon(1e-12));
      CHECK(s.reactions[0].radius == doctest::Approx(sigma_b).epsilon(1e-12));
    }
  {  // soft: p = 1 - exp(-lambda dt) at the written radius, V the e^{-U} weighted ball
    const double dt = 0.002;
    const model::Model m = model::parse_model(model_yaml("soft", dt, bind), "m.yaml");
    const double lambda = model::doi_rate_for_kon_soft(kon, 20, 5, 5, 1);
    const double v = weighted_ball(5, 5, 1);
    CHECK(model::boltzmann_ball_volume(5, 5, 1) == doctest::Approx(v).epsilon(1e-8));
    const double q = -std::expm1(-lambda * dt) * v * koff / kon;
    CHECK(model::unbinding_step_probability(m.reactions[1], m) == doctest::Approx(q).epsilon(1e-8));
    const model::Setup s = model::make_setup(m);
    CHECK(-std::expm1(-s.reactions[1].rate * dt) == doctest::Approx(q).epsilon(1e-8));
  }
  // The weighted ball: no repulsion is the ball; beyond the contact the ball's shell.
  CHECK(model::boltzmann_ball_volume(3, 5, 0) == doctest::Approx(4.0 / 3 * pi * 27).epsilon(1e-14));
  CHECK(model::boltzmann_ball_volume(7, 5, 2) == doctest::Approx(weighted_ball(7, 5, 2)).epsilon(1e-8));
}

TEST_CASE("a one-way rule is read as before") {
  const model::Model m = model::parse_model(
      model_yaml("none", 1, "  - {name: bind, rule: \"A + B -> C\", kon: 1e8 /M/s, radius: 5}\n"
                       "  - {name: split, rule: \"C -> A + B\", rate: 0.01}\n"),
      "m.yaml");
  REQUIRE(m.reactions.size() == 2);
  CHECK(m.reactions[1].forward == -1);
  CHECK(!m.reactions[1].koff);
  const model::Setup s = model::make_setup(m);
  CHECK(!s.reactions[1].equilibrium_products);
  CHECK(s.reactions[1].rate == 0.01);
}

TEST_CASE("reversible rules: refusals") {
  expect_refusal(model_yaml("none", 1, "  - {name: bind, rule: \"A + B -> C\", kon: 1e8 /M/s, koff: 1e4 /s, radius: 5}\n"),
                 "reactions[0].koff: koff: is the dissociation rate of a reversible rule");
  expect_refusal(model_yaml("none", 1, "  - {name: bind, rule: \"A + B <-> C\", kon: 1e8 /M/s, radius: 5}\n"),
                 "reactions[0].koff: missing");
  expect_refusal(model_yaml("none", 1, "  - {name: bind, rule: \"A + B <-> C\", rate: 1, koff: 1, radius: 5}\n"),
                 "reactions[0].rate: a reversible rule takes kon:");
  expect_refusal(model_yaml("none", 1, "  - {name: bind, rule: \"A <-> C\", kon: 1e8 /M/s, koff: 1 /s}\n"),
                 "a reversible rule is 'A + B <-> C'");
  expect_refusal(model_yaml("none", 1, "  - {name: bind, rule: \"A + B <-> C + A\", kon: 1e8 /M/s, koff: 1 /s, radius: 5}\n"),
                 "a reversible rule is 'A + B <-> C'");
  expect_refusal(model_yaml("none", 1, "  - {name: bind, rule: \"A + B <-> 0\", kon: 1e8 /M/s, koff: 1 /s, radius: 5}\n"),
                 "'<->' needs products");
  expect_refusal(model_yaml("none", 1, bind + "  - {name: bind_reverse, rule: \"C -> 0\", rate: 1}\n"),
                 "a reaction named 'bind_reverse' is already defined");
  // The entry after a reversible rule keeps its own index in the messages.
  expect_refusal(model_yaml("none", 1, bind + "  - {name: d, rule: \"Q -> 0\", rate: 1}\n"),
                 "reactions[1].rule: 'Q' in rule");
  // koff so large that even the smallest binding ball needs q >= 1 (none, small-step
  // sigma_b = kon / (4 pi D) = 0.66 nm, V_b = 1.2 nm^3: koff > kon / V_b = 1.4e8 /s).
  expect_refusal(model_yaml("none", 0.01, "  - {name: bind, rule: \"A + B <-> C\", kon: 1e8 /M/s, koff: 1e9 /s, radius: 5}\n"),
                 "no dt holds it");
  // koff 5e7 /s holds at small steps (q -> V_b koff / kon = 0.36 as dt -> 0), not at 10
  // us (sigma_b 7.3 nm, q = 517): refused with the largest dt, where q reaches 1.
  const double kon = 1e8 * model::per_molar_second_in_model_units(model::Units{"nm", "us"}), koff = 50;
  try {
    model::parse_model(model_yaml("none", 10, "  - {name: bind, rule: \"A + B <-> C\", kon: 1e8 /M/s, koff: 5e7 /s, radius: 5}\n"),
                    "m.yaml");
    FAIL("accepted");
  } catch (const model::ModelError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("m.yaml:13:60: reactions[0].koff: koff 5e+07 /s = 50 /us") != std::string::npos);
    const std::size_t at = what.find("the largest dt is ");
    REQUIRE(at != std::string::npos);
    const double largest = std::stod(what.substr(at + 18));
    CHECK(largest < 10);
    const double sigma_b = model::andrews_bray_binding_radius(kon, 20, largest);
    CHECK(4.0 / 3 * pi * std::pow(sigma_b, 3) * koff / kon == doctest::Approx(1).epsilon(1e-6));
    // and a model at that dt is accepted
    CHECK_NOTHROW(model::parse_model(
        model_yaml("none", largest * 0.999, "  - {name: bind, rule: \"A + B <-> C\", kon: 1e8 /M/s, koff: 5e7 /s, radius: 5}\n"),
        "m.yaml"));
  }
}

// Validation: a rate constant given in M^-1 s^-1 measured back (docs/validation.md).
//
//  kon_measured: a model file's rule "A + B -> C + B" with `kon: 1e8 /M/s` and radius
//    2 nm, A and B diffusing at 10 nm^2/us each (D = 20: the diffusion limit 4 pi D sigma
//    is 3.03e8 /M/s, so this kon is a third of it and the Doi rate differs from the
//    reaction-limited kon / V_sigma by a factor ~1.6). io converts it (models/README.md,
//    "Rates"); the engine runs the rule with the converted Doi rate, in the Doi-rate
//    experiment of doi_run.h (catalytic traps among uniform A, reactions counted in a
//    window, the transient in the theory, se from independent replicas). The steady rate
//    measured back, converted to M^-1 s^-1 with io's own factor, against the kon written
//    in the file. A conversion with the wrong D (D_A alone), the wrong unit factor or the
//    reaction-limited formula misses by 20% or more.
#include <doctest/doctest.h>

#include <cmath>

#include "doi_run.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/model/rates.h"
#include "stats.h"

using namespace nestsim::validation;

namespace {

const char* const kModel = R"(nestsim: 1
units: {length: nm, time: us}
box: {size: [75, 75, 75], boundary: periodic}
simulation: {dt: 0.001, steps: 400, seed: 1}
species:
  A: {radius: 0.2, diffusion: 10}
  B: {radius: 0.2, diffusion: 10}
  C: {radius: 0.2, diffusion: 10}
interactions: {repulsion: 0}
place:
  - {species: B, at: [7.5, 7.5, 7.5]}
reactions:
  - {name: catalysis, rule: "A + B -> C + B", kon: 1e8 /M/s, radius: 2}
)";

void kon(Ledger& ledger, uint64_t seed) {
  const Timer timer("kon_measured", seed);
  const double given = 1e8;  // M^-1 s^-1, as in the file
  const nestsim::model::Model model = nestsim::model::parse_model(kModel, "kon.yaml");
  const nestsim::model::Setup base = nestsim::model::make_setup(model);
  REQUIRE(base.reactions.size() == 1);
  const double factor = nestsim::model::per_molar_second_in_model_units(model.units);  // nm^3/us per M^-1 s^-1
  DoiRun r;
  r.base = &base;
  r.sigma = base.reactions[0].radius;  // 2 nm: the geometry of doi_run.h in units of sigma
  r.lambda = base.reactions[0].rate;   // the converted Doi rate
  r.DA = nestsim::model::diffusion_of(*model.find_kind("A"), model);
  r.DB = nestsim::model::diffusion_of(*model.find_kind("B"), model);
  const double tau = r.sigma * r.sigma / (r.DA + r.DB);  // 0.2 us
  r.density = 0.07 / std::pow(r.sigma, 3);
  r.spacing = 7.5 * r.sigma;
  r.dt = model.dt;  // 0.005 tau
  r.t1 = 0.5 * tau;
  r.T = 2.0 * tau;
  r.seed = stream(seed, 100);
  // The converted rate reproduces kon by Erban-Chapman (io's inversion, to 1e-12).
  CHECK(std::fabs(erban_chapman(r.lambda, r.DA + r.DB, r.sigma) / (given * factor) - 1) < 1e-9);
  const DoiRun::Outcome o = r.run();
  const double steady = erban_chapman(r.lambda, r.DA + r.DB, r.sigma);  // == kon in nm^3/us
  const double measured = steady * o.counted / o.expected / factor;
  ledger.add("kon_measured", measured, given, steady * o.se / o.expected / factor, seed);
  std::printf("# kon_measured: kon %g /M/s = %g nm^3/us -> Doi rate %g /us (reaction-limited %g)\n", given,
              given * factor, r.lambda, given * factor / (4.0 / 3.0 * kPi * std::pow(r.sigma, 3)));
}

}  // namespace

TEST_CASE("validation: kon 1e8 /M/s in a model file, measured back") {
  Ledger ledger;
  for (uint64_t seed : seeds()) kon(ledger, seed);
  std::string why;
  CHECK_MESSAGE(ledger.ok(why), why);
}

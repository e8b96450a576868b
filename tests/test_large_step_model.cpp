// models/large_step.yaml, the receptor cycle at 1 us steps under hard contacts: `nestsim
// run` accepts it (no refusal at dt 1 us), its hydrolase rule given by kon is calibrated
// for that dt and its reactants are exempt from each other's exclusion, and a few hundred
// steps run with reactions and no two excluding proteins of one lumen overlapping.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "cli_helpers.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"

using namespace nestsim;

namespace {

const std::string kModel = NESTSIM_SOURCE_DIR "/models/large_step.yaml";

uint32_t kind_of(const model::Setup& s, const std::string& name) {
  for (std::size_t k = 0; k < s.kinds.size(); ++k)
    if (s.kinds[k].name == name) return uint32_t(k);
  FAIL("large_step.yaml has no kind '" << name << "'");
  return 0;
}

}  // namespace

TEST_CASE("large_step.yaml: dt 1 us, hard contacts, kon exempts its reactants") {
  const model::Setup s = model::make_setup(model::load_model(kModel));
  CHECK(s.dt == 1.0);
  CHECK(s.time_unit == "us");
  CHECK(s.contacts == model::Contacts::hard);
  const std::size_t n = s.kinds.size();
  REQUIRE(s.contact_exempt.size() == n * n);
  const uint32_t ligand = kind_of(s, "ligand"), hydrolase = kind_of(s, "hydrolase"),
                 crowder = kind_of(s, "crowder");
  CHECK(s.contact_exempt[ligand * n + hydrolase] == 1);
  CHECK(s.contact_exempt[hydrolase * n + ligand] == 1);
  CHECK(s.contact_exempt[ligand * n + crowder] == 0);
  CHECK(s.contact_exempt[crowder * n + crowder] == 0);
}

TEST_CASE("large_step.yaml: 300 steps of 1 us, reactions, no overlap between excluding proteins" *
          doctest::timeout(300)) {
  const model::Setup s = model::make_setup(model::load_model(kModel));
  sim::Simulation sim(s);
  sim.run(300);
  // Per-step lists without soft forces: one build at the start and one a step for its
  // moves, none at rest after the steps with events (nothing reads them before the
  // step's own; docs/performance.md, "Lists at rest after events").
  CHECK(sim.times().rebuilds == 1 + 300);
  const model::Frame f = sim.frame();
  CHECK(f.step == 300);
  uint64_t events = 0;
  for (uint64_t c : f.reaction_events) events += c;
  CHECK(events > 0);
  // Free proteins that share a parent (one lumen, or the box) and exclude each other.
  const std::size_t n = s.kinds.size();
  std::size_t overlaps = 0;
  for (std::size_t i = 0; i < f.id.size(); ++i)
    for (std::size_t j = i + 1; j < f.id.size(); ++j) {
      if (f.id[i] < 0 || f.id[j] < 0 || f.parent[i] != f.parent[j]) continue;
      const model::Kind &a = s.kinds[std::size_t(f.kind[i])], &b = s.kinds[std::size_t(f.kind[j])];
      if (a.compartment || b.compartment || a.membrane || b.membrane) continue;
      if (s.contact_exempt[std::size_t(f.kind[i]) * n + std::size_t(f.kind[j])]) continue;
      const double d2 = testing::SetupBuilder::distance2(s, f.position[i], f.position[j]);
      if (d2 < (a.radius + b.radius) * (a.radius + b.radius) * (1 - 1e-9)) ++overlaps;
    }
  CHECK(overlaps == 0);
}

TEST_CASE("large_step.yaml: nestsim run accepts it at dt 1 us and runs it") {
  const std::string out = testing::temp_path("large_step.h5");
  const testing::Run r =
      testing::run_nestsim("run " + kModel + " --steps 20 -o " + out + " --force");
  CHECK_MESSAGE(r.code == 0, r.err);
  const std::string said = r.out + r.err;  // the run's report goes to stderr
  CHECK(said.find("20 steps of 1 us") != std::string::npos);
  CHECK(said.find("Andrews-Bray") != std::string::npos);
  CHECK(testing::exists(out));
}

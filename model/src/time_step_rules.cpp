// The dt rules (nestsim/model/time_step.h) applied to a model: each kind at its time-step
// class, the automatic classes, and the refusal at `simulation.dt`.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "model_reading.h"
#include "nestsim/model/model.h"

namespace nestsim::model {
namespace {

// What the dt rules (nestsim/model/time_step.h) say of the model with each kind at its
// time-step class (`classes`, per kind; a kind of class K counts as diffusion K D):
// "" when dt passes the stiffest soft contact, or for hard and none contacts the
// membranes and the periodic images; else why not, with the largest dt accepted.
std::string time_step_problem(const Model& m, const std::vector<uint32_t>& classes) {
  std::vector<ContactKind> kinds;
  bool any_class = false;
  for (std::size_t i = 0; i < m.kinds.size(); ++i) {
    const KindSpec& k = m.kinds[i];
    kinds.push_back({k.compartment, k.membrane, double(classes[i]) * diffusion_of(k, m),
                     k.compartment ? k.radius - 0.5 * k.thickness : 0.0});
    any_class = any_class || classes[i] > 1;
  }
  const char* const classed =
      any_class ? " (a kind of time-step class K counts at K dt: as diffusion K D)" : "";
  std::ostringstream os;
  if (m.contacts != Contacts::soft) {
    const double edge = m.periodic ? std::min({m.box[0], m.box[1], m.box[2]}) : 0.0;
    const LargeStepLimit limit = large_step_max_dt(kinds, edge, m.dt_limit);
    if (m.dt <= limit.dt) return "";
    if (limit.membrane)
      os << "too large for membrane diffusion: 5 D dt / R^2 exceeds "
         << (m.dt_limit == DtLimit::accurate ? kMembraneStepAccurate : kMembraneStepStable)
         << " for the fastest membrane species on the smallest compartment (its projected "
            "step loses that fraction of D)";
    else
      os << "too large for the periodic box: " << kImageSigmas
         << " x sqrt(2 D dt) of the fastest pair (or body and carrier) exceeds half the "
            "shortest edge (moves are tested against the nearest image)";
    os << classed << "; use dt <= " << limit.dt
       << (limit.membrane && m.dt_limit == DtLimit::accurate
               ? " (or `dt_limit: stable` for 10%, models/README.md)"
               : "");
    return os.str();
  }
  const double largest = max_dt(kinds, m.repulsion, 1.0, m.dt_limit);
  if (m.dt <= largest) return "";
  const double step = m.dt * contact_rate(kinds, m.repulsion, 1.0);
  os << "too large for accurate contacts: (D_a + D_b) x repulsion x dt = " << step
     << " for the fastest pair of kinds that touch softly, above "
     << contact_step_limit(m.dt_limit) << classed << "; use dt <= " << largest
     << (m.dt_limit == DtLimit::accurate
             ? " (or `dt_limit: stable` to trade contact accuracy for speed, models/README.md;"
               " `interactions: {contacts: hard}` does not limit dt)"
             : "");
  return os.str();
}

}  // namespace

std::vector<uint32_t> step_classes(const Model& m) {
  std::vector<uint32_t> given;
  for (const KindSpec& k : m.kinds) given.push_back(k.step);
  if (!m.step_classes_auto) {
    for (uint32_t& k : given) k = k > 0 ? k : 1;
    return given;
  }
  std::vector<ContactKind> kinds;
  for (const KindSpec& k : m.kinds) kinds.push_back({k.compartment, k.membrane, diffusion_of(k, m)});
  return auto_step_classes(kinds, given, [&](const std::vector<uint32_t>& classes) {
    return time_step_problem(m, classes).empty();
  });
}

namespace model_reading {

void check_time_step(const Reader& r, const Model& m) {
  const std::string problem = time_step_problem(m, step_classes(m));
  if (!problem.empty()) r.fail(m.dt_at, "simulation.dt", problem);
}

}  // namespace model_reading

}  // namespace nestsim::model

// The largest time step the engine accepts: from the stiffness of its soft contacts, and
// for hard or no contacts from the membranes and the periodic images (below).
//
// Which pairs touch softly (simulation.h): two species (free or membrane-bound), and a
// membrane-bound species with a compartment other than its own. Everything else that
// involves a compartment is a hard wall (rejection), with no stiffness.
//
// For a soft pair of kinds a, b in contact, the overlap h relaxes per step by
//     c = (D_a + D_b) / kT * k * dt        (k: interactions.repulsion)
// (the relative coordinate of two bodies diffuses with D_a + D_b). The integrator is a
// stochastic Heun step (predictor-corrector on the drift, one noise draw): it is stable
// for c < 2 and samples a harmonic contact's Boltzmann distribution with a relative
// variance error of (c^2/2) / (2 - c + c^2/2). For the one-sided harmonic repulsion,
// measured (docs/validation.md, "contact statistics"): at c = 0.125 the energy per
// overlapping pair is within 1% of Boltzmann and the number of overlapping pairs within
// 0.5%; at c = 1 the energy is ~35% low. Hence two limits:
//   accurate (default)  c <= 0.1: contact statistics within ~1% of Boltzmann;
//   stable              c <= 1: stable, but contacts are only qualitatively right;
//                       a user chooses it knowingly (`simulation.dt_limit: stable`).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace nestsim::model {

enum class DtLimit { accurate, stable };

// How two bodies that may touch (the soft pairs above) interact (`interactions.contacts`):
//   soft  harmonic repulsion of constant `repulsion`; the contact step limits dt (above);
//   hard  a move that would make the pair overlap (centre distance < r_a + r_b) is
//         rejected, as a move into a membrane is; no force;
//   none  point-like: no excluded volume, no force.
enum class Contacts : uint8_t { soft, hard, none };

inline constexpr double kAccurateContactStep = 0.1;
inline constexpr double kStableContactStep = 1.0;

inline double contact_step_limit(DtLimit limit) {
  return limit == DtLimit::accurate ? kAccurateContactStep : kStableContactStep;
}

// What the rule needs of a kind.
struct ContactKind {
  bool compartment = false;
  bool membrane = false;  // a membrane-bound species
  double diffusion = 0;
  double mid_radius = 0;  // a compartment's membrane mid-surface radius, r - q / 2
};

// max (D_a + D_b) / kT * k over the pairs of kinds that touch softly: the contact step c
// per unit of dt. 0 when nothing touches softly (any dt is accurate).
inline double contact_rate(const std::vector<ContactKind>& kinds, double repulsion, double kT) {
  double species = 0, membrane_species = -1, compartments = -1;
  for (const ContactKind& k : kinds) {
    if (k.compartment) {
      compartments = std::max(compartments, k.diffusion);
    } else {
      species = std::max(species, k.diffusion);
      if (k.membrane) membrane_species = std::max(membrane_species, k.diffusion);
    }
  }
  bool any_species = false;
  for (const ContactKind& k : kinds) any_species = any_species || !k.compartment;
  double pair = any_species ? 2 * species : 0;
  if (membrane_species >= 0 && compartments >= 0)
    pair = std::max(pair, membrane_species + compartments);
  return pair * repulsion / kT;
}

// The largest dt within `limit` (infinity when nothing touches softly).
inline double max_dt(const std::vector<ContactKind>& kinds, double repulsion, double kT,
                     DtLimit limit) {
  const double rate = contact_rate(kinds, repulsion, kT);
  if (!(rate > 0)) return std::numeric_limits<double>::infinity();
  return contact_step_limit(limit) / rate;
}

// Hard and none contacts have no stiffness: the Gaussian proposal with rejection is
// exact for free bodies, walls and hard contacts at any dt (docs/validation.md, "Large
// steps"). Two things still limit dt:
//   membrane  a bound body's tangential step, projected back onto its sphere, diffuses
//             with D_eff = D (1 - 5 D dt / R^2) (R: the mid-surface radius); accurate
//             keeps 5 D dt / R^2 <= 0.01 (1% in D), stable <= 0.1, over the membrane
//             species and the smallest compartment kind (any could hold them);
//   images    in a periodic box, a body's jump in one step (its images) and a pair's
//             change of separation (the pair tests take the nearest image of the old
//             positions) must stay below half the edge: kImageSigmas sqrt(2 D dt) <=
//             edge / 2, D the larger of 2 D (two of the fastest species) and D of the
//             fastest species plus the fastest compartment (a body and its carrier), so
//             that no proposal in ~1e15 reaches it.
inline constexpr double kMembraneStepAccurate = 0.01;
inline constexpr double kMembraneStepStable = 0.1;
inline constexpr double kImageSigmas = 8;

// The rule that binds first, and the largest dt it accepts (infinity when none applies).
struct LargeStepLimit {
  double dt = std::numeric_limits<double>::infinity();
  bool membrane = false;  // the membrane rule binds (else the images rule, or none)
};

// min_edge: the shortest periodic box edge (0: reflective, no images).
inline LargeStepLimit large_step_max_dt(const std::vector<ContactKind>& kinds, double min_edge,
                                        DtLimit limit) {
  LargeStepLimit out;
  double species = 0, compartments = 0, membrane_d = 0, smallest = -1;
  for (const ContactKind& k : kinds) {
    if (k.compartment) {
      compartments = std::max(compartments, k.diffusion);
      if (k.mid_radius > 0 && (smallest < 0 || k.mid_radius < smallest)) smallest = k.mid_radius;
    } else {
      species = std::max(species, k.diffusion);
      if (k.membrane) membrane_d = std::max(membrane_d, k.diffusion);
    }
  }
  if (membrane_d > 0 && smallest > 0) {
    const double bound = limit == DtLimit::accurate ? kMembraneStepAccurate : kMembraneStepStable;
    out.dt = bound * smallest * smallest / (5 * membrane_d);
    out.membrane = true;
  }
  const double d = std::max(2 * species, species + compartments);
  if (min_edge > 0 && d > 0) {
    const double reach = min_edge / (2 * kImageSigmas);
    const double images = reach * reach / (2 * d);
    if (images < out.dt) {
      out.dt = images;
      out.membrane = false;
    }
  }
  return out;
}

// Time-step classes (models/README.md, "Time-step classes"): the bodies of a kind with
// `step: K` (K a power of two) move at the base steps that K divides, each move a
// Brownian step of K dt; every other step they stay where they are (carried by their
// compartment, which moves at its own class). Reactions, contacts and membranes are
// evaluated at every base step. A kind of class K is held to every dt rule above at
// K dt: the rules see it as a kind of diffusion K D (its step's variance).
inline constexpr uint32_t kMaxStepClass = 1024;

inline bool valid_step_class(uint64_t k) {
  return k >= 1 && k <= kMaxStepClass && (k & (k - 1)) == 0;
}

// The automatic classes (`simulation.step_classes: auto`). Accuracy rule: no kind's
// step at its class is longer than the fastest kind's step at dt, which the dt rules and
// the reaction calibrations were chosen for: K D_k <= D_max, so the rms step
// sqrt(2 d K D_k dt) of every kind stays within the base step's longest, and the mean
// squared relative move of a pair per step, averaged over a class's K steps, is still
// 2 d (D_a + D_b) dt (what the kon calibration assumes; the slow partner's share comes
// in one move of K steps' worth, at most the fast partner's own per step). Within it, each kind in turn takes the largest power of
// two (at most kMaxAutoStepClass) at which the whole model still passes the membrane,
// box and contact rules (`fits(classes)`, each kind at K D). Kinds that do not move
// (D 0) stay at 1; `given` (0: automatic) keeps the classes a model names. Each kind's
// classes are tested with the final classes of the kinds before it, so the result is a
// configuration that `fits` accepted (or all given, as the model asked).
inline constexpr uint32_t kMaxAutoStepClass = 64;

template <class Fits>
std::vector<uint32_t> auto_step_classes(const std::vector<ContactKind>& kinds,
                                        const std::vector<uint32_t>& given, Fits fits) {
  double fastest = 0;
  for (const ContactKind& k : kinds) fastest = std::max(fastest, k.diffusion);
  std::vector<uint32_t> out(kinds.size(), 1);
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (given[i] > 0) out[i] = given[i];
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const double d = kinds[i].diffusion;
    if (given[i] > 0 || !(d > 0)) continue;
    while (2 * out[i] <= kMaxAutoStepClass && 2 * out[i] * d <= fastest) {
      std::vector<uint32_t> trial = out;
      trial[i] = 2 * out[i];
      if (!fits(trial)) break;
      out[i] = trial[i];
    }
  }
  return out;
}

}  // namespace nestsim::model

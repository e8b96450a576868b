// The contract between the model (model.h, placement.h) and the engine (simulator/), which
// io/ writes and reads back: a fully resolved, validated initial state in model units,
// plain C++, no YAML, no device code.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nestsim/model/time_step.h"

namespace nestsim::model {

// One kind of body. Compartment kinds and species share one list (the trajectory's
// /parameters/species_names follows its order).
struct Kind {
  std::string name;
  bool compartment = false;  // a hollow sphere with a lumen; otherwise a solid species
  double radius = 0;         // length units
  double thickness = 0;      // length units; == radius for species
  double diffusion = 0;      // length^2 / time units
  bool membrane = false;     // a species that lives in a membrane (Body::membrane >= 0)
  // Time-step class (time_step.h): the kind's bodies move at the steps that `step`
  // divides, each move of step x dt; a power of two, 1 (every step) by default.
  uint32_t step = 1;
};

// One body of the initial state. Its id is its index in Setup::bodies.
struct Body {
  uint32_t kind = 0;
  std::array<double, 3> position{0, 0, 0};
  int64_t parent = -1;    // id of the innermost compartment whose lumen holds it, -1 none
  int64_t membrane = -1;  // id of the compartment whose membrane holds it, -1 none
};

// Where a reactant of a reaction rule must be, or where a product goes.
//   any       reactant: anywhere; product: where the reactant it replaces was
//   in K      in the lumen of a compartment of kind K (K is the innermost one holding it)
//   on K      bound to the membrane of a compartment of kind K
//   outside K reactant: no compartment of kind K holds it (lumen or membrane);
//             product of a body on K's membrane: released to the side outside K
struct Site {
  enum class Where : uint8_t { any, in, on, outside };
  Where where = Where::any;
  uint32_t compartment = 0;  // kind index of K (a compartment kind) unless any
};

// One reactant or product: a kind (index into Setup::kinds) and its site.
struct Term {
  uint32_t kind = 0;
  Site site;
};

// A reaction rule (models/README.md, "reactions"). One reactant: A -> 0, A -> B,
// A -> B + C, with sites (degradation in a lysosome, unbinding, transport such as
// "receptor in lysosome -> receptor on cell"). Two reactants (Doi model: while their
// centres are within `radius`, the pair reacts with probability 1 - exp(-rate dt) per
// step): A + B -> 0 | C | C + D for two species, including a free body with a bound one;
// binding "S + K -> S' on K" for a species and a compartment kind (the species' centre
// within `radius` of K's membrane mid-surface).
struct Reaction {
  std::string name;
  double rate = 0;    // per time unit: per body (one reactant) or per pair in reach (two)
  double radius = 0;  // two reactants: reaction radius (length units)
  std::vector<Term> reactants;  // 1 or 2
  std::vector<Term> products;   // 0, 1 or 2
  // A -> B + C of a free A: C's offset from B drawn from the pair's equilibrium density
  // in the reverse rule's ball (e^{-U} of the soft repulsion; under hard contacts clear
  // of the bodies C excludes), for detailed balance: the reverse of a reversible rule
  // (nestsim/model/kon_calibration.h).
  bool equilibrium_products = false;
};

enum class Boundary { periodic, reflective };

// The broad phase that finds the neighbour lists: hollow spheres (HSX, the default) or
// solid spheres (SSX, the baseline every other tool uses). Forces and events filter
// pairs by exact geometry, so the trajectory is the same; only the lists (and their
// cost) differ. Frame::broadphase_pairs reports what the lists need at a frame.
enum class Collision { hollow, solid };

struct Setup {
  int dim = 3;
  std::array<double, 3> box{0, 0, 0};  // the box [0, box)
  Boundary boundary = Boundary::periodic;
  std::string length_unit = "nm", time_unit = "us";

  double dt = 0;            // time units
  DtLimit dt_limit = DtLimit::accurate;  // the contact accuracy dt must keep (time_step.h)
  uint64_t steps = 0;       // total steps of the run
  uint64_t seed = 0;
  uint64_t output_every = 0;  // steps between trajectory frames
  std::string output_file;

  Collision collision = Collision::hollow;

  Contacts contacts = Contacts::soft;  // interactions.contacts (time_step.h)
  double repulsion = 0;  // harmonic excluded-volume force constant (energy / length^2)
  // Pairs of kinds that do not exclude each other under hard contacts: row-major over
  // kinds (contact_exempt[a * kinds.size() + b], symmetric), 1 exempt. Empty: none
  // exempt. The reactants of a bimolecular rule given by kon meet as point-like
  // reactants (the binding radius of the rule's calibration applies), so they are exempt.
  std::vector<uint8_t> contact_exempt;
  double kT = 1;         // thermal energy in the same energy unit (mobility = D / kT)

  std::vector<Kind> kinds;
  std::vector<Body> bodies;
  std::vector<Reaction> reactions;
  uint64_t capacity = 0;  // body slots in the trajectory (>= bodies.size())

  std::string model_text;  // the model file as read, kept in /parameters
  std::string model_path;
};

// The state at one step, on the host: what a trajectory frame holds. Slot s holds the
// body with id[s] (-1: an empty slot).
struct Frame {
  uint64_t step = 0;
  double time = 0;
  std::vector<std::array<double, 3>> position;  // wrapped into the box when periodic
  // Periodic images: the unwrapped position is position + image * box (per axis); empty
  // when unknown (then restore() starts every body at image 0).
  std::vector<std::array<int32_t, 3>> image;
  std::vector<int64_t> id;
  std::vector<int32_t> kind;
  std::vector<double> radius, thickness;
  std::vector<int64_t> parent, membrane;
  uint64_t next_id = 0;  // ids are never reused: the next new body gets this one
  std::vector<uint64_t> reaction_events;  // per rule of Setup::reactions, since step 0
  // The pairs the neighbour lists need at the frame's positions: the broad phase of
  // Setup::collision (HSX or SSX) over the live bodies with their reaction reach, skin
  // 0. A function of the frame alone (a resumed run records the same values); -1
  // unknown (a frame not taken from a Simulation).
  int64_t broadphase_pairs = -1;
};

}  // namespace nestsim::model

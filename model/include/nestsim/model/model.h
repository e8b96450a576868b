// Model files: YAML read into typed structs with defaults, then validated. The schema,
// every key with its unit and default, is documented in models/README.md.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nestsim/io/errors.h"
#include "nestsim/model/time_step.h"

namespace nestsim::model {

// An error in a model file, located at a YAML node: what() is
// "FILE:LINE:COLUMN: key.path: what is wrong" (line and column 1-based).
class ModelError : public io::InputError {
 public:
  ModelError(const std::string& file, long line, long column, const std::string& key,
             const std::string& what)
      : io::InputError(file, line, column, (key.empty() ? "" : key + ": ") + what),
        column_(column), key_(key), message_(what) {}
  long column() const { return column_; }
  const std::string& key() const { return key_; }  // e.g. "compartments.cell.radius"
  // What is wrong, without the "FILE:LINE:COLUMN: KEY: " in front of it.
  const std::string& message() const { return message_; }

 private:
  long column_;
  std::string key_;
  std::string message_;
};

// Where a value came from in the model file (1-based; 0 when not from a file).
struct Location {
  long line = 0, column = 0;
};

// Physical units of the numbers in a model file. The engine works in these units;
// only physical constants (Stokes-Einstein, Saffman-Delbrueck) and rates written with a
// unit (`rate: 0.5 /s`, `kon: 1e6 /M/s`) are converted.
struct Units {
  std::string length = "nm";  // nm | um
  std::string time = "us";    // ns | us | ms | s
  double metres_per_length() const;
  double seconds_per_time() const;
};

// The solvent and the membranes, for diffusion coefficients derived by Stokes-Einstein
// (3D) and Saffman-Delbrueck (membrane species). The defaults are one medium: water at
// 37 C (310 K), lipid bilayers (models/README.md gives the sources).
struct Medium {
  double temperature = 310;    // K
  double viscosity = 0.00069;  // Pa s: water at 37 C (cytoplasm is a few times more)
  double membrane_viscosity = 0.1;  // Pa s, of the lipid bilayer (Saffman-Delbrueck)
  // Bilayer thickness h (Saffman-Delbrueck), length; unset: 4 nm in the model's unit.
  std::optional<double> membrane_thickness;
  bool given = false;          // whether the file has a `medium:` section
  double membrane_thickness_in(const Units& units) const;  // length
};

// One kind of body: a compartment (hollow sphere) or a species (solid sphere).
struct KindSpec {
  std::string name;
  bool compartment = false;
  double radius = 0;     // length
  double thickness = 0;  // length; species: == radius
  // Diffusion coefficient (length^2/time). Unset: derived from the medium by `derive`;
  // see diffusion_of().
  std::optional<double> diffusion;
  // How an unset diffusion is derived. automatic: Saffman-Delbrueck for a membrane
  // species, Stokes-Einstein for every other kind.
  enum class Derive { automatic, stokes_einstein, saffman_delbruck };
  Derive derive = Derive::automatic;
  std::optional<double> viscosity;  // Pa s, overrides medium.viscosity (Stokes-Einstein only)
  bool membrane = false;            // species only: lives in a membrane (placed with on:)
  // Time-step class (`step:`): the kind's bodies move every `step` base steps, by steps
  // of step x dt (a power of two, time_step.h); 0: not given (1, or automatic).
  uint32_t step = 0;
  Location where;
};

// One entry of `place:` (initial state), in file order.
struct Placement {
  enum class Region { at, in, on, outside };
  std::string kind;            // a compartment kind or species name
  uint64_t count = 1;
  Region region = Region::at;
  std::array<double, 3> at{0, 0, 0};  // Region::at
  std::string target;                 // the compartment kind named by in/on/outside
  Location where;
};

// One term of a reaction rule: `KIND`, or `KIND in|on|outside K` (models/README.md).
struct RuleTerm {
  enum class Where { any, in, on, outside };
  std::string kind;         // a compartment kind or species name
  Where where = Where::any;
  std::string compartment;  // K, a compartment kind (unless Where::any)
};

// One entry of `reactions:`, in file order: `rule` as written and its parsed terms.
// A model built in code fills the terms (`rule` may then be empty; messages spell the
// rule from the terms).
struct ReactionSpec {
  std::string name;  // unique; the dataset /observables/reactions/NAME
  std::string rule;  // e.g. "ligand outside cell + receptor on cell -> complex on cell"
  // Per time unit: per body (one reactant) or per pair in reach (two, the Doi rate).
  // Unused when `kon` is set: reaction_rate() derives the Doi rate from it.
  double rate = 0;
  // Two species reactants only: the macroscopic rate constant, length^3/time (`kon:`).
  std::optional<double> kon;
  // What the file wrote for `rate:` or `kon:` when it gave a unit, e.g. 1e6 and "/M/s",
  // or 0.5 and "/s" (converted into `kon` or `rate`); given_unit is empty for a bare
  // number in model units.
  double given = 0;
  std::string given_unit;
  std::optional<double> radius;    // length; given exactly when there are two reactants
  // A reversible rule "A + B <-> C" (`kon:`, `koff:`) is read as two: the forward rule
  // and, after it, its reverse "C -> A + B" named NAME_reverse, which holds koff (1/time)
  // and the index of its forward rule (nestsim/model/kon_calibration.h: reverse_rate).
  std::optional<double> koff;
  int forward = -1;
  std::vector<RuleTerm> reactants;  // 1 or 2, as written
  std::vector<RuleTerm> products;   // 0, 1 or 2 (`0` in the rule: none)
  Location where;                   // the entry
  Location name_at, rule_at, radius_at, rate_at;  // its values (0: not from a file, or
                                                 // absent); rate_at: `rate:` or `kon:`
};

struct Model {
  int version = 1;  // the `nestsim:` key
  Units units;
  std::array<double, 3> box{0, 0, 0};  // length
  bool periodic = true;                // box.boundary: periodic | reflective
  bool solid = false;                  // collision: hollow (HSX, default) | solid (SSX)

  double dt = 0.1;              // time
  Location dt_at;               // where the file gives dt (0: default)
  DtLimit dt_limit = DtLimit::accurate;  // simulation.dt_limit
  uint64_t steps = 1000;        // total steps of the run
  uint64_t seed = 1;            // placement and dynamics
  uint64_t output_every = 100;  // steps between frames
  std::string output_file = "out.h5";
  uint64_t capacity = 0;  // trajectory slots; 0: 2 x initial bodies (at least +64)
  // simulation.step_classes: auto (kinds without `step:` get the class of time_step.h's
  // accuracy rule) | given (the default: `step:` or 1).
  bool step_classes_auto = false;

  Medium medium;
  Contacts contacts = Contacts::soft;  // interactions.contacts: soft | hard | none
  double repulsion = 10;  // harmonic excluded volume, kT / length^2 (soft contacts)

  std::vector<KindSpec> kinds;  // compartments first (file order), then species
  std::vector<Placement> place;
  std::vector<ReactionSpec> reactions;  // `reactions:`, in file order (may be empty)

  std::string text;  // the file as read
  std::string path;

  const KindSpec* find_kind(const std::string& name) const;
  int kind_index(const std::string& name) const;  // -1 if none
};

// Reads, parses and validates a model file. Throws ModelError (io::InputError with line 0
// for a file that cannot be read).
Model load_model(const std::string& path);

// The same for text already in memory; `name` stands for the file in messages.
Model parse_model(const std::string& text, const std::string& name);

// Each kind's time-step class (per kind of Model::kinds): its `step:`, else 1, or under
// `step_classes: auto` the automatic class (nestsim/model/time_step.h).
std::vector<uint32_t> step_classes(const Model& model);

// Checks ranges and references of a model built in code (load_model calls it too).
void validate(const Model& model);

// Boltzmann constant, J/K.
inline constexpr double boltzmann = 1.380649e-23;

// Stokes-Einstein D = kB T / (6 pi eta r) for a sphere of radius `radius` (model length
// units) in a medium of `temperature` (K) and `viscosity` (Pa s), in model units
// length^2/time.
double stokes_einstein(double radius, double temperature, double viscosity,
                       const Units& units);

// Saffman-Delbrueck D = kB T / (4 pi mu_m h) (ln(mu_m h / (mu a)) - gamma) of a protein
// of radius `radius` (model length units) in a membrane of viscosity `membrane_viscosity`
// (Pa s) and thickness `membrane_thickness` (model length units) between fluids of
// `viscosity` (Pa s), at `temperature` (K); gamma is Euler's constant. Model units
// length^2/time. Throws std::domain_error when ln(...) - gamma <= 0 (the radius is too
// large for the formula).
double saffman_delbruck(double radius, double temperature, double viscosity,
                        double membrane_viscosity, double membrane_thickness,
                        const Units& units);

// Whether a kind's diffusion coefficient comes from Saffman-Delbrueck.
bool uses_saffman_delbruck(const KindSpec& kind);

// The diffusion coefficient a kind gets (its own, Stokes-Einstein or Saffman-Delbrueck),
// model units.
double diffusion_of(const KindSpec& kind, const Model& model);

// D_A + D_B of a rule's two reactants, model units (0 for a rule with one reactant).
double reactant_diffusion(const ReactionSpec& reaction, const Model& model);

// The engine's rate of a rule, per time unit: `rate`, or for a rule given by `kon` the
// Doi rate that gives that kon at the rule's radius (nestsim/model/rates.h).
double reaction_rate(const ReactionSpec& reaction, const Model& model);

// One line on how a rule's `kon:` or `rate:` with a unit was converted (what
// `nestsim run` prints), e.g. "binding: kon 1e+06 /M/s = 1.66 nm^3/us -> Doi rate
// 0.0062 /us at radius 4 nm (D_A + D_B = 50 nm^2/us)"; "" for a bare rate.
std::string describe_rate(const ReactionSpec& reaction, const Model& model);

}  // namespace nestsim::model

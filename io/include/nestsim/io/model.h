// Model files: YAML read into typed structs with defaults, then validated. The schema,
// every key with its unit and default, is documented in models/README.md.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nestsim/io/scene_csv.h"  // InputError
#include "nestsim/sim/time_step.h"

namespace nestsim::io {

// An error in a model file, located at a YAML node: what() is
// "FILE:LINE:COLUMN: key.path: what is wrong" (line and column 1-based).
class ModelError : public InputError {
 public:
  ModelError(const std::string& file, long line, long column, const std::string& key,
             const std::string& what)
      : InputError(file, line, column, (key.empty() ? "" : key + ": ") + what),
        column_(column), key_(key) {}
  long column() const { return column_; }
  const std::string& key() const { return key_; }  // e.g. "compartments.cell.radius"

 private:
  long column_;
  std::string key_;
};

// Where a value came from in the model file (1-based; 0 when not from a file).
struct Location {
  long line = 0, column = 0;
};

// Physical units of the numbers in a model file. The engine works in these units;
// only physical constants (Stokes-Einstein) are converted.
struct Units {
  std::string length = "nm";  // nm | um
  std::string time = "us";    // ns | us | ms | s
  double metres_per_length() const;
  double seconds_per_time() const;
};

// The solvent, for diffusion coefficients derived by Stokes-Einstein.
struct Medium {
  double temperature = 310;    // K
  double viscosity = 0.00089;  // Pa s (water at 25 C; cytoplasm is a few times more)
  bool given = false;          // whether the file has a `medium:` section
};

// One kind of body: a compartment (hollow sphere) or a species (solid sphere).
struct KindSpec {
  std::string name;
  bool compartment = false;
  double radius = 0;     // length
  double thickness = 0;  // length; species: == radius
  // Diffusion coefficient (length^2/time). Unset: derived by Stokes-Einstein from the
  // medium (and this kind's own viscosity if given); see stokes_einstein().
  std::optional<double> diffusion;
  std::optional<double> viscosity;  // Pa s, overrides medium.viscosity for this kind
  bool membrane = false;            // species only: lives in a membrane (placed with on:)
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
  double rate = 0;   // per time unit: per body (one reactant) or per pair in reach (two)
  std::optional<double> radius;    // length; given exactly when there are two reactants
  std::vector<RuleTerm> reactants;  // 1 or 2, as written
  std::vector<RuleTerm> products;   // 0, 1 or 2 (`0` in the rule: none)
  Location where;                   // the entry
  Location name_at, rule_at, radius_at;  // its values (0: not from a file, or absent)
};

struct Model {
  int version = 1;  // the `nestsim:` key
  Units units;
  std::array<double, 3> box{0, 0, 0};  // length
  bool periodic = true;                // box.boundary: periodic | reflective
  bool solid = false;                  // collision: hollow (HSX, default) | solid (SSX)

  double dt = 0.1;              // time
  Location dt_at;               // where the file gives dt (0: default)
  sim::DtLimit dt_limit = sim::DtLimit::accurate;  // simulation.dt_limit
  uint64_t steps = 1000;        // total steps of the run
  uint64_t seed = 1;            // placement and dynamics
  uint64_t output_every = 100;  // steps between frames
  std::string output_file = "out.h5";
  uint64_t capacity = 0;  // trajectory slots; 0: 2 x initial bodies (at least +64)

  Medium medium;
  double repulsion = 10;  // harmonic excluded volume, kT / length^2

  std::vector<KindSpec> kinds;  // compartments first (file order), then species
  std::vector<Placement> place;
  std::vector<ReactionSpec> reactions;  // `reactions:`, in file order (may be empty)

  std::string text;  // the file as read
  std::string path;

  const KindSpec* find_kind(const std::string& name) const;
  int kind_index(const std::string& name) const;  // -1 if none
};

// Reads, parses and validates a model file. Throws ModelError (InputError with line 0
// for a file that cannot be read).
Model load_model(const std::string& path);

// The same for text already in memory; `name` stands for the file in messages.
Model parse_model(const std::string& text, const std::string& name);

// Checks ranges and references of a model built in code (load_model calls it too).
void validate(const Model& model);

// Boltzmann constant, J/K.
inline constexpr double boltzmann = 1.380649e-23;

// Stokes-Einstein D = kB T / (6 pi eta r) for a sphere of radius `radius` (model length
// units) in a medium of `temperature` (K) and `viscosity` (Pa s), in model units
// length^2/time.
double stokes_einstein(double radius, double temperature, double viscosity,
                       const Units& units);

// The diffusion coefficient a kind gets (its own, or Stokes-Einstein), model units.
double diffusion_of(const KindSpec& kind, const Model& model);

}  // namespace nestsim::io

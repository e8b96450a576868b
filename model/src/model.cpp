// Model files: YAML -> Model. Every value is checked where it is read, so that errors
// point at the exact node (line, column, key path); validate() then checks what spans
// several keys (references, sizes against the box).
#include "nestsim/model/model.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "model_reading.h"
#include "nestsim/io/regular_file.h"

#include "nestsim/model/placement.h"
#include "nestsim/model/kon_calibration.h"
#include "nestsim/model/rates.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nestsim::model {
namespace {

using namespace model_reading;

void read_units(const Reader& r, const YAML::Node& node, Units& units) {
  r.expect_map(node, "units", {"length", "time"});
  if (node["length"]) units.length = r.choice(node["length"], "units.length", {"nm", "um"});
  if (node["time"])
    units.time = r.choice(node["time"], "units.time", {"ns", "us", "ms", "s"});
}

void read_box(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "box", {"size", "boundary"});
  if (!node["size"]) r.fail(node, "box.size", "missing (expected [x, y, z] lengths)");
  m.box = r.vector3(node["size"], "box.size");
  for (int d = 0; d < 3; ++d)
    if (!(m.box[d] > 0))
      r.fail(node["size"][d], "box.size[" + std::to_string(d) + "]",
             "expected a number > 0, got '" + node["size"][d].Scalar() + "'");
  if (node["boundary"])
    m.periodic =
        r.choice(node["boundary"], "box.boundary", {"periodic", "reflective"}) == "periodic";
}

void read_simulation(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "simulation", {"dt", "dt_limit", "steps", "seed", "output", "capacity", "step_classes"});
  if (node["dt"]) {
    m.dt = r.number_at_least(node["dt"], "simulation.dt", 0, true);
    m.dt_at = location(node["dt"]);
  }
  if (node["dt_limit"])
    m.dt_limit = r.choice(node["dt_limit"], "simulation.dt_limit", {"accurate", "stable"}) == "accurate"
                     ? DtLimit::accurate
                     : DtLimit::stable;
  if (node["step_classes"])
    m.step_classes_auto =
        r.choice(node["step_classes"], "simulation.step_classes", {"auto", "given"}) == "auto";
  if (node["steps"]) m.steps = r.integer(node["steps"], "simulation.steps", 0);
  if (node["seed"]) m.seed = r.integer(node["seed"], "simulation.seed", 0);
  if (node["capacity"]) {
    m.capacity = r.integer(node["capacity"], "simulation.capacity", 1);
    if (m.capacity > uint64_t(max_slots))
      r.fail(node["capacity"], "simulation.capacity",
             "at most " + std::to_string(max_slots) + " slots (2^31 - 1), got " +
                 std::to_string(m.capacity));
  }
  if (const YAML::Node out = node["output"]) {
    r.expect_map(out, "simulation.output", {"every", "file"});
    if (out["every"])
      m.output_every = r.integer(out["every"], "simulation.output.every", 1);
    if (out["file"]) m.output_file = r.name(out["file"], "simulation.output.file");
  }
}

void read_medium(const Reader& r, const YAML::Node& node, Model& m) {
  r.expect_map(node, "medium",
               {"temperature", "viscosity", "membrane_viscosity", "membrane_thickness"});
  m.medium.given = true;
  if (node["temperature"])
    m.medium.temperature =
        r.number_at_least(node["temperature"], "medium.temperature", 0, true);
  if (node["viscosity"])
    m.medium.viscosity = r.number_at_least(node["viscosity"], "medium.viscosity", 0, true);
  if (node["membrane_viscosity"])
    m.medium.membrane_viscosity =
        r.number_at_least(node["membrane_viscosity"], "medium.membrane_viscosity", 0, true);
  if (node["membrane_thickness"])
    m.medium.membrane_thickness =
        r.number_at_least(node["membrane_thickness"], "medium.membrane_thickness", 0, true);
}

// What keeps Saffman-Delbrueck from giving `k` a diffusion coefficient, or "".
std::string saffman_delbruck_problem(const KindSpec& k, const Model& m) {
  const double l = m.units.metres_per_length();
  const double surface = m.medium.membrane_viscosity * m.medium.membrane_thickness_in(m.units) * l;
  if (std::log(surface / (m.medium.viscosity * k.radius * l)) - euler_gamma > 0) return "";
  std::ostringstream os;
  os << "Saffman-Delbrueck needs ln(mu_m h / (mu a)) > gamma = 0.5772, that is a radius below "
     << surface / (m.medium.viscosity * std::exp(euler_gamma)) / l << " " << m.units.length
     << " (medium.membrane_viscosity " << m.medium.membrane_viscosity
     << " Pa s, membrane_thickness " << m.medium.membrane_thickness_in(m.units) << " "
     << m.units.length << ", viscosity " << m.medium.viscosity << " Pa s); radius " << k.radius
     << " is too large for it: give diffusion as a number";
  return os.str();
}

const char* const sd_viscosity =
    "a kind's viscosity is the 3D viscosity of Stokes-Einstein; this membrane species gets "
    "Saffman-Delbrueck (medium.viscosity around the membrane, medium.membrane_viscosity, "
    "medium.membrane_thickness): leave viscosity out, or write `diffusion: stokes-einstein` "
    "to use the 3D formula with it";

void read_kinds(const Reader& r, const YAML::Node& node, bool compartment, Model& m) {
  const std::string section = compartment ? "compartments" : "species";
  r.expect_map(node, section, {});
  for (const auto& entry : node) {
    KindSpec k;
    k.name = entry.first.Scalar();
    k.compartment = compartment;
    k.where = location(entry.first);
    const std::string key = section + "." + k.name;
    if (!valid_name(k.name))
      r.fail(entry.first, section + "." + io::excerpt(k.name),
             "a kind name is a letter or '_' then letters, digits, '_', '-'");
    if (m.find_kind(k.name))
      r.fail(entry.first, key, "a kind named '" + k.name + "' is already defined");
    if (m.kinds.size() >= max_kinds)
      r.fail(entry.first, key,
             "more than " + std::to_string(max_kinds) +
                 " kinds (compartments and species together): every frame stores counts "
                 "per pair of kinds");
    const YAML::Node& v = entry.second;
    if (compartment)
      r.expect_map(v, key, {"radius", "thickness", "diffusion", "viscosity", "step"});
    else
      r.expect_map(v, key, {"radius", "diffusion", "viscosity", "membrane", "step"});
    if (const YAML::Node st = v["step"]) {
      const uint64_t every = r.integer(st, key + ".step", 1);
      if (!valid_step_class(every))
        r.fail(st, key + ".step",
               "expected a power of two from 1 to " + std::to_string(kMaxStepClass) +
                   " (the kind's bodies move every `step` base steps, models/README.md), got '" +
                   st.Scalar() + "'");
      k.step = uint32_t(every);
    }
    if (!v["radius"]) r.fail(v, key + ".radius", "missing (expected a length > 0)");
    k.radius = r.number_at_least(v["radius"], key + ".radius", 0, true);
    if (compartment) {
      if (!v["thickness"])
        r.fail(v, key + ".thickness", "missing (expected a length > 0 and < radius)");
      k.thickness = r.number_at_least(v["thickness"], key + ".thickness", 0, true);
      if (!(k.thickness < k.radius))
        r.fail(v["thickness"], key + ".thickness",
               "expected a length < radius (" + v["radius"].Scalar() + "), got '" +
                   v["thickness"].Scalar() + "'");
    } else {
      k.thickness = k.radius;
      if (v["membrane"]) k.membrane = r.boolean(v["membrane"], key + ".membrane");
    }
    if (v["viscosity"])
      k.viscosity = r.number_at_least(v["viscosity"], key + ".viscosity", 0, true);
    if (const YAML::Node d = v["diffusion"]) {
      if (d.IsScalar() && d.Scalar() == "stokes-einstein") {
        k.derive = KindSpec::Derive::stokes_einstein;  // left unset: derived
      } else if (d.IsScalar() && d.Scalar() == "saffman-delbruck") {
        if (!k.membrane)
          r.fail(d, key + ".diffusion",
                 std::string("saffman-delbruck is for membrane species (membrane: true); a ") +
                     (compartment ? "compartment" : "free species") +
                     " takes stokes-einstein or a number");
        k.derive = KindSpec::Derive::saffman_delbruck;
      } else if (d.IsScalar() && d.Tag() != "!" && looks_numeric(d.Scalar())) {
        k.diffusion = r.number_at_least(d, key + ".diffusion", 0, false);
      } else {
        r.fail(d, key + ".diffusion",
               "expected a number >= 0, stokes-einstein or saffman-delbruck, got " + describe(d));
      }
    }
    if (!k.diffusion && !m.medium.given)
      r.fail(v, key + ".diffusion",
             "missing: give a diffusion coefficient, or a `medium:` section "
             "(temperature, viscosity) to derive it by Stokes-Einstein or Saffman-Delbrueck");
    if (uses_saffman_delbruck(k)) {
      if (v["viscosity"]) r.fail(v["viscosity"], key + ".viscosity", sd_viscosity);
      const std::string problem = saffman_delbruck_problem(k, m);
      if (!problem.empty())
        r.fail(v["diffusion"] ? v["diffusion"] : v, key + ".diffusion", problem);
    }
    m.kinds.push_back(k);
  }
}

void read_place(const Reader& r, const YAML::Node& node, Model& m) {
  std::set<std::string> placed;  // the kinds of the entries so far
  if (!node.IsSequence() || node.size() == 0)
    r.fail(node, "place",
           "expected a list of placements, got " + (node.IsSequence() ? "an empty list"
                                                                      : describe(node)));
  if (node.size() > max_place_entries)
    r.fail(node, "place",
           std::to_string(node.size()) + " entries, more than " +
               std::to_string(max_place_entries) +
               " (each is placed in turn): give a count to an entry instead of repeating it");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& e = node[i];
    const std::string key = "place[" + std::to_string(i) + "]";
    r.expect_map(e, key, {"compartment", "species", "count", "at", "in", "on", "outside"});
    Placement p;
    p.where = location(e);
    const bool is_compartment = bool(e["compartment"]);
    if (is_compartment == bool(e["species"]))
      r.fail(e, key, "expected exactly one of `compartment:` or `species:`");
    const std::string field = is_compartment ? "compartment" : "species";
    p.kind = r.name(e[field], key + "." + field);
    const KindSpec* kind = m.find_kind(p.kind);
    if (!kind || kind->compartment != is_compartment)
      r.fail(e[field], key + "." + field,
             "'" + p.kind + "' names no " + (is_compartment ? "compartment kind" : "species") +
                 " (defined under `" + (is_compartment ? "compartments" : "species") + ":`)");
    int regions = 0;
    for (const char* k : {"at", "in", "on", "outside"}) regions += bool(e[k]);
    if (regions != 1)
      r.fail(e, key, "expected exactly one of `at:`, `in:`, `on:`, `outside:`");
    if (e["count"]) p.count = r.integer(e["count"], key + ".count", 1);
    if (e["at"]) {
      p.region = Placement::Region::at;
      p.at = r.vector3(e["at"], key + ".at");
      if (e["count"] && p.count != 1)
        r.fail(e["count"], key + ".count", "`at:` places one body: expected count 1");
    } else {
      const char* k = e["in"] ? "in" : e["on"] ? "on" : "outside";
      p.region = e["in"]   ? Placement::Region::in
                 : e["on"] ? Placement::Region::on
                           : Placement::Region::outside;
      p.target = r.name(e[k], key + "." + k);
      const KindSpec* target = m.find_kind(p.target);
      if (!target || !target->compartment)
        r.fail(e[k], key + "." + k, "'" + p.target + "' names no compartment kind");
      if (!placed.count(p.target))
        r.fail(e[k], key + "." + k,
               "no '" + p.target + "' compartment is placed before this entry");
      if (p.region == Placement::Region::on && kind->compartment)
        r.fail(e[k], key + ".on", "compartments cannot be placed on a membrane");
      if (p.region == Placement::Region::on && !kind->membrane)
        r.fail(e[k], key + ".on",
               "species '" + p.kind + "' is not a membrane species (membrane: true)");
    }
    if (kind->membrane && p.region != Placement::Region::on)
      r.fail(e, key, "membrane species '" + p.kind + "' must be placed with `on:`");
    placed.insert(p.kind);
    m.place.push_back(p);
  }
}

}  // namespace

using namespace model_reading;

double Units::metres_per_length() const {
  if (length == "nm") return 1e-9;
  if (length == "um") return 1e-6;
  throw std::invalid_argument("unknown length unit '" + length + "'");
}

double Units::seconds_per_time() const {
  if (time == "ns") return 1e-9;
  if (time == "us") return 1e-6;
  if (time == "ms") return 1e-3;
  if (time == "s") return 1;
  throw std::invalid_argument("unknown time unit '" + time + "'");
}

const KindSpec* Model::find_kind(const std::string& name) const {
  const int i = kind_index(name);
  return i < 0 ? nullptr : &kinds[i];
}

int Model::kind_index(const std::string& name) const {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i].name == name) return static_cast<int>(i);
  return -1;
}

double stokes_einstein(double radius, double temperature, double viscosity,
                       const Units& units) {
  const double r_m = radius * units.metres_per_length();
  const double d_si = boltzmann * temperature / (6 * pi * viscosity * r_m);  // m^2/s
  const double l = units.metres_per_length();
  return d_si * units.seconds_per_time() / (l * l);
}

double Medium::membrane_thickness_in(const Units& units) const {
  return membrane_thickness ? *membrane_thickness : 4e-9 / units.metres_per_length();
}

double saffman_delbruck(double radius, double temperature, double viscosity,
                        double membrane_viscosity, double membrane_thickness,
                        const Units& units) {
  const double l = units.metres_per_length();
  const double surface = membrane_viscosity * membrane_thickness * l;  // mu_m h, Pa s m
  const double log_term = std::log(surface / (viscosity * radius * l)) - euler_gamma;
  if (!(log_term > 0))
    throw std::domain_error("Saffman-Delbrueck: ln(mu_m h / (mu a)) - gamma <= 0");
  const double d_si = boltzmann * temperature / (4 * pi * surface) * log_term;  // m^2/s
  return d_si * units.seconds_per_time() / (l * l);
}

bool uses_saffman_delbruck(const KindSpec& kind) {
  if (kind.diffusion || kind.compartment) return false;
  return kind.derive == KindSpec::Derive::saffman_delbruck ||
         (kind.derive == KindSpec::Derive::automatic && kind.membrane);
}

double diffusion_of(const KindSpec& kind, const Model& model) {
  if (kind.diffusion) return *kind.diffusion;
  if (uses_saffman_delbruck(kind))
    return saffman_delbruck(kind.radius, model.medium.temperature, model.medium.viscosity,
                            model.medium.membrane_viscosity,
                            model.medium.membrane_thickness_in(model.units), model.units);
  return stokes_einstein(kind.radius, model.medium.temperature,
                         kind.viscosity.value_or(model.medium.viscosity), model.units);
}

double reactant_diffusion(const ReactionSpec& reaction, const Model& model) {
  if (reaction.reactants.size() != 2) return 0;
  double d = 0;
  for (const auto& t : reaction.reactants) {
    const KindSpec* k = model.find_kind(t.kind);
    if (!k) throw std::invalid_argument("reaction '" + reaction.name + "': no kind '" + t.kind + "'");
    d += diffusion_of(*k, model);
  }
  return d;
}

double reaction_rate(const ReactionSpec& reaction, const Model& model) {
  return calibrate_rule(reaction, model).rate;  // kon held at dt for m.contacts
}

std::string describe_rate(const ReactionSpec& x, const Model& m) {
  if (!x.kon && x.given_unit.empty() && x.forward < 0) return "";
  const std::string& len = m.units.length;
  const std::string& time = m.units.time;
  std::ostringstream os;
  os << x.name << ": ";
  if (x.kon) {
    os << "kon ";
    if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
    const KonRule k = calibrate_rule(x, m);
    os << *x.kon << " " << len << "^3/" << time;
    if (k.every_pair)
      os << " -> binding radius " << k.radius << " " << len << " at dt " << m.dt << " " << time
         << " (Andrews-Bray)";
    else
      os << " -> Doi rate " << k.rate << " /" << time << " at radius " << k.radius << " " << len;
    os << " (D_A + D_B = " << reactant_diffusion(x, m) << " " << len << "^2/" << time << ")";
  } else if (x.forward >= 0) {  // the reverse of a reversible rule (kon_calibration.h)
    os << "koff ";
    if (!x.given_unit.empty()) os << x.given << " " << x.given_unit << " = ";
    os << x.koff.value_or(0) << " /" << time << " -> unbinding probability "
       << unbinding_step_probability(x, m) << " per step (rate " << calibrate_rule(x, m).rate << " /"
       << time << ") at dt " << m.dt << " " << time << ", K = kon / koff";
  } else {
    os << "rate " << x.given << " " << x.given_unit << " = " << x.rate << " /" << time;
    if (x.reactants.size() == 2)
      os << " (Doi rate at radius " << x.radius.value_or(0) << " " << len << ")";
  }
  return os.str();
}

Model parse_model(const std::string& text, const std::string& name) {
  const Reader r(name);
  YAML::Node root;
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(text);  // every one parsed
    for (std::size_t d = 1; d < documents.size(); ++d)  // an empty one after --- is harmless
      if (!documents[d].IsNull())
        r.fail(documents[d], "", "a second YAML document (after ---): a model file holds one");
    if (!documents.empty()) root = documents[0];
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own message: "bad file"
    r.fail(Location{e.mark.line + 1, e.mark.column + 1}, "",
           "YAML: lists and maps nested more than " + std::to_string(e.depth()) +
               " deep (a model nests a few levels)");
  } catch (const YAML::ParserException& e) {
    r.fail(Location{e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax: " + e.msg);
  }
  Model m;
  m.text = text;
  m.path = name;
  if (!root.IsMap()) r.fail(root, "", "expected a map of sections, got " + describe(root));
  r.expect_map(root, "",
               {"nestsim", "units", "box", "simulation", "medium", "compartments",
                "species", "interactions", "place", "reactions", "collision"});
  if (!root["nestsim"]) r.fail(root, "nestsim", "missing (expected `nestsim: 1`)");
  if (r.integer(root["nestsim"], "nestsim", 1) != 1)
    r.fail(root["nestsim"], "nestsim", "expected schema version 1, got '" +
                                           root["nestsim"].Scalar() + "'");
  if (root["units"]) read_units(r, root["units"], m.units);
  if (!root["box"]) r.fail(root, "box", "missing (expected {size: [x, y, z]})");
  read_box(r, root["box"], m);
  if (root["simulation"]) read_simulation(r, root["simulation"], m);
  if (root["medium"]) read_medium(r, root["medium"], m);
  if (root["compartments"]) read_kinds(r, root["compartments"], true, m);
  if (root["species"]) read_kinds(r, root["species"], false, m);
  if (const YAML::Node i = root["interactions"]) {
    r.expect_map(i, "interactions", {"contacts", "repulsion"});
    if (i["contacts"]) {
      const std::string c = r.choice(i["contacts"], "interactions.contacts", {"soft", "hard", "none"});
      m.contacts = c == "hard" ? Contacts::hard : c == "none" ? Contacts::none : Contacts::soft;
    }
    if (i["repulsion"])
      m.repulsion = r.number_at_least(i["repulsion"], "interactions.repulsion", 0, false);
  }
  if (root["collision"])
    m.solid = r.choice(root["collision"], "collision", {"hollow", "solid"}) == "solid";
  if (!root["place"]) r.fail(root, "place", "missing (expected a list of placements)");
  read_place(r, root["place"], m);
  if (root["reactions"]) read_reactions(r, root["reactions"], m);
  validate(m);
  return m;
}

Model load_model(const std::string& path) {
  io::require_regular_file(path, "a model file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io::InputError(path, 0, "cannot open the model file");
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw io::InputError(path, 0, "is a directory, not a model file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model(text.str(), path);
}

namespace {

// Each kind's sizes, diffusion (given or derived) and fit in the box.
void check_kinds(const Reader& r, const Model& m, double min_box) {
  for (const auto& k : m.kinds) {
    const std::string key = (k.compartment ? "compartments." : "species.") + k.name;
    if (!(k.radius > 0)) r.fail(k.where, key + ".radius", "expected a length > 0");
    if (k.compartment && !(k.thickness > 0 && k.thickness < k.radius))
      r.fail(k.where, key + ".thickness", "expected a length > 0 and < radius");
    if (!k.compartment && k.thickness != k.radius)
      r.fail(k.where, key + ".thickness", "a species is solid: thickness == radius");
    if (k.diffusion && !(*k.diffusion >= 0))
      r.fail(k.where, key + ".diffusion", "expected a number >= 0");
    if (!k.diffusion && !m.medium.given)
      r.fail(k.where, key + ".diffusion", "missing, and no `medium:` for Stokes-Einstein");
    if (k.viscosity && !(*k.viscosity > 0))
      r.fail(k.where, key + ".viscosity", "expected a viscosity > 0 (Pa s)");
    if (!k.diffusion && k.derive == KindSpec::Derive::saffman_delbruck && !k.membrane)
      r.fail(k.where, key + ".diffusion", "saffman-delbruck is for membrane species (membrane: true)");
    if (m.medium.given && uses_saffman_delbruck(k)) {
      if (k.viscosity) r.fail(k.where, key + ".viscosity", sd_viscosity);
      const std::string problem = saffman_delbruck_problem(k, m);
      if (!problem.empty()) r.fail(k.where, key + ".diffusion", problem);
    }
    if (k.compartment && k.membrane)
      r.fail(k.where, key + ".membrane", "only species live in a membrane");
    if (k.step != 0 && !valid_step_class(k.step))
      r.fail(k.where, key + ".step",
             "expected a power of two from 1 to " + std::to_string(kMaxStepClass));
    // A body must fit the box; in a periodic box its minimum images must be unique.
    const bool fits = m.periodic ? 2 * k.radius < min_box : 2 * k.radius <= min_box;
    if (!fits) {
      std::ostringstream os;
      os << "radius " << k.radius << " does not fit the box (the smallest edge is " << min_box
         << (m.periodic ? "; periodic boxes need 2 r < edge)" : ")");
      r.fail(k.where, key + ".radius", os.str());
    }
  }
}

// Each placement names a kind, a count, and a compartment placed before it.
void check_place(const Reader& r, const Model& m) {
  const Location top{};
  if (m.place.empty()) r.fail(top, "place", "expected a list of placements");
  std::set<std::string> placed;
  for (std::size_t i = 0; i < m.place.size(); ++i) {
    const Placement& p = m.place[i];
    const std::string key = "place[" + std::to_string(i) + "]";
    const KindSpec* kind = m.find_kind(p.kind);
    if (!kind) r.fail(p.where, key, "'" + p.kind + "' names no kind");
    if (p.count == 0) r.fail(p.where, key + ".count", "expected an integer >= 1");
    if (p.region == Placement::Region::at) {
      if (p.count != 1) r.fail(p.where, key + ".count", "`at:` places one body");
    } else {
      const KindSpec* target = m.find_kind(p.target);
      if (!target || !target->compartment)
        r.fail(p.where, key, "'" + p.target + "' names no compartment kind");
      if (!placed.count(p.target))
        r.fail(p.where, key, "no '" + p.target + "' compartment is placed before this entry");
      if (p.region == Placement::Region::on && !kind->membrane)
        r.fail(p.where, key + ".on", "'" + p.kind + "' is not a membrane species");
    }
    if (kind->membrane && p.region != Placement::Region::on)
      r.fail(p.where, key, "membrane species '" + p.kind + "' must be placed with `on:`");
    placed.insert(p.kind);
  }
}

}  // namespace

void validate(const Model& m) {
  const Reader r(m.path);
  const Location top{};
  if (m.version != 1) r.fail(top, "nestsim", "expected schema version 1");
  try {
    m.units.metres_per_length();
    m.units.seconds_per_time();
  } catch (const std::invalid_argument& e) {
    r.fail(top, "units", e.what());
  }
  for (int d = 0; d < 3; ++d)
    if (!(m.box[d] > 0) || !std::isfinite(m.box[d]))
      r.fail(top, "box.size", "expected 3 lengths > 0");
  if (!(m.dt > 0)) r.fail(top, "simulation.dt", "expected a time > 0");
  if (m.output_every == 0) r.fail(top, "simulation.output.every", "expected an integer >= 1");
  if (m.output_file.empty()) r.fail(top, "simulation.output.file", "expected a file name");
  if (m.medium.given && !(m.medium.temperature > 0 && m.medium.viscosity > 0))
    r.fail(top, "medium", "expected temperature > 0 and viscosity > 0");
  if (m.medium.given &&
      !(m.medium.membrane_viscosity > 0 && std::isfinite(m.medium.membrane_viscosity) &&
        m.medium.membrane_thickness_in(m.units) > 0 &&
        std::isfinite(m.medium.membrane_thickness_in(m.units))))
    r.fail(top, "medium", "expected membrane_viscosity > 0 and membrane_thickness > 0");
  if (!(m.repulsion >= 0)) r.fail(top, "interactions.repulsion", "expected a number >= 0");
  const double min_box = std::min({m.box[0], m.box[1], m.box[2]});
  if (m.kinds.size() > max_kinds)
    r.fail(top, "species", std::to_string(m.kinds.size()) + " kinds, more than " +
                               std::to_string(max_kinds) + " (compartments and species together)");
  if (m.place.size() > max_place_entries)
    r.fail(top, "place", std::to_string(m.place.size()) + " entries, more than " +
                             std::to_string(max_place_entries));
  check_kinds(r, m, min_box);
  check_place(r, m);
  check_reactions(r, m, min_box);
  check_time_step(r, m);
}

}  // namespace nestsim::model

// `nestsim view`'s reading of a trajectory through io::Trajectory: its description, as
// JSON for the page.
#include "view_trajectory.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <sstream>

#include "nestsim/model/model.h"
#include "nestsim/io/errors.h"
#include "nestsim/io/trajectory.h"

namespace nestsim::app {
namespace {

// Budding makes compartments from a membrane; fusion merges two compartments.
std::string role_of(const model::ReactionSpec& rule, const std::vector<ViewKind>& kinds) {
  const auto compartments = [&](const std::vector<model::RuleTerm>& terms) {
    int n = 0;
    for (const auto& term : terms)
      for (const auto& k : kinds)
        if (k.name == term.kind && k.compartment) ++n;
    return n;
  };
  const int in = compartments(rule.reactants), out = compartments(rule.products);
  if (out > in) return "budding";
  if (in >= 2 && out < in) return "fusion";
  return "";
}

void read_reactions(const io::Trajectory& file, ViewTrajectory& t) {
  if (file.reaction_names().empty()) return;
  std::map<std::string, model::ReactionSpec> rules;
  try {
    const std::string where = file.model_path();
    const model::Model model =
        model::parse_model(file.model_text(), where.empty() ? t.path : where);
    for (const auto& r : model.reactions) rules[r.name] = r;
  } catch (const std::exception&) {
    // A model this build cannot parse (another version): no rule text, no roles.
  }
  const std::vector<std::string>& names = file.reaction_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    ViewReaction r;
    r.name = names[i];
    const auto rule = rules.find(names[i]);
    if (rule != rules.end()) {
      r.rule = rule->second.rule;
      r.role = role_of(rule->second, t.kinds);
    }
    r.events = file.reaction_events(i);
    t.reactions.push_back(std::move(r));
  }
}

}  // namespace

ViewTrajectory read_view_trajectory(const std::string& path) {
  // io's reader checks the file (a regular file, every dataset's type and shape) before
  // anything here is sized from it.
  try {
    const io::Trajectory file(path);
    ViewTrajectory t;
    t.path = path;
    t.frames = file.frames();
    t.steps = file.steps();
    t.times = file.times();
    t.slots = file.slots();
    t.length_unit = file.length_unit();
    t.time_unit = file.time_unit();
    const std::array<double, 3> box = file.box();
    std::copy(box.begin(), box.end(), t.box);
    t.periodic = file.periodic();
    const io::TrajectoryKinds& kinds = file.kinds();
    for (std::size_t i = 0; i < kinds.names.size(); ++i)
      t.kinds.push_back({kinds.names[i], bool(kinds.compartment[i]), bool(kinds.membrane[i]),
                         kinds.radius[i], kinds.thickness[i]});
    read_reactions(file, t);
    return t;
  } catch (const io::InputError& e) {
    throw ViewError(e.what());
  }
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string to_json(const ViewTrajectory& t) {
  std::ostringstream o;
  o.precision(17);
  o << "{\"file\":" << json_string(t.path) << ",\"frames\":" << t.frames
    << ",\"slots\":" << t.slots << ",\"length_unit\":" << json_string(t.length_unit)
    << ",\"time_unit\":" << json_string(t.time_unit) << ",\"box\":[" << t.box[0] << ","
    << t.box[1] << "," << t.box[2] << "],\"periodic\":" << (t.periodic ? "true" : "false");
  o << ",\"steps\":[";
  for (std::size_t i = 0; i < t.steps.size(); ++i) o << (i ? "," : "") << t.steps[i];
  o << "],\"times\":[";
  for (std::size_t i = 0; i < t.times.size(); ++i) o << (i ? "," : "") << t.times[i];
  o << "],\"kinds\":[";
  for (std::size_t i = 0; i < t.kinds.size(); ++i) {
    const ViewKind& k = t.kinds[i];
    o << (i ? "," : "") << "{\"name\":" << json_string(k.name)
      << ",\"compartment\":" << (k.compartment ? "true" : "false")
      << ",\"membrane\":" << (k.membrane ? "true" : "false") << ",\"radius\":" << k.radius
      << ",\"thickness\":" << k.thickness << "}";
  }
  o << "],\"reactions\":[";
  for (std::size_t i = 0; i < t.reactions.size(); ++i) {
    const ViewReaction& r = t.reactions[i];
    o << (i ? "," : "") << "{\"name\":" << json_string(r.name)
      << ",\"rule\":" << json_string(r.rule) << ",\"role\":" << json_string(r.role)
      << ",\"events\":[";
    for (std::size_t f = 0; f < r.events.size(); ++f) o << (f ? "," : "") << r.events[f];
    o << "]}";
  }
  o << "]}";
  return o.str();
}

}  // namespace nestsim::app

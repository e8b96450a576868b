#include "ensemble_spec.h"
#include "nestsim/io/regular_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "nestsim/model/model_edit.h"
#include "nestsim/io/errors.h"

namespace nestsim::app {

namespace {

// An argument as messages show it: on one line (control characters escaped), and only
// its start when long (an error echoes no argument of 100 KB).
std::string shown(const std::string& argument) { return shell_quote(io::excerpt(argument, 200)); }

}  // namespace

SetArg parse_set(const std::string& flag, const std::string& argument) {
  const std::size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument(flag + " " + shown(argument) + ": needs KEY=VALUE (a dotted key " +
                                "of the model, e.g. simulation.dt=0.005)");
  return {argument.substr(0, eq), argument.substr(eq + 1)};
}

namespace {

bool key_within(const std::string& inner, const std::string& outer) {
  return inner == outer || inner.rfind(outer + ".", 0) == 0;
}

// The --set arguments an error at `key` concerns: those that set it, a key inside it or
// a map around it; all of them when none does (a rule between keys).
std::string named_sets(const std::vector<SetArg>& sets, const std::string& key) {
  std::string named, all;
  for (const SetArg& s : sets) {
    const std::string word = "--set " + shown(s.text());
    all += (all.empty() ? "" : " ") + word;
    if (!key.empty() && (key_within(key, s.key) || key_within(s.key, key)))
      named += (named.empty() ? "" : " ") + word;
  }
  return named.empty() ? all : named;
}

}  // namespace

model::Model load_model_with_sets(const std::string& path, const std::vector<SetArg>& sets) {
  if (sets.empty()) return model::load_model(path);
  io::require_regular_file(path, "a model file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return model::load_model(path);  // its message for a file that cannot be read
  std::ostringstream text;
  text << in.rdbuf();
  std::string edited = text.str();
  for (const SetArg& s : sets) {
    try {
      edited = model::set_model_value(edited, path, s.key, s.value);
    } catch (const model::ModelError& e) {
      // The first edit meets the file as written, so its location holds; later ones
      // meet re-emitted text.
      const bool first = &s == &sets.front();
      throw model::ModelError(path, first ? e.line() : 0, first ? e.column() : 0, e.key(),
                              e.message() + " (--set " + shown(s.text()) + ")");
    }
  }
  try {
    return model::parse_model(edited, path);
  } catch (const model::ModelError& e) {
    throw model::ModelError(path, 0, 0, e.key(),
                            e.message() + " (after " + named_sets(sets, e.key()) + ")");
  }
}

Scan parse_scan(const std::string& argument) {
  const SetArg kv = parse_set("--scan", argument);
  Scan scan{kv.key, {}};
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = kv.value.find(',', start);
    const std::string v = kv.value.substr(start, comma == std::string::npos ? std::string::npos
                                                                             : comma - start);
    if (v.empty())
      throw std::invalid_argument("--scan '" + argument + "': an empty value (KEY=v1,v2,...)");
    scan.values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return scan;
}

uint64_t EnsembleSpec::points() const {
  uint64_t n = 1;
  for (const Scan& s : scans) n *= s.values.size();
  return n;
}

uint64_t EnsembleSpec::members() const { return points() * replicas; }

std::vector<std::string> EnsembleSpec::point_values(uint64_t point) const {
  std::vector<std::string> values(scans.size());
  for (std::size_t k = scans.size(); k-- > 0;) {
    values[k] = scans[k].values[point % scans[k].values.size()];
    point /= scans[k].values.size();
  }
  return values;
}

std::vector<SetArg> EnsembleSpec::member_sets(uint64_t member) const {
  std::vector<SetArg> all = sets;
  const std::vector<std::string> values = point_values(member / replicas);
  for (std::size_t k = 0; k < scans.size(); ++k) all.push_back({scans[k].key, values[k]});
  return all;
}

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t EnsembleSpec::member_seed(uint64_t member) const {
  return splitmix64(splitmix64(base_seed) ^ member) & ((uint64_t(1) << 53) - 1);
}

std::string EnsembleSpec::definition(const std::string& model_text) const {
  std::ostringstream d;
  d << "model " << model_path << "\n" << model_text << "\n";
  for (const SetArg& s : sets) d << "set " << s.text() << "\n";
  for (const Scan& s : scans) {
    d << "scan " << s.key << " =";
    for (const std::string& v : s.values) d << " [" << v << "]";
    d << "\n";
  }
  d << "replicas " << replicas << "\nsteps " << (steps ? std::to_string(*steps) : "model")
    << "\n";
  return d.str();
}

std::string member_file(const std::string& dir, uint64_t member, uint64_t members) {
  int digits = 4;
  for (uint64_t n = 10000; n < members; n *= 10) ++digits;
  char name[32];
  std::snprintf(name, sizeof name, "%0*llu.h5", digits, static_cast<unsigned long long>(member));
  return dir + "/members/" + name;
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/=:+@%") ==
      std::string::npos;
  if (plain) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string member_command(const EnsembleSpec& spec, uint64_t member, const std::string& out) {
  std::string cmd = "nestsim run " + shell_quote(spec.model_path);
  for (const SetArg& s : spec.member_sets(member)) cmd += " --set " + shell_quote(s.text());
  cmd += " --seed " + std::to_string(spec.member_seed(member));
  if (spec.steps) cmd += " --steps " + std::to_string(*spec.steps);
  return cmd + " -o " + shell_quote(out);
}

}  // namespace nestsim::app

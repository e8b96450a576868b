// What an ensemble is: a model, `--set KEY=VALUE` edits, scans of keys over values and
// replicas; its members (scan point x replica), their seeds and the `nestsim run`
// command that reproduces each member alone.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nestsim/model/model.h"

namespace nestsim::app {

// One `--set KEY=VALUE` (VALUE is YAML text: `0.005`, `[1, 2]`, `0.5 /s`).
struct SetArg {
  std::string key, value;
  std::string text() const { return key + "=" + value; }
};

// Parses "KEY=VALUE"; throws std::invalid_argument naming `flag` and the argument.
SetArg parse_set(const std::string& flag, const std::string& argument);

// Loads the model file and applies the edits in order, then validates the result as a
// file. An error of an edit, or of the edited model, is a ModelError at the file (line 0)
// that names the --set argument(s) it concerns (lines of the re-emitted text would
// mislead). Without edits: model::load_model.
model::Model load_model_with_sets(const std::string& path, const std::vector<SetArg>& sets);

// `--scan KEY=v1,v2,...`: one key over values (split at commas).
struct Scan {
  std::string key;
  std::vector<std::string> values;
};
Scan parse_scan(const std::string& argument);  // throws std::invalid_argument

struct EnsembleSpec {
  std::string model_path;       // the model file as given
  std::vector<SetArg> sets;     // applied to every member, before the scan's edits
  std::vector<Scan> scans;      // the cartesian product of their values
  uint64_t replicas = 1;
  std::optional<uint64_t> steps;  // --steps; else the model's
  uint64_t base_seed = 0;       // the model's simulation.seed (after `sets`)

  uint64_t points() const;   // product of the scans' sizes (1 without scans)
  uint64_t members() const;  // points() x replicas
  // Member m is replica m % replicas of point m / replicas; the last scan varies
  // fastest over the points.
  std::vector<std::string> point_values(uint64_t point) const;  // one per scan
  std::vector<SetArg> member_sets(uint64_t member) const;       // sets, then the scans'
  // A fixed function of the base seed and the member index (SplitMix64 of both), below
  // 2^53 so that every tool reads it exactly.
  uint64_t member_seed(uint64_t member) const;
  // Text that identifies the ensemble (model text, edits, scans, replicas, steps): a
  // rerun into the same directory must give the same.
  std::string definition(const std::string& model_text) const;
};

// DIR/members/NNNN.h5 (at least 4 digits, more when the ensemble needs them).
std::string member_file(const std::string& dir, uint64_t member, uint64_t members);

// The command that runs member `m` alone, to the same trajectory bit for bit.
std::string member_command(const EnsembleSpec& spec, uint64_t member, const std::string& out);

// Quotes a word for a POSIX shell where it needs it.
std::string shell_quote(const std::string& word);

}  // namespace nestsim::app

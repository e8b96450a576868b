#include "ensemble_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <stdexcept>

#include "nestsim/io/hdf5_handle.h"
#include "nestsim/io/trajectory.h"
#include "nestsim/version.h"

namespace nestsim::app {

namespace h5 = io::hdf5;

namespace {

std::string member_group(uint64_t member, uint64_t members) {
  std::string file = member_file("", member, members);  // "/members/NNNN.h5"
  return file.substr(0, file.size() - 3);
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The member trajectory's observables over its complete frames.
struct Observables {
  std::vector<std::string> kinds, rules;
  std::string time_unit;
  std::vector<int64_t> step;
  std::vector<double> time, kind_count, container_count, membrane_count, reactions;
  hsize_t frames = 0;
};

Observables read_observables(const std::string& path) {
  h5::open_file(path, false, 5).reset();  // waits while its writer may still hold it
  const io::Trajectory t(path);
  Observables o;
  o.frames = t.frames();
  o.kinds = t.kinds().names;
  o.time_unit = t.time_unit();
  o.rules = t.reaction_names();
  o.step = t.steps();
  o.time = t.times();
  o.kind_count = t.observable("kind_count").values;
  o.container_count = t.observable("container_count").values;
  o.membrane_count = t.observable("membrane_count").values;
  const std::size_t F = o.frames, R = o.rules.size();
  o.reactions.assign(F * R, 0);
  for (std::size_t r = 0; r < R; ++r) {
    const std::vector<int64_t> events = t.reaction_events(r);
    for (std::size_t f = 0; f < F; ++f) o.reactions[f * R + r] = double(events[f]);
  }
  return o;
}

std::vector<int64_t> as_ints(const std::vector<double>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

void write_observables(hid_t group, const Observables& o) {
  const hsize_t F = o.frames, K = o.kinds.size(), R = o.rules.size();
  h5::write_attribute(group, "kinds", o.kinds);
  h5::write_attribute(group, "rules", o.rules);
  h5::write_ints(group, "step", {F}, o.step);
  h5::write_doubles(group, "time", {F}, o.time);
  const h5::Handle time = h5::open_dataset(group, "time");
  h5::write_attribute(time.get(), "unit", o.time_unit);
  h5::write_ints(group, "kind_count", {F, K}, as_ints(o.kind_count));
  h5::write_ints(group, "container_count", {F, K, K + 1}, as_ints(o.container_count));
  h5::write_ints(group, "membrane_count", {F, K, K + 1}, as_ints(o.membrane_count));
  h5::write_ints(group, "reactions", {F, R}, as_ints(o.reactions));
}

}  // namespace

std::string index_file(const std::string& dir) { return dir + "/ensemble.h5"; }

void prepare_index(const std::string& dir, const EnsembleSpec& spec, const model::Model& model) {
  const std::string path = index_file(dir), definition = spec.definition(model.text);
  if (file_exists(path)) {
    std::string stored;
    try {
      const h5::Handle f = h5::open_file(path, false);
      stored = h5::read_string_attribute(f.get(), "definition");
    } catch (const std::exception& e) {
      // Not replaced here: it may be only locked by a reader, or hold another ensemble.
      throw std::invalid_argument(path + " cannot be read (" + e.what() +
                                  "). If no one is reading it, it was cut off while being "
                                  "written: remove it and run the command again; members "
                                  "whose trajectories are complete are found so, not rerun");
    }
    if (stored != definition)
      throw std::invalid_argument(dir + " holds another ensemble (model, --set, --scan, "
                                  "--replicas or --steps differ); give another -o DIR");
    return;
  }
  const h5::Handle f = h5::create_file(path);
  h5::write_attribute(f.get(), "definition", definition);
  h5::write_attribute(f.get(), "creator", std::string("nestsim ") + NESTSIM_VERSION_STRING);
  h5::write_attribute(f.get(), "members", int64_t(spec.members()));
  h5::write_attribute(f.get(), "points", int64_t(spec.points()));
  h5::write_attribute(f.get(), "replicas", int64_t(spec.replicas));
  h5::write_attribute(f.get(), "model_path", spec.model_path);
  h5::write_attribute(f.get(), "base_seed", int64_t(spec.base_seed));
  const h5::Handle parameters = h5::create_group(f.get(), "parameters");
  h5::write_strings(parameters.get(), "model", {1}, {model.text});
  const h5::Handle scan = h5::create_group(f.get(), "scan");
  std::vector<std::string> keys, values;
  for (const Scan& s : spec.scans) keys.push_back(s.key);
  for (uint64_t p = 0; p < spec.points(); ++p)
    for (const std::string& v : spec.point_values(p)) values.push_back(v);
  h5::write_strings(scan.get(), "keys", {keys.size()}, keys);
  h5::write_strings(scan.get(), "values", {spec.points(), keys.size()}, values);
  h5::create_group(f.get(), "members");
}

std::vector<bool> completed_members(const std::string& dir, const EnsembleSpec& spec) {
  const uint64_t M = spec.members();
  std::vector<bool> done(M, false);
  const h5::Handle f = h5::open_file(index_file(dir), false);
  for (uint64_t m = 0; m < M; ++m) {
    const std::string g = member_group(m, M);
    if (!h5::exists(f.get(), g)) continue;
    const h5::Handle group = h5::open_group(f.get(), g);
    done[m] = h5::read_string_attribute(group.get(), "status") == "done" &&
              file_exists(member_file(dir, m, M));
  }
  return done;
}

void record_member(const std::string& dir, const EnsembleSpec& spec, uint64_t member,
                   const MemberOutcome& outcome) {
  const uint64_t M = spec.members();
  const std::string trajectory = member_file(dir, member, M);
  Observables o;
  bool has_frames = false;
  if (file_exists(trajectory)) try {
      o = read_observables(trajectory);
      has_frames = o.frames > 0;
    } catch (const std::exception&) {
      // killed before its first frame: only the outcome is recorded
    }
  const h5::Handle f = h5::open_file(index_file(dir), true, 2);
  const std::string g = member_group(member, M);
  if (h5::exists(f.get(), g)) h5::remove_link(f.get(), g);
  const h5::Handle group = h5::create_group(f.get(), g);
  h5::write_attribute(group.get(), "index", int64_t(member));
  h5::write_attribute(group.get(), "point", int64_t(member / spec.replicas));
  h5::write_attribute(group.get(), "replica", int64_t(member % spec.replicas));
  h5::write_attribute(group.get(), "seed", int64_t(spec.member_seed(member)));
  h5::write_attribute(group.get(), "status", std::string(status_name(outcome.status)));
  h5::write_attribute(group.get(), "message", outcome.message);
  h5::write_attribute(group.get(), "wall_time", outcome.wall);
  h5::write_attribute(group.get(), "command", member_command(spec, member, trajectory));
  h5::write_attribute(group.get(), "file", trajectory);
  std::vector<std::string> parameters;
  for (const SetArg& s : spec.member_sets(member)) parameters.push_back(s.text());
  h5::write_attribute(group.get(), "parameters", parameters);
  if (has_frames) write_observables(group.get(), o);
  H5Fflush(f.get(), H5F_SCOPE_GLOBAL);
}

namespace {

// The member's series as named columns: counts by kind, by container and by membrane
// (the columns that are not always 0), then events per rule.
void read_member_series(hid_t group, MemberSeries& s, std::string& time_unit) {
  std::vector<hsize_t> d;
  s.time = h5::read_doubles(group, "time", d);
  const std::size_t F = s.time.size();
  const h5::Handle time = h5::open_dataset(group, "time");
  time_unit = h5::read_string_attribute(time.get(), "unit");
  const std::vector<std::string> kinds = h5::read_strings_attribute(group, "kinds");
  const std::vector<std::string> rules = h5::read_strings_attribute(group, "rules");
  const std::size_t K = kinds.size(), R = rules.size();
  const std::vector<double> kc = h5::read_doubles(group, "kind_count", d);
  const std::vector<double> cc = h5::read_doubles(group, "container_count", d);
  const std::vector<double> mc = h5::read_doubles(group, "membrane_count", d);
  const std::vector<double> ev = h5::read_doubles(group, "reactions", d);
  s.values.assign(F, {});
  auto add = [&](const std::string& name, auto at) {
    s.columns.push_back(name);
    for (std::size_t f = 0; f < F; ++f) s.values[f].push_back(at(f));
  };
  for (std::size_t k = 0; k < K; ++k) add(kinds[k], [&](std::size_t f) { return kc[f * K + k]; });
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c <= K; ++c) {
      const std::string where = c == K ? " outside every compartment" : " in " + kinds[c];
      add(kinds[k] + where, [&](std::size_t f) { return cc[(f * K + k) * (K + 1) + c]; });
    }
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < K; ++c)
      add(kinds[k] + " on " + kinds[c],
          [&](std::size_t f) { return mc[(f * K + k) * (K + 1) + c]; });
  for (std::size_t r = 0; r < R; ++r)
    add("events " + rules[r], [&](std::size_t f) { return ev[f * R + r]; });
  for (std::size_t r = 0; r < R; ++r) {  // running totals: the count since step 0
    double total = 0;
    add("events " + rules[r] + " since start", [&](std::size_t f) { return total += ev[f * R + r]; });
  }
}

}  // namespace

EnsembleIndex read_index(const std::string& dir) {
  const h5::Handle f = h5::open_file(index_file(dir), false);
  EnsembleIndex index;
  index.members = uint64_t(h5::read_int_attribute(f.get(), "members"));
  index.replicas = uint64_t(h5::read_int_attribute(f.get(), "replicas"));
  std::vector<hsize_t> d;
  index.scan_keys = h5::read_strings(f.get(), "/scan/keys", d);
  const std::vector<std::string> values = h5::read_strings(f.get(), "/scan/values", d);
  const std::size_t S = index.scan_keys.size(), P = d.empty() ? 0 : std::size_t(d[0]);
  for (std::size_t p = 0; p < P; ++p)
    index.scan_values.emplace_back(values.begin() + long(p * S), values.begin() + long(p * S + S));
  for (uint64_t m = 0; m < index.members; ++m) {
    const std::string g = member_group(m, index.members);
    if (!h5::exists(f.get(), g)) continue;
    const h5::Handle group = h5::open_group(f.get(), g);
    MemberSeries s;
    s.index = m;
    s.point = uint64_t(h5::read_int_attribute(group.get(), "point"));
    s.status = h5::read_string_attribute(group.get(), "status");
    s.message = h5::read_string_attribute(group.get(), "message");
    if (h5::exists(group.get(), "time")) read_member_series(group.get(), s, index.time_unit);
    index.ended.push_back(std::move(s));
  }
  return index;
}

}  // namespace nestsim::app

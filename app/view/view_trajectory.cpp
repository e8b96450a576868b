// `nestsim view`'s reading of a trajectory: its description with the HDF5 C library
// (small datasets only), its frames with io::read_frame.
#include "view_trajectory.h"

#include <hdf5.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "nestsim/io/h5md.h"
#include "nestsim/io/model.h"
#include "nestsim/io/scene_csv.h"  // InputError

namespace nestsim::app {
namespace {

// The most values a whole-dataset read may take (2^28: 2 GiB of doubles), a bound on what
// a crafted shape can make the viewer allocate.
constexpr std::size_t kMaxValues = std::size_t(1) << 28;

// An HDF5 identifier closed when it goes out of scope.
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid(hid_t id, Closer close) : id_(id), close_(close) {}
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  Closer close_;
};

[[noreturn]] void not_trajectory(const std::string& path, const std::string& why) {
  throw ViewError(path + ": not a nestsim trajectory (" + why + ")");
}

bool exists(hid_t file, const std::string& name) {
  // Each level of the path must exist before H5Lexists may be asked about the next.
  std::size_t at = 1;
  while (at <= name.size()) {
    const std::size_t slash = name.find('/', at);
    const std::string prefix = name.substr(0, slash);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return true;
}

std::vector<hsize_t> dims_of(hid_t dataset) {
  const Hid space(H5Dget_space(dataset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(std::size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// Every element of a numeric dataset as `T` (HDF5 converts).
template <typename T>
std::vector<T> read_all(const std::string& path, hid_t file, const std::string& name,
                        hid_t memory_type) {
  const Hid d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) not_trajectory(path, "no " + name);
  std::size_t n = 1;
  for (hsize_t x : dims_of(d.get()))
    if (__builtin_mul_overflow(n, std::size_t(x), &n) || n > kMaxValues)
      not_trajectory(path, name + ": too large to read");
  std::vector<T> values(n);
  if (n > 0 && H5Dread(d.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    not_trajectory(path, "cannot read " + name);
  return values;
}

// The first `rows` rows of a 1-d numeric dataset as `T` (the complete frames: a series
// may be longer, and only those rows are read).
template <typename T>
std::vector<T> read_rows(const std::string& path, hid_t file, const std::string& name,
                         hid_t memory_type, uint64_t rows) {
  const Hid d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) not_trajectory(path, "no " + name);
  const std::vector<hsize_t> dims = dims_of(d.get());
  if (dims.size() != 1) not_trajectory(path, name + " is not a series of frames");
  const hsize_t n = std::min<hsize_t>(dims[0], rows), start = 0;
  std::vector<T> values(std::size_t(n), T{});
  if (n == 0) return values;
  const Hid file_space(H5Dget_space(d.get()), H5Sclose);
  const Hid memory_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr) < 0 ||
      H5Dread(d.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT,
              values.data()) < 0)
    not_trajectory(path, "cannot read " + name);
  return values;
}

uint64_t rows_of(const std::string& path, hid_t file, const std::string& name) {
  const Hid d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) not_trajectory(path, "no " + name);
  const std::vector<hsize_t> dims = dims_of(d.get());
  return dims.empty() ? 0 : dims[0];
}

// Variable-length strings of a dataset, as io writes them.
std::vector<std::string> read_strings(const std::string& path, hid_t file,
                                      const std::string& name) {
  const Hid d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) not_trajectory(path, "no " + name);
  std::size_t n = 1;
  for (hsize_t x : dims_of(d.get()))
    if (__builtin_mul_overflow(n, std::size_t(x), &n) || n > kMaxValues)
      not_trajectory(path, name + ": too large to read");
  const Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  std::vector<char*> text(n, nullptr);
  if (n > 0 && H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0)
    not_trajectory(path, "cannot read " + name + " as text");
  std::vector<std::string> out;
  for (char* t : text) {
    out.emplace_back(t ? t : "");
    if (t) H5free_memory(t);
  }
  return out;
}

// The series whose row count bounds the complete frames (io's reader takes the
// shortest too).
const char* const kPerFrameSeries[] = {
    "/particles/bodies/position/value", "/particles/bodies/id/value",
    "/particles/bodies/species/value",  "/particles/bodies/radius/value",
    "/particles/bodies/thickness/value", "/particles/bodies/position/step",
    "/observables/model_time/value"};

void read_kinds(const std::string& path, hid_t f, ViewTrajectory& t) {
  const auto names = read_strings(path, f, "/parameters/species_names");
  const auto compartment = read_all<int8_t>(path, f, "/parameters/kinds/compartment",
                                            H5T_NATIVE_INT8);
  const auto membrane = read_all<int8_t>(path, f, "/parameters/kinds/membrane", H5T_NATIVE_INT8);
  const auto radius = read_all<double>(path, f, "/parameters/kinds/radius", H5T_NATIVE_DOUBLE);
  const auto thickness =
      read_all<double>(path, f, "/parameters/kinds/thickness", H5T_NATIVE_DOUBLE);
  const std::size_t k = names.size();
  if (compartment.size() != k || membrane.size() != k || radius.size() != k ||
      thickness.size() != k)
    not_trajectory(path, "/parameters/kinds does not match /parameters/species_names");
  for (std::size_t i = 0; i < k; ++i)
    t.kinds.push_back({names[i], compartment[i] != 0, membrane[i] != 0, radius[i], thickness[i]});
}

// Budding makes compartments from a membrane; fusion merges two compartments.
std::string role_of(const io::ReactionSpec& rule, const std::vector<ViewKind>& kinds) {
  const auto compartments = [&](const std::vector<io::RuleTerm>& terms) {
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

void read_reactions(const std::string& path, hid_t f, ViewTrajectory& t) {
  if (!exists(f, "/parameters/reaction_names")) return;
  std::map<std::string, io::ReactionSpec> rules;
  try {
    const auto text = read_strings(path, f, "/parameters/model");
    const auto where = exists(f, "/parameters/model_path")
                           ? read_strings(path, f, "/parameters/model_path")
                           : std::vector<std::string>{};
    const io::Model model =
        io::parse_model(text.empty() ? "" : text[0], where.empty() ? path : where[0]);
    for (const auto& r : model.reactions) rules[r.name] = r;
  } catch (const std::exception&) {
    // A model this build cannot parse (another version): no rule text, no roles.
  }
  for (const std::string& name : read_strings(path, f, "/parameters/reaction_names")) {
    ViewReaction r;
    r.name = name;
    const auto rule = rules.find(name);
    if (rule != rules.end()) {
      r.rule = rule->second.rule;
      r.role = role_of(rule->second, t.kinds);
    }
    const std::string series = "/observables/reactions/" + name + "/value";
    if (exists(f, series)) r.events = read_rows<int64_t>(path, f, series, H5T_NATIVE_INT64, t.frames);
    r.events.resize(t.frames, 0);
    t.reactions.push_back(std::move(r));
  }
}

}  // namespace

ViewTrajectory read_view_trajectory(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  // io's reader checks the file (a regular file, every dataset's type and shape) before
  // anything here sizes a buffer from it.
  uint64_t frames = 0;
  try {
    frames = io::check_trajectory(path);
  } catch (const io::InputError& e) {
    throw ViewError(e.what());
  }
  const Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) not_trajectory(path, "HDF5 cannot open it");
  const hid_t f = file.get();
  if (!exists(f, "/h5md/creator")) not_trajectory(path, "no /h5md/creator");
  ViewTrajectory t;
  t.path = path;
  t.frames = frames;
  for (const char* series : kPerFrameSeries) t.frames = std::min(t.frames, rows_of(path, f, series));
  t.steps = read_rows<int64_t>(path, f, "/particles/bodies/position/step", H5T_NATIVE_INT64,
                               t.frames);
  t.times = read_rows<double>(path, f, "/observables/model_time/value", H5T_NATIVE_DOUBLE,
                              t.frames);
  t.steps.resize(t.frames);
  t.times.resize(t.frames);
  {
    const Hid d(H5Dopen2(f, "/particles/bodies/id/value", H5P_DEFAULT), H5Dclose);
    const auto dims = dims_of(d.get());
    t.slots = dims.size() == 2 ? dims[1] : 0;
  }
  const auto unit = [&](const char* name) {
    const auto s = read_strings(path, f, name);
    return s.empty() ? std::string() : s[0];
  };
  t.length_unit = unit("/parameters/length_unit");
  t.time_unit = unit("/parameters/time_unit");
  const auto box = read_all<double>(path, f, "/parameters/box", H5T_NATIVE_DOUBLE);
  for (std::size_t i = 0; i < 3 && i < box.size(); ++i) t.box[i] = box[i];
  {
    const Hid g(H5Gopen2(f, "/particles/bodies/box", H5P_DEFAULT), H5Gclose);
    t.periodic = false;
    if (g.ok() && H5Aexists(g.get(), "boundary") > 0) {
      const Hid a(H5Aopen(g.get(), "boundary", H5P_DEFAULT), H5Aclose);
      const Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(type.get(), H5T_VARIABLE);
      H5Tset_cset(type.get(), H5T_CSET_UTF8);
      char* text[3] = {nullptr, nullptr, nullptr};
      if (H5Aread(a.get(), type.get(), text) >= 0) {
        t.periodic = text[0] && std::string(text[0]) == "periodic";
        for (char* s : text)
          if (s) H5free_memory(s);
      }
    }
  }
  read_kinds(path, f, t);
  read_reactions(path, f, t);
  return t;
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

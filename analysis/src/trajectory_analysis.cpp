// `nestsim analyze`: the tables, computed in one pass over a trajectory's frames.
#include "nestsim/analysis/trajectory_analysis.h"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "nestsim/broadphase.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/scene_csv.h"  // InputError

namespace nestsim::analysis {

namespace {

// The per-frame state that /observables also holds (h5md.h), and the list sizes that
// the contact table shows; every other series there is reported as it is.
const char* const kStateObservables[] = {"body_count",      "kind_count", "container_count",
                                         "membrane_count",  "next_id",    "model_time",
                                         "broadphase_pairs"};

// The most values one series may hold to be read whole (2^28 doubles: 2 GiB), a bound
// on what a crafted shape can make the analysis allocate.
constexpr std::size_t kMaxObservableValues = std::size_t(1) << 28;

// An HDF5 identifier closed when it goes out of scope.
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  Hid(Hid&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  Hid& operator=(Hid&&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  Closer close_;
};

[[noreturn]] void not_trajectory(const std::string& path, const std::string& why) {
  throw TrajectoryError(path + ": not a nestsim trajectory (" + why + ")");
}

// "PATH: not a nestsim trajectory: why" (io's InputError, no line) -> TrajectoryError.
[[noreturn]] void rethrow_input_error(const std::string& path, const io::InputError& e) {
  std::string what = e.what();
  for (const std::string& prefix : {path + ":0: ", path + ": "})
    if (what.compare(0, prefix.size(), prefix) == 0) {
      what.erase(0, prefix.size());
      break;
    }
  const std::string tag = "not a nestsim trajectory: ";
  if (what.compare(0, tag.size(), tag) == 0) not_trajectory(path, what.substr(tag.size()));
  throw TrajectoryError(path + ": " + what);
}

Hid open_dataset(const std::string& path, hid_t file, const std::string& name) {
  Hid d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) not_trajectory(path, "no " + name);
  return d;
}

std::vector<hsize_t> dims_of(hid_t dataset) {
  const Hid space(H5Dget_space(dataset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(std::max(rank, 0));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// Variable-length UTF-8 strings of a dataset or an attribute, as io writes them.
std::vector<std::string> read_strings(const std::string& path, hid_t object, bool attribute,
                                      std::size_t count, const std::string& what) {
  const Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  std::vector<char*> text(count, nullptr);
  const herr_t status =
      attribute ? H5Aread(object, type.get(), text.data())
                : H5Dread(object, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data());
  if (status < 0) not_trajectory(path, "cannot read " + what);
  std::vector<std::string> out;
  for (char* t : text) {
    out.emplace_back(t ? t : "");
    if (t) H5free_memory(t);
  }
  return out;
}

std::string read_string(const std::string& path, hid_t file, const std::string& name) {
  const Hid d = open_dataset(path, file, name);
  return read_strings(path, d.get(), false, 1, name).front();
}

std::vector<double> read_doubles(const std::string& path, hid_t file, const std::string& name) {
  const Hid d = open_dataset(path, file, name);
  std::size_t n = 1;
  for (hsize_t x : dims_of(d.get()))
    if (__builtin_mul_overflow(n, std::size_t(x), &n) || n > kMaxObservableValues)
      not_trajectory(path, name + ": too large to read");
  std::vector<double> values(n);
  if (n > 0 &&
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    not_trajectory(path, "cannot read " + name);
  return values;
}

bool is_event_counter(const std::string& name) {
  return name.rfind("events/", 0) == 0 || name.rfind("reactions/", 0) == 0 ||
         name.find("event") != std::string::npos || name.find("reaction") != std::string::npos;
}

// Every `value` dataset below /observables/<prefix>, depth first in name order.
void collect_observables(const std::string& info_path, hid_t group, const std::string& prefix,
                         uint64_t frames, std::vector<ObservableSeries>& out) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) return;
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    const ssize_t length =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
    if (length <= 0) continue;
    std::string name(std::size_t(length) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size(),
                       H5P_DEFAULT);
    name.resize(std::size_t(length));
    const Hid object(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!object.ok()) continue;
    const H5I_type_t type = H5Iget_type(object.get());
    if (type == H5I_GROUP) {
      const std::string child = prefix.empty() ? name : prefix + "/" + name;
      if (prefix.empty() && std::find(std::begin(kStateObservables), std::end(kStateObservables),
                                      child) != std::end(kStateObservables))
        continue;
      collect_observables(info_path, object.get(), child, frames, out);
      continue;
    }
    if (type != H5I_DATASET || name != "value" || prefix.empty()) continue;
    const std::vector<hsize_t> dims = dims_of(object.get());
    if (dims.empty()) continue;
    const std::size_t rows = std::size_t(std::min<uint64_t>(dims[0], frames));
    std::size_t columns = 1;
    bool too_large = false;
    for (std::size_t d = 1; d < dims.size(); ++d)
      too_large |= __builtin_mul_overflow(columns, std::size_t(dims[d]), &columns);
    if (too_large || (columns > 0 && rows > kMaxObservableValues / columns))
      not_trajectory(info_path, "/observables/" + prefix + "/value: too large to read");
    // The complete frames' rows only: a series may be longer (a crafted file, a run
    // killed mid-frame), and nothing is sized beyond what is reported.
    std::vector<double> flat(rows * columns);
    if (!flat.empty()) {
      std::vector<hsize_t> start(dims.size(), 0), count = dims;
      count[0] = rows;
      const Hid file_space(H5Dget_space(object.get()), H5Sclose);
      const Hid memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
      const Hid type(H5Dget_type(object.get()), H5Tclose);
      const H5T_class_t c = H5Tget_class(type.get());
      if ((c != H5T_INTEGER && c != H5T_FLOAT) ||
          H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                              count.data(), nullptr) < 0 ||
          H5Dread(object.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(),
                  H5P_DEFAULT, flat.data()) < 0)
        continue;  // not numbers: nothing to report
    }
    ObservableSeries s;
    s.name = prefix;
    s.is_event_counter = is_event_counter(prefix);
    s.per_interval = prefix == "reactions" || prefix.rfind("reactions/", 0) == 0;
    if (H5Aexists(object.get(), "labels") > 0) {
      const Hid a(H5Aopen(object.get(), "labels", H5P_DEFAULT), H5Aclose);
      const Hid space(H5Aget_space(a.get()), H5Sclose);
      if (std::size_t(H5Sget_simple_extent_npoints(space.get())) == columns) try {
          s.columns = read_strings("", a.get(), true, columns, "labels");
        } catch (const TrajectoryError&) {  // labels that are not strings: use numbers
        }
    }
    for (std::size_t c = s.columns.size(); c < columns; ++c)
      s.columns.push_back(columns == 1 ? "value" : std::to_string(c));
    for (std::size_t f = 0; f < rows; ++f)
      s.values.emplace_back(flat.begin() + f * columns, flat.begin() + (f + 1) * columns);
    out.push_back(std::move(s));
  }
}

// Wraps x into [0, L) as the broad phase requires of a periodic box.
double wrap(double x, double L) {
  x -= L * std::floor(x / L);
  return x >= L ? 0 : x;
}

}  // namespace

std::size_t location_count(std::size_t kinds) { return 1 + 2 * kinds; }

std::string location_name(std::size_t location, const std::vector<std::string>& kinds) {
  if (location == 0) return "outside";
  const std::size_t k = (location - 1) / 2;
  return (location % 2 == 1 ? "in " : "on ") + kinds.at(k);
}

TrajectoryInfo read_trajectory_info(const std::string& path) {
  TrajectoryInfo info;
  info.path = path;
  try {
    info.frames = io::read_last_frame(path).frames;  // checks the layout
  } catch (const io::InputError& e) {
    rethrow_input_error(path, e);
  } catch (const std::runtime_error& e) {
    not_trajectory(path, e.what());
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) not_trajectory(path, "cannot open it as HDF5");
  const hid_t f = file.get();
  {
    const Hid names = open_dataset(path, f, "/parameters/species_names");
    const std::vector<hsize_t> d = dims_of(names.get());
    info.kinds =
        read_strings(path, names.get(), false, d.empty() ? 0 : d[0], "/parameters/species_names");
  }
  const std::size_t K = info.kinds.size();
  const std::vector<double> compartment = read_doubles(path, f, "/parameters/kinds/compartment");
  info.diffusion = read_doubles(path, f, "/parameters/kinds/diffusion");
  const std::vector<double> box = read_doubles(path, f, "/parameters/box");
  if (compartment.size() != K || info.diffusion.size() != K || box.size() != 3)
    not_trajectory(path, "/parameters/kinds do not match /parameters/species_names");
  for (double c : compartment) info.compartment.push_back(c != 0);
  for (int a = 0; a < 3; ++a) info.box[a] = box[a];
  info.dim = box[2] > 0 ? 3 : 2;
  info.length_unit = read_string(path, f, "/parameters/length_unit");
  info.time_unit = read_string(path, f, "/parameters/time_unit");
  const Hid box_group(H5Gopen2(f, "/particles/bodies/box", H5P_DEFAULT), H5Gclose);
  if (!box_group.ok() || H5Aexists(box_group.get(), "boundary") <= 0)
    not_trajectory(path, "no /particles/bodies/box boundary");
  const Hid boundary(H5Aopen(box_group.get(), "boundary", H5P_DEFAULT), H5Aclose);
  const std::vector<std::string> b =
      read_strings(path, boundary.get(), true, 3, "the box boundary");
  info.periodic = b[0] == "periodic";
  if (H5Lexists(f, "/parameters/collision", H5P_DEFAULT) > 0)
    info.collision = read_string(path, f, "/parameters/collision");
  if (H5Lexists(f, "/parameters/reaction_names", H5P_DEFAULT) > 0) {
    const Hid names = open_dataset(path, f, "/parameters/reaction_names");
    const std::vector<hsize_t> d = dims_of(names.get());
    info.reactions =
        read_strings(path, names.get(), false, d.empty() ? 0 : d[0], "/parameters/reaction_names");
  }
  return info;
}

namespace {

// One pass over the frames: counts by location, the bodies of frame 0 followed for the
// mean squared displacement, and the contacts by HSX and SSX.
class FramePass {
 public:
  explicit FramePass(const TrajectoryInfo& info)
      : info_(info), K_(info.kinds.size()), hsx_(options(info, Overlap::hollow)),
        ssx_(options(info, Overlap::solid)) {}

  void add(uint64_t index, const sim::Frame& fr, AnalysisTables& t) {
    t.frames.push_back({fr.step, fr.time});
    kind_of_.clear();
    for (std::size_t s = 0; s < fr.id.size(); ++s)
      if (fr.id[s] >= 0) kind_of_[fr.id[s]] = fr.kind[s];
    std::vector<std::vector<int64_t>> counts(K_, std::vector<int64_t>(location_count(K_), 0));
    SphereSet<double> bodies;
    for (std::size_t s = 0; s < fr.id.size(); ++s) {
      if (fr.id[s] < 0) continue;
      if (fr.kind[s] < 0 || std::size_t(fr.kind[s]) >= K_)
        throw TrajectoryError(info_.path + ": frame " + std::to_string(index) + ", slot " +
                              std::to_string(s) + ": kind " + std::to_string(fr.kind[s]) +
                              " is not in /parameters/species_names");
      std::size_t location = 0;
      if (fr.membrane[s] >= 0)
        location = 2 + 2 * kind_at(index, fr.membrane[s]);
      else if (fr.parent[s] >= 0)
        location = 1 + 2 * kind_at(index, fr.parent[s]);
      ++counts[std::size_t(fr.kind[s])][location];
      std::array<double, 3> p = fr.position[s];
      if (info_.periodic)
        for (int a = 0; a < info_.dim; ++a) p[a] = wrap(p[a], info_.box[a]);
      bodies.push_back(p[0], p[1], p[2], fr.radius[s], std::min(fr.thickness[s], fr.radius[s]));
      follow(index, fr, s);
    }
    t.counts.push_back(std::move(counts));
    add_msd(index, t);
    add_contacts(fr, bodies, t);
  }

 private:
  struct Track {
    int32_t kind;
    std::array<double, 3> origin, unwrapped, last;
    uint64_t seen;  // the last frame it was present in
  };

  static BroadphaseOptions options(const TrajectoryInfo& info, Overlap overlap) {
    BroadphaseOptions o;
    o.overlap = overlap;
    o.domain.dim = info.dim;
    o.domain.periodic = info.periodic;
    for (int a = 0; a < 3; ++a) o.domain.size[a] = info.box[a];
    return o;
  }

  std::size_t kind_at(uint64_t index, int64_t id) const {
    const auto it = kind_of_.find(id);
    if (it == kind_of_.end() || it->second < 0 || std::size_t(it->second) >= K_)
      throw TrajectoryError(info_.path + ": frame " + std::to_string(index) + " names body " +
                            std::to_string(id) + " as a container but does not hold it");
    return std::size_t(it->second);
  }

  // Mean squared displacement: follow the bodies of frame 0 (unwrapped by minimum images
  // between consecutive frames).
  void follow(uint64_t index, const sim::Frame& fr, std::size_t s) {
    if (index == 0) {
      tracks_[fr.id[s]] = {fr.kind[s], fr.position[s], fr.position[s], fr.position[s], 0};
      return;
    }
    const auto it = tracks_.find(fr.id[s]);
    if (it == tracks_.end() || it->second.kind != fr.kind[s] || it->second.seen + 1 != index)
      return;
    Track& track = it->second;
    for (int a = 0; a < info_.dim; ++a) {
      double step = fr.position[s][a] - track.last[a];
      if (info_.periodic) step -= info_.box[a] * std::round(step / info_.box[a]);
      track.unwrapped[a] += step;
    }
    track.last = fr.position[s];
    track.seen = index;
  }

  void add_msd(uint64_t index, AnalysisTables& t) {
    std::vector<double> msd(K_, 0);
    std::vector<int64_t> tracked(K_, 0);
    for (auto it = tracks_.begin(); it != tracks_.end();) {
      const Track& track = it->second;
      if (track.seen != index) {  // gone, or changed kind: never counted again
        it = tracks_.erase(it);
        continue;
      }
      double d2 = 0;
      for (int a = 0; a < 3; ++a) d2 += std::pow(track.unwrapped[a] - track.origin[a], 2);
      msd[std::size_t(track.kind)] += d2;
      ++tracked[std::size_t(track.kind)];
      ++it;
    }
    for (std::size_t k = 0; k < K_; ++k)
      if (tracked[k] > 0) msd[k] /= double(tracked[k]);
    t.msd.push_back(std::move(msd));
    t.tracked.push_back(std::move(tracked));
  }

  void add_contacts(const sim::Frame& fr, const SphereSet<double>& bodies, AnalysisTables& t) {
    FrameContacts c;
    c.bodies = int64_t(bodies.size());
    c.lists = fr.broadphase_pairs;
    if (bodies.size() >= 2) {
      hsx_.upload(bodies);
      ssx_.upload(bodies);
      c.hollow = int64_t(hsx_.count());
      c.solid = int64_t(ssx_.count());
    }
    t.contacts.push_back(c);
  }

  const TrajectoryInfo& info_;
  const std::size_t K_;
  Broadphase<double> hsx_, ssx_;
  std::unordered_map<int64_t, Track> tracks_;
  std::unordered_map<int64_t, int32_t> kind_of_;
};

// The series under /observables, and each rule's events per frame from them.
void read_observables(const TrajectoryInfo& info, AnalysisTables& t) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Hid file(H5Fopen(info.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) not_trajectory(info.path, "cannot open it as HDF5");
  const Hid observables(H5Gopen2(file.get(), "/observables", H5P_DEFAULT), H5Gclose);
  if (observables.ok()) collect_observables(info.path, observables.get(), "", info.frames, t.observables);
  t.reaction_events.assign(t.frames.size(), std::vector<int64_t>(info.reactions.size(), 0));
  for (std::size_t r = 0; r < info.reactions.size(); ++r) {
    const auto s = std::find_if(t.observables.begin(), t.observables.end(), [&](const auto& o) {
      return o.name == "reactions/" + info.reactions[r];
    });
    if (s == t.observables.end() || s->columns.size() != 1)
      not_trajectory(info.path, "no /observables/reactions/" + info.reactions[r] + "/value");
    for (std::size_t f = 0; f < s->values.size() && f < t.frames.size(); ++f)
      t.reaction_events[f][r] = int64_t(s->values[f][0]);
  }
}

}  // namespace

AnalysisTables analyze_trajectory(const TrajectoryInfo& info) {
  AnalysisTables t;
  FramePass pass(info);
  for (uint64_t index = 0; index < info.frames; ++index) {
    sim::Frame fr;
    try {
      fr = io::read_frame(info.path, index);
    } catch (const io::InputError& e) {
      rethrow_input_error(info.path, e);
    }
    pass.add(index, fr, t);
  }
  read_observables(info, t);
  return t;
}

}  // namespace nestsim::analysis

// `nestsim analyze`: the tables, computed in one pass over a trajectory's frames.
#include "nestsim/analysis/trajectory_analysis.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "nestsim/broadphase.h"
#include "nestsim/io/errors.h"
#include "nestsim/io/trajectory.h"

namespace nestsim::analysis {

namespace {

// The per-frame state that /observables also holds (h5md.h), and the list sizes that
// the contact table shows; every other series there is reported as it is.
const char* const kStateObservables[] = {"body_count",      "kind_count", "container_count",
                                         "membrane_count",  "next_id",    "model_time",
                                         "broadphase_pairs"};

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

// Opens the trajectory through io's reader, its refusals as TrajectoryError.
io::Trajectory open_trajectory(const std::string& path) {
  try {
    return io::Trajectory(path);
  } catch (const io::InputError& e) {
    rethrow_input_error(path, e);
  } catch (const std::runtime_error& e) {
    not_trajectory(path, e.what());
  }
}

bool is_event_counter(const std::string& name) {
  return name.rfind("events/", 0) == 0 || name.rfind("reactions/", 0) == 0 ||
         name.find("event") != std::string::npos || name.find("reaction") != std::string::npos;
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
  const io::Trajectory t = open_trajectory(path);
  TrajectoryInfo info;
  info.path = path;
  info.frames = t.frames();
  if (info.frames == 0) throw TrajectoryError(path + ": the trajectory holds no complete frame");
  try {
    const io::TrajectoryKinds& kinds = t.kinds();
    info.kinds = kinds.names;
    info.compartment = kinds.compartment;
    info.diffusion = kinds.diffusion;
    info.box = t.box();
    info.dim = info.box[2] > 0 ? 3 : 2;
    info.periodic = t.periodic();
    info.length_unit = t.length_unit();
    info.time_unit = t.time_unit();
    info.collision = t.collision();
    info.reactions = t.reaction_names();
  } catch (const io::InputError& e) {
    rethrow_input_error(path, e);
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

  void add(uint64_t index, const model::Frame& fr, AnalysisTables& t) {
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
  void follow(uint64_t index, const model::Frame& fr, std::size_t s) {
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

  void add_contacts(const model::Frame& fr, const SphereSet<double>& bodies, AnalysisTables& t) {
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

// The series under /observables other than the frame's own state, and each rule's
// events per frame from them.
void read_observables(const io::Trajectory& trajectory, const TrajectoryInfo& info,
                      AnalysisTables& t) {
  std::vector<io::ObservableRows> rows;
  try {
    rows = trajectory.observables(
        std::vector<std::string>(std::begin(kStateObservables), std::end(kStateObservables)));
  } catch (const io::InputError& e) {
    rethrow_input_error(info.path, e);
  }
  for (io::ObservableRows& r : rows) {
    ObservableSeries s;
    s.name = r.name;
    s.is_event_counter = is_event_counter(r.name);
    s.per_interval = r.name == "reactions" || r.name.rfind("reactions/", 0) == 0;
    s.columns = std::move(r.labels);
    for (std::size_t c = s.columns.size(); c < r.columns; ++c)
      s.columns.push_back(r.columns == 1 ? "value" : std::to_string(c));
    for (std::size_t f = 0; r.columns > 0 && f < r.values.size() / r.columns; ++f)
      s.values.emplace_back(r.values.begin() + std::ptrdiff_t(f * r.columns),
                            r.values.begin() + std::ptrdiff_t((f + 1) * r.columns));
    t.observables.push_back(std::move(s));
  }
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
  const io::Trajectory trajectory = open_trajectory(info.path);
  AnalysisTables t;
  FramePass pass(info);
  const uint64_t frames = std::min(info.frames, trajectory.frames());
  for (uint64_t index = 0; index < frames; ++index) {
    model::Frame fr;
    try {
      fr = trajectory.read_frame(index);
    } catch (const io::InputError& e) {
      rethrow_input_error(info.path, e);
    }
    pass.add(index, fr, t);
  }
  read_observables(trajectory, info, t);
  return t;
}

}  // namespace nestsim::analysis

// What `nestsim view` serves from a trajectory (layout in nestsim/io/h5md.h): its
// description as JSON (kinds, frames with step and model time, reaction events) and one
// frame as compact binary. Both read the file anew on each call, so frames that a run
// appends while the viewer is open are seen.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nestsim::app {

// The file cannot be viewed: missing, not HDF5, not a nestsim trajectory. what() is the
// whole message, naming the file.
class ViewError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ViewKind {
  std::string name;
  bool compartment = false;
  bool membrane = false;  // a species bound to a membrane
  double radius = 0, thickness = 0;
};

// A reaction rule's events per output interval (those since the previous frame). role:
// "budding" when the rule makes more compartments than it consumes, "fusion" when two
// compartments react into fewer, else "".
struct ViewReaction {
  std::string name, rule, role;
  std::vector<int64_t> events;  // [frame]
};

struct ViewTrajectory {
  std::string path;
  uint64_t frames = 0;  // complete frames: the shortest of the per-frame series
  std::vector<int64_t> steps;
  std::vector<double> times;  // model time, in time_unit
  std::string length_unit, time_unit;
  double box[3] = {0, 0, 0};
  bool periodic = false;
  uint64_t slots = 0;
  std::vector<ViewKind> kinds;
  std::vector<ViewReaction> reactions;
};

// Reads everything but the frames' bodies; throws ViewError.
ViewTrajectory read_view_trajectory(const std::string& path);

// The description as one JSON object (the page's /api/meta).
std::string to_json(const ViewTrajectory& t);

// Frame `index` as the page's binary layout, little-endian:
//   header  uint32 magic 'NSVF', uint32 version 1, uint32 frame, uint32 live bodies,
//           uint32 bodies sent (n), uint32 stride (1: all; k: 1 in k proteins sent),
//           float64 step, float64 model time, uint32 kinds K, uint32 live bodies of
//           each kind [K]
//   float32 position[n][3], float32 radius[n], float32 thickness[n], uint32 id[n],
//   uint16 kind[n] (padded to 4 bytes)
// Live bodies only (slots with id -1 are skipped), compartments first. When more than
// `max_bodies` are live, every compartment and 1 in `stride` proteins are sent: the
// level of detail of very large frames. `kinds` tells compartments from proteins.
std::string encode_frame(const std::string& path, uint64_t index, uint64_t max_bodies,
                         const std::vector<ViewKind>& kinds);

// A JSON string literal of `text` (quotes, backslashes and control characters escaped).
std::string json_string(const std::string& text);

}  // namespace nestsim::app

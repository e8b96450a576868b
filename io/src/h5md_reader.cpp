// Reading trajectories back: the last complete frame (resume) or any frame (analyze).
#include <algorithm>
#include <array>

#include "h5md_layout.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/scene_csv.h"  // InputError

namespace nestsim::io {

using hdf5::check;
using namespace h5md;

namespace {

struct Reader {
  Handle file;
  hsize_t frames = 0;
  std::vector<Handle> values;
  Handle lists;                   // absent in files written before it was stored
  Handle image;                   // likewise
  std::vector<Handle> reactions;  // per rule

  explicit Reader(const std::string& path) : file(open_trajectory(path, false)) {
    const hid_t f = file.get();
    const Handle step = hdf5::open_dataset(f, step_path);
    const Handle time = hdf5::open_dataset(f, time_path);
    frames = std::min(hdf5::dims(step.get())[0], hdf5::dims(time.get())[0]);
    for (const auto& s : series_specs()) {
      values.push_back(hdf5::open_dataset(f, s.path));
      frames = std::min(frames, hdf5::dims(values.back().get())[0]);
    }
    if (hdf5::exists(f, lists_path)) {
      lists = hdf5::open_dataset(f, lists_path);
      frames = std::min(frames, hdf5::dims(lists.get())[0]);
    }
    if (hdf5::exists(f, image_path)) {
      image = hdf5::open_dataset(f, image_path);
      frames = std::min(frames, hdf5::dims(image.get())[0]);
    }
    const std::vector<std::string> rules = reaction_names(f);
    for (const auto& rule : rules) {
      if (!hdf5::exists(f, reaction_path(rule))) not_nestsim(path, "no " + reaction_path(rule));
      reactions.push_back(hdf5::open_dataset(f, reaction_path(rule)));
      frames = std::min(frames, hdf5::dims(reactions.back().get())[0]);
    }
    if (!rules.empty()) {  // the same complete frames as the writer's append() counts
      if (!hdf5::exists(f, reactions_total_path))
        not_nestsim(path, std::string("no ") + reactions_total_path);
      const Handle total = hdf5::open_dataset(f, reactions_total_path);
      frames = std::min(frames, hdf5::dims(total.get())[0]);
    }
  }

  sim::Frame frame(hsize_t index) const {
    sim::Frame fr;
    const hsize_t S = hdf5::dims(values[ts::id].get())[1];
    int64_t step = 0, next = 0;
    read_row(hdf5::open_dataset(file.get(), step_path).get(), H5T_NATIVE_INT64, index, &step);
    read_row(values[ts::model_time].get(), H5T_NATIVE_DOUBLE, index, &fr.time);
    read_row(values[ts::next_id].get(), H5T_NATIVE_INT64, index, &next);
    fr.step = uint64_t(step);
    fr.next_id = uint64_t(next);
    fr.id.resize(S);
    fr.kind.resize(S);
    fr.radius.resize(S);
    fr.thickness.resize(S);
    fr.parent.resize(S);
    fr.membrane.resize(S);
    fr.position.resize(S);
    read_row(values[ts::id].get(), H5T_NATIVE_INT64, index, fr.id.data());
    read_row(values[ts::species].get(), H5T_NATIVE_INT32, index, fr.kind.data());
    read_row(values[ts::radius].get(), H5T_NATIVE_DOUBLE, index, fr.radius.data());
    read_row(values[ts::thickness].get(), H5T_NATIVE_DOUBLE, index, fr.thickness.data());
    read_row(values[ts::parent].get(), H5T_NATIVE_INT64, index, fr.parent.data());
    read_row(values[ts::membrane].get(), H5T_NATIVE_INT64, index, fr.membrane.data());
    static_assert(sizeof(std::array<double, 3>) == 3 * sizeof(double));
    read_row(values[ts::position].get(), H5T_NATIVE_DOUBLE, index, fr.position.data());
    if (lists) read_row(lists.get(), H5T_NATIVE_INT64, index, &fr.broadphase_pairs);
    if (image) {
      fr.image.resize(S);
      static_assert(sizeof(std::array<int32_t, 3>) == 3 * sizeof(int32_t));
      read_row(image.get(), H5T_NATIVE_INT32, index, fr.image.data());
    }
    for (const Handle& r : reactions)  // cumulative: the intervals up to this frame
      fr.reaction_events.push_back(uint64_t(sum_of_rows(r.get(), index + 1)));
    return fr;
  }
};

}  // namespace

sim::Frame frame_from_setup(const sim::Setup& setup) {
  sim::Frame fr;
  fr.next_id = setup.bodies.size();
  for (std::size_t i = 0; i < setup.bodies.size(); ++i) {
    const sim::Body& b = setup.bodies[i];
    const sim::Kind& k = setup.kinds.at(b.kind);
    fr.position.push_back(b.position);
    fr.id.push_back(int64_t(i));
    fr.kind.push_back(int32_t(b.kind));
    fr.radius.push_back(k.radius);
    fr.thickness.push_back(k.thickness);
    fr.parent.push_back(b.parent);
    fr.membrane.push_back(b.membrane);
  }
  fr.reaction_events.assign(setup.reactions.size(), 0);
  return fr;
}

Checkpoint read_last_frame(const std::string& path) {
  const Reader r(path);
  if (r.frames == 0) throw InputError(path, 0, "the trajectory holds no complete frame");
  Checkpoint c;
  c.frame = r.frame(r.frames - 1);
  c.frames = r.frames;
  const hid_t f = r.file.get();
  c.model_text = hdf5::read_string(f, "/parameters/model");
  if (hdf5::exists(f, "/parameters/model_path"))
    c.model_path = hdf5::read_string(f, "/parameters/model_path");
  if (hdf5::exists(f, "/parameters/version"))
    c.version = hdf5::read_string(f, "/parameters/version");
  if (hdf5::exists(f, collision_path)) c.collision = hdf5::read_string(f, collision_path);
  c.reaction_names = reaction_names(f);
  const Handle seed = hdf5::open_dataset(f, "/parameters/seed");
  check(H5Dread(seed.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &c.seed),
        "cannot read /parameters/seed");
  return c;
}

sim::Frame read_frame(const std::string& path, uint64_t index) {
  const Reader r(path);
  if (index >= r.frames)
    throw InputError(path, 0,
                     "frame " + std::to_string(index) + " requested, the trajectory holds " +
                         std::to_string(r.frames));
  return r.frame(index);
}

}  // namespace nestsim::io

// h5md.h's readers by path (resume, its checks, one frame), each over one Trajectory, and
// the initial state as a frame.
#include <hdf5.h>

#include "nestsim/io/hdf5_handle.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/errors.h"
#include "nestsim/io/trajectory.h"

namespace nestsim::io {

model::Frame frame_from_setup(const model::Setup& setup) {
  model::Frame fr;
  fr.next_id = setup.bodies.size();
  for (std::size_t i = 0; i < setup.bodies.size(); ++i) {
    const model::Body& b = setup.bodies[i];
    const model::Kind& k = setup.kinds.at(b.kind);
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

namespace {

Checkpoint read_last(const Trajectory& t) {
  if (t.frames() == 0) throw InputError(t.path(), 0, "the trajectory holds no complete frame");
  Checkpoint c;
  c.frame = t.read_frame(t.frames() - 1);
  c.frames = t.frames();
  c.model_text = t.model_text();
  c.model_path = t.model_path();
  c.version = t.version();
  c.collision = t.collision();
  c.reaction_names = t.reaction_names();
  c.species_names = t.kinds().names;
  c.seed = t.seed();
  return c;
}

}  // namespace

uint64_t check_trajectory(const std::string& path, bool for_append) {
  const Trajectory t(path);
  if (for_append) t.check_appendable();
  return t.frames();
}

bool hdf5_opens(const std::string& path) {
  hdf5::quiet();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) return false;
  H5Fclose(id);
  return true;
}

Checkpoint read_last_frame(const std::string& path) { return read_last(Trajectory(path)); }

model::Frame read_frame(const std::string& path, uint64_t index) {
  return Trajectory(path).read_frame(index);
}

}  // namespace nestsim::io

// Reading trajectories back: the last complete frame (resume) or any frame (analyze).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "h5md_layout.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/scene_csv.h"  // InputError

namespace nestsim::io {

using hdf5::check;
using namespace h5md;

namespace {

std::string length_range() {
  char text[64];
  std::snprintf(text, sizeof text, "%g to %g", min_length, max_length);
  return text;
}

// The one reader of trajectories: the layout is checked when the file is opened (every
// dataset's type class, rank and extents, the slot count the same in every per-slot
// series) and each frame's values when it is read (kinds index the kind table, parents
// and membranes name live bodies, numbers finite), before anything is sized or indexed
// from them. Whatever fails is an InputError naming the file and the dataset.
struct Reader {
  std::string path;
  Handle file;
  hsize_t frames = 0;
  hsize_t slots = 0;
  std::size_t kinds = 0;
  std::vector<int8_t> compartment;  // per kind
  Handle step;
  std::vector<Handle> values;
  Handle lists;                   // absent in files written before it was stored
  Handle image;                   // likewise
  std::vector<Handle> reactions;  // per rule
  std::vector<std::string> rule_names;

  explicit Reader(const std::string& file_path)
      : path(file_path), file(open_trajectory(file_path, false)) {
    const hid_t f = file.get();
    std::vector<hsize_t> e;
    open_checked(f, path, "/parameters/species_names", H5T_STRING, {any_extent}, &e);
    if (e[0] > max_table)
      not_nestsim(path, "/parameters/species_names: more than " + std::to_string(max_table) +
                            " kinds");
    kinds = std::size_t(e[0]);
    const hsize_t K = e[0];
    {
      const Handle c = open_checked(f, path, "/parameters/kinds/compartment", H5T_INTEGER, {K});
      compartment.resize(kinds);
      if (K > 0)
        check(H5Dread(c.get(), H5T_NATIVE_INT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, compartment.data()),
              "cannot read /parameters/kinds/compartment");
    }
    open_checked(f, path, "/parameters/kinds/membrane", H5T_INTEGER, {K});
    for (const char* table : {"/parameters/kinds/radius", "/parameters/kinds/thickness",
                              "/parameters/kinds/diffusion"})
      open_checked(f, path, table, H5T_FLOAT, {K});
    {
      const Handle b = open_checked(f, path, "/parameters/box", H5T_FLOAT, {3});
      double box[3];
      check(H5Dread(b.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, box),
            "cannot read /parameters/box");
      // A 2-d box has no third edge.
      for (int a = 0; a < 3; ++a)
        if (!((box[a] >= min_length && box[a] <= max_length) || (a == 2 && box[a] == 0)))
          not_nestsim(path, "/parameters/box: edge " + std::to_string(a) + " outside " +
                                length_range());
    }
    step = open_checked(f, path, step_path, H5T_INTEGER, {any_extent}, &e);
    frames = e[0];
    open_checked(f, path, time_path, H5T_FLOAT, {any_extent}, &e);
    frames = std::min(frames, e[0]);
    // The slot count: the id series' second extent, which every per-slot series shares.
    open_checked(f, path, series_specs()[ts::id].path, H5T_INTEGER, {any_extent, any_extent}, &e);
    slots = e[1];
    if (slots > max_slots)
      not_nestsim(path, std::string(series_specs()[ts::id].path) + ": " + std::to_string(slots) +
                            " slots, more than a trajectory may hold (" +
                            std::to_string(max_slots) + ")");
    const std::vector<SeriesSpec> specs = series_specs();
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const SeriesSpec& s = specs[i];
      std::vector<hsize_t> form{any_extent};
      if (s.per_slot) form.push_back(slots);
      if (i == ts::position) form.push_back(3);
      if (i == ts::edges) form = {any_extent, 3, 3};
      if (i == ts::kind_count) form = {any_extent, K};
      if (i == ts::container_count || i == ts::membrane_count) form = {any_extent, K, K + 1};
      const H5T_class_t type_class =
          H5Tget_class(s.memory_type) == H5T_FLOAT ? H5T_FLOAT : H5T_INTEGER;
      values.push_back(open_checked(f, path, s.path, type_class, form, &e));
      frames = std::min(frames, e[0]);
    }
    if (hdf5::exists(f, lists_path)) {
      lists = open_checked(f, path, lists_path, H5T_INTEGER, {any_extent}, &e);
      frames = std::min(frames, e[0]);
    }
    if (hdf5::exists(f, image_path)) {
      image = open_checked(f, path, image_path, H5T_INTEGER, {any_extent, slots, 3}, &e);
      frames = std::min(frames, e[0]);
    }
    std::vector<std::string> rules;
    if (hdf5::exists(f, reaction_names_path)) {
      open_checked(f, path, reaction_names_path, H5T_STRING, {any_extent}, &e);
      if (e[0] > max_table)
        not_nestsim(path, std::string(reaction_names_path) + ": more than " +
                              std::to_string(max_table) + " rules");
      rules = reaction_names(f);
    }
    rule_names = rules;
    for (const auto& rule : rules) {
      reactions.push_back(open_checked(f, path, reaction_path(rule), H5T_INTEGER, {any_extent}, &e));
      frames = std::min(frames, e[0]);
    }
    if (!rules.empty()) {  // the same complete frames as the writer's append() counts
      open_checked(f, path, reactions_total_path, H5T_INTEGER, {any_extent}, &e);
      frames = std::min(frames, e[0]);
    }
    open_checked(f, path, "/parameters/seed", H5T_INTEGER, {}, &e);
    for (const char* text : {"/parameters/model", "/parameters/time_unit"})
      open_checked(f, path, text, H5T_STRING, {});
    for (const char* text :
         {"/parameters/model_path", "/parameters/version", "/parameters/length_unit",
          collision_path})
      if (hdf5::exists(f, text)) open_checked(f, path, text, H5T_STRING, {});
    const Handle box = hdf5::open_group(f, "/particles/bodies/box");
    if (H5Aexists(box.get(), "boundary") > 0)
      read_string_attributes(box.get(), path, "/particles/bodies/box boundary", 3);
  }

  // What appending needs beyond reading: every series of a frame chunked and growing
  // along the frames (and the slots, per slot), and no series group without its value
  // (the writer would make the value anew, and its links clash).
  void check_appendable() const {
    const hid_t f = file.get();
    const auto growing = [&](hid_t d, const std::string& name, bool per_slot) {
      const Handle plist(H5Dget_create_plist(d), H5Pclose, "properties of " + name);
      const Handle space(H5Dget_space(d), H5Sclose, "the shape of " + name);
      std::vector<hsize_t> now(std::size_t(std::max(H5Sget_simple_extent_ndims(space.get()), 0)));
      std::vector<hsize_t> most(now.size());
      H5Sget_simple_extent_dims(space.get(), now.data(), most.data());
      if (H5Pget_layout(plist.get()) != H5D_CHUNKED || most.empty() ||
          most[0] != H5S_UNLIMITED || (per_slot && (most.size() < 2 || most[1] != H5S_UNLIMITED)))
        not_nestsim(path, name + ": cannot grow (not chunked with unlimited frames" +
                              std::string(per_slot ? " and slots" : "") +
                              "), so no frame can be appended");
    };
    const std::vector<SeriesSpec> specs = series_specs();
    for (std::size_t i = 0; i < specs.size(); ++i)
      growing(values[i].get(), specs[i].path, specs[i].per_slot);
    growing(step.get(), step_path, false);
    growing(hdf5::open_dataset(f, time_path).get(), time_path, false);
    if (lists) growing(lists.get(), lists_path, false);
    if (image) growing(image.get(), image_path, true);
    for (std::size_t r = 0; r < reactions.size(); ++r)
      growing(reactions[r].get(), reaction_path(rule_names[r]), false);
    if (!rule_names.empty())
      growing(hdf5::open_dataset(f, reactions_total_path).get(), reactions_total_path, false);
    for (const char* value : {lists_path, image_path}) {
      const std::string v = value, group = v.substr(0, v.rfind('/'));
      if (hdf5::exists(f, group) && !hdf5::exists(f, v)) not_nestsim(path, "no " + v);
    }
  }

  [[noreturn]] void bad(hsize_t index, const std::string& what) const {
    not_nestsim(path, "frame " + std::to_string(index) + ": " + what);
  }

  // The values of frame `index` that a reader indexes or sizes with, or that a resumed
  // run would take as its state.
  void check_values(hsize_t index, const sim::Frame& fr) const {
    const std::string id_path = series_specs()[ts::id].path;
    std::unordered_map<int64_t, std::size_t> slot_of;  // live id -> slot
    int64_t largest = -1;
    for (std::size_t s = 0; s < fr.id.size(); ++s) {
      if (fr.id[s] < 0) continue;
      if (!slot_of.emplace(fr.id[s], s).second)
        bad(index, id_path + ": id " + std::to_string(fr.id[s]) + " in two slots");
      largest = std::max(largest, fr.id[s]);
    }
    if (largest >= 0 && fr.next_id <= uint64_t(largest))
      bad(index, std::string(series_specs()[ts::next_id].path) + ": " +
                     std::to_string(fr.next_id) + " is not above the largest id " +
                     std::to_string(largest));
    if (!std::isfinite(fr.time))
      bad(index, std::string(series_specs()[ts::model_time].path) + ": not a finite number");
    const auto names_live = [&](int64_t body, const char* series, std::size_t s) {
      if (body == -1) return;
      const auto it = slot_of.find(body);
      if (it == slot_of.end())
        bad(index, std::string(series) + ": slot " + std::to_string(s) + " names body " +
                       std::to_string(body) + ", which the frame does not hold");
      if (!compartment[std::size_t(fr.kind[it->second])])
        bad(index, std::string(series) + ": slot " + std::to_string(s) + " names body " +
                       std::to_string(body) + ", which is not a compartment");
    };
    for (std::size_t s = 0; s < fr.id.size(); ++s) {
      if (fr.id[s] >= 0 && (fr.kind[s] < 0 || std::size_t(fr.kind[s]) >= kinds))
        bad(index, std::string(series_specs()[ts::species].path) + ": slot " + std::to_string(s) +
                       ": kind " + std::to_string(fr.kind[s]) +
                       " is not in /parameters/species_names");
    }
    for (std::size_t s = 0; s < fr.id.size(); ++s) {
      if (fr.id[s] < 0) continue;
      names_live(fr.parent[s], series_specs()[ts::parent].path, s);
      names_live(fr.membrane[s], series_specs()[ts::membrane].path, s);
      if (fr.parent[s] == fr.id[s] || fr.membrane[s] == fr.id[s])
        bad(index, "slot " + std::to_string(s) + ": body " + std::to_string(fr.id[s]) +
                       " contains itself");
      const double r = fr.radius[s], q = fr.thickness[s];
      if (!(r >= min_length && r <= max_length))
        bad(index, std::string(series_specs()[ts::radius].path) + ": slot " + std::to_string(s) +
                       ": radius " + std::to_string(r) + " outside " + length_range());
      if (!(q >= 0 && q <= max_length))
        bad(index, std::string(series_specs()[ts::thickness].path) + ": slot " +
                       std::to_string(s) + ": thickness not a number from 0 to " +
                       std::to_string(max_length));
      for (double x : fr.position[s])
        if (!(std::fabs(x) <= max_length))
          bad(index, std::string(series_specs()[ts::position].path) + ": slot " +
                         std::to_string(s) + ": a coordinate not a number within +-" +
                         std::to_string(max_length));
    }
    if (fr.broadphase_pairs < -1) bad(index, std::string(lists_path) + ": below -1");
  }

  sim::Frame frame(hsize_t index) const {
    try {
      return read(index);
    } catch (const hdf5::Error& e) {  // a damaged chunk: the file cannot be read there
      not_nestsim(path, "frame " + std::to_string(index) + ": " + e.what());
    }
  }

  sim::Frame read(hsize_t index) const {
    sim::Frame fr;
    const std::size_t S = std::size_t(slots);
    int64_t step_value = 0, next = 0;
    read_row(step.get(), H5T_NATIVE_INT64, index, &step_value);
    read_row(values[ts::model_time].get(), H5T_NATIVE_DOUBLE, index, &fr.time);
    read_row(values[ts::next_id].get(), H5T_NATIVE_INT64, index, &next);
    if (step_value < 0) bad(index, std::string(step_path) + ": a negative step");
    if (next < 0) bad(index, std::string(series_specs()[ts::next_id].path) + ": negative");
    fr.step = uint64_t(step_value);
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
    for (std::size_t r = 0; r < reactions.size(); ++r) {  // cumulative: up to this frame
      try {
        fr.reaction_events.push_back(uint64_t(sum_of_rows(reactions[r].get(), index + 1)));
      } catch (const hdf5::Error& e) {
        bad(index, reaction_path(rule_names[r]) + ": " + e.what());
      }
    }
    check_values(index, fr);
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

namespace {

// An HDF5 failure while a file is read (a damaged header, an unreadable chunk) is a
// fault of the file: InputError naming it, as every other refusal of a reader.
template <typename Read>
auto readable(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const hdf5::Error& e) {
    throw InputError(path, 0, std::string("cannot read it: ") + e.what());
  }
}

Checkpoint read_last(const std::string& path) {
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
  c.reaction_names = r.rule_names;
  c.species_names = read_strings(f, "/parameters/species_names");
  const Handle seed = hdf5::open_dataset(f, "/parameters/seed");
  check(H5Dread(seed.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &c.seed),
        "cannot read /parameters/seed");
  return c;
}

sim::Frame read_one(const std::string& path, uint64_t index) {
  const Reader r(path);
  if (index >= r.frames)
    throw InputError(path, 0,
                     "frame " + std::to_string(index) + " requested, the trajectory holds " +
                         std::to_string(r.frames));
  return r.frame(index);
}

}  // namespace

uint64_t check_trajectory(const std::string& path, bool for_append) {
  return readable(path, [&] {
    const Reader r(path);
    if (for_append) r.check_appendable();
    return uint64_t(r.frames);
  });
}

bool hdf5_opens(const std::string& path) {
  hdf5::quiet();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) return false;
  H5Fclose(id);
  return true;
}

Checkpoint read_last_frame(const std::string& path) {
  return readable(path, [&] { return read_last(path); });
}

sim::Frame read_frame(const std::string& path, uint64_t index) {
  return readable(path, [&] { return read_one(path, index); });
}

}  // namespace nestsim::io

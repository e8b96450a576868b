// io::Trajectory (trajectory.h): one open file, its layout checked once, frames,
// series and parameters read from it.
#include "nestsim/io/trajectory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "h5md_layout.h"
#include "nestsim/io/errors.h"
#include "trajectory_series.h"

namespace nestsim::io {

using hdf5::check;
using namespace h5md;

namespace {

std::string length_range() {
  char text[64];
  std::snprintf(text, sizeof text, "%g to %g", min_length, max_length);
  return text;
}

// The checks and reads behind Trajectory: the layout is checked when the file is opened (every
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
  TrajectoryKinds table;
  std::array<double, 3> box{0, 0, 0};
  bool periodic = false;
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
    compartment =
        read_table<int8_t>("/parameters/kinds/compartment", H5T_INTEGER, H5T_NATIVE_INT8, K);
    table.names = read_strings(f, "/parameters/species_names");
    table.compartment.assign(compartment.begin(), compartment.end());
    {
      const std::vector<int8_t> membrane =
          read_table<int8_t>("/parameters/kinds/membrane", H5T_INTEGER, H5T_NATIVE_INT8, K);
      table.membrane.assign(membrane.begin(), membrane.end());
    }
    table.radius = read_table<double>("/parameters/kinds/radius", H5T_FLOAT, H5T_NATIVE_DOUBLE, K);
    table.thickness =
        read_table<double>("/parameters/kinds/thickness", H5T_FLOAT, H5T_NATIVE_DOUBLE, K);
    table.diffusion =
        read_table<double>("/parameters/kinds/diffusion", H5T_FLOAT, H5T_NATIVE_DOUBLE, K);
    {
      const Handle b = open_checked(f, path, "/parameters/box", H5T_FLOAT, {3});
      check(H5Dread(b.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, box.data()),
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
    const Handle box_group = hdf5::open_group(f, "/particles/bodies/box");
    if (H5Aexists(box_group.get(), "boundary") > 0)
      periodic = read_string_attributes(box_group.get(), path, "/particles/bodies/box boundary",
                                        3)[0] == "periodic";
  }

  // A kind table of `kinds` entries, its form checked before it is read.
  template <typename T>
  std::vector<T> read_table(const char* name, H5T_class_t type_class, hid_t memory_type,
                            hsize_t count) const {
    const Handle d = open_checked(file.get(), path, name, type_class, {count});
    std::vector<T> values(static_cast<std::size_t>(count));
    if (count > 0)
      check(H5Dread(d.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
            std::string("cannot read ") + name);
    return values;
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
  void check_values(hsize_t index, const model::Frame& fr) const {
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

  model::Frame frame(hsize_t index) const {
    try {
      return read(index);
    } catch (const hdf5::Error& e) {  // a damaged chunk: the file cannot be read there
      not_nestsim(path, "frame " + std::to_string(index) + ": " + e.what());
    }
  }

  model::Frame read(hsize_t index) const {
    model::Frame fr;
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


// An HDF5 failure while a file is read (a damaged header, an unreadable chunk) is a
// fault of the file: InputError naming it, as every other refusal of the reader.
template <typename Read>
auto readable(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const hdf5::Error& e) {
    throw InputError(path, 0, std::string("cannot read it: ") + e.what());
  }
}

}  // namespace

struct Trajectory::Impl {
  explicit Impl(const std::string& path) : reader(path) {}
  Reader reader;
};

Trajectory::Trajectory(const std::string& path)
    : impl_(readable(path, [&] { return std::make_unique<Impl>(path); })) {}
Trajectory::Trajectory(Trajectory&&) noexcept = default;
Trajectory& Trajectory::operator=(Trajectory&&) noexcept = default;
Trajectory::~Trajectory() = default;

hid_t TrajectoryFile::of(const Trajectory& t) { return t.impl_->reader.file.get(); }

const std::string& Trajectory::path() const { return impl_->reader.path; }
uint64_t Trajectory::frames() const { return impl_->reader.frames; }
uint64_t Trajectory::slots() const { return impl_->reader.slots; }

model::Frame Trajectory::read_frame(uint64_t index) const {
  const Reader& r = impl_->reader;
  if (index >= r.frames)
    throw InputError(r.path, 0,
                     "frame " + std::to_string(index) + " requested, the trajectory holds " +
                         std::to_string(r.frames));
  return readable(r.path, [&] { return r.frame(index); });
}

std::vector<int64_t> Trajectory::steps() const {
  const Reader& r = impl_->reader;
  return readable(r.path, [&] {
    return series_rows<int64_t>(r.step.get(), r.path, step_path, H5T_NATIVE_INT64, r.frames);
  });
}

std::vector<double> Trajectory::times() const {
  const Reader& r = impl_->reader;
  return readable(r.path, [&] {
    return series_rows<double>(r.values[ts::model_time].get(), r.path,
                               series_specs()[ts::model_time].path, H5T_NATIVE_DOUBLE,
                               r.frames);
  });
}

const TrajectoryKinds& Trajectory::kinds() const { return impl_->reader.table; }
std::array<double, 3> Trajectory::box() const { return impl_->reader.box; }
bool Trajectory::periodic() const { return impl_->reader.periodic; }

namespace {

// A string dataset the reader has checked (a scalar string), "" when the file lacks it.
std::string text_of(const Reader& r, const char* name) {
  return readable(r.path, [&] {
    return hdf5::exists(r.file.get(), name) ? hdf5::read_string(r.file.get(), name)
                                            : std::string();
  });
}

}  // namespace

std::string Trajectory::length_unit() const {
  return text_of(impl_->reader, "/parameters/length_unit");
}
std::string Trajectory::time_unit() const { return text_of(impl_->reader, "/parameters/time_unit"); }
std::string Trajectory::collision() const { return text_of(impl_->reader, collision_path); }
std::string Trajectory::model_text() const { return text_of(impl_->reader, "/parameters/model"); }
std::string Trajectory::model_path() const {
  return text_of(impl_->reader, "/parameters/model_path");
}
std::string Trajectory::version() const { return text_of(impl_->reader, "/parameters/version"); }

uint64_t Trajectory::seed() const {
  const Reader& r = impl_->reader;
  return readable(r.path, [&] {
    uint64_t seed = 0;
    const Handle d = hdf5::open_dataset(r.file.get(), "/parameters/seed");
    check(H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &seed),
          "cannot read /parameters/seed");
    return seed;
  });
}

const std::vector<std::string>& Trajectory::reaction_names() const {
  return impl_->reader.rule_names;
}

std::vector<int64_t> Trajectory::reaction_events(std::size_t rule) const {
  const Reader& r = impl_->reader;
  const std::string name = reaction_path(r.rule_names.at(rule));
  return readable(r.path, [&] {
    return series_rows<int64_t>(r.reactions[rule].get(), r.path, name, H5T_NATIVE_INT64,
                                r.frames);
  });
}

std::vector<ObservableRows> Trajectory::observables(const std::vector<std::string>& except) const {
  const Reader& r = impl_->reader;
  return readable(r.path, [&] {
    std::vector<ObservableRows> out;
    if (hdf5::exists(r.file.get(), "/observables")) {
      const Handle group = hdf5::open_group(r.file.get(), "/observables");
      collect_observables(group.get(), r.path, r.frames, except, out);
    }
    return out;
  });
}

ObservableRows Trajectory::observable(const std::string& name) const {
  const Reader& r = impl_->reader;
  return readable(r.path, [&] { return read_observable(r.file.get(), r.path, name, r.frames); });
}

void Trajectory::check_appendable() const {
  const Reader& r = impl_->reader;
  readable(r.path, [&] { r.check_appendable(); });
}

}  // namespace nestsim::io

// Appending to a trajectory frame by frame, only complete frames on disk; continuing
// one (--resume).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "h5md_writer_impl.h"

namespace nestsim::io {

using hdf5::check;
using namespace h5md;

hsize_t H5mdWriter::Impl::complete_frames() const {
  hsize_t n = std::min(hdf5::dims(step.get())[0], hdf5::dims(time.get())[0]);
  for (const auto& s : series) n = std::min(n, hdf5::dims(s.value.get())[0]);
  if (lists.value) n = std::min(n, hdf5::dims(lists.value.get())[0]);
  if (image.value) n = std::min(n, hdf5::dims(image.value.get())[0]);
  for (const auto& s : reactions) n = std::min(n, hdf5::dims(s.value.get())[0]);
  if (reactions_total.value) n = std::min(n, hdf5::dims(reactions_total.value.get())[0]);
  return n;
}

void H5mdWriter::Impl::drop_partial_frames(hsize_t n) {
  const hid_t f = file.get();
  auto shrink = [&](hid_t d) {
    std::vector<hsize_t> extent = hdf5::dims(d);
    if (extent[0] == n) return;
    extent[0] = n;
    check(H5Dset_extent(d, extent.data()), "cannot drop a partial frame");
  };
  shrink(step.get());
  shrink(time.get());
  for (auto& s : series) shrink(s.value.get());
  for (auto& s : reactions) shrink(s.value.get());
  if (reactions_total.value) shrink(reactions_total.value.get());
  if (image.value) {
    shrink(image.value.get());
  } else {  // a file written before the images were stored: earlier frames read as 0
    const hsize_t slot_count = hdf5::dims(series[ts::id].value.get())[1];
    create_series(f, image_path, H5T_STD_I32LE, H5T_NATIVE_INT32, {slot_count, 3}, true, 0);
    image = open_one(f, image_path, H5T_NATIVE_INT32, true);
    std::vector<hsize_t> extent{n, slot_count, 3};
    check(H5Dset_extent(image.value.get(), extent.data()), "cannot extend a time series");
  }
  if (lists.value) {
    shrink(lists.value.get());
  } else {  // a file written before the list sizes were stored: earlier frames unknown (-1)
    create_series(f, lists_path, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, false, -1);
    lists = open_one(f, lists_path, H5T_NATIVE_INT64, false);
    check(H5Dset_extent(lists.value.get(), &n), "cannot extend a time series");
  }
}

void H5mdWriter::Impl::read_position(hsize_t n) {
  const hid_t f = file.get();
  // The cumulative counts the next frame's interval counts are taken from.
  for (std::size_t k = 0; k < reactions.size(); ++k) {
    const int64_t sum = sum_of_rows(reactions[k].value.get(), n);
    if (sum < 0) not_nestsim(path, reactions[k].path + " sums to a negative count");
    events[k] = uint64_t(sum);
  }
  frames = n;
  time_scale = h5md_time_unit(hdf5::read_string(f, "/parameters/time_unit")).second;
  slots = series[ts::id].inner[0];
  kinds = series[ts::kind_count].inner[0];
  if (n > 0) {
    int64_t last = 0;
    read_row(step.get(), H5T_NATIVE_INT64, n - 1, &last);
    last_step = last;
    double edges[9];
    read_row(series[ts::edges].value.get(), H5T_NATIVE_DOUBLE, n - 1, edges);
    box = {edges[0], edges[4], edges[8]};
  } else {
    const Handle b = hdf5::open_dataset(f, "/parameters/box");
    check(H5Dread(b.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, box.data()),
          "cannot read /parameters/box");
  }
}

H5mdWriter H5mdWriter::append(const std::string& path) {
  H5mdWriter writer;
  writer.impl_ = std::make_unique<Impl>();
  Impl& w = *writer.impl_;
  w.path = path;
  w.written = path;
  w.file = open_trajectory(path, true);
  w.open_series(series_specs(), reaction_names(w.file.get()));
  const hsize_t frames = w.complete_frames();
  w.drop_partial_frames(frames);
  w.read_position(frames);
  check(H5Fflush(w.file.get(), H5F_SCOPE_GLOBAL), "flush");
  return writer;
}

H5mdWriter::H5mdWriter(H5mdWriter&&) noexcept = default;
H5mdWriter& H5mdWriter::operator=(H5mdWriter&&) noexcept = default;
H5mdWriter::~H5mdWriter() {
  try {
    close();
  } catch (const std::exception&) {  // a destructor does not throw; close() reports
  }
}

uint64_t H5mdWriter::frames() const { return impl_ ? impl_->frames : 0; }
WriteTimes H5mdWriter::times() const { return impl_ ? impl_->times : WriteTimes{}; }
uint64_t H5mdWriter::slots() const { return impl_ ? impl_->slots : 0; }

void H5mdWriter::close() {
  if (!impl_) return;
  std::unique_ptr<Impl> w = std::move(impl_);
  if (w->file) check(H5Fflush(w->file.get(), H5F_SCOPE_GLOBAL), "flush");
  const std::string written = w->written, replaces = w->replaces, path = w->path;
  const bool has_frame = w->frames > 0;
  w.reset();  // the file closed before it is moved
  if (replaces.empty()) return;
  // A new trajectory replaces the old one only when it holds a frame (it can be
  // resumed); one without a frame is removed and the old one kept.
  if (!has_frame) {
    std::remove(written.c_str());
    return;
  }
  if (std::rename(written.c_str(), replaces.c_str()) != 0)
    throw std::runtime_error(path + ": cannot replace it with " + written + ": " +
                             std::strerror(errno));
}

std::string H5mdWriter::file_written() const { return impl_ ? impl_->written : std::string(); }

void H5mdWriter::write(const model::Frame& fr) {
  if (!impl_) throw std::logic_error("H5mdWriter: write after close");
  hdf5::quiet();  // per thread (thread-safe HDF5): a writer thread's errors unprinted too
  Impl& w = *impl_;
  const hsize_t f = w.frames;
  uint64_t row_bytes = 16 * (w.reactions.size() + 2);  // the small series
  for (const auto& s : w.series) {
    uint64_t bytes = H5Tget_size(s.memory_type);
    for (std::size_t d = 0; d < s.inner.size(); ++d)
      bytes *= s.per_slot && d == 0 ? std::max<uint64_t>(s.inner[0], fr.id.size()) : s.inner[d];
    row_bytes += bytes;
  }
  row_bytes += 3 * sizeof(int32_t) * std::max<uint64_t>(w.slots, fr.id.size());  // image
  w.check_room(f, fr.step, row_bytes);
  try {
    w.append(fr);
  } catch (const hdf5::Error& e) {
    const bool kept = w.take_back(f);
    std::string what = w.path + ": cannot write frame " + std::to_string(f) + " (step " +
                       std::to_string(fr.step) + "): " + write_problem(e.system_errno());
    if (e.system_errno() == 0) what += " (" + std::string(e.what()) + ")";
    throw WriteError(what + w.held_frames(f, kept), f, w.last_step);
  }
}

namespace {

// The kind of each body id of a frame: a table indexed by id where the ids are dense
// (as a simulation's are: below next_id), else a hash map.
class KindOfId {
 public:
  void build(const std::vector<int64_t>& ids, const std::vector<int32_t>& kinds) {
    int64_t largest = -1;
    std::size_t live = 0;
    for (int64_t id : ids)
      if (id >= 0) {
        largest = std::max(largest, id);
        ++live;
      }
    dense_ = largest < 0 || uint64_t(largest) < 4 * uint64_t(live) + 1024;
    if (dense_) table_.assign(std::size_t(largest + 1), -1);
    for (std::size_t s = 0; s < ids.size(); ++s) {
      if (ids[s] < 0) continue;
      if (dense_) table_[std::size_t(ids[s])] = kinds[s];
      else sparse_[ids[s]] = kinds[s];
    }
  }
  // -1 when no body of the frame has that id.
  int32_t operator()(int64_t id) const {
    if (dense_) return id < int64_t(table_.size()) ? table_[std::size_t(id)] : -1;
    const auto it = sparse_.find(id);
    return it == sparse_.end() ? -1 : it->second;
  }

 private:
  bool dense_ = true;
  std::vector<int32_t> table_;
  std::unordered_map<int64_t, int32_t> sparse_;
};

// A frame's per-slot rows, padded with empty slots.
struct SlotRows {
  std::vector<int64_t> ids, parents, membranes;
  std::vector<int32_t> kinds;
  std::vector<double> r, q, x;
  std::vector<int32_t> image;  // unknown images (an empty Frame::image) as 0
  KindOfId kind_of;            // of each body id

  SlotRows(const model::Frame& fr, std::size_t S, std::size_t K)
      : ids(S, -1),
        parents(S, -1),
        membranes(S, -1),
        kinds(S, -1),
        r(S, 0),
        q(S, 0),
        x(3 * S, 0),
        image(3 * S, 0) {
    for (std::size_t s = 0; s < fr.id.size(); ++s) {
      ids[s] = fr.id[s];
      if (fr.id[s] < 0) continue;
      if (fr.kind[s] < 0 || std::size_t(fr.kind[s]) >= K)
        throw std::invalid_argument("H5mdWriter: slot " + std::to_string(s) + " has kind " +
                                    std::to_string(fr.kind[s]));
      kinds[s] = fr.kind[s];
      parents[s] = fr.parent[s];
      membranes[s] = fr.membrane[s];
      r[s] = fr.radius[s];
      q[s] = fr.thickness[s];
      for (int d = 0; d < 3; ++d) x[3 * s + d] = fr.position[s][d];
      if (s < fr.image.size())
        for (int d = 0; d < 3; ++d) image[3 * s + d] = fr.image[s][std::size_t(d)];
    }
    kind_of.build(ids, kinds);
  }
};

// The observables of a frame: bodies, per kind, by the kind of their container and of
// their membrane (the last column: none).
struct BodyCounts {
  int64_t count = 0;
  std::vector<int64_t> per_kind, by_container, by_membrane;

  BodyCounts(const SlotRows& rows, std::size_t n, std::size_t K)
      : per_kind(K, 0), by_container(K * (K + 1), 0), by_membrane(K * (K + 1), 0) {
    auto column = [&](int64_t body) -> std::size_t {
      if (body < 0) return K;
      const int32_t kind = rows.kind_of(body);
      if (kind < 0)
        throw std::invalid_argument("H5mdWriter: a slot names body " + std::to_string(body) +
                                    " as parent or membrane, which is not in the frame");
      return std::size_t(kind);
    };
    for (std::size_t s = 0; s < n; ++s) {
      if (rows.ids[s] < 0) continue;
      const std::size_t k = std::size_t(rows.kinds[s]);
      ++count;
      ++per_kind[k];
      ++by_container[k * (K + 1) + column(rows.parents[s])];
      ++by_membrane[k * (K + 1) + column(rows.membranes[s])];
    }
  }
};

}  // namespace

void H5mdWriter::Impl::grow_slots(std::size_t n) {
  std::vector<Series*> per_slot{&image};
  for (auto& s : series) per_slot.push_back(&s);
  for (Series* p : per_slot) {
    Series& s = *p;
    if (!s.per_slot) continue;
    s.inner[0] = n;
    std::vector<hsize_t> extent{frames};
    extent.insert(extent.end(), s.inner.begin(), s.inner.end());
    check(H5Dset_extent(s.value.get(), extent.data()), "cannot grow the slots");
  }
  slots = n;
}

// Reaction events in the interval that ends at this frame (all of them at a first frame
// that already counts some, e.g. a run continued into a new file).
std::vector<int64_t> H5mdWriter::Impl::interval_events(const model::Frame& fr) const {
  const std::size_t R = reactions.size();
  if (fr.reaction_events.size() != R)
    throw std::invalid_argument("H5mdWriter: the frame counts the events of " +
                                std::to_string(fr.reaction_events.size()) +
                                " reaction rules, the trajectory has " + std::to_string(R));
  std::vector<int64_t> interval(R);
  for (std::size_t k = 0; k < R; ++k) {
    if (fr.reaction_events[k] < events[k])
      throw std::invalid_argument("H5mdWriter: the events of reaction rule " + std::to_string(k) +
                                  " decrease from " + std::to_string(events[k]) + " to " +
                                  std::to_string(fr.reaction_events[k]));
    interval[k] = int64_t(fr.reaction_events[k] - events[k]);
  }
  return interval;
}

void H5mdWriter::Impl::append(const model::Frame& fr) {
  const std::size_t n = fr.id.size();
  if (fr.position.size() != n || fr.kind.size() != n || fr.radius.size() != n ||
      fr.thickness.size() != n || fr.parent.size() != n || fr.membrane.size() != n)
    throw std::invalid_argument("H5mdWriter: the frame's per-slot vectors differ in size");
  if (int64_t(fr.step) <= last_step)
    throw std::invalid_argument("H5mdWriter: frame step " + std::to_string(fr.step) +
                                " does not follow step " + std::to_string(last_step));
  const std::vector<int64_t> interval = interval_events(fr);
  int64_t interval_total = 0;
  for (int64_t e : interval) interval_total += e;
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  Clock::time_point start = Clock::now();
  if (n > slots) grow_slots(n);
  const SlotRows slot_rows(fr, slots, kinds);
  const BodyCounts counts(slot_rows, n, kinds);
  times.rows += seconds_since(start);
  start = Clock::now();
  const int64_t next = int64_t(fr.next_id);
  const int64_t frame_step = int64_t(fr.step);
  const hsize_t f = frames;
  const void* rows[ts::count] = {};
  const double edges[9] = {box[0], 0, 0, 0, box[1], 0, 0, 0, box[2]};
  rows[ts::edges] = edges;
  rows[ts::body_count] = &counts.count;
  rows[ts::kind_count] = counts.per_kind.data();
  rows[ts::container_count] = counts.by_container.data();
  rows[ts::membrane_count] = counts.by_membrane.data();
  rows[ts::next_id] = &next;
  rows[ts::model_time] = &fr.time;
  rows[ts::id] = slot_rows.ids.data();
  rows[ts::species] = slot_rows.kinds.data();
  rows[ts::radius] = slot_rows.r.data();
  rows[ts::thickness] = slot_rows.q.data();
  rows[ts::parent] = slot_rows.parents.data();
  rows[ts::membrane] = slot_rows.membranes.data();
  rows[ts::position] = slot_rows.x.data();
  append_row(step.get(), H5T_NATIVE_INT64, f, {}, &frame_step);
  const double h5md_time = fr.time * time_scale;
  append_row(time.get(), H5T_NATIVE_DOUBLE, f, {}, &h5md_time);
  for (std::size_t i = 0; i < ts::count; ++i)
    if (i != ts::position)
      append_row(series[i].value.get(), series[i].memory_type, f, series[i].inner, rows[i]);
  append_row(lists.value.get(), H5T_NATIVE_INT64, f, {}, &fr.broadphase_pairs);
  append_row(image.value.get(), H5T_NATIVE_INT32, f, image.inner, slot_rows.image.data());
  for (std::size_t k = 0; k < interval.size(); ++k)
    append_row(reactions[k].value.get(), H5T_NATIVE_INT64, f, {}, &interval[k]);
  if (!interval.empty())
    append_row(reactions_total.value.get(), H5T_NATIVE_INT64, f, {}, &interval_total);
  times.write += seconds_since(start);
  // Everything but the positions on disk first: while a full disk fails the positions,
  // they keep the frame out of every reader's count (the shortest series).
  start = Clock::now();
  check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flush");
  times.flush += seconds_since(start);
  start = Clock::now();
  append_row(series[ts::position].value.get(), series[ts::position].memory_type, f,
             series[ts::position].inner, rows[ts::position]);  // last: see the header
  times.write += seconds_since(start);
  start = Clock::now();
  check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flush");
  times.flush += seconds_since(start);
  frames = f + 1;
  last_step = frame_step;
  events = fr.reaction_events;
}

}  // namespace nestsim::io

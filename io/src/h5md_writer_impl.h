// The trajectory writer's state (nestsim/io/h5md.h: H5mdWriter), shared by its creation
// (h5md_create.cpp) and its appends (h5md_writer.cpp). Internal to io.
#pragma once
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "h5md_layout.h"
#include "nestsim/io/h5md.h"

namespace nestsim::io {

struct H5mdWriter::Impl {
  using Handle = hdf5::Handle;
  using Series = h5md::Series;
  using SeriesSpec = h5md::SeriesSpec;

  std::string path;     // the trajectory, as named (messages)
  std::string written;  // the file being written: path, or a temporary beside the file it
                        // replaces (moved over it by H5mdWriter::close())
  std::string replaces; // the file a new trajectory replaces when complete; empty: none
  Handle file;
  Handle step, time;
  std::vector<Series> series;     // series_specs(), in its order
  Series lists;                   // /observables/broadphase_pairs
  Series image;                   // /particles/bodies/image
  std::vector<Series> reactions;  // per rule: events in the interval ending at a frame
  Series reactions_total;         // their sum, when there are rules
  std::vector<uint64_t> events;   // per rule: cumulative events at the last frame
  hsize_t frames = 0;
  hsize_t slots = 0;
  std::size_t kinds = 0;
  std::array<double, 3> box{0, 0, 0};
  int64_t last_step = -1;
  double time_scale = 1;   // H5MD time = model time * time_scale
  WriteTimes times;

  static Series open_one(hid_t f, const std::string& path, hid_t memory_type, bool per_slot) {
    Series x;
    x.path = path;
    x.memory_type = memory_type;
    x.per_slot = per_slot;
    x.value = hdf5::open_dataset(f, path);
    const auto d = hdf5::dims(x.value.get());
    x.inner.assign(d.begin() + 1, d.end());
    return x;
  }

  // Opens every series; `rules` names the reaction series. The broad-phase series is
  // opened when the file has it.
  void open_series(const std::vector<SeriesSpec>& specs, const std::vector<std::string>& rules) {
    const hid_t f = file.get();
    step = hdf5::open_dataset(f, h5md::step_path);
    time = hdf5::open_dataset(f, h5md::time_path);
    series.clear();
    for (const auto& s : specs) series.push_back(open_one(f, s.path, s.memory_type, s.per_slot));
    if (hdf5::exists(f, h5md::lists_path))
      lists = open_one(f, h5md::lists_path, H5T_NATIVE_INT64, false);
    if (hdf5::exists(f, h5md::image_path))
      image = open_one(f, h5md::image_path, H5T_NATIVE_INT32, true);
    reactions.clear();
    if (!rules.empty()) {
      if (!hdf5::exists(f, h5md::reactions_total_path))
        h5md::not_nestsim(path, std::string("no ") + h5md::reactions_total_path);
      reactions_total = open_one(f, h5md::reactions_total_path, H5T_NATIVE_INT64, false);
    }
    for (const auto& rule : rules) {
      if (!hdf5::exists(f, h5md::reaction_path(rule)))
        h5md::not_nestsim(path, "no " + h5md::reaction_path(rule));
      reactions.push_back(open_one(f, h5md::reaction_path(rule), H5T_NATIVE_INT64, false));
    }
    events.assign(rules.size(), 0);
  }

  void append(const model::Frame& frame);  // write()'s work
  // The file's shared step and time datasets, created empty.
  void create_step_and_time(const std::string& time_unit);
  // The frames every series holds (the others' extra rows: a partly written frame).
  hsize_t complete_frames() const;
  // Every series cut to `frames`; the image and list series added to a file written
  // before they were stored.
  void drop_partial_frames(hsize_t frames);
  // The state that append() continues from: frames, last step, box, event counts.
  void read_position(hsize_t frames);
  // More bodies than slots: the slot dimension grows to n.
  void grow_slots(std::size_t n);
  // Per rule, the events in the interval that ends at frame `fr`.
  std::vector<int64_t> interval_events(const model::Frame& fr) const;

  // After a failed write: every series back to `keep` frames (the partly written frame
  // dropped) and the file flushed, so that it holds only complete frames. Returns
  // whether that succeeded. Each dataset is closed and opened again first: that drops
  // the chunks whose write failed from HDF5's cache, which would otherwise take them
  // for stored chunks and, shrinking the dataset, remove another chunk's index entry
  // in their place (HDF5 1.10: a complete frame read back as zeros).
  bool take_back(hsize_t keep) noexcept {
    bool ok = true;
    auto shrink = [&](Handle& d, const std::string& dataset) {
      if (!d) return;
      try {
        d.reset();
        d = hdf5::open_dataset(file.get(), dataset);
        std::vector<hsize_t> extent = hdf5::dims(d.get());
        if (extent[0] <= keep) return;
        extent[0] = keep;
        ok = H5Dset_extent(d.get(), extent.data()) >= 0 && ok;
      } catch (const std::exception&) {
        ok = false;
      }
    };
    shrink(step, h5md::step_path);
    shrink(time, h5md::time_path);
    for (auto& s : series) shrink(s.value, s.path);
    shrink(lists.value, lists.path);
    shrink(image.value, image.path);
    for (auto& s : reactions) shrink(s.value, s.path);
    shrink(reactions_total.value, reactions_total.path);
    return H5Fflush(file.get(), H5F_SCOPE_GLOBAL) >= 0 && ok;
  }

  // Throws WriteError, before anything of frame `frame` is written, when the disk or
  // the file size limit leaves less room than the frame can take: its rows
  // uncompressed and the index and header blocks that may come with them. A write that
  // fails all the same (another process filling the disk, a quota) is taken back.
  void check_room(hsize_t frame, uint64_t frame_step, uint64_t row_bytes) const {
    const uint64_t need = row_bytes + row_bytes / 8 + (uint64_t(1) << 18);
    struct stat st;
    if (::stat(written.c_str(), &st) != 0) return;
    int error = 0;
    uint64_t room = UINT64_MAX;
    struct statvfs fs;
    if (::statvfs(written.c_str(), &fs) == 0) {
      room = uint64_t(::geteuid() == 0 ? fs.f_bfree : fs.f_bavail) * fs.f_frsize;
      if (room < need) error = ENOSPC;
    }
    struct rlimit limit;
    if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const uint64_t below_limit =
          uint64_t(limit.rlim_cur) > uint64_t(st.st_size) ? limit.rlim_cur - st.st_size : 0;
      if (below_limit < need) {
        error = EFBIG;
        room = below_limit;
      }
    }
    if (error == 0) return;
    std::string what = path + ": cannot write frame " + std::to_string(frame) + " (step " +
                       std::to_string(frame_step) + "): " + h5md::write_problem(error) + ", " +
                       std::to_string(room / 1024) + " KiB left where a frame may need " +
                       std::to_string(need / 1024) + " KiB";
    throw WriteError(what + held_frames(frame, true), frame, last_step);
  }

  // "; the file holds frames 0-(frames - 1), ..." for the messages of a failed write.
  std::string held_frames(hsize_t frames, bool kept) const {
    std::string what = frames == 0 ? "; the file holds no frame"
                                   : "; the file holds frames 0-" + std::to_string(frames - 1) +
                                         ", complete up to step " + std::to_string(last_step);
    if (!kept) what += " (a partial frame after them is dropped when the run is resumed)";
    return what;
  }
};

}  // namespace nestsim::io

// Trajectories: H5MD 1.1 files (https://www.nongnu.org/h5md/h5md.html) written frame by
// frame, and read back to resume a run. Layout (tools and tests rely on these names):
//
//   /h5md                         attr version = [1, 1]
//     author/                     attr name
//     creator/                    attr name = "nestsim", version
//   /particles/bodies/
//     box/                        attrs dimension = 3, boundary = 3 x periodic|none
//       edges/{step,time,value[frame][3][3]}  diagonal matrix of the edge lengths
//     position/{step,time,value[frame][slot][3]}   float64, attr unit (length); wrapped
//                                    into the box when it is periodic
//     image/value[frame][slot][3]    int32, H5MD's periodic images: the unwrapped
//                                    position is position + image * edge (0 in files
//                                    written before it was stored, for earlier frames)
//     id/value[frame][slot]          int64, -1 marks an empty slot
//     species/value[frame][slot]     int32, index into /parameters/species_names
//     radius/value, thickness/value [frame][slot] float64
//     parent/value, membrane/value  [frame][slot] int64 body ids, -1 none
//   /observables/
//     body_count/value[frame]                 bodies present
//     kind_count/value[frame][kind]
//     container_count/value[frame][kind][kind+1]   by the kind of the body's parent;
//                                                   the last column: no parent
//     membrane_count/value[frame][kind][kind+1]    by the kind of the membrane holding
//                                                   it; the last column: none
//     next_id/value[frame]                    the id the next new body gets
//     model_time/value[frame]                 time in the model's unit, exactly
//     broadphase_pairs/value[frame]           int64, pairs the run's neighbour lists need
//                                             at the frame, skin 0
//                                             (Frame::broadphase_pairs), -1 unknown
//     reactions/value[frame]                  int64, all rules' events in the interval
//                                             (MDAnalysis < 2.8 refuses a group under
//                                             /observables that holds no value)
//     reactions/NAME/value[frame]             int64, one per reaction rule NAME: its
//                                             events in the output interval that ends at
//                                             this frame (since the previous frame; at
//                                             frame 0, those counted before it, usually
//                                             0). Their sum over frames 0..f is the count
//                                             since step 0 (Frame::reaction_events).
//                                             No reactions/ group when the model has no
//                                             rules.
//   /parameters/
//     species_names[kind], kinds/{compartment,membrane,radius,thickness,diffusion}[kind]
//     model (the model file's text), model_path, seed, version, length_unit, time_unit
//     collision                               "hollow" or "solid" (Setup::collision)
//     reaction_names[rule]                    the rules' NAMEs in Setup::reactions order
//                                             (the index of Frame::reaction_events);
//                                             absent when the model has no rules
//
// Files written before broadphase_pairs, collision and the reaction series were stored
// are still read (broadphase_pairs -1, no reaction counts) and appended to
// (broadphase_pairs is then added, -1 for the earlier frames).
//
// Every step and time dataset is one pair (hard links to position/step and
// position/time, as H5MD allows). `time` is in ns when the model's unit is us or ms
// (MDAnalysis refuses units it does not know), else in the model's unit; positions,
// radii and box are in the model's length unit. Frames are appended and the file flushed after each:
// a run killed between frames leaves a file readable up to its last frame. A run
// killed while a frame is being written can leave the datasets one frame apart; the
// reader takes the shortest, and position/value is extended last so that readers
// keyed on it (MDAnalysis) see only complete frames.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nestsim/model/setup.h"

namespace nestsim::io {

// Throws std::runtime_error when `path` cannot take a new trajectory: it exists and
// `force` is false, it is a directory or not a regular file, or its directory is
// missing or not writable. Call before anything is computed or written.
void check_output_path(const std::string& path, bool force);

// A frame that write() could not store (disk full, a file size limit, an I/O error).
// The file was taken back to its complete frames; what() says why, and which frames
// the file holds.
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::string& what, uint64_t frames, int64_t last_step)
      : std::runtime_error(what), frames(frames), last_step(last_step) {}
  uint64_t frames;    // complete frames in the file
  int64_t last_step;  // the step of the last of them; -1 when none
};

// Where write() spends its time (wall-clock seconds, summed over the frames written).
struct WriteTimes {
  double rows = 0;   // the frame's rows and observables assembled
  double write = 0;  // HDF5 writes (compression included)
  double flush = 0;  // HDF5 flushes to the operating system
};

class H5mdWriter {
 public:
  // Creates (or, with `replace`, the caller's consent, replaces) the trajectory `path`
  // for `setup`: metadata, parameters and empty time series with setup.capacity slots.
  // A file that another process holds open for writing is never replaced; on failure
  // only a file this call created is removed. A file it replaces stays until close():
  // the new trajectory is written beside it (file_written()) and moved over it then.
  H5mdWriter(const std::string& path, const model::Setup& setup,
             const std::string& program_version, bool replace = true);

  // Opens an existing nestsim trajectory to append frames after its last complete
  // one (a partly written last frame is dropped). The cumulative reaction counts the
  // next frame continues from are the sums over the kept frames. Throws InputError if
  // the file is not a nestsim trajectory.
  static H5mdWriter append(const std::string& path);

  H5mdWriter(H5mdWriter&&) noexcept;
  H5mdWriter& operator=(H5mdWriter&&) noexcept;
  ~H5mdWriter();

  // Appends one frame and flushes the file. The frame's vectors all have one entry per
  // slot (fewer than the capacity: the rest are written empty; more: the slot
  // dimension grows, earlier frames read as empty there). Steps must increase. A frame
  // is stored whole or not at all: when the file cannot take it, the file is taken back
  // to its complete frames and WriteError is thrown.
  // reaction_events has one cumulative count per rule of the file, none decreasing;
  // the file stores the increase since the previous frame (see the layout above).
  void write(const model::Frame& frame);

  uint64_t frames() const;  // frames in the file
  WriteTimes times() const;
  uint64_t slots() const;   // current slot capacity
  // Flushes and closes; later writes throw. A trajectory that replaces a file is moved
  // over it now if it holds a frame, else removed (the old file kept). The destructor
  // does the same, without throwing.
  void close();
  // The file the frames go to: the trajectory's path, or while it replaces a file, the
  // temporary beside it (PATH.partial.PID) that close() moves over it.
  std::string file_written() const;

 private:
  struct Impl;
  H5mdWriter() = default;
  std::unique_ptr<Impl> impl_;
};

// The initial state as a frame at step 0: slot i holds body i, next_id = bodies, no
// reaction events yet (one zero per rule).
model::Frame frame_from_setup(const model::Setup& setup);

// The end of a trajectory: what `--resume` continues from.
struct Checkpoint {
  model::Frame frame;          // the last complete frame, exactly as written
  uint64_t frames = 0;       // complete frames in the file
  std::string model_text;    // /parameters/model
  std::string model_path;    // /parameters/model_path
  uint64_t seed = 0;         // /parameters/seed
  std::string version;       // /parameters/version: the program that wrote it
  std::string collision;     // /parameters/collision; empty in files written before it
  std::vector<std::string> reaction_names;  // /parameters/reaction_names; empty: none
  std::vector<std::string> species_names;   // /parameters/species_names: the frame's kinds
};

// Checks that `path` is a regular file holding a nestsim trajectory whose every dataset
// has the layout's type class, rank and extents (the same slot count in every per-slot
// series, the kind tables of /parameters/species_names' length), without reading a
// frame; returns its complete frames. Every reader below checks this first, and each
// frame's values as it reads them (kinds in the kind table, parents and membranes naming
// live compartments of the frame, finite numbers). Throws InputError (line 0) "not a
// nestsim trajectory: DATASET: what is wrong". `for_append` also checks what appending
// frames needs: every series chunked and growing along the frames (and the slots).
uint64_t check_trajectory(const std::string& path, bool for_append = false);

// Whether HDF5 opens the regular file `path` for reading (false: not HDF5, cut short,
// locked by a writer, or missing). Call require_regular_file first: it never blocks.
bool hdf5_opens(const std::string& path);

// Reads the last complete frame (reaction_events: cumulative counts per rule of
// reaction_names, empty when the file holds none; broadphase_pairs: -1 when the file
// does not hold it). Throws InputError (line 0) when the file cannot be
// opened, is not HDF5, is not a nestsim trajectory, or holds no frame.
Checkpoint read_last_frame(const std::string& path);

// Reads frame `index` (0-based) of the complete frames, as read_last_frame does.
model::Frame read_frame(const std::string& path, uint64_t index);

}  // namespace nestsim::io

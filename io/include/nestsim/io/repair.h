// Repairing a trajectory that a run killed while writing (SIGKILL, a power cut) left
// damaged. HDF5 is not crash-consistent: a kill during a flush can leave chunks of the
// small series (64 frames a chunk, compressed, rewritten at every frame) unreadable
// ("inflate() failed") or a chunk index that points past the end of the file. Whatever
// continues a trajectory (`nestsim run --resume`, an ensemble's rerun, the Python
// module's resume) calls repair_trajectory first, and continues from the frames that
// read: a run is deterministic from any of its frames, so the result is the same.
//
// The check reads every time series (a chunked dataset whose first dimension, the
// frame, is unlimited) over the complete frames (the shortest series), block by block
// of its chunk's frames:
//   - the small series (not per slot: the observables, the box, step and time) whole;
//   - the per-slot series (/particles/bodies/*/value, one frame a chunk, each chunk
//     written once) only their last 4 frames, unless together they hold less than
//     256 MiB uncompressed over the complete frames (then whole),
// so that a resume of a large trajectory does not read it whole.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nestsim::io {

struct Repair {
  bool repaired = false;                // false: every series read, the file is untouched
  uint64_t frames_before = 0;           // complete frames of the damaged file
  uint64_t frames_kept = 0;             // frames [0, frames_kept) of the repaired file
  std::vector<std::string> unreadable;  // the datasets with a chunk that did not read
  std::string backup;                   // the damaged file, renamed: path.damaged[.N]
};

// Checks `path` and, when a chunk of a series does not read, replaces it by a copy that
// holds every group, attribute and parameter, and each series' frames [0, n_good): n_good
// is the largest count whose rows read in every series. The copy is written to
// path.repair.tmp and flushed to disk; then the damaged file is renamed path.damaged
// (path.damaged.1, .2, ... when that exists) and the copy renamed to path. Throws
// InputError (the file, what failed) when the file or one of its datasets cannot be
// opened, when not even frame 0 reads in every series, or when the copy cannot be made
// (then the original is left as it was).
Repair repair_trajectory(const std::string& path);

// "PATH was damaged (killed while writing?): D1, D2 unreadable; kept frames 0-K of N,
// the damaged file is BACKUP" for a repaired file.
std::string describe_repair(const std::string& path, const Repair& repair);

}  // namespace nestsim::io

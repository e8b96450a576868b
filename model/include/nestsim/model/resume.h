// Continuing a trajectory (`nestsim run --resume`): what the file needs to be continued,
// checked against what the run asks, before any work.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "nestsim/io/h5md.h"
#include "nestsim/io/repair.h"
#include "nestsim/model/setup.h"

namespace nestsim::model {

struct Resumption {
  io::Checkpoint checkpoint;  // the file's last complete frame and parameters
  Setup setup;                // the file's model, seed and collision, up to `steps`
  io::Repair repair;          // what repair_trajectory did to the file first
};

// Repairs the trajectory at `path` when a kill left it damaged (repair_trajectory), then
// reads it and the model it stores, to continue it up to step `steps` (total), with the
// broad phase `collision` when given. Throws InputError (the file, what is wrong: damaged
// beyond repair, not a trajectory, a collision that is neither hollow nor solid,
// reaction counts of other rules) or std::invalid_argument for a request the file
// contradicts (`steps` not past its last frame, another collision than it was written
// with).
Resumption prepare_resume(const std::string& path, uint64_t steps,
                          std::optional<Collision> collision = std::nullopt);

}  // namespace nestsim::model

#include "nestsim/model/resume.h"

#include <stdexcept>
#include <vector>

#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/io/regular_file.h"

namespace nestsim::model {

namespace {

const char* collision_name(Collision c) {
  return c == Collision::solid ? "solid" : "hollow";
}

// The broad phase the file was written with (files from before it was stored: the
// model's, or the request's).
void take_collision(const std::string& path, const io::Checkpoint& c,
                    std::optional<Collision> requested, Setup& setup) {
  if (c.collision.empty()) {
    if (requested) setup.collision = *requested;
    return;
  }
  if (c.collision != "hollow" && c.collision != "solid")
    throw io::InputError(path, 0,
                         "/parameters/collision is '" + c.collision + "', not hollow or solid");
  const Collision stored = c.collision == "solid" ? Collision::solid : Collision::hollow;
  if (requested && *requested != stored)
    throw std::invalid_argument("--collision " + std::string(collision_name(*requested)) + ": " +
                                path + " was written with --collision " + c.collision +
                                "; --resume continues with it");
  setup.collision = stored;
}

}  // namespace

Resumption prepare_resume(const std::string& path, uint64_t steps,
                          std::optional<Collision> collision) {
  Resumption r;
  // The layout first: the repair reads every series, and must not size anything from a
  // crafted shape (a FIFO is refused here too, before anything opens it). A file that
  // HDF5 cannot open at all (cut short) is left to the repair, which checks the copy it
  // can make of it.
  io::require_regular_file(path, "a trajectory");
  if (io::hdf5_opens(path)) io::check_trajectory(path, true);
  r.repair = io::repair_trajectory(path);  // before anything reads the frames
  r.checkpoint = io::read_last_frame(path);
  const io::Checkpoint& c = r.checkpoint;
  Model model = parse_model(c.model_text, c.model_path);
  model.seed = c.seed;
  model.steps = steps;
  if (steps <= c.frame.step)
    throw std::invalid_argument(path + " already holds step " + std::to_string(c.frame.step) +
                                "; --steps must be larger");
  // The engine is built from the model's own initial state, then continues from the
  // trajectory's last frame (Simulation::restore replaces every slot).
  r.setup = make_setup(model);
  take_collision(path, c, collision, r.setup);
  // The frame's kinds index the file's kind table; the engine's come from the stored
  // model. They must be the same table, or a kind would index past the engine's.
  std::vector<std::string> kinds;
  for (const auto& k : r.setup.kinds) kinds.push_back(k.name);
  if (kinds != c.species_names)
    throw io::InputError(path, 0,
                         "/parameters/species_names does not match the kinds of "
                         "/parameters/model; it cannot be resumed");
  std::vector<std::string> rules;
  for (const auto& rule : r.setup.reactions) rules.push_back(rule.name);
  if (rules != c.reaction_names)  // a file written before the counts were stored
    throw io::InputError(path, 0,
                         "its reaction counts (/parameters/reaction_names) do not match the "
                         "model's reaction rules (written by nestsim " +
                             c.version + "?); it cannot be resumed, run the model again");
  return r;
}

}  // namespace nestsim::model

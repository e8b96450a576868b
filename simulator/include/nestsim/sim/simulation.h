// The time-stepping engine: Brownian dynamics of nested compartments and proteins, all
// state on the device (CUDA or Thrust/OpenMP). Plain C++ header; the device code stays
// behind the class (simulator/src/).
//
//   nestsim::sim::Simulation sim(setup);          // validates, uploads, builds the lists
//   while (sim.step() < setup.steps) {
//     sim.run(std::min(setup.output_every, setup.steps - sim.step()));
//     writer.write(sim.frame());                  // the host only sees frames
//   }
//
// The model, per step of length dt (details and reasons in simulator/src/, the step loop
// in simulation.cu, the per-body steps in integrator_kernels.cuh):
//  - Precision: double everywhere on the device, so a Frame (double) holds the full state
//    and restore() continues bitwise.
//  - Brownian dynamics with a stochastic Heun step: a body's own move is
//    dx = (D / kT) dt (F(x) + F(x*)) / 2 + sqrt(2 D dt) xi, where x* = x + (D / kT) dt F(x)
//    + sqrt(2 D dt) xi is the predictor (the same xi), xi from Philox4x32-10 keyed by
//    (seed, step, body id, purpose) with Box-Muller normals. Free bodies diffuse exactly;
//    a harmonic contact is sampled to second order in its contact step (time_step.h,
//    which also gives the largest dt the engine accepts).
//  - F: harmonic excluded volume, k h for an overlap h, gathered per body over its HSX
//    neighbour list in ascending neighbour order (no atomics: bitwise reproducible). Soft
//    pairs: two species (free or membrane-bound), h = r_i + r_j - d; a membrane-bound
//    species and a compartment other than its own membrane, h = r_i + r_C - d outside
//    it, or d + r_i - (r_C - q_C) where it reaches through C's inner surface. A
//    compartment feels no force from the bodies it carries (its contents cannot drive
//    it). Pairs are filtered by exact distance, so list entries that the skin adds
//    contribute exactly nothing.
//  - Membranes are hard walls, by rejection: the HSX relation itself (equations 1-3 of
//    the HSX paper) holds between a free body and every compartment. A proposed own
//    move of body i (parent P) is rejected when, relative to P, its ball would leave P's
//    lumen (|x - x_P| + r_i <= r_P - q_P), or when it would meet the ball of a sibling
//    (same parent) that is a compartment or has one as i, |x_i - x_j| >= r_i + r_j,
//    tested against both the old and the proposed position of j. Whatever moves its
//    neighbours' tests accept or reject, every invariant then holds.
//  - Carrying: a body's displacement is its own accepted move plus those of every
//    compartment in its parent chain (contents move with their compartment).
//  - Membrane-bound bodies (membrane = C): tangential diffusion, then projected onto the
//    sphere of radius m_C = r_C - q_C / 2 around C's moved centre; their parent is C's
//    parent.
//  - Box: periodic (wrapped into [0, box), minimum image; Frame::image counts the
//    crossings) or reflective (top-level bodies reflected at the walls so that their
//    whole ball, and hence a compartment's contents, stays in the box).
//  - Neighbour lists: the HSX pair finder with a Verlet margin per body (half a fixed
//    skin, or scaled to how far the body and its carriers move in a step), rebuilt when
//    a bound on the distance of any body from its position at the last build could
//    exceed its margin. The trajectory does not depend on when the lists are rebuilt.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "nestsim/model/setup.h"

namespace nestsim::sim {

// A frame whose copy from the device is under way (Simulation::snapshot()); the steps go
// on while it completes. take() waits for the copy and assembles the Frame, bitwise
// what Simulation::frame() gave at the same step; any one thread may call it, once.
// Its buffers go back to the simulation's pool when it is destroyed (the simulation may
// be gone by then).
class PendingFrame {
 public:
  struct Impl;
  explicit PendingFrame(std::unique_ptr<Impl> impl);
  ~PendingFrame();
  PendingFrame(PendingFrame&&) noexcept;
  PendingFrame& operator=(PendingFrame&&) noexcept;
  PendingFrame(const PendingFrame&) = delete;
  PendingFrame& operator=(const PendingFrame&) = delete;

  uint64_t step() const;
  // The frame (throws std::logic_error when taken before, or moved from).
  model::Frame take();

 private:
  std::unique_ptr<Impl> impl_;
};

struct SimulationOptions {
  // Verlet skin of the neighbour lists (length units), every body's margin half of it;
  // 0 picks the automatic one: a skin of 32 sqrt(2 D_max dt) (at most 8 radii of the
  // smallest species) for the fastest kind, adapted while events keep the lists
  // short-lived, each body's margin scaled by sqrt(D) of it and its carriers against the
  // fastest kind's; where 12 sqrt(2 D_max dt) exceeds 8 such radii (large steps), lists
  // rebuilt at every step with each body's own step as its margin (docs/performance.md,
  // "Margins per body; per-step lists at large steps").
  double skin = 0;
  // Initial bodies take slots in spatial (Morton) order, for memory locality; false: slot
  // = id. The trajectory's physics does not depend on it (tested bitwise).
  bool spatial_slots = true;
  // Time each phase of the step into PhaseTimes (integrate, broad phase, forces, ...).
  // On the GPU a timed phase waits for the device before its clock stops: a host
  // synchronisation per phase, several per step, which a small model's step pays for in
  // speed. Off, the steps queue on the device and the host waits only where it reads a
  // result back (the lists' validity check, list builds, reactions' counts, frames).
  bool phase_times = false;
};

// Wall-clock seconds spent per phase since construction (or reset_times()), when
// SimulationOptions::phase_times is on (else 0); the counts always.
struct PhaseTimes {
  double integrate = 0;   // noise, moves, impermeability tests, carrying, wrapping
  double broadphase = 0;  // HSX pairs and neighbour lists
  double forces = 0;      // excluded-volume forces
  double output = 0;      // frames copied to the host
  double reactions = 0;   // reaction candidates, conflicts, events
  uint64_t steps = 0;
  uint64_t rebuilds = 0;  // neighbour-list builds
  bool timed = false;     // the seconds were measured (SimulationOptions::phase_times)
};

class Simulation {
 public:
  // Validates the setup (throws std::invalid_argument saying what is wrong), puts the
  // bodies into slots 0..n-1 of `capacity` slots and builds the neighbour lists.
  // Membrane-bound bodies are projected onto their membrane's mid-surface.
  explicit Simulation(const model::Setup& setup, const SimulationOptions& options = {});
  ~Simulation();
  Simulation(Simulation&&) noexcept;
  Simulation& operator=(Simulation&&) noexcept;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Advances `steps` steps; all work stays on the device. On the GPU it may return
  // before the device has finished the last steps (frames, counts and finish() wait).
  void run(uint64_t steps);
  // Waits until the device has finished the steps queued (for timing a run).
  void finish() const;

  uint64_t step() const;
  double time() const;  // step() * dt

  // The state now, copied to the host (parent and membrane hold body ids).
  model::Frame frame() const;
  // The state now, copied aside on the device (stream-ordered: the steps that follow
  // do not wait for it) and to the host by PendingFrame::take(). Each pending frame
  // holds a buffer of 72 bytes per slot on the device and as much pinned host memory
  // (CUDA; on the CPU backend, the host copy only), reused by later snapshots.
  PendingFrame snapshot() const;
  // Continues from a frame of this model (same kinds): the run goes on bitwise as if it
  // had never stopped. Throws std::invalid_argument on an inconsistent frame.
  void restore(const model::Frame& frame);

  PhaseTimes times() const;
  void reset_times();

  // Moves rejected by the impermeability tests since construction (or restore()).
  uint64_t rejected_moves() const;
  double skin() const;  // the skin of the current neighbour lists
  uint64_t capacity() const;

  // "CPU (Thrust/OpenMP, N threads)" or "CUDA (device name)".
  static std::string backend_name();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

namespace detail {
// The host's waits for the device on the calling thread since it started: every stream
// synchronisation and read-back of the engine's own (simulator/src/device_loops.cuh),
// not those inside the broad phase's list builds. For tests (test_step_syncs); counted
// on the CPU backend too, where the waits cost nothing.
uint64_t host_syncs();
}  // namespace detail

}  // namespace nestsim::sim

// The engine's host side: the step loop over the components, frames and restore.
//
//   state            the bodies' slot arrays on the device (state.cu)
//   neighbour lists  the broad phase's lists, their rebuilds and skin (neighbour_lists.cu)
//   forces           excluded volume over the lists (forces.cu)
//   integrator       Heun's predictor and corrector, the impermeability tests,
//                    carrying, images (integrator.cu)
//   reactions        candidates, claims, products (reactions/)
//   events           fusion and budding (events/)
#include <thrust/execution_policy.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_loops.cuh"
#include "events/events.cuh"
#include "forces.cuh"
#include "host_slots.h"
#include "integrator.cuh"
#include "neighbour_lists.cuh"
#include "nestsim/broadphase.h"
#include "nestsim/device/exec.cuh"  // the caching allocator of Thrust's temporaries
#include "nestsim/sim/simulation.h"
#include "phase_timer.cuh"
#include "reactions/reactions.cuh"
#include "reactions/rules.h"
#include "snapshot.cuh"
#include "state.cuh"

namespace nestsim::sim {

namespace detail {
namespace {
thread_local uint64_t host_sync_count = 0;
}  // namespace
void count_host_sync() { ++host_sync_count; }
uint64_t host_syncs() { return host_sync_count; }
}  // namespace detail

using detail::PhaseTimer;

struct Simulation::Impl {
  model::Setup setup;  // kinds, box, constants (bodies are not kept)
  SimulationOptions options;
  uint64_t step = 0;
  uint64_t next_id = 0;
  mutable PhaseTimes times;
  nestsim::detail::CachingAllocator alloc;

  detail::BodyState state;
  detail::NeighbourLists lists{alloc};
  detail::Forces forces{alloc};
  detail::Reactions reactions{alloc};
  detail::CompartmentEvents events;
  bool lists_stale = false;  // events changed bodies: rebuild before the next step
  // Buffers of snapshot(), shared with the pending frames (which may outlive this).
  std::shared_ptr<detail::SnapshotPool> snapshots = std::make_shared<detail::SnapshotPool>();

  // The device view of the slot arrays, the lists and the step's constants.
  detail::SlotView view() {
    detail::SlotView v;
    v.dim = setup.dim;
    const bool periodic = setup.boundary == model::Boundary::periodic;
    v.space.dim = setup.dim;
    for (int k = 0; k < 3; ++k) {
      const bool wrap = periodic && k < setup.dim;
      v.space.edge[k] = wrap ? setup.box[k] : 0.0;
      v.space.inv_edge[k] = wrap ? 1.0 / setup.box[k] : 0.0;
      v.box[k] = setup.box[k];
    }
    v.reflective = setup.boundary == model::Boundary::reflective;
    v.dt = setup.dt;
    v.kT = setup.kT;
    v.repulsion = setup.repulsion;
    v.seed = setup.seed;
    v.step = step;
    state.fill(v);
    lists.attach(v);
    return v;
  }

  detail::ReactionView reaction_view() {
    detail::ReactionView r = reactions.view(view(), state, lists);
    r.fuse_into = events.fuse_into();
    r.next_id = next_id;
    return r;
  }

  // Uploads the slots, builds the lists and checks the invariants the steps keep.
  void start(const detail::HostSlots& h) {
    const detail::RuleTable rules = detail::compile_rules(setup);
    reactions.set_rules(rules);
    lists.set_reach(rules.reach);
    state.set_contacts(setup);
    state.upload(h);
    lists.reset(setup, options);
    lists.build(state, view(), step, times);
    detail::check_membranes(view(), state);
  }

  // One step: forces, Heun's predictor and corrector (the lists kept valid for the
  // proposed moves), the impermeability tests and the moves, then reactions and events.
  void advance() {
    if (lists_stale) {  // reactions changed bodies: lists at the current positions
      lists.rebuild_after_events(state, view(), step, times);
      lists_stale = false;
    }
    const bool events_possible = reactions.any();
    if (events_possible) {  // the images need where each slot's body started the step
      PhaseTimer timer(options.phase_times, times.integrate, "nestsim/keep_start");
      state.keep_start();
    }
    detail::SlotView v = view();
    compute_forces(v);
    propose(v);
    if (detail::Forces::any(v.repulsion, lists) && !lists.outrun_likely()) {
      heun(v);
    } else {  // the predictor's moves checked at once (one wait more for the corrector)
      if (lists.keep_valid(state, v, step, times)) lists.attach(v);
      if (detail::Forces::any(v.repulsion, lists)) correct(predict(v), v);
    }
    move(v);
    react();
    if (events_possible) {
      PhaseTimer timer(options.phase_times, times.integrate, "nestsim/images");
      detail::update_images(view(), state, state.x_start, detail::raw(state.id_start));
    }
    ++step;
    ++times.steps;
  }

  // Heun's corrector, the lists checked for both proposals with one read-back: F(x*)
  // and the corrector are computed on the current lists before the host knows whether
  // the predictor's moves stay within their skin. When they do not, the lists are
  // rebuilt as keep_valid() would have, and F(x*) and the corrector computed again on
  // them: the step is what checking each proposal in turn gives. advance() takes this
  // path unless the lists' last bounds say they are about to be outrun
  // (NeighbourLists::outrun_likely): on the default model ~80% of the steps, with ~4%
  // of the steps computing F(x*) twice (docs/performance.md, "Heun's list checks in
  // one read-back").
  void heun(detail::SlotView& v) {
    lists.bound_moves(state, v, 0, times);
    const detail::SlotView predicted = predict(v);
    compute_forces(predicted);
    propose(detail::corrector_view(v, state));
    lists.bound_moves(state, v, 1, times);
    const int outrun = lists.rebuild_if_outrun(2, state, v, step, times);
    if (outrun < 0) return;
    lists.attach(v);
    if (outrun == 1) return;  // rebuilt for the corrector's moves
    if (detail::Forces::any(v.repulsion, lists))
      correct(detail::predicted_positions(v, state), v);
    else
      propose(v);  // no soft pair in the new lists: the predictor's moves stand
  }

  // The corrector from the predicted positions `predicted`, its lists kept valid.
  void correct(const detail::SlotView& predicted, detail::SlotView& v) {
    compute_forces(predicted);
    propose(detail::corrector_view(v, state));
    if (lists.keep_valid(state, v, step, times)) lists.attach(v);
  }

  void compute_forces(const detail::SlotView& at) {
    PhaseTimer timer(options.phase_times, times.forces, "nestsim/forces");
    forces.compute(at, lists);
  }

  detail::SlotView predict(const detail::SlotView& v) {
    PhaseTimer timer(options.phase_times, times.forces, "nestsim/predict");
    return detail::predicted_view(v, state);
  }

  // Proposed own moves into v.move (the drift of the forces in `with_forces`).
  void propose(const detail::SlotView& with_forces) {
    PhaseTimer timer(options.phase_times, times.integrate, "nestsim/propose");
    detail::propose_moves(with_forces);
  }

  // The impermeability tests, then the accepted moves applied.
  void move(const detail::SlotView& v) {
    PhaseTimer timer(options.phase_times, times.integrate, "nestsim/move");
    detail::accept_moves(v);
    detail::apply_moves(v, state);
    if (!reactions.any()) detail::update_images(view(), state, state.x_next, nullptr);
  }

  // The reactions of this step at the new positions, then the compartment events.
  void react() {
    if (!reactions.any()) return;
    PhaseTimer timer(options.phase_times, times.reactions, "nestsim/reactions");
    reactions.fit(state.capacity);
    events.fit(state.capacity, reactions.table());
    detail::ReactionView r = reaction_view();
    const detail::Reactions::Outcome o = reactions.react(r, state, lists, next_id, step);
    // Each phase of events only when the counts say it has a candidate.
    if (reactions.table().fusion_rules && o.fusions > 0)
      events.fuse(r, state, [this] { return reaction_view(); });
    if (reactions.table().bud_rules && o.buds > 0)
      events.bud(reaction_view(), state, reactions.free_slots(), next_id, step);
    if (reactions.changed_lists(o)) lists_stale = true;
  }
};

Simulation::Simulation(const model::Setup& setup, const SimulationOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.setup = setup;
  m.setup.bodies.clear();
  m.setup.bodies.shrink_to_fit();
  m.options = options;
  detail::validate_setup(m.setup, options);
  const detail::HostSlots h = detail::slots_of_setup(setup, options.spatial_slots);
  m.next_id = setup.bodies.size();
  m.start(h);
}

Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

void Simulation::run(uint64_t steps) {
  for (uint64_t s = 0; s < steps; ++s) impl_->advance();
}

uint64_t Simulation::step() const { return impl_->step; }
double Simulation::time() const { return double(impl_->step) * impl_->setup.dt; }

model::Frame Simulation::frame() const {
  Impl& m = *impl_;
  // History-free (timed as broad phase, not output): a resumed run records the same.
  const int64_t pairs = m.lists.pairs_without_skin(m.state, m.times);
  PhaseTimer timer(m.options.phase_times, m.times.output, "nestsim/frame");
  model::Frame f;
  f.step = m.step;
  f.time = time();
  f.next_id = m.next_id;
  f.broadphase_pairs = pairs;
  f.reaction_events = m.reactions.event_counts();
  m.state.download(f);
  return f;
}

PendingFrame Simulation::snapshot() const {
  Impl& m = *impl_;
  const int64_t pairs = m.lists.pairs_without_skin(m.state, m.times);  // as frame()
  PhaseTimer timer(m.options.phase_times, m.times.output, "nestsim/snapshot");
  auto p = std::make_unique<PendingFrame::Impl>();
  p->frame.step = m.step;
  p->frame.time = time();
  p->frame.next_id = m.next_id;
  p->frame.broadphase_pairs = pairs;
  p->frame.reaction_events = m.reactions.event_counts();
  p->pool = m.snapshots;
  p->buffer = m.snapshots->acquire();
  p->buffer->capture(m.state);
  return PendingFrame(std::move(p));
}

void Simulation::restore(const model::Frame& f) {
  Impl& m = *impl_;
  const detail::HostSlots h = detail::slots_of_frame(m.setup, f);
  m.step = f.step;
  m.next_id = f.next_id;
  m.start(h);
  m.reactions.restore_counts(f.reaction_events);
}

void Simulation::finish() const { detail::device_sync(); }

PhaseTimes Simulation::times() const {
  PhaseTimes t = impl_->times;
  t.timed = impl_->options.phase_times;
  return t;
}
void Simulation::reset_times() { impl_->times = PhaseTimes{}; }

uint64_t Simulation::rejected_moves() const { return impl_->state.rejected_moves(); }
double Simulation::skin() const { return impl_->lists.skin(); }
uint64_t Simulation::capacity() const { return impl_->state.capacity; }

std::string Simulation::backend_name() { return Broadphase<double>::backend_name(); }

}  // namespace nestsim::sim

#include "neighbour_lists.cuh"

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>

#if defined(NESTSIM_BACKEND_CUDA)
#include <cub/device/device_reduce.cuh>
#endif

#include <algorithm>
#include <cmath>

#include "device_loops.cuh"
#include "list_kernels.cuh"
#include "nestsim/broadphase.h"
#include "phase_timer.cuh"

namespace nestsim::sim::detail {

namespace {

struct Widen {
  NESTSIM_HD uint64_t operator()(uint8_t m) const { return m; }
};

// Is a pair (pair_key) of two live bodies?
struct LivePair {
  const int64_t* id;
  NESTSIM_HD bool operator()(uint64_t key) const {
    return id[device::pair_first(key)] >= 0 && id[device::pair_second(key)] >= 0;
  }
};

// The default skin: 32 sqrt(2 D_max dt), measured on the default model (16 rebuilt
// every other step, 64 made the lists too long; docs/performance.md, "The default skin"),
// at most 8 radii of the smallest species. Where steps are long against that species (12
// sqrt(2 D_max dt) > 8 radii: hard or no contacts at large dt), lists with a skin would
// be rebuilt at nearly every step whatever the skin, and their size grows as (2 r +
// skin)^3 (models/large_step.yaml: 30 builds in 30 steps at skin 114 nm, 7 at 200 nm and
// half the speed): there the lists are rebuilt at every step with the least margins that
// hold for the step (0 returned: per-step lists, ListBodies::move_pad).
double default_skin(const model::Setup& setup) {
  double dmax = 0, rmin = 0;
  for (const model::Kind& k : setup.kinds) {
    dmax = std::max(dmax, k.diffusion * double(k.step));  // a move of K dt
    if (!k.compartment && (rmin == 0 || k.radius < rmin)) rmin = k.radius;
  }
  const double step = std::sqrt(2.0 * dmax * setup.dt);
  const double skin = 32.0 * step;
  if (!(rmin > 0)) return skin;
  if (12.0 * step > 8.0 * rmin) return 0.0;
  return std::min(skin, 8.0 * rmin);
}

// The automatic margins' floor, in lengths of the fastest kind's sqrt(2 D dt): resting
// bodies (D 0, no moving carrier) keep a margin that the excess of StepBound can
// approach, for outrun_likely to see it coming.
constexpr double kMarginFloor = 0.125;

}  // namespace

void NeighbourLists::reset(const model::Setup& setup, const SimulationOptions& options) {
  constants_ = setup;
  constants_.bodies.clear();
  fixed_skin_ = options.skin;
  timed_ = options.phase_times;
  finder_.reset();
  skin_ = 0;
  base_skin_ = options.skin > 0 ? options.skin : default_skin(setup);
  root_2dt_ = std::sqrt(2.0 * setup.dt);
  sd_max_ = 0;
  for (const model::Kind& k : setup.kinds)
    sd_max_ = std::max(sd_max_, root_2dt_ * std::sqrt(k.diffusion * double(k.step)));
  per_step_ = auto_skin() && !(base_skin_ > 0) && sd_max_ > 0;
}

void NeighbourLists::set_reach(const std::vector<double>& reach) {
  reach_ = reach;
  any_reach_ = false;
  for (double e : reach_) any_reach_ = any_reach_ || e > 0;
  kind_reach_.assign(reach_.begin(), reach_.end());
}

void NeighbourLists::make_finder(const model::Setup& setup) {
  BroadphaseOptions o;
  o.overlap = setup.collision == model::Collision::solid ? Overlap::solid : Overlap::hollow;
  o.method = Method::hsx;
  o.domain.dim = setup.dim;
  o.domain.periodic = setup.boundary == model::Boundary::periodic;
  if (o.domain.periodic)
    for (int k = 0; k < setup.dim; ++k) o.domain.size[k] = setup.box[k];
  // The bodies' margins are in the radii the finder is given (ListBodies): no skin of
  // its own.
  o.skin = 0;
  o.sort_pairs = false;  // neighbour_lists() sorts both directions of every pair
  finder_ = std::make_unique<device::PairFinder<double>>(o);
}

device::SphereView<double> NeighbourLists::list_bodies(BodyState& s, bool margins,
                                                      bool move_pad, const SlotView* moves) {
  device::SphereView<double> bodies;
  for (int k = 0; k < 3; ++k) bodies.pos[k] = raw(s.x[k]);
  bodies.radius = raw(s.radius);
  bodies.thickness = raw(s.thickness);
  bodies.n = s.used;
  if (!margins && !any_reach_) return bodies;  // the bodies as they are
  ListBodies l;
  if (moves) l.v = *moves; else s.fill(l.v);
  l.v.dim = constants_.dim;
  l.reach = any_reach_ ? raw(kind_reach_) : nullptr;
  if (margins) {
    if (per_step_) {
      // The step's own moves when they are known (the lists hold for this step only),
      // else none: lists at rest (the start of a run, after events) hold the pairs at
      // the current positions, which the forces there need; every step's moves are
      // listed by keep_valid's build for them.
      l.scale = 0.0;
    } else if (auto_skin()) {
      // skin_ is the pair skin of the fastest kind's bodies (twice their margin).
      l.scale = sd_max_ > 0 ? 0.5 * skin_ / sd_max_ : 0.0;
      l.root_2dt = root_2dt_;
      l.floor_sd = kMarginFloor * sd_max_;
    } else {
      l.uniform = 0.5 * skin_;
    }
    l.move_pad = move_pad && moves;
    margin_.resize(s.radius.size());
    l.margin = raw(margin_);
  } else {
    l.none = true;
  }
  list_radius_.resize(s.radius.size());
  list_thickness_.resize(s.radius.size());
  l.r_out = raw(list_radius_);
  l.q_out = raw(list_thickness_);
  for_each_slot(s.used, l);
  bodies.radius = raw(list_radius_);
  bodies.thickness = raw(list_thickness_);
  return bodies;
}

void NeighbourLists::build(BodyState& state, SlotView v, uint64_t step, PhaseTimes& times) {
  rebuild(base_skin_, state, v, step, times, false);
}

void NeighbourLists::rebuild(double wanted_skin, BodyState& state, SlotView v, uint64_t step,
                             PhaseTimes& times, bool move_pad) {
  PhaseTimer timer(timed_, times.broadphase, "nestsim/neighbour_lists");
  skin_ = wanted_skin;
  if (!finder_) make_finder(constants_);
  const uint32_t used = state.used;
  finder_->find(list_bodies(state, true, move_pad, &v));
  // The rows and the row of each entry (nbr_row), from the lists' sorted keys.
  finder_->neighbour_lists(used, nbr_offsets_, nbrs_, &nbr_row_, false);
  if (nbrs_.empty()) nbrs_.resize(1);  // a valid pointer for an empty list
  for (int k = 0; k < 3; ++k) x_built_[k] = state.x[k];
  // Buffers for the compactions, sized once per build (none in the step loop). Every
  // pair's two bodies are below `used`: each pair gives two entries.
  entries_ = 2 * finder_->pair_count();
  // Grown, never shrunk (nestsim::detail::grow_discard: at most 1/8 more than the
  // entries, 4M at most, since at 1e8 bodies these buffers are tens of GB): per-step
  // lists vary in length from step to step, and each growth of a thrust vector is a
  // fill and a wait.
  nestsim::detail::grow_discard(nbr_row_, std::size_t(std::max<uint64_t>(entries_, 1)));
  nestsim::detail::grow_discard(mark_, std::size_t(entries_) + 1);
  nestsim::detail::grow_discard(kept_, std::size_t(entries_) + 1);
  attach(v);
  compact_siblings(v);
  built_at_ = step;
  last_excess_ = -0.5 * skin_;
  ++times.rebuilds;
}

void NeighbourLists::scan_marks() {
  const auto marks = thrust::make_transform_iterator(mark_.begin(), Widen{});
  thrust::exclusive_scan(nestsim::detail::policy(alloc_), marks, marks + entries_ + 1,
                         kept_.begin(), uint64_t(0));
}

void NeighbourLists::compact(uint32_t used, thrust::device_vector<uint64_t>& offsets,
                             thrust::device_vector<uint32_t>& out) {
  scan_marks();
  for_each_index(entries_, ScatterKept{raw(kept_), raw(nbrs_), raw(out)});
  for_each_slot(used + 1, RowStart{raw(kept_), raw(nbr_offsets_), raw(offsets)});
}

// Lists of at most this many entries keep sibling buffers of one entry each, so that
// the number kept is not read back (one wait of the host a build fewer: a small model's
// per-step lists); longer lists size them to that number (the sibling entries, a
// compartment and a body of the same parent, are few: at 1e8 bodies the entries are
// billions).
constexpr uint64_t kSiblingRoomEntries = uint64_t(1) << 20;

void NeighbourLists::compact_siblings(const SlotView& v) {
  for_each_index(entries_, MarkSibling{v, raw(nbr_row_), raw(mark_)});
  scan_marks();
  uint64_t room = entries_;
  if (entries_ > kSiblingRoomEntries) room = read_back(kept_, std::size_t(entries_));
  nestsim::detail::grow_discard(sibs_, std::size_t(std::max<uint64_t>(room, 1)));
  nestsim::detail::grow_discard(sib_rows_, std::size_t(std::max<uint64_t>(room, 1)));
  sib_count_ = room;
  if (entries_ == 0) {
    thrust::fill_n(step_policy(), sib_total_.begin(), 1, uint64_t(0));
    return;
  }
  for_each_index(entries_, ScatterSiblings{raw(kept_), entries_, raw(nbrs_), raw(nbr_row_),
                                           raw(sibs_), raw(sib_rows_), raw(sib_total_)});
}

void NeighbourLists::attach(SlotView& v) {
  for (int k = 0; k < 3; ++k) v.x_built[k] = raw(x_built_[k]);
  v.nbr_offsets = raw(nbr_offsets_);
  v.nbrs = raw(nbrs_);
  v.nbr_rows = raw(nbr_row_);
  v.nbr_count = entries_;
  v.sib_rows = raw(sib_rows_);
  v.sibs = raw(sibs_);
  v.sib_count = sib_count_;
  v.sib_total = raw(sib_total_);
}

bool NeighbourLists::keep_valid(BodyState& state, const SlotView& v, uint64_t step,
                                PhaseTimes& times) {
  if (per_step_) {
    // Per-step lists hold for one step's moves: rebuilt for these without asking the
    // bound (no wait), each body's margin its proposed step.
    rebuild(skin_, state, v, step, times, true);
    return true;
  }
  bound_moves(state, v, 0, times);
  return rebuild_if_outrun(1, state, v, step, times) >= 0;
}

void NeighbourLists::bound_moves(BodyState& state, const SlotView& v, int slot,
                                 PhaseTimes& times) {
  PhaseTimer timer(timed_, times.integrate, "nestsim/step_bound");
  const auto bounds = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
                                                      BoundOfBody{v, raw(margin_)});
#if defined(NESTSIM_BACKEND_CUDA)
  // CUB's reduction writes its result to device memory and returns without waiting
  // (Thrust's returns the value to the host, which waits).
  StepBound* out = raw(bounds_) + slot;
  const cudaStream_t stream = cudaStreamPerThread;
  std::size_t bytes = 0;
  NESTSIM_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, bounds, out, state.used,
                                               MaxStepBound{}, StepBound{}, stream));
  char* scratch = alloc_.allocate(std::ptrdiff_t(bytes));
  const cudaError_t e = cub::DeviceReduce::Reduce(scratch, bytes, bounds, out, state.used,
                                                  MaxStepBound{}, StepBound{}, stream);
  alloc_.deallocate(scratch, bytes);  // reused only by later work on this stream
  NESTSIM_CUDA_CHECK(e);
#else
  bounds_[std::size_t(slot)] = thrust::reduce(nestsim::detail::policy(alloc_), bounds,
                                              bounds + state.used, StepBound{}, MaxStepBound{});
#endif
}

int NeighbourLists::rebuild_if_outrun(int count, BodyState& state, const SlotView& v,
                                      uint64_t step, PhaseTimes& times) {
  StepBound b[2];
  count_host_sync();  // the bounds come back to the host together
  thrust::copy_n(bounds_.begin(), count, b);
  for (int slot = 0; slot < count; ++slot) {
    last_step_bound_ = b[slot].step;
    last_excess_ = b[slot].excess;
    if (b[slot].excess <= 0) continue;  // NaN: rebuilt
    // Lists at the old positions that stay valid whatever this step accepts. With an
    // automatic skin shrunk for frequent events (event_skin), lists that the motion
    // outlived in a step or two mean the skin should grow back.
    double wanted = skin_;
    if (auto_skin() && step - built_at_ <= 2) wanted = std::min(base_skin_, 2.0 * skin_);
    // Each body's margin is at least its proposed step (ListBodies::move_pad).
    rebuild(std::max(wanted, 2.0 * b[slot].step * (1.0 + 1e-9) + 1e-300), state, v, step, times,
            true);
    last_excess_ = b[slot].step - 0.5 * skin_;  // as the fastest bodies' moves from the new lists
    return slot;
  }
  return -1;
}

void NeighbourLists::rebuild_after_events(BodyState& state, SlotView v, uint64_t step,
                                          PhaseTimes& times) {
  if (per_step_ && !(v.repulsion > 0)) {
    // Per-step lists without soft forces (the view's repulsion: zero unless contacts
    // are soft, BodyState::fill): nothing reads the lists before keep_valid
    // builds them for the step's moves (the forces are zero, the moves are proposed
    // without pairs), so lists at rest would be built for nothing. At scale an event
    // happens at nearly every step somewhere.
    return;
  }
  rebuild(event_skin(step), state, v, step, times, false);
}

// The automatic skin (options.skin == 0) adapts to how long lists live. Events that
// restructure (births, moves to a membrane, growth) force a rebuild at the next step;
// at scale some event happens every step somewhere, so lists live a step or two and a
// skin for many steps of motion only makes them long. Then the skin halves, down to
// what a few steps of the recent motion need; when lists live long again it doubles,
// up to the default. The trajectory does not depend on the skin (tested), only speed.
double NeighbourLists::event_skin(uint64_t step) const {
  if (!auto_skin()) return skin_;
  const uint64_t age = step - built_at_;
  if (age <= 2) return std::max(4.0 * last_step_bound_, 0.5 * skin_);
  if (age >= 8) return std::min(base_skin_, 2.0 * skin_);
  return skin_;
}

// A search over the list bodies with skin 0, counting the pairs of live bodies: a
// function of the frame alone, unlike the lists' own size, which depends on when they
// were built, with which skin, and on the slots of removed bodies (whose radius and
// position stay behind; a resumed run has none past its last live slot). The finder
// takes the lists' skin back; the lists are untouched.
int64_t NeighbourLists::pairs_without_skin(BodyState& state, PhaseTimes& times) {
  PhaseTimer timer(timed_, times.broadphase, "nestsim/pairs_without_skin");
  const uint64_t found = finder_->find(list_bodies(state, false, false, nullptr));
  const auto& keys = finder_->keys();
  if (found > 0) count_host_sync();  // the count comes back to the host
  const uint64_t live = found == 0 ? 0 : uint64_t(thrust::count_if(
      thrust::device, keys.begin(), keys.begin() + found, LivePair{raw(state.id)}));
  return int64_t(live);
}

}  // namespace nestsim::sim::detail

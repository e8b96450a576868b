// The neighbour lists: CSR rows of every body's neighbours (both directions, each row
// ascending) from the broad phase (HSX or SSX, Setup::collision) with a Verlet skin, the
// entries Accept needs, and the policy that decides when to rebuild them and with which
// skin. The trajectory does not depend on when the lists are rebuilt: forces and events
// filter the entries by exact geometry.
#pragma once
#include <thrust/device_vector.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "list_kernels.cuh"
#include "nestsim/device/exec.cuh"
#include "nestsim/device/pair_finder.cuh"
#include "nestsim/sim/simulation.h"
#include "slot_view.cuh"
#include "state.cuh"

namespace nestsim::sim::detail {

class NeighbourLists {
 public:
  explicit NeighbourLists(nestsim::detail::CachingAllocator& alloc) : alloc_(alloc) {}

  // Forgets the lists (the next rebuild makes a new finder) and sets the skin policy:
  // a fixed skin (options.skin > 0) or the automatic one.
  void reset(const model::Setup& setup, const SimulationOptions& options);
  // Per kind, how far beyond touching the lists must reach for the reaction rules (a
  // pair of kinds a, b is listed out to reach[a] + reach[b] beyond contact).
  void set_reach(const std::vector<double>& reach);

  // Lists at the current positions with the default skin (the start of a run).
  void build(BodyState& state, SlotView v, uint64_t step, PhaseTimes& times);
  // Lists at the current positions after events changed bodies: the skin adapts to how
  // long lists live (event_skin). Per-step lists without soft forces are left for
  // keep_valid to build for the step's moves (nothing reads them before).
  void rebuild_after_events(BodyState& state, SlotView v, uint64_t step, PhaseTimes& times);
  // Rebuilds the lists at the current positions when the proposed moves (v.move) could
  // take a body more than half the skin from where they were built. Returns true when
  // it did (the caller's views then need the new lists: attach()). One read-back; none
  // with per-step lists (automatic margins at large steps), rebuilt at every call.
  bool keep_valid(BodyState& state, const SlotView& v, uint64_t step, PhaseTimes& times);
  // keep_valid in two parts, so that a step checks several proposals with one wait:
  // the bound of the proposed moves v.move into slot `slot` (0 or 1) on the device (no
  // wait); then slots [0, count) read back together, in order, and the lists rebuilt for
  // the first whose moves could outrun the skin. Returns that slot, or -1 (lists kept).
  void bound_moves(BodyState& state, const SlotView& v, int slot, PhaseTimes& times);
  int rebuild_if_outrun(int count, BodyState& state, const SlotView& v, uint64_t step,
                        PhaseTimes& times);
  // Will this step's moves probably outrun the lists? A guess from the bounds read at
  // the last steps (how far a body may be from where the lists were built beyond its
  // margin, and twice that excess's growth over the last step), for the step loop to
  // check its first proposal at once rather than compute on lists about to be rebuilt.
  // Once a step.
  bool outrun_likely() {
    if (per_step_) return true;  // lists for one step's moves (or none): the next outrun them
    const double drift = std::max(0.0, last_excess_ - guessed_excess_);
    guessed_excess_ = last_excess_;
    return last_excess_ + 2 * drift > 0;
  }

  // The pairs of live bodies that lists built now with skin 0 would hold
  // (Frame::broadphase_pairs).
  int64_t pairs_without_skin(BodyState& state, PhaseTimes& times);

  // The lists' fields of a view (x_built, rows, Accept's entries).
  void attach(SlotView& v);

  // The list entries marked 1 in mark() (entries() + 1 of them; the last is not used),
  // in list order: neighbours into `out`, which holds entries() already, and their rows'
  // offsets into `offsets` (used + 1). Nothing is read back: the host does not wait.
  void compact(uint32_t used, thrust::device_vector<uint64_t>& offsets,
               thrust::device_vector<uint32_t>& out);
  uint8_t* mark() { return thrust::raw_pointer_cast(mark_.data()); }

  uint64_t entries() const { return entries_; }  // 2 per pair
  const uint32_t* rows() const { return thrust::raw_pointer_cast(nbr_row_.data()); }
  uint32_t* rows() { return thrust::raw_pointer_cast(nbr_row_.data()); }
  double skin() const { return skin_; }

 private:
  // Lists at the current positions with nominal skin `wanted_skin` (ListBodies); with
  // `move_pad`, each body's margin at least its proposed move in v.move.
  void rebuild(double wanted_skin, BodyState& state, SlotView v, uint64_t step, PhaseTimes& times,
               bool move_pad);
  void make_finder(const model::Setup& setup);
  void scan_marks();
  // The entries Accept needs (MarkSibling) into sibs_ and sib_rows_, their count into
  // sib_total_ on the device.
  void compact_siblings(const SlotView& v);
  // The bodies as the finder searches them: grown by their kind's reaction reach, and
  // with `margins` by each body's margin (kept in margin_); `moves` gives the view (its
  // proposed moves for move_pad), else one is made from the state.
  device::SphereView<double> list_bodies(BodyState& state, bool margins, bool move_pad,
                                         const SlotView* moves);
  bool auto_skin() const { return !(fixed_skin_ > 0); }
  double event_skin(uint64_t step) const;

  nestsim::detail::CachingAllocator& alloc_;
  model::Setup constants_;  // box, dimension, collision (no bodies)
  double fixed_skin_ = 0;
  bool timed_ = false;  // SimulationOptions::phase_times
  std::unique_ptr<device::PairFinder<double>> finder_;
  double skin_ = 0, base_skin_ = 0, last_step_bound_ = 0;
  double last_excess_ = 0;     // of the last bound read, beyond the margins (StepBound)
  double guessed_excess_ = 0;  // last_excess_ at the last outrun_likely()
  double root_2dt_ = 0, sd_max_ = 0;  // sqrt(2 dt), and sqrt(2 D dt) of the fastest kind
  bool per_step_ = false;  // automatic margins, lists rebuilt at every step (default_skin)
  uint64_t built_at_ = 0;

  thrust::device_vector<double> x_built_[3];  // positions at the last build
  thrust::device_vector<uint64_t> nbr_offsets_;
  thrust::device_vector<uint32_t> nbrs_, nbr_row_;  // nbr_row: the row of each entry
  uint64_t entries_ = 0;
  // The entries Accept needs (MarkSibling), compacted at each build; sib_count_ bounds
  // their number on the host, sib_total_ holds it on the device.
  thrust::device_vector<uint32_t> sibs_, sib_rows_;
  uint64_t sib_count_ = 0;
  thrust::device_vector<uint64_t> sib_total_ = thrust::device_vector<uint64_t>(1);
  thrust::device_vector<uint8_t> mark_;   // at least entries + 1 (grow_discard)
  thrust::device_vector<uint64_t> kept_;  // exclusive scan of mark_
  thrust::device_vector<StepBound> bounds_ = thrust::device_vector<StepBound>(2);  // bound_moves
  // The bodies as the lists search them (with the reaction reach).
  std::vector<double> reach_;
  bool any_reach_ = false;
  thrust::device_vector<double> kind_reach_, list_radius_, list_thickness_;
  thrust::device_vector<double> margin_;  // per slot, at the last build (ListBodies)
};

}  // namespace nestsim::sim::detail

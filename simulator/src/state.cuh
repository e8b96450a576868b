// The bodies on the device: one vector per field and slot (structure of arrays), and the
// per-step scratch of the integrator. Slots [0, used) may hold bodies (id >= 0); an
// empty slot has id -1. Slots are fixed for a body's life.
#pragma once
#include <thrust/device_vector.h>

#include <cstdint>

#include "host_slots.h"
#include "slot_view.cuh"

namespace nestsim::sim::detail {

struct BodyState {
  uint64_t capacity = 0;
  uint32_t used = 0;  // high-water mark of filled slots

  thrust::device_vector<double> x[3];       // positions now
  thrust::device_vector<double> x_next[3];  // positions after the step
  thrust::device_vector<double> force[3], force_pred[3];  // F(x), Heun's F(x*)
  thrust::device_vector<double> move[3], accepted[3];     // proposed, accepted own moves
  thrust::device_vector<int32_t> image[3];  // periodic images
  // With reaction rules: the positions and ids at the start of the step, for the images.
  thrust::device_vector<double> x_start[3];
  thrust::device_vector<int64_t> id_start;
  thrust::device_vector<double> radius, thickness, diffusion;
  thrust::device_vector<int64_t> id;
  thrust::device_vector<int32_t> kind, parent, membrane;  // parent, membrane: slots
  thrust::device_vector<uint8_t> compartment;
  thrust::device_vector<uint32_t> rejections;  // per slot, since the upload
  thrust::device_vector<uint8_t> reject;       // per slot, this step's verdict
  // Setup::contacts and Setup::contact_exempt (kinds x kinds; empty: none exempt).
  model::Contacts contacts = model::Contacts::soft;
  thrust::device_vector<uint8_t> contact_exempt;
  uint32_t kinds = 0;
  // Per kind, Kind::step; empty when every kind has step 1.
  thrust::device_vector<uint32_t> kind_step;

  // Takes the contact model and the time-step classes of `setup`; throws
  // std::invalid_argument when contact_exempt is neither empty nor kinds x kinds.
  void set_contacts(const model::Setup& setup);
  // Takes the host slots (capacity = their number).
  void upload(const HostSlots& h);
  // The fields of a Frame (parent and membrane as ids), step and counters aside.
  void download(model::Frame& f) const;
  // Keeps the positions and ids at the start of the step (x_start, id_start).
  void keep_start();
  // The empty slots, ascending, into `free_slots`; throws when fewer than `wanted`
  // (`what` names the bodies that need them, at `step`). Returns the slot of the last
  // one wanted.
  uint32_t gather_free_slots(thrust::device_vector<uint32_t>& free_slots, uint32_t wanted,
                             const char* what, uint64_t step);
  uint64_t rejected_moves() const;

  // The slot arrays into a view (the lists' fields and the constants are set apart),
  // with the contact model; without soft contacts, v.repulsion becomes 0 (no force).
  void fill(SlotView& v);
};

}  // namespace nestsim::sim::detail

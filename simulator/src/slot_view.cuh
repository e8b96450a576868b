// The slot arrays as the device functors see them: raw pointers (structure of arrays)
// and the step's constants, with the geometry every phase shares (minimum image,
// nesting, wrapping).
#pragma once
#include <cmath>
#include <cstdint>

#include "nestsim/hd.h"
#include "nestsim/predicates.h"

namespace nestsim::sim::detail {

// Parent chains are validated acyclic on the host; this bound only guards the loops.
constexpr int kMaxDepth = 1024;

// Raw device pointers of the slot arrays (structure of arrays) and the step's constants.
struct SlotView {
  int dim = 3;
  uint32_t n = 0;  // slots in use (high-water mark); slots beyond are empty
  Space<double> space;
  bool reflective = false;
  double box[3] = {0, 0, 0};
  double dt = 0, kT = 1, repulsion = 0;
  uint64_t seed = 0, step = 0;

  double* x[3] = {nullptr, nullptr, nullptr};       // positions now
  double* x_next[3] = {nullptr, nullptr, nullptr};  // positions after the step
  double* x_built[3] = {nullptr, nullptr, nullptr}; // positions at the last list build
  double* force[3] = {nullptr, nullptr, nullptr};
  // The forces at the predicted positions (Heun's corrector); null in the predictor.
  const double* force_pred[3] = {nullptr, nullptr, nullptr};
  double* move[3] = {nullptr, nullptr, nullptr};      // proposed own move
  double* accepted[3] = {nullptr, nullptr, nullptr};  // accepted own move
  const double* radius = nullptr;
  const double* thickness = nullptr;
  const double* diffusion = nullptr;
  const int64_t* id = nullptr;         // -1: empty slot
  const int32_t* parent = nullptr;     // slot of the parent compartment, -1 none
  const int32_t* membrane = nullptr;   // slot of the membrane's compartment, -1 none
  const uint8_t* compartment = nullptr;
  uint32_t* rejections = nullptr;
  const uint64_t* nbr_offsets = nullptr;
  const uint32_t* nbrs = nullptr;
  const uint32_t* nbr_rows = nullptr;  // the row (body) of each entry of nbrs
  uint64_t nbr_count = 0;              // entries of nbrs (2 per pair)
  // The entries of the lists that Accept needs (MarkSibling), compacted at each build:
  // *sib_total of them, at most sib_count (their loops run over sib_count).
  const uint32_t* sib_rows = nullptr;  // the row (body) of each compacted entry
  const uint32_t* sibs = nullptr;
  uint64_t sib_count = 0;
  const uint64_t* sib_total = nullptr;
  uint8_t* reject = nullptr;  // per body, Accept's verdict (1: rejected)
  // Contacts (Setup::contacts, time_step.h: 0 soft, 1 hard, 2 none); for hard, each
  // slot's kind and the kinds x kinds table of pairs exempt from exclusion (null: none).
  uint8_t contacts = 0;
  const int32_t* kind = nullptr;
  const uint8_t* contact_exempt = nullptr;
  uint32_t kinds = 0;
  // Time-step classes (model::Kind::step, time_step.h): per kind, the power of two K
  // whose multiples are the steps its bodies move at, by steps of K dt; null when every
  // kind moves at every step (no test, no extra work).
  const uint32_t* kind_step = nullptr;

  NESTSIM_HD bool empty(uint32_t i) const { return id[i] < 0; }
  // Body i's time-step class K (1 without classes).
  NESTSIM_HD uint32_t step_class(uint32_t i) const {
    return kind_step && kind[i] >= 0 ? kind_step[kind[i]] : 1u;
  }
  // Does body i move at this step (K divides the step)?
  NESTSIM_HD bool moves_now(uint32_t i) const {
    return (step & uint64_t(step_class(i) - 1)) == 0;
  }
  NESTSIM_HD double mid(uint32_t c) const { return radius[c] - 0.5 * thickness[c]; }
  NESTSIM_HD double lumen(uint32_t c) const { return radius[c] - thickness[c]; }
  // The compartment that carries i: its membrane's, else its parent.
  NESTSIM_HD int32_t carrier(uint32_t i) const { return membrane[i] >= 0 ? membrane[i] : parent[i]; }

  // Minimum-image vector a - b between slots (positions from `p`).
  NESTSIM_HD void delta(double* const* p, uint32_t a, uint32_t b, double* d) const {
    d[0] = d[1] = d[2] = 0;
    NESTSIM_AXES(k, dim)
      d[k] = minimum_image(p[k][a] - p[k][b], space.edge[k], space.inv_edge[k]);
  }
  NESTSIM_HD double norm2(const double* d) const {
    double s = 0;
    NESTSIM_AXES(k, dim) s += d[k] * d[k];
    return s;
  }
  // Does compartment c carry body b (b in c's lumen, on c's membrane, or on the membrane
  // of a compartment in c's lumen)? A bound body's parent is its membrane's parent.
  NESTSIM_HD bool carries(uint32_t c, uint32_t b) const {
    return membrane[b] == int32_t(c) || contains(c, b);
  }
  // Is compartment c in the parent chain of body b?
  NESTSIM_HD bool contains(uint32_t c, uint32_t b) const {
    int32_t p = parent[b];
    for (int depth = 0; p >= 0 && depth < kMaxDepth; ++depth, p = parent[p])
      if (uint32_t(p) == c) return true;
    return false;
  }
  NESTSIM_HD void wrap(double* p) const {
    NESTSIM_AXES(k, dim) {
      const double edge = space.edge[k];
      if (edge > 0) {
        double y = p[k] - edge * std::floor(p[k] * space.inv_edge[k]);
        if (y >= edge) y -= edge;
        if (y < 0) y = 0;
        p[k] = y;
      }
    }
  }
};

}  // namespace nestsim::sim::detail

// Tuning: the backend's identity, the range checks and the fields by name.
#include "nestsim/tuning.h"

#include <atomic>
#include <stdexcept>
#include <type_traits>

namespace nestsim {

Backend built_backend() {
#if defined(NESTSIM_BACKEND_CUDA)
  return Backend::cuda;
#else
  return Backend::cpu;
#endif
}

namespace {

std::atomic<uint64_t> g_serial_items{0};

}  // namespace

uint64_t serial_items() { return g_serial_items.load(std::memory_order_relaxed); }
void set_serial_items(uint64_t items) { g_serial_items.store(items, std::memory_order_relaxed); }

namespace {

void require(bool ok, const char* field, const char* range) {
  if (!ok) throw std::invalid_argument(std::string("tuning: ") + field + " must be " + range);
}

// A field by name, set from a double.
struct Field {
  const char* name;
  void (*set)(Tuning&, double);
};

#define NESTSIM_TUNING_FIELD(group, member)                                        \
  Field {                                                                          \
    #group "." #member, [](Tuning& t, double v) {                                    \
          using T = std::remove_reference_t<decltype(t.group.member)>;             \
          if constexpr (std::is_same_v<T, bool>) t.group.member = v != 0;          \
          else t.group.member = T(v);                                               \
        }                                                                          \
  }

const Field kFields[] = {
    NESTSIM_TUNING_FIELD(hsx, small_n),
    NESTSIM_TUNING_FIELD(hsx, grid_test_cost),
    NESTSIM_TUNING_FIELD(hsx, rim_per_small),
    NESTSIM_TUNING_FIELD(hsx, brute_remainder),
    NESTSIM_TUNING_FIELD(hsx, cell_fraction),
    NESTSIM_TUNING_FIELD(hsx, cell_spacing),
    NESTSIM_TUNING_FIELD(hsx, phase_min_n),
    NESTSIM_TUNING_FIELD(hsx, phases_tried),
    NESTSIM_TUNING_FIELD(hsx, forced_phase),
    NESTSIM_TUNING_FIELD(hsx, cell_grow_max),
    NESTSIM_TUNING_FIELD(hsx, cell_shrink_max),
    NESTSIM_TUNING_FIELD(hsx, larger_side_levels),
    NESTSIM_TUNING_FIELD(hsx, larger_side_per_cell),
    NESTSIM_TUNING_FIELD(hsx, shell_min_bodies),
    NESTSIM_TUNING_FIELD(hsx, shell_prep_min_bodies),
    NESTSIM_TUNING_FIELD(hsx, shell_min_levels),
    NESTSIM_TUNING_FIELD(hsx, shell_min_occupancy),
    NESTSIM_TUNING_FIELD(hsx, shell_max_overlap),
    NESTSIM_TUNING_FIELD(hsx, shell_block),
    NESTSIM_TUNING_FIELD(hsx, shell_block_walker),
    NESTSIM_TUNING_FIELD(hsx, shell_fine_width),
    NESTSIM_TUNING_FIELD(hsx, shell_fine_min_cells),
    NESTSIM_TUNING_FIELD(hsx, direct_chunk),
    NESTSIM_TUNING_FIELD(hsx, columns_per_task),
    NESTSIM_TUNING_FIELD(hsx, adapt_task_columns),
    NESTSIM_TUNING_FIELD(hsx, wide_task_bodies),
    NESTSIM_TUNING_FIELD(hsx, wide_task_columns),
    NESTSIM_TUNING_FIELD(hsx, task_owners_min_items),
    NESTSIM_TUNING_FIELD(hsx, fit_radix_bits),
    NESTSIM_TUNING_FIELD(hsx, warp_tests),
    NESTSIM_TUNING_FIELD(hsx, warp_slots),
    NESTSIM_TUNING_FIELD(hsx, warp_columns),
    NESTSIM_TUNING_FIELD(hsx, large_beside),
    NESTSIM_TUNING_FIELD(hsx, table_beside),
    NESTSIM_TUNING_FIELD(cell_sort, radix_min_n),
    NESTSIM_TUNING_FIELD(cell_sort, dense_cells_per_body),
    NESTSIM_TUNING_FIELD(cell_sort, place_gather_min_n),
    NESTSIM_TUNING_FIELD(cell_sort, long_bucket_run),
    NESTSIM_TUNING_FIELD(device, readback_poll),
    NESTSIM_TUNING_FIELD(device, list_keep_bytes),
    NESTSIM_TUNING_FIELD(device, list_count_max_entries),
    NESTSIM_TUNING_FIELD(device, list_rank_max_row),
};
#undef NESTSIM_TUNING_FIELD

}  // namespace

void Tuning::validate() const {
  require(hsx.small_n >= 0, "hsx.small_n", ">= 0");
  require(hsx.grid_test_cost >= 0, "hsx.grid_test_cost", ">= 0");
  require(hsx.rim_per_small >= 0, "hsx.rim_per_small", ">= 0");
  require(hsx.cell_fraction >= 1.0 / 64, "hsx.cell_fraction", ">= 1/64");
  require(hsx.cell_spacing >= 0, "hsx.cell_spacing", ">= 0");
  require(hsx.phases_tried >= 1, "hsx.phases_tried", ">= 1");
  require(hsx.cell_grow_max >= 0 && hsx.cell_grow_max <= 16, "hsx.cell_grow_max", "in [0, 16]");
  require(hsx.cell_shrink_max >= 0 && hsx.cell_shrink_max <= 16, "hsx.cell_shrink_max",
          "in [0, 16]");
  require(hsx.larger_side_levels >= 0, "hsx.larger_side_levels", ">= 0");
  require(hsx.shell_min_levels >= 1, "hsx.shell_min_levels", ">= 1");
  require(hsx.shell_min_occupancy >= 0, "hsx.shell_min_occupancy", ">= 0");
  require(hsx.shell_max_overlap >= 0, "hsx.shell_max_overlap", ">= 0");
  require(hsx.shell_block <= 4096 && (hsx.shell_block & (hsx.shell_block - 1)) == 0,
          "hsx.shell_block", "0 or a power of 2 up to 4096");
  require(hsx.shell_block_walker >= 0, "hsx.shell_block_walker", ">= 0");
  require(hsx.shell_fine_width > 0, "hsx.shell_fine_width", "> 0");
  require(hsx.shell_fine_min_cells >= 0, "hsx.shell_fine_min_cells", ">= 0");
  require(hsx.direct_chunk >= 1, "hsx.direct_chunk", ">= 1");
  require(hsx.columns_per_task >= 1, "hsx.columns_per_task", ">= 1");
  require(hsx.wide_task_columns >= 1, "hsx.wide_task_columns", ">= 1");
  require(hsx.fit_radix_bits >= 0 && hsx.fit_radix_bits <= 32, "hsx.fit_radix_bits",
          "in [0, 32]");
  require(hsx.warp_slots <= 8, "hsx.warp_slots", "in [0, 8]");
  require(cell_sort.dense_cells_per_body >= 0, "cell_sort.dense_cells_per_body", ">= 0");
  require(cell_sort.long_bucket_run >= 1, "cell_sort.long_bucket_run", ">= 1");
  require(device.list_keep_bytes >= 0, "device.list_keep_bytes", ">= 0");
  require(device.list_count_max_entries >= 0, "device.list_count_max_entries", ">= 0");
  require(device.list_rank_max_row >= 0, "device.list_rank_max_row", ">= 0");
}

void set_tuning_field(Tuning& tuning, const std::string& name, double value) {
  for (const Field& f : kFields)
    if (name == f.name) {
      f.set(tuning, value);
      return;
    }
  throw std::invalid_argument("tuning: no field '" + name + "'");
}

std::vector<std::string> tuning_field_names() {
  std::vector<std::string> names;
  for (const Field& f : kFields) names.push_back(f.name);
  return names;
}

}  // namespace nestsim

// Tuning parameters of the broad phase: one struct per algorithm, with the defaults of
// each backend, apart from the code that dispatches on them (as CUB keeps its tuning
// policies apart from dispatch). None changes the pairs; each moves work between paths
// that find the same pairs. They reach the library through BroadphaseOptions::tuning;
// the library reads no environment variable. docs/performance.md, "Measured design
// decisions", holds the measurements behind each default (its titles are cited below).
//
// Plain C++: usable from host code without CUDA.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nestsim {

enum class Backend { cpu, cuda };

// HSX (Method::hsx): the level plan, the cells, the large bodies' tasks and the walks.
struct HsxTuning {
  // At most this many bodies: all pairs instead of the grid, where
  // BroadphaseOptions::hsx_small_n is -1 (automatic). The measured crossover: on the
  // H100 the grid costs ~0.3 ms at 2e4-3e4 bodies, the tiled all-pairs pass 0.16 ms at
  // 1e4 and 0.42 at 2e4 ("All pairs for small n").
  double small_n = 0;
  // The automatic mode also tests all pairs when the bodies that share grid cells
  // (a lower bound, by Cauchy-Schwarz) times this cost of a grid candidate relative to
  // one all-pairs test exceed n (n - 1) / 2 ("Crowded cells: all pairs").
  double grid_test_cost = 0;
  // Rim cells a large body may walk per small body before its level is merged into
  // the next group ("Level planning factor").
  double rim_per_small = 0;
  // Bodies left above the last group at most this many: finished by brute force.
  uint32_t brute_remainder = 128;
  // Cell width of a group's grid relative to its top diameter (>= 1/64).
  double cell_fraction = 1.0;
  // The level base: the phase d0 2^(j/4) whose first group's cells come closest to
  // cell_spacing mean spacings (0: phase 0 always), from phase_min_n bodies on,
  // considering the first phases_tried phases (1: phase 0 only). forced_phase >= 0 uses
  // that phase whatever the scene ("The level base chosen among phases").
  double cell_spacing = 0.88;
  double phase_min_n = 2.5e5;
  int phases_tried = 1;
  int forced_phase = -1;
  // Cells of every group grown by up to 2^(grow/4) in sparse scenes and shrunk by up to
  // 2^(-shrink/4) in dense ones, towards cell_spacing (0..16; "Cells grown in sparse
  // scenes, shrunk in dense ones").
  int cell_grow_max = 0;
  int cell_shrink_max = 0;
  // Small-small pairs from the larger member in groups whose members span at least
  // larger_side_levels levels (0: never) and hold at most larger_side_per_cell members
  // per cell ("The larger-side rule").
  int larger_side_levels = 2;
  double larger_side_per_cell = 1.0;
  // Crowded cells of near-concentric shells ("nested shells"; hsx/shell_cells.cuh): a
  // group of at least shell_min_levels non-empty levels whose members fill at least
  // shell_min_occupancy per bucket on average is checked cell by cell. A cell of at least
  // shell_min_bodies members is searched along the distance from anchors (its largest
  // members and its compartments; each small body goes with the nearest anchor; each
  // member's wall lies in an interval of distances from its anchor, and two bodies
  // intersect only where their intervals overlap) when the members that each anchor's
  // walkers keep (twice the cap on the intervals' width over the spread of that anchor's
  // starts, weighted by its members squared) are at most shell_max_overlap of the
  // cell's. Such groups are not counted as crowded cells (grid_test_cost).
  // shell_min_bodies 0: off.
  uint32_t shell_min_bodies = 32;
  // The shell cells' preparation (the anchor rounds over every gated group's members)
  // runs only where some gated cell has at least shell_prep_min_bodies members: below
  // that an ordinary cell's tests cost less than the rounds (the physiological model's
  // lists at large steps, cells of 84-481 members: 25.2M instructions a search on the
  // CPU with the rounds, 18.5M without; the nested and concentric scenes' shell cells
  // hold 833 members and more; docs/performance.md, "Fine cells that cut").
  uint32_t shell_prep_min_bodies = 512;
  int shell_min_levels = 2;
  double shell_min_occupancy = 4;
  double shell_max_overlap = 0.25;
  // A shell cell's sorted members in blocks of shell_block (a power of 2; 0: none), each
  // with the box of its centres and its largest radius: a walker skips the blocks whose
  // box it cannot reach among the candidates its radial interval keeps (a compartment's
  // small bodies against the shells of other stacks, whose intervals are wide): walkers
  // whose interval about the anchor is wider than shell_block_walker times the cell's cap
  // on its members' widths (narrower walkers keep a thin slice of the anchor's members,
  // which the boxes would cut little: their tests would cost more than they save).
  uint32_t shell_block = 32;
  double shell_block_walker = 2;
  // A shell cell's small members that do not surround their anchor (a lysosome's ILVs)
  // sorted apart in a fine grid about it, of cells shell_fine_width mean diameters of
  // those members (> 0) plus half the walks' rounding slack wide: a small walker searches
  // the rows of fine cells its window spans, a larger one the members' boxes.
  double shell_fine_width = 2;
  // A cell whose members are at least half small ones is a shell cell only where its
  // fine cells are at most 1 / shell_fine_min_cells of its narrowest width (0: no such
  // test): a coarser fine grid separates the small members no better than the group's
  // own grid, fitted to their radii, and the shell cell's passes cost more than they
  // save (docs/performance.md, "Fine cells that cut").
  double shell_fine_min_cells = 8;
  // Work per large-body task: bodies of a column tested directly before the task walks
  // on, and columns per task; on the GPU the columns shrink with the cells' occupancy
  // (adapt_task_columns) and grow to wide_task_columns from wide_task_bodies bodies on
  // ("Task size per group").
  uint32_t direct_chunk = 0;
  uint32_t columns_per_task = 0;
  bool adapt_task_columns = false;
  double wide_task_bodies = 6e5;
  uint32_t wide_task_columns = 8;
  // From this many large items on, tasks find their item in an owners' table rather
  // than by a binary search ("Task owners").
  double task_owners_min_items = 0;
  // The radix sort into cells: the largest dense group's cells grown a little until
  // the table fits one pass fewer of this many bits (0: off; "One radix pass fewer into
  // cells at 1e7").
  int fit_radix_bits = 0;
  // GPU only: the fused walks' candidates tested by the whole warp (warp_tests), with
  // warp_slots ranges kept per lane (0..8), and dense windows' columns walked by the
  // whole warp (warp_columns) ("Each warp's candidates tested by all its lanes", "The
  // warp walks its lanes' columns together"); the large bodies' work on a side stream
  // beside the small-small walk (large_beside) and the radix sort's bucket table beside
  // the records' gather (table_beside).
  bool warp_tests = true;
  uint32_t warp_slots = 8;
  bool warp_columns = true;
  bool large_beside = true;
  bool table_beside = true;
};

// The sort of bodies into grid cells, shared by HSX and the solid grids.
struct CellSortTuning {
  // BroadphaseOptions::GridSort::automatic sorts by radix from this many bodies on
  // ("The radix sort into cells").
  double radix_min_n = 0;
  // One bucket per cell while the grid has at most this many cells per body, else a
  // hashed table ("Dense cell tables up to 16 cells per body").
  double dense_cells_per_body = 16;
  // The counting sort moves records by a gather from this many bodies on ("The
  // counting sort's records moved by a gather").
  double place_gather_min_n = 0;
  // GPU: runs of empty buckets longer than this are written by whole blocks ("The
  // bucket table in one pass").
  uint32_t long_bucket_run = 4096;
};

// The device plumbing of a PairFinder.
struct DeviceTuning {
  // GPU: read-backs by the GPU into mapped memory and a polled flag; false: a copy
  // engine's transfer and a stream synchronisation ("Read-backs polled in mapped
  // memory").
  bool readback_poll = true;
  // neighbour_lists() keeps its sort's two buffers for the next call while they hold at
  // most this many bytes, and frees them after each call above ("List sort buffers
  // released when large").
  double list_keep_bytes = double(uint64_t(1) << 31);
  // GPU: neighbour_lists() of at most list_count_max_entries entries (twice the pairs)
  // counts them into rows and ranks them within each row instead of a radix sort, while
  // the longest row of the last such call had at most list_rank_max_row entries (the
  // ranks cost each warp the lengths of its rows; common/counted_rows.cuh, "Small lists
  // counted into rows"). 0 entries: always the radix sort.
  double list_count_max_entries = 65536;
  double list_rank_max_row = 1024;
};

struct Tuning {
  HsxTuning hsx;
  CellSortTuning cell_sort;
  DeviceTuning device;

  // Throws std::invalid_argument naming the field out of range.
  void validate() const;
};

// The defaults of each backend. The GPU's were measured on an H100, the CPU's on 2
// cores (docs/performance.md, "Measured design decisions").
//   field                   CUDA    CPU
//   hsx.small_n             15000   256
//   hsx.grid_test_cost      2       1
//   hsx.rim_per_small       2       0.25
//   hsx.phases_tried        12      1     (the CPU's phase costs are not measured)
//   hsx.cell_grow_max       8       0
//   hsx.cell_shrink_max     8       0
//   hsx.direct_chunk        32      128
//   hsx.columns_per_task    4       8
//   hsx.adapt_task_columns  true    false (each CPU thread takes many tasks: no tail)
//   hsx.task_owners_min_items 65536 never (the CPU's binary search hits its cache)
//   hsx.fit_radix_bits      8       0     (the CPU's sort is a merge sort)
//   cell_sort.radix_min_n   2e6     1e5
//   cell_sort.place_gather_min_n 5e5 never
// The rest are the same on both (the GPU-only fields do nothing on the CPU).
inline Tuning tuning_for(Backend backend) {
  Tuning t;
  const bool gpu = backend == Backend::cuda;
  const double never = 1e300;
  t.hsx.small_n = gpu ? 15000 : 256;
  t.hsx.grid_test_cost = gpu ? 2.0 : 1.0;
  t.hsx.rim_per_small = gpu ? 2.0 : 0.25;
  t.hsx.phases_tried = gpu ? 12 : 1;
  t.hsx.cell_grow_max = gpu ? 8 : 0;
  t.hsx.cell_shrink_max = gpu ? 8 : 0;
  t.hsx.direct_chunk = gpu ? 32 : 128;
  t.hsx.columns_per_task = gpu ? 4 : 8;
  t.hsx.adapt_task_columns = gpu;
  t.hsx.task_owners_min_items = gpu ? 65536 : never;
  t.hsx.fit_radix_bits = gpu ? 8 : 0;
  t.cell_sort.radix_min_n = gpu ? 2e6 : 1e5;
  t.cell_sort.place_gather_min_n = gpu ? 5e5 : never;
  return t;
}

// The backend this library was built for, and its defaults.
Backend built_backend();
inline Tuning default_tuning() { return tuning_for(built_backend()); }

// The GPU backend's index loops (the broad phase's for_each_index, the simulator's
// for_each_slot and for_each_index; nestsim::detail::launch_items): one item per thread,
// in blocks of kGpuLoopThreads, or of kGpuSmallLoopThreads below kGpuSmallLoopItems items,
// so that a loop over a small model's few thousand bodies or list entries spreads over
// many SMs (docs/performance.md, "One item per thread in the step's loops").
constexpr uint32_t kGpuLoopThreads = 256;
constexpr uint32_t kGpuSmallLoopThreads = 64;
constexpr uint64_t kGpuSmallLoopItems = uint64_t(1) << 16;

// The CPU backend's serial path for small work: an index loop of the broad phase or the
// simulator over fewer than this many items runs on the calling thread (thrust::seq)
// instead of an OpenMP parallel region. Process-wide rather than a field of Tuning: the
// loops are free functions below every options struct. Default 0 (off): the item count
// is no measure of a loop's work (HSX's few large-body tasks are its heaviest loops;
// `pairs --bench` on the example cell took 1.5x as long from 64 items on), and on shared
// cores the teams below pay more (docs/performance.md, "The CPU backend on a machine it
// shares"). CUDA: no effect.
uint64_t serial_items();
void set_serial_items(uint64_t items);

// The CPU backend's OpenMP teams follow the cores of the process's CPU set that other
// programs leave free, measured from /proc/stat every 100 ms (the first 100 ms keep
// OpenMP's own count): on 2 cores beside one busy program a team is one thread, so no
// parallel region waits for a thread that the scheduler has set aside; on idle cores it
// is OpenMP's count. On by default; false keeps OpenMP's count. CUDA: no effect.
void set_follow_free_cores(bool on);

// Sets a field by its name as written above ("hsx.rim_per_small"; booleans 0 or 1),
// for benchmarks that take tuning from their command line; throws std::invalid_argument
// for an unknown name. tuning_field_names() lists them.
void set_tuning_field(Tuning& tuning, const std::string& name, double value);
std::vector<std::string> tuning_field_names();

}  // namespace nestsim

// Every path of the grids that the default tuning would not take on the test scenes,
// forced by its tuning parameter (nestsim/tuning.h) and compared with the brute-force
// reference in one process (as HOOMD compares its neighbour lists in one binary). The
// paths change where work runs, never the pairs. The GPU-only paths are compiled only
// for the CUDA backend. Each path runs on a set of scenes that reaches it (several
// levels, large bodies, periodic wraps, hashed grids, crowded cells); every scene
// family at full size runs in test_broadphase.cpp with the default tuning.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/tuning.h"
#include "reference.h"
#include "scene_cases.h"
#include "test_broadphase_check.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

struct PathVariant {
  const char* name;
  std::function<void(Tuning&)> set;
};

// The paths, each with the parameter that forces it on small scenes.
std::vector<PathVariant> path_variants() {
  std::vector<PathVariant> v = {
      // The large-small tasks find their item in an owners' table (by default from
      // 65536 large items on the GPU, never on the CPU).
      {"task owners' table", [](Tuning& t) { t.hsx.task_owners_min_items = 0; }},
      // The small-small pairs by the sorted-order rule in every group, then by the
      // larger-side rule in every group (the default picks per group).
      {"sorted-order rule", [](Tuning& t) { t.hsx.larger_side_levels = 0; }},
      {"larger-side rule",
       [](Tuning& t) {
         t.hsx.larger_side_levels = 1;
         t.hsx.larger_side_per_cell = 1e9;
       }},
      // Grids resized to save a radix pass: 1-bit passes, so that the test scenes' small
      // tables reach the resized grids (the GPU fits 8-bit passes, the CPU none).
      {"radix passes fitted", [](Tuning& t) { t.hsx.fit_radix_bits = 1; }},
      // The level base's phase 2 forced: every level's width and the group plan move
      // (d0 x 1.41 on the GPU, histogrammed on the device; d0 x 4 on the CPU, a derived
      // octave).
      {"level phase 2", [](Tuning& t) { t.hsx.forced_phase = 2; }},
      // The counting sort's records placed by a gather (by default from 5e5 bodies on
      // the GPU, never on the CPU).
      {"records placed by a gather", [](Tuning& t) { t.cell_sort.place_gather_min_n = 0; }},
      // Cells wider than their group's diameter (as the GPU grows them in sparse
      // scenes), and finer (as it shrinks them in dense ones).
      {"cells 2.38 diameters", [](Tuning& t) { t.hsx.cell_fraction = 2.38; }},
      {"cells half a diameter", [](Tuning& t) { t.hsx.cell_fraction = 0.5; }},
      // Every cell table hashed (no dense table).
      {"hashed cell tables", [](Tuning& t) { t.cell_sort.dense_cells_per_body = 0; }},
      // Groups merged as the other backend would: the CPU's and the GPU's level plans.
      {"level plan merging few levels", [](Tuning& t) { t.hsx.rim_per_small = 0.25; }},
      {"level plan merging many levels", [](Tuning& t) { t.hsx.rim_per_small = 2.0; }},
      // Tasks of one column and one direct body; tasks sized by the cells' occupancy.
      {"smallest tasks",
       [](Tuning& t) {
         t.hsx.direct_chunk = 1;
         t.hsx.columns_per_task = 1;
         t.hsx.adapt_task_columns = false;
       }},
      {"tasks sized by occupancy", [](Tuning& t) { t.hsx.adapt_task_columns = true; }},
      // Every dense group's cells of two or more radii searched along the distance from
      // their largest member (hsx/shell_cells.cuh), whatever their shape: each cut must
      // keep every pair.
      {"every cell a shell cell",
       [](Tuning& t) {
         t.hsx.shell_min_bodies = 1;
         t.hsx.shell_prep_min_bodies = 0;
         t.hsx.shell_min_levels = 1;
         t.hsx.shell_min_occupancy = 0;
         t.hsx.shell_max_overlap = 1e300;
         t.hsx.shell_fine_min_cells = 0;
       }},
  };
#if defined(NESTSIM_BACKEND_CUDA)
  const std::vector<PathVariant> gpu = {
      // Each lane tests its own candidates; a lane keeps one range (the rest it tests
      // itself); each lane walks its own columns.
      {"lane tests", [](Tuning& t) { t.hsx.warp_tests = false; }},
      {"warp keeps one slot", [](Tuning& t) { t.hsx.warp_slots = 1; }},
      {"lane columns", [](Tuning& t) { t.hsx.warp_columns = false; }},
      // Read-backs through a copy engine and a stream synchronisation.
      {"read-backs synchronised", [](Tuning& t) { t.device.readback_poll = false; }},
      // The radix sort's bucket table: runs of empty cells longer than 2 entries
      // written by long_bucket_runs.
      {"long bucket runs", [](Tuning& t) { t.cell_sort.long_bucket_run = 2; }},
      // The large items' work and the bucket table on the default stream.
      {"one stream",
       [](Tuning& t) {
         t.hsx.large_beside = false;
         t.hsx.table_beside = false;
       }},
      // The level base's other phases forced, whatever the scene.
      {"level phase 1", [](Tuning& t) { t.hsx.forced_phase = 1; }},
      {"level phase 3", [](Tuning& t) { t.hsx.forced_phase = 3; }},
      {"level phase 7", [](Tuning& t) { t.hsx.forced_phase = 7; }},
  };
  v.insert(v.end(), gpu.begin(), gpu.end());
#endif
  return v;
}

// The scenes that reach the paths above: several levels and large bodies, 2D, crowded
// cells, wide radius ranges (many groups, hashed grids), periodic wraps, sparse cells,
// a skin.
bool reaches_paths(const std::string& scene) {
  static const char* names[] = {"exponential 3D phi=0.3", "exponential 2D phi=0.3",
                                "concentric 3D",          "cell-like",
                                "radii 1e-3..1e3",        "radii 1e-3..1e3 2D",
                                "one giant among dust",   "periodic 3D",
                                "periodic radii 1e-3..1e3",
                                "periodic, fewer than 3 cells per axis",
                                "sparse, far from the origin", "skin 0.25"};
  for (const char* n : names)
    if (scene == n) return true;
  return false;
}

// The reference pairs of a scene, relation and precision, computed once for all paths.
template <class Real>
const std::vector<Pair>& reference_of(const SceneCase& c, const scenes::Scene& scene,
                                      const SphereSet<Real>& bodies, Overlap overlap) {
  static std::map<std::string, std::vector<Pair>> cache;
  const std::string key = c.name + (sizeof(Real) == 4 ? "/float" : "/double") +
                          (overlap == Overlap::hollow ? "/hollow" : "/solid");
  auto found = cache.find(key);
  if (found == cache.end())
    found = cache.emplace(key, reference_pairs(bodies, options_for(scene, overlap, Method::hsx,
                                                                   c.skin))).first;
  return found->second;
}

template <class Real>
void check_variant(const PathVariant& variant, const SceneCase& c, const scenes::Scene& scene) {
  const SphereSet<Real> bodies = convert<Real>(scene.bodies);
  const char* precision = sizeof(Real) == 4 ? "float" : "double";
  using GridSort = BroadphaseOptions::GridSort;
  for (Overlap overlap : {Overlap::hollow, Overlap::solid}) {
    const std::vector<Pair>& reference = reference_of(c, scene, bodies, overlap);
    const std::string label = std::string(variant.name) + " / " + c.name + " / " + precision +
                              " / " + (overlap == Overlap::hollow ? "hollow" : "solid");
    BroadphaseOptions o = options_for(scene, overlap, Method::hsx, c.skin);
    variant.set(o.tuning);
    o.hsx_small_n = 0;  // the grid, whatever the backend's crossover
    for (GridSort sort : {GridSort::radix, GridSort::counting}) {
      o.grid_sort = sort;
      const std::string how = sort == GridSort::radix ? " radix" : " counting";
      check_method(label + " / hsx" + how, bodies, o, reference);
      BroadphaseOptions u = o;
      u.method = Method::grid_uniform;
      check_method(label + " / grid_uniform" + how, bodies, u, reference);
    }
    o.sort_pairs = false;  // pairs in the order found; pairs() sorts them
    check_method(label + " / hsx, pairs in the order found", bodies, o, reference);
    BroadphaseOptions b = o;
    b.method = Method::brute;  // its read-back of the pair total
    check_method(label + " / brute", bodies, b, reference);
  }
}

}  // namespace

TEST_CASE("every path of the grids, forced by its tuning, equals the brute-force reference") {
  const std::vector<PathVariant> variants = path_variants();
  std::size_t scenes_run = 0;
  for (const SceneCase& c : scene_cases()) {
    if (!reaches_paths(c.name)) continue;
    ++scenes_run;
    const scenes::Scene scene = c.make();
    for (const PathVariant& variant : variants) {  // each check names its path and scene
      check_variant<double>(variant, c, scene);
      check_variant<float>(variant, c, scene);
    }
  }
  CHECK(scenes_run == 12);  // every scene named in reaches_paths exists
}

TEST_CASE("tuning fields set by name; unknown names and out-of-range values refused") {
  Tuning t = tuning_for(Backend::cpu);
  set_tuning_field(t, "hsx.rim_per_small", 7);
  set_tuning_field(t, "hsx.warp_tests", 0);
  set_tuning_field(t, "hsx.forced_phase", 2);
  set_tuning_field(t, "cell_sort.long_bucket_run", 5);
  set_tuning_field(t, "device.list_keep_bytes", 0);
  CHECK(t.hsx.rim_per_small == 7);
  CHECK(!t.hsx.warp_tests);
  CHECK(t.hsx.forced_phase == 2);
  CHECK(t.cell_sort.long_bucket_run == 5);
  CHECK(t.device.list_keep_bytes == 0);
  CHECK(t.hsx.small_n == tuning_for(Backend::cpu).hsx.small_n);  // the rest untouched
  CHECK_THROWS_WITH_AS(set_tuning_field(t, "hsx.no_such_field", 1),
                       doctest::Contains("hsx.no_such_field"), std::invalid_argument);
  const std::vector<std::string> names = tuning_field_names();
  for (const std::string& name : names) {
    CAPTURE(name);
    Tuning u = tuning_for(Backend::cuda);
    CHECK_NOTHROW(set_tuning_field(u, name, 1));
  }
  // The backends' defaults differ where tuning.h says so, and both are valid.
  const Tuning cpu = tuning_for(Backend::cpu), gpu = tuning_for(Backend::cuda);
  CHECK_NOTHROW(cpu.validate());
  CHECK_NOTHROW(gpu.validate());
  CHECK(gpu.cell_sort.radix_min_n == 2e6);
  CHECK(cpu.cell_sort.radix_min_n == 1e5);
  CHECK(BroadphaseOptions{}.tuning.hsx.small_n == tuning_for(built_backend()).hsx.small_n);
  t.hsx.cell_grow_max = 17;
  CHECK_THROWS_WITH_AS(t.validate(), doctest::Contains("hsx.cell_grow_max"),
                       std::invalid_argument);
}

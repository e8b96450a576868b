// The CPU backend on shared cores (nestsim/tuning.h): the serial paths for small work
// find the reference's pairs, and OpenMP's teams shrink to the cores that another busy
// program leaves free.
#include <doctest/doctest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"
#include "nestsim/tuning.h"
#include "reference.h"
#include "scene_cases.h"
#include "test_broadphase_check.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

// Restores the process-wide settings a test case changes.
struct Restore {
  uint64_t serial = serial_items();
  ~Restore() {
    set_serial_items(serial);
    set_follow_free_cores(true);
  }
};

}  // namespace

TEST_CASE("every loop on the calling thread or none: the reference's pairs either way") {
  const Restore restore;
  const scenes::Scene scene = scenes::cell_like(scaled(3000), 7);
  const BroadphaseOptions o = options_for(scene, Overlap::hollow, Method::hsx);
  const auto reference = reference_pairs(scene.bodies, o);
  std::vector<Pair> found[2];
  const uint64_t thresholds[2] = {0, uint64_t(1) << 40};
  for (int k = 0; k < 2; ++k) {
    set_serial_items(thresholds[k]);
    found[k] = check_method<double>(k ? "all serial" : "all parallel", scene.bodies, o, reference);
  }
  CHECK(found[0] == found[1]);
}

#if defined(_OPENMP)
TEST_CASE("teams shrink to the cores another busy program leaves free") {
  const Restore restore;
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const int cores = CPU_COUNT(&set);
  const scenes::Scene scene = scenes::cell_like(2000, 11);
  Broadphase<double> finder(options_for(scene, Overlap::hollow, Method::hsx));
  finder.upload(scene.bodies);
  set_follow_free_cores(false);  // OpenMP's own count, whatever the machine did before
  finder.find();
  const int own = omp_get_max_threads();
  set_follow_free_cores(true);
  FILE* stat = std::fopen("/proc/stat", "r");
  if (built_backend() != Backend::cpu || cores < 2 || own < cores || !stat) {
    if (stat) std::fclose(stat);
    MESSAGE("skipped: needs the CPU backend, /proc/stat and a team of every core");
    return;
  }
  std::fclose(stat);
  const auto search_for = [&](std::chrono::milliseconds span) {
    const auto end = std::chrono::steady_clock::now() + span;
    while (std::chrono::steady_clock::now() < end) finder.find();
  };

  const pid_t busy = fork();  // another program, busy on one of this process's cores
  REQUIRE(busy >= 0);
  if (busy == 0)
    for (;;) {
    }
  search_for(std::chrono::milliseconds(600));
  const int shared = omp_get_max_threads();
  kill(busy, SIGKILL);
  waitpid(busy, nullptr, 0);
  CHECK(shared <= cores - 1);

  set_follow_free_cores(false);  // OpenMP's own count again
  finder.find();
  CHECK(omp_get_max_threads() == own);
}
#endif

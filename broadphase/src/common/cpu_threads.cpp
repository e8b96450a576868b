// The CPU backend's team size on shared cores (nestsim/tuning.h, follow_free_cores):
// OpenMP's teams follow the cores of the process's CPU set that other programs leave
// free, measured from /proc/stat over windows of 100 ms; before the first window ends,
// estimated from the tasks running at the first look (/proc/stat's procs_running).
#include <dirent.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "nestsim/tuning.h"

namespace nestsim {
namespace {

std::atomic<bool> g_follow{true};

#if defined(NESTSIM_BACKEND_CPU) && defined(_OPENMP)
// 10 clock ticks of /proc/stat per core at the usual 100 Hz.
constexpr int64_t kWindowNs = 100'000'000;

std::atomic<int> g_free_cores{0};  // 0: not measured yet
std::atomic<int64_t> g_next_sample{0};
std::mutex g_sampling;

struct Sample {
  int64_t wall_ns = 0;
  int64_t busy_ns = 0;  // every task's time on the set's cores
  int64_t own_ns = 0;   // this process's CPU time
};
Sample g_last;  // guarded by g_sampling

int64_t clock_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

struct Stat {
  int64_t busy_ns = -1;  // -1: no /proc/stat
  int running = 0;       // tasks running or runnable now, this thread included (0: unknown)
};

// The busy time (user, nice, system, irq, softirq, steal) of the cores in `set` since
// boot in ns, from /proc/stat's per-core lines, and its procs_running.
Stat read_stat(const cpu_set_t& set) {
  Stat out;
  FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return out;
  const int64_t tick_ns = 1'000'000'000 / std::max(1L, sysconf(_SC_CLK_TCK));
  char line[512];
  int64_t ticks = 0;
  bool any = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "procs_running %d", &out.running) == 1) continue;
    unsigned cpu = 0;
    unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
    if (line[0] != 'c' || line[1] != 'p' || line[2] != 'u' || line[3] == ' ') continue;
    if (std::sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice,
                    &sys, &idle, &iowait, &irq, &softirq, &steal) != 9)
      continue;
    if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)) continue;
    ticks += int64_t(user + nice + sys + irq + softirq + steal);
    any = true;
  }
  std::fclose(f);
  if (any) out.busy_ns = ticks * tick_ns;
  return out;
}

// This process's threads running or runnable now (state R in /proc/self/task/*/stat):
// OpenMP's workers of an earlier team may still spin.
int own_running() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return 1;
  int running = 0;
  while (const dirent* t = readdir(tasks)) {
    if (t->d_name[0] == '.') continue;
    FILE* f = std::fopen(("/proc/self/task/" + std::string(t->d_name) + "/stat").c_str(), "r");
    if (!f) continue;
    char line[512];
    if (std::fgets(line, sizeof line, f)) {
      const char* close = std::strrchr(line, ')');  // the name may hold spaces
      if (close && close[1] == ' ' && close[2] == 'R') ++running;
    }
    std::fclose(f);
  }
  closedir(tasks);
  return std::max(1, running);
}

// One window: the cores left free = the set's cores less those other programs kept
// busy (their busy time less this process's, rounded to whole cores), at least one.
// The first look has no window: the tasks running then, less this process's, stand for
// the other programs (machine-wide, so at most an overestimate on a pinned set), so
// that a command shorter than a window does not start with a team of every core.
void sample() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  // Before /proc/stat: an earlier team's workers only stop spinning meanwhile, so none
  // counted there is missed here.
  const int own = g_last.wall_ns == 0 ? own_running() : 0;
  const Stat stat = read_stat(set);
  const Sample s{clock_ns(CLOCK_MONOTONIC), stat.busy_ns, clock_ns(CLOCK_PROCESS_CPUTIME_ID)};
  if (s.busy_ns < 0) {  // no /proc/stat: OpenMP's own count
    g_follow.store(false, std::memory_order_relaxed);
    return;
  }
  const int cores = CPU_COUNT(&set);
  if (g_last.wall_ns == 0 && stat.running > 0) {
    // Programs starting beside this one (a pipeline's other commands) run for a few ms:
    // the least of three looks 1 ms apart, taken only while some other task runs.
    int others = std::max(0, stat.running - own);
    for (int look = 0; look < 2 && others > 0; ++look) {
      const timespec ms{0, 1'000'000};
      nanosleep(&ms, nullptr);
      const int own_now = own_running();
      others = std::min(others, std::max(0, read_stat(set).running - own_now));
    }
    g_free_cores.store(std::max(1, cores - others), std::memory_order_relaxed);
  } else if (g_last.wall_ns > 0 && s.wall_ns > g_last.wall_ns) {
    const double others = double((s.busy_ns - g_last.busy_ns) - (s.own_ns - g_last.own_ns)) /
                          double(s.wall_ns - g_last.wall_ns);
    g_free_cores.store(std::max(1, cores - int(std::max(0.0, others) + 0.5)),
                       std::memory_order_relaxed);
  }
  g_last = s;
}
#endif

}  // namespace

void set_follow_free_cores(bool on) { g_follow.store(on, std::memory_order_relaxed); }

namespace detail {

void follow_free_cores() {
#if defined(NESTSIM_BACKEND_CPU) && defined(_OPENMP)
  thread_local int applied = 0;  // the free cores this thread's teams follow (0: none)
  thread_local int own = 0;      // the thread's team size before
  if (!g_follow.load(std::memory_order_relaxed)) {
    if (applied) omp_set_num_threads(own);
    applied = 0;
    return;
  }
  const int64_t now = clock_ns(CLOCK_MONOTONIC);
  if (now >= g_next_sample.load(std::memory_order_relaxed)) {
    std::unique_lock<std::mutex> lock(g_sampling, std::try_to_lock);
    if (lock.owns_lock() && now >= g_next_sample.load(std::memory_order_relaxed)) {
      sample();
      g_next_sample.store(now + kWindowNs, std::memory_order_relaxed);
    }
  }
  const int free = g_free_cores.load(std::memory_order_relaxed);
  if (free == 0 || free == applied) return;
  if (applied == 0) own = omp_get_max_threads();
  omp_set_num_threads(std::min(own, free));
  applied = free;
#endif
}

}  // namespace detail
}  // namespace nestsim

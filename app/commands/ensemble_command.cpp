// `nestsim ensemble`: replicas and parameter scans of one model, over the GPUs or CPU
// cores of one process, or over the ranks of mpirun.
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "commands/commands.h"
#include "ensemble/ensemble_lock.h"
#include "ensemble/ensemble_schedule.h"
#include "ensemble/ensemble_store.h"

#if NESTSIM_BACKEND_CUDA
#include <cuda_runtime.h>
#endif
#if NESTSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace nestsim::app {

const char* const kEnsembleHelp =
    "usage: nestsim ensemble MODEL.yaml -o DIR [--replicas R] [--scan KEY=v1,v2,...]...\n"
    "                        [--set KEY=VALUE]... [--steps N] [--jobs J] [--threads T]\n"
    "       mpirun -n P nestsim ensemble ...   (the same, over P ranks)\n"
    "\n"
    "Runs the cartesian product of the scans times R replicas of a model. Member m is\n"
    "replica m % R of scan point m / R (the last --scan varies fastest); its seed is a\n"
    "fixed function of the model's seed and m, and `nestsim run` with its --set edits and\n"
    "--seed gives the same trajectory bit for bit (each member's command is printed and\n"
    "stored in DIR/ensemble.h5).\n"
    "\n"
    "-o DIR          DIR/members/NNNN.h5: each member's trajectory (as nestsim run writes);\n"
    "                DIR/ensemble.h5: the scan table and each member's parameters, seed,\n"
    "                status, message, wall time and observables over time, written as\n"
    "                members end (readable while the ensemble runs)\n"
    "--replicas R    replicas per scan point (default 1)\n"
    "--scan K=v,...  a model key over values (any dotted key, as --set); repeatable\n"
    "--set K=V       an edit of the model for every member; repeatable\n"
    "--steps N       total steps of each member (default: the model's)\n"
    "--jobs J        members at a time in this process (default: one per GPU; on the CPU\n"
    "                as many as fit the cores with --threads each)\n"
    "--threads T     OpenMP threads per member on the CPU (default: OMP_NUM_THREADS,\n"
    "                else the cores divided among the members at a time, at least 1)\n"
    "\n"
    "Under mpirun each rank runs one member at a time on its node-local GPU (local rank\n"
    "mod GPUs), or on its cores; rank 0 hands out members as ranks ask and writes\n"
    "ensemble.h5. A member that fails is recorded with its message; the others go on.\n"
    "The same command again skips finished members and resumes the others from their\n"
    "last frame; while another process still writes into DIR (a stopped run ending), it\n"
    "waits for it, up to 60 s. Ctrl-C or SIGTERM stops every member at its next frame.\n"
    "Exit code 0 when every member is done, 1 when one failed, 2 for bad input.\n";

namespace {

std::atomic<int> g_ensemble_stop{0};

extern "C" void on_ensemble_stop(int signal) {
  if (g_ensemble_stop.exchange(signal) != 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

struct EnsembleArgs {
  EnsembleSpec spec;
  std::string dir;
  int jobs = 0, threads = 0;  // 0: chosen from the machine
};

uint64_t parse_number(const std::string& flag, const std::string& text, uint64_t least) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < least)
    throw std::invalid_argument(flag + " needs a whole number >= " + std::to_string(least) +
                                ", not '" + text + "'");
  return v;
}

EnsembleArgs parse(const std::vector<std::string>& args) {
  EnsembleArgs r;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    auto value = [&]() -> const std::string& {
      if (k + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++k];
    };
    if (a == "-o" || a == "--output") r.dir = value();
    else if (a == "--replicas") r.spec.replicas = parse_number(a, value(), 1);
    else if (a == "--scan") r.spec.scans.push_back(parse_scan(value()));
    else if (a == "--set") r.spec.sets.push_back(parse_set(a, value()));
    else if (a == "--steps") r.spec.steps = parse_number(a, value(), 0);
    else if (a == "--jobs") r.jobs = int(parse_number(a, value(), 1));
    else if (a == "--threads") r.threads = int(parse_number(a, value(), 1));
    else if (!a.empty() && a[0] == '-') throw std::invalid_argument("unknown option '" + a + "'");
    else if (r.spec.model_path.empty()) r.spec.model_path = a;
    else throw std::invalid_argument("more than one model given ('" + r.spec.model_path +
                                     "', '" + a + "')");
  }
  if (r.spec.model_path.empty()) throw std::invalid_argument("give the model file");
  if (r.dir.empty()) throw std::invalid_argument("give the output directory: -o DIR");
  return r;
}

int env_int(const char* name, int otherwise) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : otherwise;
}

int gpu_count() {
#if NESTSIM_BACKEND_CUDA
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
#else
  return 0;
#endif
}

// The cores this process may use (its affinity mask: mpirun binds ranks to cores).
int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, int(std::thread::hardware_concurrency()));
}

// One process: a slot per GPU, or on the CPU members side by side with few threads each.
// A rank of mpirun: one slot, on GPU (local rank mod GPUs), or on its share of the cores.
SlotPlan plan_slots(EnsembleArgs a, uint64_t members, bool mpi) {
  SlotPlan p;
  if (a.threads == 0) a.threads = std::max(0, env_int("OMP_NUM_THREADS", 0));
  const int gpus = gpu_count(), cores = usable_cores();
  const int local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
  const int local_size = std::max(1, env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1));
  if (mpi) {
    p.jobs = 1;
    if (gpus > 0) p.gpus = {local_rank % gpus};
    // A rank bound to a core or socket sees only those; unbound, it shares the node.
    const int share = cores >= int(std::thread::hardware_concurrency()) ? cores / local_size
                                                                          : cores;
    p.threads = a.threads > 0 ? a.threads : std::max(1, share);
    return p;
  }
  if (gpus > 0) {
    p.jobs = a.jobs > 0 ? a.jobs : gpus;
    for (int k = 0; k < p.jobs; ++k) p.gpus.push_back(k % gpus);
    p.threads = a.threads > 0 ? a.threads : std::max(1, cores / p.jobs);
    return p;
  }
  const int at_once = int(std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(cores), members)));
  p.threads = a.threads > 0 ? a.threads : std::max(1, cores / (a.jobs > 0 ? a.jobs : at_once));
  p.jobs = a.jobs > 0 ? a.jobs : std::max(1, std::min(at_once, cores / p.threads));
  return p;
}

void make_dirs(const std::string& dir) {
  for (const std::string& d : {dir, dir + "/members"})
    if (::mkdir(d.c_str(), 0777) != 0 && errno != EEXIST)
      throw std::invalid_argument("cannot create the directory " + d);
}

std::string describe_point(const EnsembleSpec& spec, uint64_t member) {
  std::string s;
  for (const SetArg& e : spec.member_sets(member)) s += (s.empty() ? "" : " ") + e.text();
  return s.empty() ? "-" : s;
}

// Records members in ensemble.h5 as they end. One that cannot be recorded now (a reader
// holds the file open, HDF5's lock) waits and is tried again with the next and at the
// end, so that the coordinator never stalls the ranks for long.
class Recorder {
 public:
  Recorder(const std::string& dir, const EnsembleSpec& spec) : dir_(dir), spec_(spec) {}
  void add(uint64_t member, const MemberOutcome& outcome) {
    waiting_.push_back({member, outcome});
    flush();
  }
  bool flush() {
    std::size_t k = 0;
    for (; k < waiting_.size(); ++k) try {
        record_member(dir_, spec_, waiting_[k].first, waiting_[k].second);
      } catch (const std::exception& e) {
        error_ = e.what();
        break;  // the rest would wait on the same lock: the next flush tries them
      }
    waiting_.erase(waiting_.begin(), waiting_.begin() + long(k));
    return waiting_.empty();
  }
  void finish() {
    for (int attempt = 0; attempt < 30 && !flush(); ++attempt)
      std::this_thread::sleep_for(std::chrono::seconds(1));
    for (const auto& w : waiting_)
      std::fprintf(stderr, "nestsim ensemble: member %llu not recorded in %s (%s); the same "
                   "command records it\n", static_cast<unsigned long long>(w.first),
                   index_file(dir_).c_str(), error_.c_str());
  }

 private:
  std::string dir_;
  const EnsembleSpec& spec_;
  std::vector<std::pair<uint64_t, MemberOutcome>> waiting_;
  std::string error_;
};

}  // namespace

int ensemble_main(const EnsembleArgs& a, int rank, int ranks);

int ensemble_command(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << kEnsembleHelp;
    return 0;
  }
  EnsembleArgs a;
  try {
    a = parse(args);
  } catch (const std::invalid_argument& e) {
    std::cerr << "nestsim ensemble: " << e.what() << "\n\n" << kEnsembleHelp;
    return 2;
  }
  g_ensemble_stop = 0;
  std::signal(SIGINT, on_ensemble_stop);
  std::signal(SIGTERM, on_ensemble_stop);
  int rank = 0, ranks = 1;
#if NESTSIM_HAVE_MPI
  // MPI only under a launcher: a plain `nestsim ensemble` runs in one process.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") ||
                        std::getenv("PMI_RANK");
  if (launched) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  }
  const int code = ensemble_main(a, rank, ranks);
  if (launched) MPI_Finalize();
  return code;
#else
  return ensemble_main(a, rank, ranks);
#endif
}

// Rank 0 prepares the directory and tells the others whether to go on.
int ensemble_main(const EnsembleArgs& a, int rank, int ranks) {
  EnsembleSpec spec = a.spec;
  int ok = 1;
  std::vector<uint64_t> pending;
  std::optional<EnsembleLock> index_lock;  // rank 0's, to its end: ensemble.h5 is its alone
  try {
    const model::Model model = load_model_with_sets(spec.model_path, spec.sets);
    spec.base_seed = model.seed;
    if (rank == 0) {
      make_dirs(a.dir);
      index_lock.emplace(EnsembleLock::index(a.dir));
      prepare_index(a.dir, spec, model);
      const std::vector<bool> done = completed_members(a.dir, spec);
      for (uint64_t m = 0; m < spec.members(); ++m)
        if (!done[m]) pending.push_back(m);
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::cerr << "nestsim ensemble: " << e.what() << "\n";
    ok = 0;
  }
#if NESTSIM_HAVE_MPI
  if (ranks > 1) MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  if (!ok) return 2;
  const SlotPlan plan = plan_slots(a, spec.members(), ranks > 1);
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  std::fprintf(stderr, "nestsim ensemble: rank %d of %d (pid %d) on %s: %d member(s) at a time, "
               "%s, %d OpenMP thread(s) each\n", rank, ranks, int(::getpid()), host, plan.jobs,
               plan.gpus.empty() ? "CPU" : ("GPU " + std::to_string(plan.gpus.front()) +
                                            (plan.jobs > 1 ? "..." : "")).c_str(),
               plan.threads);
  auto job = [&](uint64_t m) {
    return MemberJob{m, spec.model_path, spec.member_sets(m), spec.member_seed(m), spec.steps,
                     member_file(a.dir, m, spec.members()), a.dir};
  };
  if (rank != 0) {
    serve_rank0(job, plan, g_ensemble_stop);
    return 0;
  }
  std::printf("nestsim ensemble: %llu members (%llu point(s) x %llu replica(s)), %zu to run, "
              "into %s\n", static_cast<unsigned long long>(spec.members()),
              static_cast<unsigned long long>(spec.points()),
              static_cast<unsigned long long>(spec.replicas), pending.size(), a.dir.c_str());
  std::fflush(stdout);
  uint64_t failed = 0, stopped = 0;
  Recorder recorder(a.dir, spec);
  Coordinator c{pending, job, [&](uint64_t m, const MemberOutcome& o, int by) {
    if (o.status == MemberStatus::failed) ++failed;
    if (o.status == MemberStatus::stopped) ++stopped;
    recorder.add(m, o);
    std::printf("member %llu %s (rank %d, %.2f s; %s): %s\n  %s\n",
                static_cast<unsigned long long>(m), status_name(o.status), by, o.wall,
                describe_point(spec, m).c_str(), o.message.c_str(),
                member_command(spec, m, member_file(a.dir, m, spec.members())).c_str());
    std::fflush(stdout);
  }};
  coordinate(c, plan, ranks, g_ensemble_stop);
  recorder.finish();
  if (const int s = g_ensemble_stop.load(); s != 0 || stopped > 0) {
    std::fprintf(stderr, "nestsim ensemble: stopped; the same command resumes the ensemble\n");
    return s != 0 ? 128 + s : 1;
  }
  // Members done by an earlier run of the same command count as done (pending holds
  // only the others).
  std::printf("nestsim ensemble: %llu of %llu members done (%zu run now, %llu done before), "
              "%llu failed; %s\n",
              static_cast<unsigned long long>(spec.members() - failed),
              static_cast<unsigned long long>(spec.members()), pending.size(),
              static_cast<unsigned long long>(spec.members() - pending.size()),
              static_cast<unsigned long long>(failed), index_file(a.dir).c_str());
  return failed > 0 ? 1 : 0;
}

}  // namespace nestsim::app

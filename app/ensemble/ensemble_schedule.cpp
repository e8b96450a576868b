#include "ensemble_schedule.h"

#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>

#include "nestsim/sim/replicas.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if NESTSIM_BACKEND_CUDA
#include <cuda_runtime.h>
#endif
#if NESTSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace nestsim::app {

void bind_slot(int threads, int gpu) {
#ifdef _OPENMP
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
#if NESTSIM_BACKEND_CUDA
  if (gpu >= 0) cudaSetDevice(gpu);
#else
  (void)gpu;
#endif
}

namespace {

// The queue of members to hand out and of outcomes to record, shared by rank 0's threads.
class Board {
 public:
  explicit Board(const std::vector<uint64_t>& pending) : pending_(pending.begin(), pending.end()) {}
  // The next member to run; false when none is left or a stop was asked for.
  bool take(uint64_t& member, const std::atomic<int>& stop) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.empty() || stop.load() != 0) return false;
    member = pending_.front();
    pending_.pop_front();
    return true;
  }
  void post(uint64_t member, const MemberOutcome& outcome, int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_.push_back({member, outcome, rank});
  }
  struct Ended {
    uint64_t member;
    MemberOutcome outcome;
    int rank;
  };
  std::deque<Ended> drain() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::deque<Ended> out;
    out.swap(ended_);
    return out;
  }

 private:
  std::mutex mutex_;
  std::deque<uint64_t> pending_;
  std::deque<Ended> ended_;
};

#if NESTSIM_HAVE_MPI
constexpr int kTagReport = 351, kTagAssign = 352;

// A report: "" (a rank's first request) or "member\tstatus\twall\tmessage".
std::string encode(uint64_t member, const MemberOutcome& o) {
  std::ostringstream s;
  s.precision(17);
  s << member << '\t' << int(o.status) << '\t' << o.wall << '\t' << o.message;
  return s.str();
}

// Waits for a request without spinning: Open MPI's blocking calls poll at full speed,
// which takes a core from the members still running on this node.
void wait_idle(MPI_Request& request) {
  int done = 0;
  while (MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

bool decode(const std::string& text, uint64_t& member, MemberOutcome& o) {
  std::istringstream s(text);
  int status = 0;
  if (!(s >> member >> status >> o.wall)) return false;
  o.status = MemberStatus(status);
  s.get();  // the tab before the message
  std::getline(s, o.message, '\0');
  return true;
}

// Every rank meets here before MPI_Finalize, sleeping while others finish members.
void finish_idle() {
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  wait_idle(barrier);
}

// Answers one rank's request, if one came; false when none was waiting.
bool serve_one(Board& board, const std::atomic<int>& stop, int& active) {
  int waiting = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, kTagReport, MPI_COMM_WORLD, &waiting, &st);
  if (!waiting) return false;
  int bytes = 0;
  MPI_Get_count(&st, MPI_CHAR, &bytes);
  std::string text(std::size_t(bytes), '\0');
  MPI_Recv(text.data(), bytes, MPI_CHAR, st.MPI_SOURCE, kTagReport, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  uint64_t member = 0;
  MemberOutcome outcome;
  if (decode(text, member, outcome)) board.post(member, outcome, st.MPI_SOURCE);
  uint64_t next = 0;
  int64_t answer = board.take(next, stop) ? int64_t(next) : -1;
  if (answer < 0) --active;
  MPI_Send(&answer, 1, MPI_INT64_T, st.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
  return true;
}
#endif

}  // namespace

void coordinate(Coordinator& c, const SlotPlan& plan, int ranks, const std::atomic<int>& stop) {
  Board board(c.pending);
  std::atomic<int> running_slots{plan.jobs};
  std::vector<std::thread> slots;
  for (int k = 0; k < plan.jobs; ++k)
    slots.emplace_back([&, k] {
      bind_slot(plan.threads, plan.gpus.empty() ? -1 : plan.gpus[std::size_t(k)]);
      uint64_t member = 0;
      while (board.take(member, stop)) board.post(member, run_member(c.job(member), stop), 0);
      // The slot's stream left idle before its thread ends (sim::finish_thread_work); an
      // error here is a device fault that the members' outcomes have reported already.
      try {
        sim::finish_thread_work();
      } catch (const std::exception&) {
      }
      --running_slots;
    });
  int active_ranks = ranks - 1;  // other ranks still asking for members
  (void)active_ranks;
  while (true) {
    bool busy = false;
#if NESTSIM_HAVE_MPI
    if (active_ranks > 0) busy = serve_one(board, stop, active_ranks);
#endif
    for (const Board::Ended& e : board.drain()) {
      c.ended(e.member, e.outcome, e.rank);
      busy = true;
    }
    if (running_slots.load() == 0 && active_ranks <= 0) {
      for (const Board::Ended& e : board.drain()) c.ended(e.member, e.outcome, e.rank);
      break;
    }
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (std::thread& t : slots) t.join();
#if NESTSIM_HAVE_MPI
  if (ranks > 1) finish_idle();
#endif
}

void serve_rank0(const std::function<MemberJob(uint64_t)>& job, const SlotPlan& plan,
                 const std::atomic<int>& stop) {
#if NESTSIM_HAVE_MPI
  bind_slot(plan.threads, plan.gpus.empty() ? -1 : plan.gpus.front());
  std::string report;  // empty: the first request
  while (true) {
    MPI_Request sent, answered;
    MPI_Isend(report.data(), int(report.size()), MPI_CHAR, 0, kTagReport, MPI_COMM_WORLD, &sent);
    int64_t member = -1;
    MPI_Irecv(&member, 1, MPI_INT64_T, 0, kTagAssign, MPI_COMM_WORLD, &answered);
    wait_idle(sent);
    wait_idle(answered);
    if (member < 0) break;
    report = encode(uint64_t(member), run_member(job(uint64_t(member)), stop));
  }
  finish_idle();
#else
  (void)job, (void)plan, (void)stop;
#endif
}

}  // namespace nestsim::app

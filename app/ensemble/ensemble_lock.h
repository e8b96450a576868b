// Keeps two processes off the same files of an ensemble directory. A rank stopped by
// mpirun or Ctrl-C can outlive the launcher by seconds while it finishes a frame; the
// same command run again at once would otherwise repair, resume or replace a trajectory
// that process is still writing, and record into ensemble.h5 beside it.
//
// Each process takes a byte-range lock (an open file description lock, fcntl
// F_OFD_SETLK) on DIR/members/.lock: byte 0 while rank 0 prepares and records into
// ensemble.h5, byte 1 + m while member m runs. The kernel drops a lock when its holder
// exits, however it ends (SIGKILL included), so nothing is left to clean up.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace nestsim::app {

// How long a process waits for one that holds the same lock to end before it gives up.
inline constexpr std::chrono::seconds kEnsembleLockWait{60};

class EnsembleLock {
 public:
  // The lock of the ensemble directory `dir`'s ensemble.h5, or of its member `member`
  // (whose trajectory `what` names). Waits while another process holds it, saying so
  // once on stderr; throws std::runtime_error naming the file when it is still held after
  // kEnsembleLockWait. On a file system without byte-range locks it holds nothing and
  // says so once.
  static EnsembleLock index(const std::string& dir);
  static EnsembleLock member(const std::string& dir, uint64_t member, const std::string& what);

  EnsembleLock(EnsembleLock&& other) noexcept;  // for std::optional's emplace
  EnsembleLock& operator=(EnsembleLock&&) = delete;
  ~EnsembleLock();

 private:
  EnsembleLock(const std::string& dir, uint64_t byte, const std::string& what);
  int fd_ = -1;
};

}  // namespace nestsim::app

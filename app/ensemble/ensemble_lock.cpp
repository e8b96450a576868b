#include "ensemble_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

namespace nestsim::app {

namespace {

constexpr std::chrono::milliseconds kPoll{50};

// F_OFD_SETLK on `byte` of `fd`: 0 taken, EAGAIN/EACCES held by another open file
// description (another process, or another slot of this one), else the errno.
int try_lock(int fd, uint64_t byte) {
  struct flock l;
  std::memset(&l, 0, sizeof l);
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = static_cast<off_t>(byte);
  l.l_len = 1;
  l.l_pid = 0;  // required of open file description locks
  return ::fcntl(fd, F_OFD_SETLK, &l) == 0 ? 0 : errno;
}

}  // namespace

EnsembleLock EnsembleLock::index(const std::string& dir) {
  return EnsembleLock(dir, 0, dir + "/ensemble.h5");
}

EnsembleLock EnsembleLock::member(const std::string& dir, uint64_t member,
                                  const std::string& what) {
  return EnsembleLock(dir, 1 + member, what);
}

EnsembleLock::EnsembleLock(const std::string& dir, uint64_t byte, const std::string& what) {
  const std::string path = dir + "/members/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    // A directory this process cannot write: the ensemble's own writes fail there and
    // say why, so the lock adds nothing.
    return;
  }
  const auto give_up = std::chrono::steady_clock::now() + kEnsembleLockWait;
  bool said = false;
  for (;;) {
    const int e = try_lock(fd_, byte);
    if (e == 0) return;
    if (e != EAGAIN && e != EACCES) {  // ENOLCK, EINVAL: no byte-range locks here
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        std::fprintf(stderr,
                     "nestsim ensemble: %s: no file locks on this file system (%s); two runs "
                     "into %s at once are not detected\n",
                     path.c_str(), std::strerror(e), dir.c_str());
      ::close(fd_);
      fd_ = -1;
      return;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error(
          what + " is in use by another process (a nestsim ensemble into " + dir +
          " still running or stopping) after " + std::to_string(kEnsembleLockWait.count()) +
          " s of waiting; left as it is");
    }
    if (!said)
      std::fprintf(stderr,
                   "nestsim ensemble: %s is in use by another process (an ensemble into %s "
                   "still stopping?); waiting up to %lld s\n",
                   what.c_str(), dir.c_str(),
                   static_cast<long long>(kEnsembleLockWait.count()));
    said = true;
    std::this_thread::sleep_for(kPoll);
  }
}

EnsembleLock::EnsembleLock(EnsembleLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

EnsembleLock::~EnsembleLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the description releases its lock
}

}  // namespace nestsim::app

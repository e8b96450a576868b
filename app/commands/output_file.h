// Where a command writes its output file. A regular file, or a path where nothing is,
// appears only when complete: written to a temporary beside it and renamed by
// commit(); the temporary is removed if never committed. A symbolic link is followed
// (the link stays, its target is replaced). A FIFO or a character device (a pipe,
// /dev/stdout, /dev/null) is written through as a stream, as is "-" (standard
// output). Anything else (a directory, a block device, a socket) is refused with
// std::invalid_argument before anything is written. SIGINT and SIGTERM while a
// temporary exists remove it before the program ends by the signal.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nestsim::app {

namespace output_file_detail {
// The temporary being written, for the signal handler (one output file at a time).
inline char g_temporary[PATH_MAX] = {0};
inline struct sigaction g_previous_int, g_previous_term;

extern "C" inline void remove_temporary_and_stop(int signal) {
  if (g_temporary[0] != 0) ::unlink(g_temporary);  // async-signal-safe
  ::sigaction(signal, signal == SIGINT ? &g_previous_int : &g_previous_term, nullptr);
  ::raise(signal);
}

inline void guard(const std::string& temporary) {
  if (temporary.size() >= PATH_MAX) return;
  std::memcpy(g_temporary, temporary.c_str(), temporary.size() + 1);
  struct sigaction on_stop;
  std::memset(&on_stop, 0, sizeof on_stop);
  on_stop.sa_handler = remove_temporary_and_stop;
  sigemptyset(&on_stop.sa_mask);
  ::sigaction(SIGINT, &on_stop, &g_previous_int);
  ::sigaction(SIGTERM, &on_stop, &g_previous_term);
}

inline void unguard() {
  if (g_temporary[0] == 0) return;
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  g_temporary[0] = 0;
}
}  // namespace output_file_detail

class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {
    if (path_ == "-") {
      file_ = stdout;
      stream_ = true;
      return;
    }
    if (path_.empty()) throw std::invalid_argument("-o: the output file name is empty");
    std::string target = path_;
    struct stat st;
    bool existed = false;
    if (::lstat(path_.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) {
        if (::stat(path_.c_str(), &st) != 0)
          throw std::invalid_argument(path_ + ": a symbolic link to a missing file (" +
                                      std::strerror(errno) + ")");
        char resolved[PATH_MAX];
        if (!::realpath(path_.c_str(), resolved))
          throw std::invalid_argument(path_ + ": cannot follow the link: " + std::strerror(errno));
        target = resolved;
      }
      existed = true;
      if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        stream_ = true;
        file_ = std::fopen(path_.c_str(), "w");
        if (!file_)
          throw std::runtime_error(path_ + ": cannot write: " + std::strerror(errno));
        return;
      }
      if (!S_ISREG(st.st_mode))
        throw std::invalid_argument(path_ + " is " + kind_of(st.st_mode) +
                                    ": refusing to replace it (-o names a regular file, a "
                                    "FIFO, a character device or -)");
    } else if (errno != ENOENT) {
      throw std::invalid_argument(path_ + ": " + std::strerror(errno));
    }
    temp_ = target + ".partial." + std::to_string(::getpid());
    target_ = target;
    output_file_detail::guard(temp_);
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int error = errno;
      output_file_detail::unguard();
      temp_.clear();
      throw std::runtime_error(path_ + ": cannot write beside it (" + std::strerror(error) + ")");
    }
    if (existed) (void)::fchmod(fd, st.st_mode & 07777);  // the replaced file's permissions
    file_ = ::fdopen(fd, "wb");
    if (!file_) {
      ::close(fd);
      std::remove(temp_.c_str());
      throw std::runtime_error(path_ + ": cannot write: " + std::strerror(errno));
    }
  }
  ~OutputFile() {
    if (file_ && file_ != stdout) std::fclose(file_);
    if (!temp_.empty() && !committed_) std::remove(temp_.c_str());
    if (!temp_.empty()) output_file_detail::unguard();
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writes `size` bytes; the first failure's reason is kept for commit() to report.
  void write(const char* data, std::size_t size) {
    if (error_ == 0 && std::fwrite(data, 1, size, file_) != size) error_ = errno ? errno : EIO;
  }

  // Flushes and closes the output (a regular file: renames it into place). Throws
  // std::runtime_error naming the system's reason when anything was not written.
  void commit() {
    errno = 0;
    const bool ok = std::fflush(file_) == 0 && !std::ferror(file_) && error_ == 0;
    int error = error_ != 0 ? error_ : errno;
    const int closed = file_ == stdout ? 0 : std::fclose(file_);
    if (closed != 0 && error == 0) error = errno;
    file_ = nullptr;
    if (!ok || closed != 0)
      throw std::runtime_error(path_ + ": write failed" +
                               (error != 0 ? ": " + std::string(std::strerror(error)) : ""));
    if (stream_) {
      committed_ = true;
      return;
    }
    if (std::rename(temp_.c_str(), target_.c_str()) != 0)
      throw std::runtime_error(path_ + ": cannot rename into place: " + std::strerror(errno));
    committed_ = true;
  }

 private:
  static const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
  }

  std::string path_, target_, temp_;
  std::FILE* file_ = nullptr;
  bool stream_ = false, committed_ = false;
  int error_ = 0;
};

}  // namespace nestsim::app

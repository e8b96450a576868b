#include "nestsim/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "nestsim/io/errors.h"

namespace nestsim::io {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

void require_regular_file(const std::string& path, const std::string& what) {
  // stat first: a FIFO is refused without being opened, and a device is never opened.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ELOOP)
      throw InputError(path, 0, "cannot open: a loop of symbolic links");
    return;  // missing or unreadable: the caller's open says so in its words
  }
  if (!S_ISREG(st.st_mode))
    throw InputError(path, 0, std::string("is ") + kind_of(st.st_mode) + ", not " + what);
  // The file may be replaced between stat and open: check what was opened. O_NONBLOCK
  // makes a FIFO put there in between open at once instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return;  // the caller's open reports it
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  if (!regular)
    throw InputError(path, 0, std::string("is ") + kind_of(st.st_mode) + ", not " + what);
}

}  // namespace nestsim::io

// Every input file (trajectory, model, scene) must be a regular file: a FIFO, a device
// or a socket would block the open or the read forever, a directory cannot be read.
#pragma once
#include <string>

namespace nestsim::io {

// Throws InputError (line 0) naming `path` when it exists and is not a regular file
// (symbolic links are followed; a loop of them is refused too). `what` names the file's
// role in the message ("a trajectory", "a model file"). A path that does not exist is
// left to the caller's own open, which names it. Never waits on a FIFO: it is refused
// from stat alone, and the open that rechecks the file uses O_NONBLOCK.
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace nestsim::io

// The HTTP side of `nestsim view`: the page's files and the trajectory, on localhost only.
//   GET /                 the page (index.html and its bundle, from `asset_dir`)
//   GET /api/meta         the trajectory's description as JSON (view_trajectory.h), or
//                         status 500 and {"error": "FILE: what is wrong"}
//   GET /api/frame/N      frame N in the binary layout of encode_frame; ?max=BODIES sets
//                         the level of detail (default 2,000,000 bodies)
// The file is read again on each request, so frames a running simulation appends appear.
#pragma once
#include <string>

namespace nestsim::app {

struct ViewServerOptions {
  std::string trajectory;  // the H5MD file
  std::string asset_dir;   // the built page (viewer/dist of the build tree)
  int port = -1;  // -1: the first free one from kDefaultViewPort on; 0: any free one
  bool open_browser = false;
};

inline constexpr int kDefaultViewPort = 8765;

// Serves until SIGINT or SIGTERM; prints the address on stdout once listening. Returns
// the exit code: 0 after a signal, 1 when the port cannot be bound.
int serve_view(const ViewServerOptions& options);

}  // namespace nestsim::app

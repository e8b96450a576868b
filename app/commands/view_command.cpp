// `nestsim view`: a trajectory in 3D in the browser, served on localhost.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "data_dir.h"
#include "view/view_server.h"
#include "view/view_trajectory.h"

namespace nestsim::app {

const char* const kViewHelp =
    "usage: nestsim view OUT.h5 [--port P] [--open]\n"
    "\n"
    "Serves a page that shows the trajectory in 3D on http://127.0.0.1:P/ (this computer\n"
    "only; nothing is fetched from the internet) and prints its address; Ctrl-C stops.\n"
    "The page: compartments as translucent shells (a clipping plane, which you drag,\n"
    "shows their membranes' thickness and what is inside), proteins as spheres coloured\n"
    "by kind (the legend gives the frame's counts; click a kind to hide it), a timeline\n"
    "(play, pause, step, scrub; the step and model time) with the frames where budding\n"
    "and fusion happened marked, orbit / zoom / pan with the mouse, a reset view and a\n"
    "PNG screenshot. Frames are read when shown, and frames that a running `nestsim run`\n"
    "appends to the file appear while the page is open. Frames of more than 2,000,000\n"
    "bodies are sampled (every compartment, 1 in k proteins); past 1,000,000 proteins\n"
    "are drawn as points.\n"
    "\n"
    "options:\n"
    "  --port P   listen on port P (0: any free port); default: the first free port\n"
    "             from 8765 on\n"
    "  --open     open the page in the desktop's browser (xdg-open)\n"
    "\n"
    "exit status: 0 after Ctrl-C, 1 when the page was not built or the port is taken,\n"
    "2 for a missing or unreadable trajectory or bad options.\n";

namespace {


int usage(const std::string& what) {
  std::cerr << "nestsim view: " << what << "\n\n" << kViewHelp;
  return 2;
}

}  // namespace

int view_command(const std::vector<std::string>& args) {
  ViewServerOptions options;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    if (a == "-h" || a == "--help") {
      std::cout << kViewHelp;
      return 0;
    }
    if (a == "--open") {
      options.open_browser = true;
    } else if (a == "--port") {
      if (k + 1 >= args.size()) return usage("--port needs a number");
      const std::string value = args[++k];
      char* end = nullptr;
      const long port = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || port < 0 || port > 65535)
        return usage("--port: '" + value + "' is not a port number (0 to 65535)");
      options.port = int(port);
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option '" + a + "'");
    } else if (options.trajectory.empty()) {
      options.trajectory = a;
    } else {
      return usage("one trajectory only ('" + options.trajectory + "' and '" + a + "')");
    }
  }
  if (options.trajectory.empty()) return usage("which trajectory? (nestsim view OUT.h5)");
  // The page of the program's data (data_dir.h): PREFIX/share/nestsim/viewer, or the
  // build tree's viewer/dist.
  const std::filesystem::path page = find_data("viewer/index.html");
  if (page.empty()) {
    // The page is built apart from nestsim, with node, npm and the npm registry.
    std::cerr << "nestsim view: the page is not built (it needs node, npm and the npm "
                 "registry once): install nodejs and npm, then build it with `cmake --build "
                 "BUILD_DIR --target nestsim_viewer` and install again\n";
    return 1;
  }
  options.asset_dir = page.parent_path().string();
  // A running `nestsim run` holds the file with HDF5's lock; the viewer only reads, and
  // re-reads each frame whole, so it reads without taking the lock.
  setenv("HDF5_USE_FILE_LOCKING", "FALSE", 1);
  try {
    const ViewTrajectory t = read_view_trajectory(options.trajectory);
    std::cout << "nestsim view: " << t.frames << " frames, " << t.kinds.size() << " kinds\n";
  } catch (const ViewError& e) {
    std::cerr << "nestsim view: " << e.what() << "\n";
    return 2;
  }
  return serve_view(options);
}

}  // namespace nestsim::app

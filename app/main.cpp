// nestsim: the command-line program.
#include <hdf5.h>

#include <csignal>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "nestsim/version.h"

namespace {

const char* const kHelp =
    "nestsim " NESTSIM_VERSION_STRING
    " - particle-based reaction-diffusion with nested hollow-sphere compartments\n"
    "\n"
    "usage: nestsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [MODEL.yaml]  run a model (default: models/default.yaml), write an H5MD\n"
    "                    trajectory\n"
    "  ensemble MODEL    replicas and parameter scans of a model (--scan, --replicas),\n"
    "                    in one process or under mpirun; analyze DIR summarises them\n"
    "  pairs SCENE.csv   find all intersecting pairs of nested hollow spheres (HSX)\n"
    "  analyze OUT.h5    counts by location, events, mean squared displacement and\n"
    "                    contacts of a trajectory; --csv DIR, --plot DIR\n"
    "  view OUT.h5       show a trajectory in 3D in the browser (a page on localhost)\n"
    "  export OUT.h5     write a trajectory as extended XYZ (OVITO, VMD): --format xyz\n"
    "\n"
    "options:\n"
    "  -h, --help        this text; `nestsim <command> --help` documents a command\n"
    "  --version         print the version\n";

}  // namespace

int main(int argc, char** argv) {
  // A file size limit (ulimit -f) then fails the write (EFBIG), which is reported like a
  // full disk, instead of killing the process in the middle of a frame.
  std::signal(SIGXFSZ, SIG_IGN);
  // No HDF5 clean-up at exit: every file is closed by its owner before, and HDF5 1.10's
  // clean-up crashes on a file whose close failed (a write error).
  H5dont_atexit();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kHelp;
    return 2;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  try {
    if (command == "-h" || command == "--help" || command == "help") {
      std::cout << kHelp;
      return 0;
    }
    if (command == "--version") {
      std::cout << "nestsim " << NESTSIM_VERSION_STRING << "\n";
      return 0;
    }
    if (command == "pairs") return nestsim::app::pairs_command(args);
    if (command == "analyze") return nestsim::app::analyze_command(args);
    if (command == "run") return nestsim::app::run_command(args);
    if (command == "ensemble") return nestsim::app::ensemble_command(args);
    if (command == "view") return nestsim::app::view_command(args);
    if (command == "export") return nestsim::app::export_command(args);
    std::cerr << "nestsim: unknown command '" << command << "'\n\n" << kHelp;
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the command could not look at (a symbolic link loop, a folder it may not
    // read): the path and the system's reason, as bad input (exit 2).
    std::cerr << "nestsim " << command << ": " << e.path1().string() << ": "
              << e.code().message() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "nestsim: " << e.what() << "\n";
    return 1;
  }
}

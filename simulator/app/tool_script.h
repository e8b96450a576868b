// The Python scripts of tools/ that `nestsim analyze --plot` runs (plot_trajectory.py,
// plot_ensemble.py): found beside the program or in the source tree, run without a shell.
#pragma once
#include <string>
#include <vector>

namespace nestsim::app {

// The script tools/NAME: $ENV_VAR when set, an installed copy beside the program
// (PREFIX/share/nestsim/NAME), tools/ of a source tree above the program's directory (a
// build tree inside the sources), or tools/ of the source tree it was built from.
// Throws std::runtime_error naming ENV_VAR when none exists.
std::string find_tool_script(const std::string& name, const char* env_var);

// Runs /usr/bin/python3 SCRIPT ARGS... without a shell; returns its exit status (127:
// python could not be started, 128: it died of a signal).
int run_tool_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace nestsim::app

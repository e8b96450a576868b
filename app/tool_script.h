// The Python scripts of tools/ that `nestsim analyze --plot` runs (plot_trajectory.py,
// plot_ensemble.py): found with the program's data, run without a shell.
#pragma once
#include <string>
#include <vector>

namespace nestsim::app {

// The script tools/NAME: $ENV_VAR when set, else tools/NAME of the program's data
// (data_dir.h: PREFIX/share/nestsim installed, the source tree from a build tree).
// Throws std::runtime_error naming ENV_VAR when none exists.
std::string find_tool_script(const std::string& name, const char* env_var);

// Runs /usr/bin/python3 SCRIPT ARGS... without a shell; returns its exit status (127:
// python could not be started, 128: it died of a signal).
int run_tool_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace nestsim::app

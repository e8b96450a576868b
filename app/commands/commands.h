// The subcommands of the `nestsim` program. Each returns the process exit code:
// 0 success, 1 a runtime failure, 2 bad input or usage.
#pragma once
#include <string>
#include <vector>

namespace nestsim::app {

int pairs_command(const std::vector<std::string>& args);
extern const char* const kPairsHelp;

int analyze_command(const std::vector<std::string>& args);
extern const char* const kAnalyzeHelp;
int run_command(const std::vector<std::string>& args);
extern const char* const kRunHelp;
int ensemble_command(const std::vector<std::string>& args);
extern const char* const kEnsembleHelp;
int view_command(const std::vector<std::string>& args);
extern const char* const kViewHelp;
int export_command(const std::vector<std::string>& args);
extern const char* const kExportHelp;

}  // namespace nestsim::app

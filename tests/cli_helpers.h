// Running the `nestsim` program from tests: a private temporary folder, a shell command
// with its exit code and captured output, files read back whole.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace nestsim::testing {

struct Run {
  int code;  // exit code; -1 when killed by a signal
  std::string out, err;
};

// One folder per test program, made on first use.
inline std::string temp_dir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/nestsim-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    return std::string(d);
  }();
  return dir;
}

inline std::string temp_path(const std::string& name) { return temp_dir() + "/" + name; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool exists(const std::string& path) { return std::ifstream(path).good(); }

inline Run run_shell(const std::string& command) {
  const std::string out = temp_path("stdout"), err = temp_path("stderr");
  const int status = std::system((command + " > " + out + " 2> " + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// `nestsim ARGS` (NESTSIM_BINARY is set by nestsim_add_test).
inline Run run_nestsim(const std::string& args) {
  return run_shell(std::string(NESTSIM_BINARY) + " " + args);
}

}  // namespace nestsim::testing

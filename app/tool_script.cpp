#include "tool_script.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "data_dir.h"

namespace nestsim::app {

std::string find_tool_script(const std::string& name, const char* env_var) {
  if (const char* env = std::getenv(env_var); env && *env) return env;
  const std::filesystem::path script = find_data(std::filesystem::path("tools") / name);
  if (!script.empty()) return script.string();
  throw std::runtime_error("cannot find tools/" + name + " (set " + env_var + " to its path)");
}

int run_tool_script(const std::string& script, const std::vector<std::string>& args) {
  static const char* const python = "/usr/bin/python3";
  std::cout.flush();
  std::fflush(stdout);
  std::vector<const char*> argv{python, script.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0)
    throw std::runtime_error(std::string("cannot start python: ") + std::strerror(errno));
  if (child == 0) {
    ::execv(python, const_cast<char* const*>(argv.data()));
    std::fprintf(stderr, "nestsim: cannot run %s: %s\n", python, std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waiting for python failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace nestsim::app

#include "data_dir.h"

#include <system_error>

namespace nestsim::app {

namespace fs = std::filesystem;

fs::path program_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::vector<fs::path> data_dirs() {
  const fs::path dir = program_dir();
  if (dir.empty()) return {};
  return {(dir / ".." / "share" / "nestsim").lexically_normal(), dir / "nestsim-data"};
}

fs::path find_data(const fs::path& relative) {
  std::error_code ec;
  for (const fs::path& d : data_dirs())
    if (fs::exists(d / relative, ec)) return (d / relative).lexically_normal();
  return {};
}

}  // namespace nestsim::app

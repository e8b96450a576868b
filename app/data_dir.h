// Where the program's data lives: the model files, the plot scripts of tools/ and the
// page of `nestsim view`, found relative to the program itself so that a build tree and
// an installed copy both run from any directory.
#pragma once
#include <filesystem>
#include <vector>

namespace nestsim::app {

// The folders that may hold models/, tools/ and viewer/, in the order they are tried:
// - PREFIX/share/nestsim for a program installed as PREFIX/bin/nestsim;
// - BUILD/nestsim-data for the program of a build tree: CMake fills it with links to the
//   source tree's models/ and tools/ and to the built page.
std::vector<std::filesystem::path> data_dirs();

// The first DIR/RELATIVE of data_dirs() that exists; empty when none does.
std::filesystem::path find_data(const std::filesystem::path& relative);

// The folder of the running program (/proc/self/exe); empty when it cannot be read.
std::filesystem::path program_dir();

}  // namespace nestsim::app

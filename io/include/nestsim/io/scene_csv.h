// Scene files for `nestsim pairs`: CSV with a header `x,y,z,radius,thickness` (3D) or
// `x,y,radius,thickness` (2D), one body per row; the row index (0-based, header
// excluded) is the body id. Lines holding only blanks are ignored.
#pragma once
#include <stdexcept>
#include <string>

#include "nestsim/broadphase.h"

namespace nestsim::io {

// An error in an input file, located: what() is "FILE:LINE: what is wrong", or
// "FILE: what is wrong" for the file as a whole (line 0: it cannot be opened, it is
// empty, ...).
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, long line, const std::string& what)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + what),
        file_(file), line_(line) {}
  // "FILE:LINE:COLUMN: what is wrong" (column 0: "FILE:LINE: ...")
  InputError(const std::string& file, long line, long column, const std::string& what)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : "") +
                           (line > 0 && column > 0 ? ":" + std::to_string(column) : "") + ": " +
                           what),
        file_(file), line_(line) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  std::string file_;
  long line_;
};

// Input text as a message quotes it: cut after `limit` characters ("... (N bytes in
// all)"), control bytes and bytes that are not UTF-8 escaped (\xNN, \t), and
// invisible characters named (<U+FEFF> for a byte order mark, <U+00A0> for a no-break
// space, ...), so that a message is one readable line whatever the file holds.
std::string excerpt(const std::string& text, std::size_t limit = 60);

struct Scene {
  int dim = 3;
  SphereSet<double> bodies;
  std::vector<long> lines;  // file line of each body, for later error messages
};

// Reads and validates a scene (finite numbers, radius >= 0, 0 <= thickness <= radius).
// Throws InputError. Line 0 names a file that cannot be opened.
Scene read_scene_csv(const std::string& path);

// Writes a scene in the same format (round trip: every double printed exactly).
void write_scene_csv(const std::string& path, const Scene& scene);

// Checks the scene against a box [0, size): in an open box every centre must lie in
// [0, size] (InputError otherwise); in a periodic box centres are wrapped into [0, size).
void apply_box(const std::string& path, Scene& scene, const Domain& box);

}  // namespace nestsim::io

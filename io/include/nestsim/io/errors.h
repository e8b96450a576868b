// The errors of input files (models, scenes, trajectories): located, with the offending
// text quoted readably.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

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

}  // namespace nestsim::io

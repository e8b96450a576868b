// An output file that appears under its name only when complete: written to a
// temporary beside it and renamed by commit(); removed if never committed.
#pragma once
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace nestsim::app {

class OutputFile {
 public:
  explicit OutputFile(std::string path)
      : path_(std::move(path)), temp_(path_ + ".partial." + std::to_string(::getpid())) {
    file_ = std::fopen(temp_.c_str(), "wb");
    if (!file_) throw std::runtime_error(path_ + ": cannot write: " + std::strerror(errno));
  }
  ~OutputFile() {
    if (file_) std::fclose(file_);
    if (!committed_) std::remove(temp_.c_str());
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* stream() { return file_; }

  void commit() {
    const bool ok = std::fflush(file_) == 0 && !std::ferror(file_);
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (!ok || closed != 0) throw std::runtime_error(path_ + ": write failed");
    if (std::rename(temp_.c_str(), path_.c_str()) != 0)
      throw std::runtime_error(path_ + ": cannot rename into place: " + std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string path_, temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace nestsim::app

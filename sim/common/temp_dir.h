#pragma once
// Scratch directories of commands that run child processes (regress, accuracy, calibrate, --solo).
#include <string>

namespace dfsim {

// Creates a fresh directory `<prefix>-XXXXXX` under $TMPDIR (or /tmp when TMPDIR is unset or
// empty) and returns its path. A TMPDIR that is missing, not a directory or not writable is an
// InputError naming it and why (exit 2), never an internal error or a silent use of /tmp.
std::string make_temp_dir(const std::string& prefix);

// A scratch directory made by make_temp_dir, removed with all it holds when this goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) : path_(make_temp_dir(prefix)) {}
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace dfsim

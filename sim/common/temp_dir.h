#pragma once
// Scratch directories of commands that run child processes (regress, accuracy, calibrate, --solo).
#include <string>

namespace dfsim {

// Creates a fresh directory `<prefix>-XXXXXX` under $TMPDIR (or /tmp when TMPDIR is unset or
// empty) and returns its path. A TMPDIR that is missing, not a directory or not writable is an
// InputError naming it and why (exit 2), never an internal error or a silent use of /tmp.
std::string make_temp_dir(const std::string& prefix);

}  // namespace dfsim

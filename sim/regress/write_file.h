#pragma once
// Writes a whole file or nothing: to a temporary beside it, then renamed into place.
#include <string>

namespace dfsim {

// InputError naming `path` and `what` (e.g. "--junit") if it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& what);
// Checks, before any work, that `path` could be written that way (InputError if not).
void check_writable(const std::string& path, const std::string& what);

}  // namespace dfsim

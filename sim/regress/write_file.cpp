#include "sim/regress/write_file.h"

#include "sim/app/output_dir.h"
#include "sim/common/error.h"

namespace dfsim {

namespace {

// OutputFile(path), its InputError naming `what` too (e.g. "--junit").
OutputFile output_file(const std::string& path, const std::string& what) {
  try {
    return OutputFile(path);
  } catch (const InputError& e) {
    throw InputError(e.file(), e.path(), e.detail() + " (" + what + ")");
  }
}

}  // namespace

void check_writable(const std::string& path, const std::string& what) { output_file(path, what); }

void write_file_atomically(const std::string& path, const std::string& text, const std::string& what) {
  output_file(path, what).write([&](std::ostream& f) { f << text; });
}

}  // namespace dfsim

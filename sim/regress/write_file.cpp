#include "sim/regress/write_file.h"

#include <filesystem>
#include <fstream>

#include "sim/common/error.h"

namespace dfsim {

void write_file_atomically(const std::string& path, const std::string& text, const std::string& what) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    bool ok = static_cast<bool>(out);
    if (ok) ok = static_cast<bool>(out << text) && static_cast<bool>(out.flush());
    if (!ok) {
      fs::remove(tmp, ec);
      throw InputError(path, "", "cannot be written (" + what + ")");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path, "", "cannot be written (" + what + "): " + ec.message());
  }
}

}  // namespace dfsim

#include "sim/regress/write_file.h"

#include <filesystem>
#include <fstream>

#include "sim/common/error.h"

namespace dfsim {

namespace {

std::string temp_of(const std::string& path) {
  std::filesystem::path p(path);
  return (p.parent_path() / (std::string(".").append(p.filename().string()).append(".tmp"))).string();
}

}  // namespace

void check_writable(const std::string& path, const std::string& what) {
  std::string tmp = temp_of(path);
  bool ok = static_cast<bool>(std::ofstream(tmp, std::ios::binary | std::ios::app));
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  if (!ok) throw InputError(path, "", "cannot be written (" + what + ")");
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& what) {
  namespace fs = std::filesystem;
  std::string tmp = temp_of(path);
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

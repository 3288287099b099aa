#include "sim/app/output_dir.h"

#include <filesystem>

#include "sim/common/error.h"

namespace dfsim {

namespace fs = std::filesystem;

OutputDir::OutputDir(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw InputError(dir_, "", "output path exists and is not a directory");
  fs::create_directories(dir_, ec);
  if (ec) throw InputError(dir_, "", "cannot create output directory: " + ec.message());
  std::string probe = temp_of("probe");
  {
    std::ofstream p(probe);
    if (!p) throw InputError(dir_, "", "output directory is not writable");
  }
  fs::remove(probe, ec);
}

OutputDir::~OutputDir() {
  if (committed_) return;
  std::error_code ec;
  for (const auto& n : names_) fs::remove(temp_of(n), ec);
}

std::ofstream OutputDir::open(const std::string& name) {
  names_.push_back(name);
  std::ofstream out(temp_of(name), std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path(name), "", "cannot be written");
  return out;
}

void OutputDir::commit() {
  for (const auto& n : names_) {
    std::error_code ec;
    fs::rename(temp_of(n), path(n), ec);
    if (ec) throw InputError(path(n), "", "cannot be written: " + ec.message());
  }
  committed_ = true;
}

}  // namespace dfsim

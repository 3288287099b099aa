#include "sim/common/self_executable.h"

#include <filesystem>

#include "sim/common/error.h"

namespace dfsim {

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw SimError("cannot find this executable (/proc/self/exe): " + ec.message());
  return p.string();
}

}  // namespace dfsim

#include "sim/common/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "sim/common/error.h"

namespace dfsim {

std::string make_temp_dir(const std::string& prefix) {
  const char* env = std::getenv("TMPDIR");
  const bool from_env = env && *env;
  std::string dir = from_env ? env : "/tmp";
  std::string tmpl = dir + (dir.back() == '/' ? "" : "/") + prefix + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw InputError(from_env ? "TMPDIR " + dir : dir, "",
                     std::string("cannot create a temporary directory there: ") + std::strerror(errno));
  return buf.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace dfsim

#include "sim/common/text_file.h"

#include <fmt/format.h>

#include <cstdint>
#include <fstream>
#include <sstream>

namespace dfsim {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string hash_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis and prime
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

}  // namespace dfsim

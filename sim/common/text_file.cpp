#include "sim/common/text_file.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/common/error.h"

namespace dfsim {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_input_file(const std::string& path, const std::string& expected) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path, "", errno == ENOENT ? "no such file" : std::string("cannot be read: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path, "", "is a directory, expected " + expected);
  auto too_large = [&] {
    return InputError(path, "", fmt::format("larger than {} GiB, the limit of an input file (expected {})",
                                            kMaxInputBytes >> 30, expected));
  };
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxInputBytes) throw too_large();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot be read");
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    std::size_t n = static_cast<std::size_t>(in.gcount());
    if (text.size() + n > kMaxInputBytes) throw too_large();
    std::size_t base = text.size();
    text.append(buf, n);
    if (const void* nul = std::memchr(buf, '\0', n)) {
      std::size_t at = base + static_cast<std::size_t>(static_cast<const char*>(nul) - buf);
      std::size_t line = 1, line_start = 0;
      for (std::size_t i = 0; i < at; ++i) {
        if (text[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
      }
      throw InputError(path, fmt::format("{}:{}", line, at - line_start + 1),
                       "binary data (a NUL byte), expected " + expected);
    }
  }
  if (in.bad()) throw InputError(path, "", "cannot be read");
  return text;
}

std::string read_csv_input_file(const std::string& path, const std::string& expected) {
  std::string text = read_input_file(path, expected);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return text;
}

std::string hash_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis and prime
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

}  // namespace dfsim

#include "sim/common/text_file.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
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

namespace {

// Line and column (1-based) of byte `at` of `text`.
std::string line_column(const std::string& text, std::size_t at) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return fmt::format("{}:{}", line, at - line_start + 1);
}

// The text of the last pipe read (`<(...)`, /dev/stdin), by the pipe's identity. A pipe can be
// read once: a command that reads an input twice (validate: the file's kind, then its loader)
// got "unexpected end of input" the second time. Kept up to 64 MiB (configs, suites,
// placements; a large kernel graph is read once).
struct PipeText {
  dev_t dev = 0;
  ino_t ino = 0;
  bool kept = false;
  std::string text;
};
PipeText& last_pipe() {
  static PipeText p;
  return p;
}
constexpr std::size_t kMaxKeptPipeBytes = std::size_t{64} << 20;

}  // namespace

std::string read_input_file(const std::string& path, const std::string& expected, bool json) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path, "", errno == ENOENT ? "no such file" : std::string("cannot be read: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path, "", "is a directory, expected " + expected);
  auto too_large = [&] {
    return InputError(path, "", fmt::format("larger than {} GiB, the limit of an input file (expected {})",
                                            kMaxInputBytes >> 30, expected));
  };
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxInputBytes) throw too_large();
  PipeText& pipe = last_pipe();
  if (S_ISFIFO(st.st_mode) && pipe.kept && pipe.dev == st.st_dev && pipe.ino == st.st_ino) return pipe.text;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot be read");
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  std::size_t sniffed = 0;  // bytes before the first one that may open the text
  bool opened = !json;
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    std::size_t n = static_cast<std::size_t>(in.gcount());
    if (text.size() + n > kMaxInputBytes) throw too_large();
    std::size_t base = text.size();
    text.append(buf, n);
    if (const void* nul = std::memchr(buf, '\0', n)) {
      std::size_t at = base + static_cast<std::size_t>(static_cast<const char*>(nul) - buf);
      throw InputError(path, line_column(text, at), "binary data (a NUL byte), expected " + expected);
    }
    for (; !opened && sniffed < text.size(); ++sniffed) {
      const char c = text[sniffed];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
      const std::size_t k = std::min<std::size_t>(3, text.size());
      if (sniffed == 0 && text.compare(0, k, "\xEF\xBB\xBF", k) == 0) {
        if (text.size() < 3) break;  // the rest of the mark is still to come
        sniffed = 2;
        continue;
      }
      // What a JSON text (or a comment) can begin with; the parser judges the rest.
      if (std::strchr("{[\"-0123456789tfn/", c) == nullptr)
        throw InputError(path, line_column(text, sniffed),
                         fmt::format("malformed JSON: {} cannot begin a JSON value, expected {}",
                                     std::isprint(static_cast<unsigned char>(c)) ? fmt::format("'{}'", c)
                                                                                  : fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c)),
                                     expected));
      opened = true;
    }
  }
  if (in.bad()) throw InputError(path, "", "cannot be read");
  if (S_ISFIFO(st.st_mode) && text.size() <= kMaxKeptPipeBytes) pipe = PipeText{st.st_dev, st.st_ino, true, text};
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

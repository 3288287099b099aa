#pragma once
// Error types that carry where a problem is, so the CLI can print one clear line.
#include <stdexcept>
#include <string>

namespace dfsim {

// The length of the UTF-8 sequence that starts at s[i], or 0 if none valid does (a stray
// continuation byte, a bad lead byte, a sequence cut short, an overlong or surrogate form).
inline std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char u = b(i);
  if (u < 0x80) return 1;
  std::size_t n = u >= 0xC2 && u <= 0xDF ? 2 : u >= 0xE0 && u <= 0xEF ? 3 : u >= 0xF0 && u <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  const unsigned char v = b(i + 1);
  if ((u == 0xE0 && v < 0xA0) || (u == 0xED && v > 0x9F) || (u == 0xF0 && v < 0x90) || (u == 0xF4 && v > 0x8F)) return 0;
  return n;
}

// `s` with its control characters written as JSON writes them (\n, \t, \r, \u00XX), so that
// a value from a file keeps a message on one whole line (a NUL would cut it short), and each
// byte that is not part of valid UTF-8 written as \xNN (a terminal shows garbage for it).
inline std::string escape_controls(const std::string& s) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    else if (n > 1) out.append(s, i, n);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) out += std::string("\\u00") + hex[u >> 4] + hex[u & 15];
    else out += c;
    i += n == 0 ? 1 : n;
  }
  return out;
}

// `s` with every run of more than `longest` bytes without a space (a 2 MB key a file brings in,
// echoed in its JSON path and its "did you mean") cut to its first and last bytes around
// "...[N bytes]...", so the message stays a line a person reads; UTF-8 characters are kept
// whole. File paths and JSON paths of real inputs are far shorter than `longest`.
inline std::string clip_long_runs(const std::string& s, std::size_t longest = 512) {
  constexpr std::size_t kHead = 200, kTail = 60;
  static_assert(kHead + kTail < 512, "a clipped run is shorter than the default limit");
  if (s.size() <= longest) return s;
  auto continuation = [&](std::size_t i) { return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t end = s.find(' ', i);
    if (end == std::string::npos) end = s.size();
    if (end - i > longest) {
      std::size_t head = i + kHead, tail = end - kTail;
      while (head > i && continuation(head)) --head;  // not inside a character
      while (tail < end && continuation(tail)) ++tail;
      out.append(s, i, head - i);
      out += "...[" + std::to_string(tail - head) + " bytes]...";
      out.append(s, tail, end - tail);
    } else {
      out.append(s, i, end - i);
    }
    if (end < s.size()) out += ' ';
    i = end + 1;
  }
  return out;
}

// Bad input (file, JSON path, what was expected). The CLI exits 2 on it.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string json_path, std::string detail)
      : std::runtime_error(format(file, json_path, detail)),
        file_(std::move(file)), path_(std::move(json_path)), detail_(std::move(detail)) {}
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const std::string& detail() const { return detail_; }

 private:
  // One line: control characters a file brought in (a value with a newline, a NUL) are
  // escaped, so the line is neither split nor cut short, and a value of megabytes is clipped.
  static std::string format(const std::string& f, const std::string& p, const std::string& d) {
    std::string s = f.empty() ? std::string("<input>") : f;
    if (!p.empty()) s += ": " + p;
    return clip_long_runs(escape_controls(s + ": " + d));
  }
  std::string file_, path_, detail_;
};

// The simulation could not finish (deadlock, a limit hit). The CLI exits 1 on it.
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dfsim

#pragma once
// Error types that carry where a problem is, so the CLI can print one clear line.
#include <stdexcept>
#include <string>

namespace dfsim {

// `s` with its control characters written as JSON writes them (\n, \t, \r, \u00XX), so that
// a value from a file keeps a message on one whole line (a NUL would cut it short).
inline std::string escape_controls(const std::string& s) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) out += std::string("\\u00") + hex[u >> 4] + hex[u & 15];
    else out += c;
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
  // escaped, so the line is neither split nor cut short.
  static std::string format(const std::string& f, const std::string& p, const std::string& d) {
    std::string s = f.empty() ? std::string("<input>") : f;
    if (!p.empty()) s += ": " + p;
    return escape_controls(s + ": " + d);
  }
  std::string file_, path_, detail_;
};

// The simulation could not finish (deadlock, a limit hit). The CLI exits 1 on it.
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dfsim

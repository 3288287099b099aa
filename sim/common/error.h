#pragma once
// Error types that carry where a problem is, so the CLI can print one clear line.
#include <stdexcept>
#include <string>

namespace dfsim {

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
  static std::string format(const std::string& f, const std::string& p, const std::string& d) {
    std::string s = f.empty() ? std::string("<input>") : f;
    if (!p.empty()) s += ": " + p;
    return s + ": " + d;
  }
  std::string file_, path_, detail_;
};

// The simulation could not finish (deadlock, a limit hit). The CLI exits 1 on it.
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dfsim

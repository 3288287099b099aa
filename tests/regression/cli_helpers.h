#pragma once
// Running the dfsim binary as a user does (through the shell) from regression tests, and the
// files it writes: captured output and exit code, temporary directories, whole-file reads.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace cli_test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;  // what the command printed (as captured)
};

// Runs a shell command; `redirect` decides what is captured ("2>&1": both streams,
// "2>&1 >/dev/null": stderr only).
inline Result shell(const std::string& command, const std::string& redirect = "2>&1") {
  std::string cmd = command + " " + redirect;
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `dfsim <args>`.
inline Result dfsim(const std::string& args, const std::string& redirect = "2>&1") {
  return shell(std::string(DFSIM_BINARY) + " " + args, redirect);
}

// A fresh directory path (not created) unique to this process and `tag`; removed on exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("dfsim_cli_" + std::to_string(getpid()) + "_" + tag)) {
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;  // never throws from a destructor
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, sep);) out.push_back(f);
  return out;
}

}  // namespace cli_test

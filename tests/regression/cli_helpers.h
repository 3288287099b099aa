#pragma once
// Shared by the regression tests that run the dfsim binary as a user does: run a command and
// capture its output, a temporary directory, reading files back.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;  // what the command printed (as captured)
};

// Runs `dfsim <args>`; `redirect` decides what is captured ("2>&1": both streams,
// "2>&1 >/dev/null": stderr only).
inline Result dfsim(const std::string& args, const std::string& redirect = "2>&1") {
  std::string cmd = std::string(DFSIM_BINARY) + " " + args + " " + redirect;
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

// A fresh directory path (not created) unique to this process and `tag`; removed on exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("dfsim_cli_" + std::to_string(getpid()) + "_" + tag)) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string str() const { return path.string(); }
};

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

}  // namespace cli_test

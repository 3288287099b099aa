#include "sim/sweep/point_store.h"

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/app/output_dir.h"
#include "sim/common/error.h"
#include "sim/sweep/child_process.h"

namespace dfsim {

namespace fs = std::filesystem;

namespace {

// The last non-empty line of a file ("" if none).
std::string last_line(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace

double host_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string point_dir(const std::string& store, const std::string& id) { return store + "/" + id; }

bool point_done(const std::string& dir, const Json& key) {
  if (!fs::exists(dir + "/status.json") || !fs::exists(dir + "/point.json")) return false;
  try {
    return load_json_file(dir + "/point.json").value("key", Json()) == key;
  } catch (const InputError&) {
    return false;
  }
}

void prepare_point(const std::string& dir, const Json& point) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::remove(dir + "/status.json", ec);
  OutputDir out(dir);
  out.open("point.json") << point.dump(1) << "\n";
  out.commit();
}

pid_t start_point(const std::string& dfsim, const std::string& dir, const Json& point) {
  std::vector<std::string> argv{dfsim};
  for (const auto& a : point.at("args")) argv.push_back(a.get<std::string>());
  argv.insert(argv.end(), {"--out", dir});
  return spawn_child(argv, point.at("cwd").get<std::string>(), "/dev/null", dir + "/run.log");
}

PointResult finish_point(const std::string& dir, int wait_status, double host_s) {
  PointResult r;
  r.exit_code = exit_code_of(wait_status);
  r.host_s = std::round(host_s * 1000) / 1000;
  r.status = r.exit_code == 0 ? "ok" : "failed";
  if (r.exit_code != 0) r.message = last_line(dir + "/run.log");
  bool finished = WIFEXITED(wait_status) && r.exit_code <= 2;
  if (!finished) {
    if (r.message.empty()) r.message = "the run ended with exit code " + std::to_string(r.exit_code);
    return r;
  }
  Json status = {{"status", r.status}, {"exit_code", r.exit_code}, {"message", r.message}, {"host_s", r.host_s}};
  OutputDir out(dir);
  out.open("status.json") << status.dump(1) << "\n";
  out.commit();
  r.recorded = true;
  return r;
}

std::optional<PointResult> read_point_status(const std::string& dir) {
  if (!fs::exists(dir + "/status.json")) return std::nullopt;
  Json s = load_json_file(dir + "/status.json");
  JsonView v(s, dir + "/status.json");
  PointResult r;
  r.status = v.at("status").as_string();
  r.exit_code = static_cast<int>(v.at("exit_code").as_int());
  r.message = v.at("message").as_string();
  r.host_s = v.at("host_s").as_number(0, 1e12);
  r.recorded = true;
  return r;
}

int run_point_dir(const std::string& dfsim, const std::string& dir) {
  std::string abs = fs::absolute(dir).lexically_normal().string();
  Json point = load_json_file(abs + "/point.json");
  std::error_code ec;
  fs::remove(abs + "/status.json", ec);
  double t0 = host_seconds();
  int status = wait_child(start_point(dfsim, abs, point));
  return finish_point(abs, status, host_seconds() - t0).exit_code;
}

}  // namespace dfsim

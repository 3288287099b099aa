#include "sim/sweep/point_store.h"

#include <sys/wait.h>

#include <algorithm>
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

// The content of a file, if it exists.
std::optional<std::string> content_of(const std::string& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Puts back a file as it was: `content`, or no file.
void restore(const std::string& dir, const std::string& name, const std::optional<std::string>& content) {
  std::error_code ec;
  if (!content) {
    fs::remove(dir + "/" + name, ec);
    return;
  }
  OutputDir out(dir);
  out.open(name) << *content;
  out.commit();
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
    Json point = load_json_file(dir + "/point.json");
    return point.is_object() && point.value("key", Json()) == key;  // a damaged one: run again
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

void PreparedPoints::prepare(const std::string& dir, const Json& point) {
  std::error_code ec;
  Before b{dir, !fs::exists(dir, ec), content_of(dir + "/point.json"), content_of(dir + "/status.json"),
           fs::last_write_time(dir + "/status.json", ec)};
  for (fs::path p = fs::path(dir).parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    made_parents_.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  before_.push_back(std::move(b));
  prepare_point(dir, point);
}

void PreparedPoints::undo(const Before& b) const {
  std::error_code ec;
  if (fs::exists(b.dir + "/status.json", ec)) return;  // run and recorded since: kept
  if (b.made) {
    fs::remove_all(b.dir, ec);
    return;
  }
  restore(b.dir, "point.json", b.point_json);
  restore(b.dir, "status.json", b.status_json);
  if (b.status_json) fs::last_write_time(b.dir + "/status.json", b.status_time, ec);  // as it was: not run again
}

PreparedPoints::~PreparedPoints() {
  if (kept_) return;
  for (const auto& b : before_) {
    try {
      undo(b);
    } catch (const std::exception&) {  // best effort: the store's points are each complete or not done
    }
  }
  auto parents = made_parents_;  // deepest first, so that each is empty when it is removed
  std::sort(parents.begin(), parents.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::error_code ec;
  for (const auto& p : parents) fs::remove(p, ec);  // only if empty
}

PointCommand point_command(const Json& point, const std::string& file) {
  JsonView root(point, file);
  root.only_keys({"key", "cwd", "args"});
  JsonView args = root.at("args");
  args.expect_array();
  if (args.size() == 0) args.fail("expected the subcommand and its arguments (strings), got an empty array");
  PointCommand c;
  for (std::size_t i = 0; i < args.size(); ++i) c.args.push_back(args.at(i).as_string());
  JsonView cwd = root.at("cwd");
  c.cwd = cwd.as_string();
  std::error_code ec;
  const auto st = fs::status(c.cwd, ec);
  if (!fs::exists(st)) cwd.fail("expected the directory to run in, got \"" + c.cwd + "\": no such directory");
  if (!fs::is_directory(st)) cwd.fail("expected the directory to run in, got \"" + c.cwd + "\": not a directory");
  return c;
}

pid_t start_point(const std::string& dfsim, const std::string& dir, const PointCommand& command) {
  std::vector<std::string> argv{dfsim};
  argv.insert(argv.end(), command.args.begin(), command.args.end());
  argv.insert(argv.end(), {"--out", dir});
  return spawn_child(argv, command.cwd, "/dev/null", dir + "/run.log");
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
  const std::string file = (fs::path(dir) / "point.json").string();  // named as the user gave it
  const PointCommand command = point_command(load_json_file(file), file);
  std::error_code ec;
  fs::remove(abs + "/status.json", ec);
  double t0 = host_seconds();
  int status = wait_child(start_point(dfsim, abs, command));
  return finish_point(abs, status, host_seconds() - t0).exit_code;
}

}  // namespace dfsim

#pragma once
// The point store: one directory per point, <store>/<id>/, where id is the hash of everything
// that changes the point's answer. It holds point.json (that key, the directory to run in and
// the subcommand's arguments), the run's own outputs, run.log (its stderr) and, written last,
// status.json: a point is done when status.json exists and point.json holds the same key.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/json_io.h"

namespace dfsim {

// How one point's run ended.
struct PointResult {
  std::string status;    // "ok", "failed" or "not_run"
  int exit_code = 0;
  std::string message;   // why it failed: the last line the run printed to stderr
  double host_s = 0;     // host seconds of the run
  bool recorded = false; // written to status.json (runs ended by a signal are not: they run again)
};

std::string point_dir(const std::string& store, const std::string& id);
// True if the point in `dir` is done for this key.
bool point_done(const std::string& dir, const Json& key);
// Makes `dir` ready for a fresh run of `point` (point.json written, any old status.json gone).
void prepare_point(const std::string& dir, const Json& point);
// The points one sweep prepares for its engine. Unless keep() is called (the engine took
// them), the destructor undoes what prepare() wrote, so a sweep that fails before any point
// runs leaves the store as it was: directories made here are removed, the point.json and
// status.json found before are put back. A point recorded since (status.json) stays.
class PreparedPoints {
 public:
  PreparedPoints() = default;
  PreparedPoints(const PreparedPoints&) = delete;
  PreparedPoints& operator=(const PreparedPoints&) = delete;
  ~PreparedPoints();
  void prepare(const std::string& dir, const Json& point);  // prepare_point, remembering what was there
  void keep() { kept_ = true; }

 private:
  struct Before {
    std::string dir;
    bool made = false;                                    // the directory did not exist
    std::optional<std::string> point_json, status_json;  // their content, if they existed
    std::filesystem::file_time_type status_time;         // and when status.json was written
  };
  void undo(const Before& b) const;
  std::vector<Before> before_;
  std::vector<std::string> made_parents_;  // the store and its parents, if made here
  bool kept_ = false;
};
// What a point runs: the subcommand's arguments and the directory to run in.
struct PointCommand {
  std::vector<std::string> args;
  std::string cwd;
};
// The command of a point.json (`file` names it in errors): an object of "args" (a non-empty
// array of strings), "cwd" (an existing directory) and "key"; InputError at the JSON path.
PointCommand point_command(const Json& point, const std::string& file);
// Starts the run of `command` in `dir` as a child of `dfsim` (the binary); returns its pid.
pid_t start_point(const std::string& dfsim, const std::string& dir, const PointCommand& command);
// Records a finished run: exit 0 is ok, 1 and 2 failed (the answer for these inputs, kept);
// anything else (a signal, an interrupted run) is returned but not recorded.
PointResult finish_point(const std::string& dir, int wait_status, double host_s);
// The recorded result in `dir`, if any.
std::optional<PointResult> read_point_status(const std::string& dir);
// `dfsim sweep --run-point DIR`: runs the point whose point.json is in DIR and records it.
// Returns the run's exit code.
int run_point_dir(const std::string& dfsim, const std::string& dir);

// Host seconds since some fixed moment (for host_s).
double host_seconds();

}  // namespace dfsim

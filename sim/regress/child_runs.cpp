#include "sim/regress/child_runs.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "sim/common/child_stop.h"
#include "sim/common/error.h"
#include "sim/common/self_executable.h"
#include "sim/common/temp_dir.h"

namespace dfsim {

namespace {

// Starts one child with stdout to /dev/null and stderr to `err_file`; returns its pid.
pid_t start_child(const std::string& exe, const ChildRun& run, const std::string& err_file) {
  std::vector<std::string> argv_s{exe};
  argv_s.insert(argv_s.end(), run.args.begin(), run.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw SimError("cannot start a child process (fork failed)");
  if (pid == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    int err_fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null_fd >= 0) dup2(null_fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

std::string first_line(const std::string& file) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) return line;
  return "";
}

}  // namespace

void run_children(std::vector<ChildRun>& runs, int jobs) {
  if (runs.empty()) return;
  std::string exe = self_executable();
  ScratchDir scratch("dfsim-children");  // removed however this ends (a waitpid failure threw past it)
  const std::string& dir = scratch.path();
  std::map<pid_t, std::size_t> running;
  auto err_file = [&](std::size_t i) { return dir + "/" + std::to_string(i) + ".err"; };
  ChildStopGuard stop;
  auto reap_one = [&] {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) return;  // a signal: the loops below stop the children
    if (pid < 0) throw SimError("lost track of a child process (waitpid failed)");
    auto it = running.find(pid);
    if (it == running.end()) return;  // not one of ours
    ChildRun& r = runs[it->second];
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.first_error = first_line(err_file(it->second));
    running.erase(it);
  };
  for (std::size_t i = 0; i < runs.size() && !stop.requested(); ++i) {
    while (static_cast<int>(running.size()) >= std::max(1, jobs) && !stop.requested()) reap_one();
    if (!stop.requested()) running[start_child(exe, runs[i], err_file(i))] = i;
  }
  while (!running.empty()) {
    std::vector<pid_t> pids;
    for (const auto& [pid, _] : running) pids.push_back(pid);
    stop.forward(pids);
    reap_one();
  }
  if (stop.requested()) throw SimError(stop.reason());
}

}  // namespace dfsim

#pragma once
// Runs subcommands of this same binary in child processes (fork + exec of /proc/self/exe),
// at most `jobs` at a time. SystemC elaborates once per process, so every simulation that a
// command needs beyond the first is a child `dfsim run`.
#include <string>
#include <vector>

namespace dfsim {

// One child: its arguments (after the binary's name) and, once run, how it ended.
struct ChildRun {
  explicit ChildRun(std::vector<std::string> arguments = {}) : args(std::move(arguments)) {}
  std::vector<std::string> args;
  int exit_code = -1;      // the child's exit status; 128 + signal if it was killed
  std::string first_error;  // the first line the child printed on stderr ("" if none)
};

// Runs every child, `jobs` (>= 1) at a time, and fills in exit_code and first_error. Each
// child's stdout is discarded. The results do not depend on `jobs`.
void run_children(std::vector<ChildRun>& runs, int jobs);

}  // namespace dfsim

#pragma once
// Starting child processes (the runs of sweep points, the Dask driver) with their own working
// directory and output files, and reading how they ended.
#include <sys/types.h>

#include <string>
#include <vector>

namespace dfsim {

// Starts argv[0] (a path) with `argv`, in `cwd`, stdout and stderr sent to the given files
// ("" = inherited). The child gets SIGTERM if this process dies. Returns its pid.
pid_t spawn_child(const std::vector<std::string>& argv, const std::string& cwd, const std::string& stdout_file,
                  const std::string& stderr_file);
// Waits for `pid`, retrying on interrupts; returns the wait status.
int wait_child(pid_t pid);
// The exit code of a wait status; 128 + the signal for a child a signal ended.
int exit_code_of(int wait_status);
}  // namespace dfsim

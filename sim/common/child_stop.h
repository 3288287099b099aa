#pragma once
// SIGINT / SIGTERM while a command waits on its child processes (regress and accuracy runs,
// serve's step simulations). For the guard's lifetime a signal only records the request in
// stop_request() and interrupts waitpid (EINTR), so the waiting loop can stop its children,
// remove their scratch and fail with "interrupted by SIGINT" (exit 130 / 143 from main)
// instead of dying at once with orphans still running and scratch directories left behind.
#include <csignal>
#include <string>
#include <sys/types.h>
#include <vector>

namespace dfsim {

class ChildStopGuard {
 public:
  ChildStopGuard();
  ~ChildStopGuard();
  ChildStopGuard(const ChildStopGuard&) = delete;
  ChildStopGuard& operator=(const ChildStopGuard&) = delete;

  // The signal asked for (0 if none).
  static int requested();
  // Sends the requested signal to each of `children` (once per guard).
  void forward(const std::vector<pid_t>& children);
  // "interrupted by SIGINT" / "... SIGTERM".
  static std::string reason();

 private:
  struct sigaction old_int_ {}, old_term_ {}, old_hup_ {};
  bool forwarded_ = false;
};

}  // namespace dfsim

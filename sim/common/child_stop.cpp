#include "sim/common/child_stop.h"

#include <fmt/format.h>

#include "sim/common/stop_request.h"

namespace dfsim {

namespace {

void record(int s) {
  if (!stop_request()) stop_request() = s;
}

}  // namespace

ChildStopGuard::ChildStopGuard() {
  struct sigaction sa {};
  sa.sa_handler = record;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: waitpid returns on the signal
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGHUP, &sa, &old_hup_);
}

ChildStopGuard::~ChildStopGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
}

int ChildStopGuard::requested() { return stop_request(); }

void ChildStopGuard::forward(const std::vector<pid_t>& children) {
  if (forwarded_ || !requested()) return;
  forwarded_ = true;
  for (pid_t c : children) ::kill(c, requested());
}

std::string ChildStopGuard::reason() {
  int s = requested();
  return fmt::format("interrupted by {}", stop_signal_name(s));
}

}  // namespace dfsim

#pragma once
// A request to stop the current command, set from a signal handler (SIGINT, SIGTERM, or
// SIGALRM for --timeout) and polled by long loops: the simulation's watchdog and the output
// writers (which then fail with "interrupted" rather than commit).
#include <csignal>

namespace dfsim {

inline volatile std::sig_atomic_t& stop_request() {
  static volatile std::sig_atomic_t s = 0;
  return s;
}

}  // namespace dfsim

#pragma once
// A request to stop the current command, set from a signal handler (SIGINT, SIGTERM, SIGHUP, or
// SIGALRM for --timeout) and polled by long loops: the simulation's watchdog and the output
// writers (which then fail with "interrupted" rather than commit).
#include <csignal>

namespace dfsim {

inline volatile std::sig_atomic_t& stop_request() {
  static volatile std::sig_atomic_t s = 0;
  return s;
}

// The name of a stop signal, for messages ("a signal" for another); async-signal-safe.
inline const char* stop_signal_name(int s) {
  return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : s == SIGHUP ? "SIGHUP" : "a signal";
}

}  // namespace dfsim

#pragma once
// Stops a run that hits a limit (events processed, host seconds) or was asked to stop by a
// signal, and keeps the progress line. It wakes every `period` of simulated time, or at the
// models' next activity when that is later, while other activity is pending, so a run with
// nothing left to do still ends at once (and a deadlock is still seen as one).
#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <systemc>

#include "sim/common/time.h"
#include "sim/runtime/progress.h"

namespace dfsim {

class Scheduler;

struct WatchLimits {
  std::uint64_t max_events = 0;   // 0: none
  double timeout_seconds = 0;     // 0: none
  bool progress = false;          // keep a progress line on stderr (ProgressLine)
};

class Watchdog : public sc_core::sc_module {
 public:
  Watchdog(sc_core::sc_module_name n, const Scheduler& sched, WatchLimits limits, Tick period);

  // Set from a signal handler: the run stops at the next check with this signal's status.
  static volatile std::sig_atomic_t& pending_signal();

  const std::string& stop_reason() const { return reason_; }
  int stop_signal() const { return signal_; }

 private:
  void check();
  const Scheduler& sched_;
  WatchLimits limits_;
  Tick period_;
  std::chrono::steady_clock::time_point t0_;
  std::string reason_;
  int signal_ = 0;
  ProgressLine progress_;
  sc_core::sc_event tick_;
};

}  // namespace dfsim

#include "sim/runtime/watchdog.h"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/task_unit.h"
#include "sim/common/stop_request.h"
#include "sim/runtime/scheduler.h"

namespace dfsim {

volatile std::sig_atomic_t& Watchdog::pending_signal() { return stop_request(); }

Watchdog::Watchdog(sc_core::sc_module_name n, const Scheduler& sched, WatchLimits limits, Tick period)
    : sc_core::sc_module(n), sched_(sched), limits_(limits), period_(period), t0_(std::chrono::steady_clock::now()),
      progress_(limits.progress ? stderr : nullptr) {
  SC_HAS_PROCESS(Watchdog);
  SC_METHOD(check);
  sensitive << tick_;
  dont_initialize();
  tick_.notify(sc_core::sc_time::from_value(period_));
}

void Watchdog::check() {
  if (pending_signal() == SIGALRM) {  // the command's --timeout alarm (sim/app/run_control.h)
    reason_ = fmt::format("stopped at --timeout {} s (host time) before all tasks completed", limits_.timeout_seconds);
  } else if (int s = pending_signal()) {
    signal_ = s;
    reason_ = fmt::format("interrupted by signal {} ({})", s, stop_signal_name(s));
  } else if (limits_.max_events > 0 && ActivationCounter::value() >= limits_.max_events) {
    reason_ = fmt::format("stopped at --max-events {} before all tasks completed", limits_.max_events);
  } else if (limits_.timeout_seconds > 0 &&
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() >= limits_.timeout_seconds) {
    reason_ = fmt::format("stopped at --timeout {} s (host time) before all tasks completed", limits_.timeout_seconds);
  }
  progress_.update(static_cast<Tick>(sc_core::sc_time_stamp().value()), sched_.completed(), sched_.total(),
                   ActivationCounter::value());
  if (!reason_.empty()) {
    progress_.clear();
    sc_core::sc_stop();
    return;
  }
  // Keep watching only while the models still have something to do: every `period`, or at
  // the models' next activity when that is later (nothing can change before it, and a run
  // whose events are far apart in simulated time would otherwise wake the watchdog in
  // proportion to its simulated time, not its work).
  if (!sched_.finished() && sc_core::sc_pending_activity()) {
    const auto gap = static_cast<Tick>(sc_core::sc_time_to_pending_activity().value());
    tick_.notify(sc_core::sc_time::from_value(std::max(period_, gap)));
  } else {
    progress_.clear();
  }
}

}  // namespace dfsim

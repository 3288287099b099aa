#include "sim/runtime/release_timer.h"

#include "models/common/task_unit.h"

namespace dfsim {

ReleaseTimer::ReleaseTimer(sc_core::sc_module_name n, std::function<void(int, Tick)> release)
    : sc_core::sc_module(n), release_(std::move(release)) {
  SC_HAS_PROCESS(ReleaseTimer);
  SC_METHOD(fire);
  sensitive << ev_;
  dont_initialize();
}

void ReleaseTimer::at(Tick t, int inst) {
  pending_.emplace(t, inst);
  // A timed notification replaces a pending one only if earlier: ev_ stays at the earliest.
  ev_.notify(sc_core::sc_time::from_value(t - sim_now()));
}

void ReleaseTimer::fire() {
  ++ActivationCounter::value();
  const Tick now = sim_now();
  while (!pending_.empty() && pending_.top().first <= now) {
    const int inst = pending_.top().second;
    pending_.pop();
    release_(inst, now);
  }
  if (!pending_.empty()) ev_.notify(sc_core::sc_time::from_value(pending_.top().first - now));
}

}  // namespace dfsim

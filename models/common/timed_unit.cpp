#include "models/common/timed_unit.h"

#include <algorithm>

namespace dfsim {

TimedTaskUnit::TimedTaskUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec) : TaskUnit(n, sched, rec) {
  SC_HAS_PROCESS(TimedTaskUnit);
  SC_METHOD(done);
  sensitive << done_ev_;
  dont_initialize();
}

void TimedTaskUnit::complete_at(Tick end) {
  Tick now = sim_now();
  done_ev_.notify(sc_core::sc_time::from_value(std::max(end, now) - now));
}

void TimedTaskUnit::done() {
  ++ActivationCounter::value();
  finish(current_);
}

}  // namespace dfsim

#pragma once
// Releases task instances at their start times (a placed workload's start_ns): one SC_METHOD,
// woken at the earliest pending time, hands each due instance back to the scheduler.
#include <functional>
#include <queue>
#include <systemc>
#include <utility>
#include <vector>

#include "sim/common/time.h"

namespace dfsim {

class ReleaseTimer : public sc_core::sc_module {
 public:
  ReleaseTimer(sc_core::sc_module_name n, std::function<void(int, Tick)> release);
  // Calls release(inst, t) at time t (later than now).
  void at(Tick t, int inst);

 private:
  void fire();
  std::function<void(int, Tick)> release_;
  std::priority_queue<std::pair<Tick, int>, std::vector<std::pair<Tick, int>>, std::greater<>> pending_;
  sc_core::sc_event ev_;
};

}  // namespace dfsim

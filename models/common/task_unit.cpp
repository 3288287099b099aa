#include "models/common/task_unit.h"

#include "models/common/task_host.h"

namespace dfsim {

TaskUnit::TaskUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec)
    : sc_core::sc_module(n), sched_(sched), rec_(rec) {
  SC_HAS_PROCESS(TaskUnit);
  SC_METHOD(dispatch);
  sensitive << wake_ev_;
  dont_initialize();
}

void TaskUnit::push_ready(int inst) {
  ready_.push(inst);
  if (!busy_) wake_ev_.notify(sc_core::SC_ZERO_TIME);
}

void TaskUnit::wake() {
  if (!busy_) wake_ev_.notify(sc_core::SC_ZERO_TIME);
}

void TaskUnit::resume(int inst) {
  resumed_ = inst;
  wake_ev_.notify(sc_core::SC_ZERO_TIME);
}

void TaskUnit::dispatch() {
  ++ActivationCounter::value();
  if (resumed_ >= 0) {
    int inst = resumed_;
    resumed_ = -1;
    finish(inst);
    return;
  }
  if (busy_ || ready_.empty()) return;
  int inst = ready_.top();
  Tick now = sim_now();
  if (!sched_.reserve_outputs(inst, this)) {
    if (waiting_lx_ != inst) {
      waiting_lx_ = inst;
      waiting_since_ = now;
    }
    return;
  }
  ready_.pop();
  TaskRecord& r = rec_.tasks()[inst];
  if (waiting_lx_ == inst) {
    r.lx_wait = now - waiting_since_;
    waiting_lx_ = -1;
  }
  r.start = now;
  r.fired = true;
  busy_ = true;
  sched_.fired(inst, now);
  start(inst);
}

void TaskUnit::finish(int inst) {
  // A streaming consumer holds its unit until its producers have completed.
  if (!sched_.may_complete(inst, this)) return;
  busy_ = false;
  finish_detached(inst);
}

void TaskUnit::detach() {
  busy_ = false;
  if (!ready_.empty()) wake_ev_.notify(sc_core::SC_ZERO_TIME);
}

void TaskUnit::finish_detached(int inst) {
  rec_.tasks()[inst].end = sim_now();
  rec_.tasks()[inst].done = true;
  sched_.complete(inst, sim_now());
  if (!busy_ && !ready_.empty()) wake_ev_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace dfsim

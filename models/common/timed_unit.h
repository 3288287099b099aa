#pragma once
// A task unit whose running task's end is a time it can compute (PT, SFP, ring port, PCIe
// port): the derived start() records the task in current_ and calls complete_at(end); one
// SC_METHOD finishes it then.
#include "models/common/task_unit.h"

namespace dfsim {

class TimedTaskUnit : public TaskUnit {
 public:
  TimedTaskUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec);

 protected:
  // The running task (current_) completes at `end` (not before now).
  void complete_at(Tick end);
  int current_ = -1;

 private:
  void done();
  sc_core::sc_event done_ev_;
};

}  // namespace dfsim

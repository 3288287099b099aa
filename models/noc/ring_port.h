#pragma once
// A core's port onto the ring for "ring" tasks: copies an LX buffer to another core's LX
// (operand sharing, reduction steps) as one cut-through message.
#include <vector>

#include "models/common/task_unit.h"

namespace dfsim {

class Ring;
class LxScratchpad;

class RingPort : public TaskUnit {
 public:
  RingPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int core, Ring& ring,
           std::vector<LxScratchpad*>& lx);

 private:
  void start(int inst) override;
  void done();
  Ring& ring_;
  std::vector<LxScratchpad*>& lx_;
  int track_;
  int current_ = -1;
  sc_core::sc_event done_ev_;
};

}  // namespace dfsim

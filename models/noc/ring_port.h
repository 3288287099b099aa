#pragma once
// A core's port onto the ring for "ring" tasks: copies an LX buffer to another core's LX
// (operand sharing, reduction steps) as one cut-through message.
#include <vector>

#include "models/common/timed_unit.h"

namespace dfsim {

class Ring;
class LxScratchpad;

class RingPort : public TimedTaskUnit {
 public:
  RingPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int core, Ring& ring,
           std::vector<LxScratchpad*>& lx);

 private:
  void start(int inst) override;
  Ring& ring_;
  std::vector<LxScratchpad*>& lx_;
  int track_;
};

}  // namespace dfsim

#pragma once
// A unit whose task time is a closed form (PT, SFP): one event per task, at its completion.
// It spans the core's corelets; each corelet has its own trace track.
#include <vector>

#include "models/common/task_unit.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

class LxScratchpad;

class ComputeUnit : public TaskUnit {
 public:
  ComputeUnit(sc_core::sc_module_name n, Scheduler& sched, Recorder& rec, const ChipConfig& cfg,
              LxScratchpad& lx, int core, const char* kind);

  // Time of one task instance on `corelets` corelets, compute and LX feed overlapped.
  Tick duration(const Task& t, const TaskInstance& inst) const;

 protected:
  virtual std::uint64_t compute_cycles(const Task& t, int corelets) const = 0;
  const ChipConfig& cfg_;
  ClockDomain clk_;

 private:
  void start(int inst) override;
  void done();
  LxScratchpad& lx_;
  std::vector<int> tracks_;  // one per corelet
  sc_core::sc_event done_ev_;
  int current_ = -1;
};

}  // namespace dfsim

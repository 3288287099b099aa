#pragma once
// A unit whose task time is a closed form (PT, SFP): one event per task, at its completion.
// It spans the core's corelets; each corelet has its own trace track. Work that is not a task
// of the graph (a collective's reduction) books it with book(): a task that would overlap a
// booking starts after it.
#include <vector>

#include "models/common/timed_unit.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

class LxScratchpad;

class ComputeUnit : public TimedTaskUnit {
 public:
  ComputeUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec, const ChipConfig& cfg,
              LxScratchpad& lx, int core, const char* kind);

  // Bytes a task moves through the core's LX read and write ports.
  struct LxTraffic {
    std::uint64_t read = 0, write = 0;
  };

  // Time of one task instance on `corelets` corelets, compute and LX feed overlapped.
  Tick duration(const Task& t, const TaskInstance& inst) const;
  // Occupies every corelet for `d` from the earliest time >= `at` after the running task and
  // earlier bookings; returns that start.
  Tick book(Tick at, Tick d);

 protected:
  virtual std::uint64_t compute_cycles(const Task& t, int corelets) const = 0;
  // Default: the bytes of the instance's read and write regions.
  virtual LxTraffic lx_traffic(const Task& t, const TaskInstance& inst, int corelets) const;
  int corelets_of(const Task& t) const { return t.corelet >= 0 ? 1 : cfg_.core.corelets; }
  const ChipConfig& cfg_;
  ClockDomain clk_;

 private:
  void start(int inst) override;
  LxScratchpad& lx_;
  std::vector<int> tracks_;  // one per corelet
  Tick task_end_ = 0;                    // end of the last task started
  Tick booked_from_ = 0, booked_to_ = 0;  // span of the bookings not yet over (one hull)
};

}  // namespace dfsim

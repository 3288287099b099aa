#pragma once
// The PT units of one core (one systolic array per corelet) executing matmul tasks.
#include "models/common/compute_unit.h"
#include "models/pt/pt_timing.h"

namespace dfsim {

class PtUnit : public ComputeUnit {
 public:
  PtUnit(sc_core::sc_module_name n, TaskHost& s, Recorder& r, const ChipConfig& cfg, LxScratchpad& lx, int core)
      : ComputeUnit(n, s, r, cfg, lx, core, "pt") {}

  // Cycles and LX traffic of a matmul task on `corelets` arrays, at its operand precision.
  PtCost cost(const Task& t, int corelets) const;

 protected:
  std::uint64_t compute_cycles(const Task& t, int corelets) const override;
  // Operands as the dataflow streams them (re-reads per fold, broadcast once), the reads beyond
  // A and B (the previous accumulator) as declared, the declared writes, and the fp32 partial
  // sums of every k fold but the last, written and read back.
  LxTraffic lx_traffic(const Task& t, const TaskInstance& inst, int corelets) const override;
};

}  // namespace dfsim

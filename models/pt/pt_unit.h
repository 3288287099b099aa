#pragma once
// The PT units of one core (one systolic array per corelet) executing matmul tasks.
#include "models/common/compute_unit.h"

namespace dfsim {

class PtUnit : public ComputeUnit {
 public:
  PtUnit(sc_core::sc_module_name n, Scheduler& s, Recorder& r, const ChipConfig& cfg, LxScratchpad& lx, int core)
      : ComputeUnit(n, s, r, cfg, lx, core, "pt") {}

 protected:
  std::uint64_t compute_cycles(const Task& t, int corelets) const override;
};

}  // namespace dfsim

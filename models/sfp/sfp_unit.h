#pragma once
// The SFP vector units of one core (one per corelet) executing elementwise and reduction tasks.
#include "models/common/compute_unit.h"

namespace dfsim {

class SfpUnit : public ComputeUnit {
 public:
  SfpUnit(sc_core::sc_module_name n, TaskHost& s, Recorder& r, const ChipConfig& cfg, LxScratchpad& lx, int core)
      : ComputeUnit(n, s, r, cfg, lx, core, "sfp") {}
  // Time to add `elements` pairs of `dtype` on every corelet (a collective's reduction).
  Tick add_time(std::uint64_t elements, Dtype dtype) const;

 protected:
  std::uint64_t compute_cycles(const Task& t, int corelets) const override;

 private:
  // Rows of a reduce-class task: the elements of its first write (0 for other ops).
  std::uint64_t reduce_rows(const Task& t) const;
};

}  // namespace dfsim

#include "models/sfp/sfp_unit.h"

#include "models/sfp/sfp_timing.h"

namespace dfsim {

std::uint64_t SfpUnit::compute_cycles(const Task& t, int corelets) const {
  return sfp_cycles(cfg_.core.sfp, t.op, t.dtype, t.elements, corelets);
}

}  // namespace dfsim

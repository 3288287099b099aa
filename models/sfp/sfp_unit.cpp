#include "models/sfp/sfp_unit.h"

#include "models/sfp/sfp_timing.h"
#include "models/common/task_host.h"

namespace dfsim {

std::uint64_t SfpUnit::reduce_rows(const Task& t) const {
  if (sfp_function_class(t.op) != "reduce" || t.writes.empty()) return 0;
  const KernelGraph& g = sched_.graph();
  const Access& w = t.writes[0];
  if (w.buffer < 0 || w.buffer >= static_cast<int>(g.buffers.size())) return 0;
  unsigned bits = dtype_bits(g.buffers[w.buffer].dtype);
  return bits ? w.total_bytes() * 8 / bits : 0;
}

std::uint64_t SfpUnit::compute_cycles(const Task& t, int corelets) const {
  return sfp_cycles(cfg_.core.sfp, t.op, t.dtype, t.elements, corelets, reduce_rows(t));
}

Tick SfpUnit::add_time(std::uint64_t elements, Dtype dtype) const {
  return clk_.cycles(sfp_cycles(cfg_.core.sfp, "add", dtype, elements, cfg_.core.corelets));
}

}  // namespace dfsim

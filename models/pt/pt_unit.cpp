#include "models/pt/pt_unit.h"

#include "models/common/task_host.h"

namespace dfsim {

PtCost PtUnit::cost(const Task& t, int corelets) const {
  const PtConfig& pt = cfg_.core.pt;
  Dtype in = pt_operand_dtype(sched_.graph(), t);
  auto it = pt.simd.find(in);
  // Precisions the PT has no ways for (fp32, int32) run at one MAC per PE per cycle.
  int simd = it == pt.simd.end() ? 1 : it->second;
  return pt_matmul_cost(t.m, t.n, t.k, pt.rows, pt.cols, simd, corelets, pt.dataflow, in, pt.stream_broadcast,
                        pt.fold_stream_limit);
}

std::uint64_t PtUnit::compute_cycles(const Task& t, int corelets) const { return cost(t, corelets).cycles; }

ComputeUnit::LxTraffic PtUnit::lx_traffic(const Task& t, const TaskInstance& inst, int corelets) const {
  PtCost c = cost(t, corelets);
  LxTraffic x;
  x.read = c.feed_bytes + c.psum_bytes;
  const InstanceRegions reads = reads_of(sched_.graph(), inst);
  for (std::size_t i = 2; i < reads.size(); ++i) x.read += reads[i].total_bytes();
  for (const Region& r : writes_of(sched_.graph(), inst)) x.write += r.total_bytes();
  x.write += c.psum_bytes;
  return x;
}

}  // namespace dfsim

#include "models/pt/pt_unit.h"

#include "models/pt/pt_timing.h"

namespace dfsim {

std::uint64_t PtUnit::compute_cycles(const Task& t, int corelets) const {
  const PtConfig& pt = cfg_.core.pt;
  auto it = pt.simd.find(t.dtype);
  // Precisions the PT has no ways for (fp32, int32) run at one MAC per PE per cycle.
  int simd = it == pt.simd.end() ? 1 : it->second;
  return pt_matmul_cycles(t.m, t.n, t.k, pt.rows, pt.cols, simd, corelets);
}

}  // namespace dfsim

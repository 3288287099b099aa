// Lowering of a clone (compile.lx_planning "clone"): a graph input read by several kernels is
// loaded once into its kept LX buffer, each core its own slice, before its first reader.
#include <fmt/format.h>

#include "sim/compiler/lowering.h"

namespace dfsim {

void lower_clone(LowerContext& ctx, int tensor, const TensorSplit& split, const std::string& kernel) {
  const OpTensor& t = ctx.ops.tensors[static_cast<std::size_t>(tensor)];
  OperandSlicer s{&t, split.dim, false};
  const auto groups = divide_work(split.extent, split.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    SlicePattern p = s.slice(grp.base, grp.share);
    Task ld = group_task(fmt::format("{}/g{}/load_{}", kernel, gi, t.name), UnitKind::dma, "load", grp, t.dtype);
    ld.reads.push_back(hbm_slice(ctx.hbm[static_cast<std::size_t>(tensor)], p, s.unit_offset(), grp));
    ld.writes.push_back(whole(ctx.lx[static_cast<std::size_t>(tensor)], p.total_bytes()));
    ctx.builder.add_task(std::move(ld));
  }
}

}  // namespace dfsim

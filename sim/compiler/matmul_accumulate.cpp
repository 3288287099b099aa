// The accumulation step of a matmul's coarse K loop (see matmul_accumulate.h).
#include "sim/compiler/matmul_accumulate.h"

#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/compiler/graph_builder.h"
#include "sim/compiler/tiling.h"
#include "sim/compiler/work_division.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

int emit_accumulate(LowerContext& ctx, const std::string& prefix, const OpTensor& out, int before, int product, int sum) {
  const Shape& s = out.shape;
  const std::size_t r = s.size();
  const std::int64_t N = s.back(), M = r >= 2 ? s[r - 2] : 1;
  const std::uint64_t row = dtype_bytes(out.dtype, static_cast<std::uint64_t>(N));  // one row of one batch
  std::uint64_t batches = r > 2 ? dims_product(s, 0, r - 2) : 1;
  // A unit is a row of every batch, else (too large for three buffers of a tile) a single row
  // of the flattened [batches * M, N].
  std::int64_t units = M;
  if (batches > 1 && 3 * row * batches > ctx.budget) {
    units = M * static_cast<std::int64_t>(batches);
    batches = 1;
  }
  const std::uint64_t unit = row * batches;
  int last = -1;
  const std::vector<CoreGroup> groups = divide_work(units, ctx.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    auto tiles = tile_units(grp.share, 3 * unit, 0, ctx.budget, kPipelineTiles);
    if (!tiles)
      throw InputError(ctx.ops.file, "/tensors/" + out.name,
                       fmt::format("the coarse K loop's running sum needs {} bytes of LX per row, more than the {}-byte "
                                   "tile budget", 3 * unit, ctx.budget));
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& t = (*tiles)[ti];
      SlicePattern pat;
      pat.offset = static_cast<std::uint64_t>(grp.base + t.begin) * row;
      pat.bytes = static_cast<std::uint64_t>(t.size) * row;
      pat.elements = static_cast<std::uint64_t>(t.size * N) * batches;
      if (batches > 1) {
        pat.rows = batches;
        pat.stride = static_cast<std::uint64_t>(M) * row;
      }
      const std::string tp = fmt::format("{}/g{}/t{}", prefix, gi, ti);
      const int a = emit_load(ctx, tp + "/load_sum_before", tp + "/sum_before", before, out.dtype, pat, UnitStep::bytes(row), grp);
      const int b = emit_load(ctx, tp + "/load_product", tp + "/product", product, out.dtype, pat, UnitStep::bytes(row), grp);
      const int c = ctx.builder.add_buffer(tp + "/" + out.name, Space::lx, pat.total_bytes(), out.dtype);
      Task add = group_task(tp + "/add", UnitKind::sfp, "add", grp, out.dtype);
      add.elements = pat.elements;
      add.reads = {whole(a, pat.total_bytes()), whole(b, pat.total_bytes())};
      add.writes.push_back(whole(c, pat.total_bytes()));
      ctx.builder.add_task(std::move(add));
      Task store = group_task(tp + "/store_" + out.name, UnitKind::dma, "store", grp, out.dtype);
      store.reads.push_back(whole(c, pat.total_bytes()));
      store.writes.push_back(hbm_slice(sum, pat, UnitStep::bytes(row), grp));
      ctx.builder.add_task(std::move(store));
      if (gi == 0) last = c;
    }
  }
  return last;
}

}  // namespace dfsim

// Lowering of a reduction over the last dim whose rows do not fit LX (or whose compile.tiles
// names the reduced dim): each tile is a range of rows times a chunk of the row; the chunks
// of a row range run in order, each SFP reduction also reading the previous chunk's partial
// (the carry), and the last partial is stored.
#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

bool lower_row_chunks(LowerContext& ctx, const Op& op, const std::string& kernel, std::int64_t chunks) {
  const OpGraph& g = ctx.ops;
  const OpTensor& in = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const auto rank = static_cast<int>(in.shape.size());
  if (op.dim != rank - 1) return false;
  const std::int64_t d = in.shape.back(), rows = static_cast<std::int64_t>(in.elements()) / d;
  const std::uint64_t in_es = dtype_bytes(in.dtype, 1), out_es = dtype_bytes(out.dtype, 1);
  // Chunk length: whole sticks, so that a row range and its partial fit the budget with at
  // least one row; at least `chunks` chunks when asked.
  const std::int64_t stick = std::max<std::int64_t>(1, static_cast<std::int64_t>(ctx.stick_bytes / in_es));
  std::int64_t len = d;
  if (chunks > 1) len = (d + chunks - 1) / chunks;
  const std::uint64_t fit = ctx.budget > 2 * out_es ? (ctx.budget - 2 * out_es) / in_es : 0;
  if (u64(len) > fit) len = static_cast<std::int64_t>(fit) / stick * stick;
  if (len < 1) return false;
  const std::vector<TileRange> parts = split_even(d, len);
  const auto groups = divide_work(rows, ctx.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    // Rows per tile: as many as the longest chunk (and the partials) allow.
    const std::uint64_t per_row = u64(parts.front().size) * in_es + 2 * out_es;
    auto row_tiles = tile_units(grp.share, per_row, 0, ctx.budget, 1);
    if (!row_tiles) return false;
    for (std::size_t ri = 0; ri < row_tiles->size(); ++ri) {
      const TileRange& rt = (*row_tiles)[ri];
      const auto r0 = u64(grp.base + rt.begin), rn = u64(rt.size);
      int prev = -1;
      const std::uint64_t part_bytes = rn * out_es;
      for (std::size_t ci = 0; ci < parts.size(); ++ci) {
        const TileRange& c = parts[ci];
        const std::string prefix = fmt::format("{}/g{}/t{}/c{}", kernel, gi, ri, ci);
        SlicePattern sp;
        sp.offset = (r0 * u64(d) + u64(c.begin)) * in_es;
        sp.bytes = u64(c.size) * in_es;
        sp.rows = rn;
        sp.stride = rn > 1 ? u64(d) * in_es : 0;
        if (c.size == d) sp = SlicePattern{r0 * u64(d) * in_es, rn * u64(d) * in_es, 1, 0, 0};
        sp.elements = rn * u64(c.size);
        prev = emit_carried_reduce(ctx, prefix, op, in, ctx.hbm[static_cast<std::size_t>(op.inputs[0])], out.dtype, sp, UnitStep::bytes(u64(d) * in_es), grp, prev, part_bytes);
      }
      SlicePattern op_out{r0 * out_es, part_bytes, 1, 0, rn};
      emit_store(ctx, fmt::format("{}/g{}/t{}/store_{}", kernel, gi, ri, out.name), prev,
                 ctx.hbm[static_cast<std::size_t>(op.outputs[0])], out.dtype, op_out, UnitStep::bytes(out_es), grp);
    }
  }
  return true;
}

}  // namespace dfsim

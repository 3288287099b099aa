// Lowering of a reduction over the rows of a 2-D tensor (a column reduction) whose whole-stick
// column tile does not fit LX with all the rows: each tile is a stick of columns (or the
// core's share, if narrower) times a chunk of the rows; the chunks of a column tile run in
// order, each SFP accumulate also reading the previous chunk's partial (the carry), and the
// last partial is stored. Narrowing the columns instead would cut every row's run below a
// stick (64 B runs, 4 KiB apart), which no DMA streams at speed.
#include <fmt/format.h>

#include <algorithm>

#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

bool lower_column_chunks(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& in = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (in.shape.size() != 2 || op.dim != 0 || !op.tiles.empty()) return false;
  if (ctx.lx[static_cast<std::size_t>(op.inputs[0])] >= 0 || ctx.lx[static_cast<std::size_t>(op.outputs[0])] >= 0)
    return false;
  const std::int64_t rows = in.shape[0], cols = in.shape[1];
  const std::uint64_t in_es = dtype_bytes(in.dtype, 1), out_es = dtype_bytes(out.dtype, 1);
  const auto stick = std::max<std::int64_t>(1, static_cast<std::int64_t>(ctx.stick_bytes / in_es));
  const PointwisePlan p = plan_pointwise(g, op, ctx.cores);
  const auto groups = divide_work(p.extent, p.cores);
  // A column tile: one stick wide (the share if narrower). Applies only when it does not fit
  // with all the rows and its partial; then as many rows per chunk as the budget allows.
  const std::int64_t width = std::min(stick, groups.front().share);
  const std::uint64_t part_bytes = u64(width) * out_es;
  if (u64(rows * width) * in_es + part_bytes <= ctx.budget) return false;
  const std::uint64_t room = ctx.budget > 2 * part_bytes ? ctx.budget - 2 * part_bytes : 0;
  const auto chunk_rows = static_cast<std::int64_t>(room / (u64(width) * in_es));
  if (chunk_rows < 1) return false;
  const std::vector<TileRange> chunks = split_even(rows, chunk_rows);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    const std::vector<TileRange> tiles = split_sticks(grp.share, width, stick);
    for (std::size_t ti = 0; ti < tiles.size(); ++ti) {
      const std::int64_t c0 = grp.base + tiles[ti].begin, cn = tiles[ti].size;
      const std::uint64_t carry = u64(cn) * out_es;
      int prev = -1;
      for (std::size_t ri = 0; ri < chunks.size(); ++ri) {
        const TileRange& r = chunks[ri];
        SlicePattern sp;
        sp.offset = (u64(r.begin) * u64(cols) + u64(c0)) * in_es;
        sp.bytes = u64(cn) * in_es;
        sp.rows = u64(r.size);
        sp.stride = r.size > 1 ? u64(cols) * in_es : 0;
        sp.elements = u64(r.size * cn);
        prev = emit_carried_reduce(ctx, fmt::format("{}/g{}/t{}/r{}", kernel, gi, ti, ri), op, in,
                                   ctx.hbm[static_cast<std::size_t>(op.inputs[0])], out.dtype, sp, p.in[0].unit_offset(),
                                   grp, prev, carry);
      }
      emit_store(ctx, fmt::format("{}/g{}/t{}/store_{}", kernel, gi, ti, out.name), prev,
                 ctx.hbm[static_cast<std::size_t>(op.outputs[0])], out.dtype, p.out.slice(c0, cn), p.out.unit_offset(), grp);
    }
  }
  return true;
}

}  // namespace dfsim

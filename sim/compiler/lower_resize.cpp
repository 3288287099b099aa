// Lowering of reshape, slice and split: DMA through LX. A reshape that keeps the byte layout
// is free (its output aliases the input's HBM buffer, compile.cpp); otherwise it is a
// restickify: load, one SFP copy pass per tile (elements change places inside sticks), store.
#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// A contiguous or strided run pattern.
SlicePattern pattern(std::uint64_t offset, std::uint64_t bytes, std::uint64_t rows, std::uint64_t stride,
                     std::uint64_t elements) {
  SlicePattern p;
  p.offset = offset;
  p.bytes = rows > 1 && stride == bytes ? bytes * rows : bytes;
  p.rows = rows > 1 && stride != bytes ? rows : 1;
  p.stride = p.rows > 1 ? stride : 0;
  p.elements = elements;
  return p;
}

void fail_fit(const LowerContext& ctx, const Op& op, std::uint64_t need) {
  throw InputError(ctx.ops.file, "/ops/" + std::to_string(op.index),
                   fmt::format("{}: one unit needs {} bytes of LX, more than the {}-byte tile budget", op.op, need, ctx.budget));
}

// Copies the part [start, start + len*step) of `dim` of the input into output `out` (slice,
// split): split over the outer dims when there are any, else over the sliced dim.
void copy_part(LowerContext& ctx, const Op& op, const std::string& kernel, int out, std::int64_t start,
               std::int64_t step, const std::string& tag) {
  const OpTensor& x = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = ctx.ops.tensors[static_cast<std::size_t>(out)];
  const auto d = static_cast<std::size_t>(op.dim);
  const std::uint64_t outer = dims_product(x.shape, 0, d), inner = dims_product(x.shape, d + 1, x.shape.size());
  const std::uint64_t size = u64(x.shape[d]), n = u64(y.shape[d]);
  const std::uint64_t es = dtype_bytes(x.dtype, inner);  // bytes of one index of `dim`
  const bool by_outer = outer > 1;
  const std::int64_t extent = by_outer ? static_cast<std::int64_t>(outer) : static_cast<std::int64_t>(n);
  const std::uint64_t unit = by_outer ? n * es : es;
  const auto groups = divide_work(extent, ctx.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    auto tiles = tile_units(grp.share, unit, 0, ctx.budget, kPipelineTiles);
    if (!tiles) fail_fit(ctx, op, unit);
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& t = (*tiles)[ti];
      const auto b = u64(grp.base + t.begin), k = u64(t.size);
      const std::string prefix = fmt::format("{}/{}g{}/t{}", kernel, tag, gi, ti);
      const std::uint64_t bytes = k * unit, elements = bytes / dtype_bytes(x.dtype, 1);
      int lx = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, bytes, x.dtype);
      // Loads: one per outer index when both the outer dims and a step > 1 stride the input.
      const std::uint64_t loads = by_outer && step > 1 ? k : 1;
      for (std::uint64_t l = 0; l < loads; ++l) {
        SlicePattern in;
        std::uint64_t unit_off = 0;
        if (!by_outer) {
          in = pattern((u64(start) + b * u64(step)) * es, es, k, u64(step) * es, elements);
          unit_off = u64(step) * es;
        } else if (step == 1) {
          in = pattern((b * size + u64(start)) * es, n * es, k, size * es, elements);
          unit_off = size * es;
        } else {
          in = pattern(((b + l) * size + u64(start)) * es, es, n, u64(step) * es, elements / loads);
          unit_off = size * es;
        }
        Task ld = group_task(prefix + "/load_" + x.name + (loads > 1 ? fmt::format(".{}", l) : ""), UnitKind::dma, "load",
                             grp, x.dtype);
        ld.reads.push_back(hbm_slice(ctx.hbm[static_cast<std::size_t>(op.inputs[0])], in, UnitStep::bytes(unit_off), grp));
        Access w;
        w.buffer = lx;
        w.offset.beta = static_cast<std::int64_t>(l * (bytes / loads));
        w.bytes = bytes / loads;
        ld.writes.push_back(w);
        ctx.builder.add_task(std::move(ld));
      }
      emit_store(ctx, prefix + "/store_" + y.name, lx, ctx.hbm[static_cast<std::size_t>(out)], y.dtype,
                 pattern(b * unit, bytes, 1, 0, elements), UnitStep::bytes(unit), grp);
    }
  }
}

}  // namespace

bool reshape_is_alias(const OpGraph& g, const Op& op, std::uint64_t stick_bytes) {
  const OpTensor& x = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const std::uint64_t a = dtype_bytes(x.dtype, u64(x.shape.back())), b = dtype_bytes(y.dtype, u64(y.shape.back()));
  return a == b || (a % stick_bytes == 0 && b % stick_bytes == 0);
}

void lower_reshape(LowerContext& ctx, const Op& op, const std::string& kernel) {
  if (reshape_is_alias(ctx.ops, op, ctx.stick_bytes)) return;  // an alias: nothing moves
  // Restickify: the flat bytes are the same; each output row is re-laid into whole sticks.
  const OpTensor& x = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = ctx.ops.tensors[static_cast<std::size_t>(op.outputs[0])];
  // The copy is flat: view both as rows of `row` elements, the output's last dim or, when two
  // such rows do not fit a tile, the largest divisor of the element count that does.
  const auto total = static_cast<std::int64_t>(y.elements());
  const auto fit = static_cast<std::int64_t>(ctx.budget / (2 * dtype_bytes(y.dtype, 1)));
  std::int64_t row = y.shape.back();
  if (row > fit)
    for (row = std::max<std::int64_t>(fit, 1); total % row != 0;) --row;
  const std::int64_t rows = total / row;
  OpTensor xv{x.name, {rows, row}, x.dtype}, yv{y.name, {rows, row}, y.dtype};
  OperandSlicer in{&xv, 0, false}, out{&yv, 0, false};
  for (const CoreGroup& grp : divide_work(rows, ctx.cores)) {
    auto tiles = tile_units(grp.share, 2 * out.unit_bytes(), 0, ctx.budget, kPipelineTiles);
    if (!tiles) fail_fit(ctx, op, 2 * out.unit_bytes());
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& t = (*tiles)[ti];
      const std::string prefix = fmt::format("{}/g{}/t{}", kernel, grp.first, ti);
      SlicePattern sp = in.slice(grp.base + t.begin, t.size);
      int src = emit_load(ctx, prefix + "/load_" + x.name, prefix + "/" + x.name, ctx.hbm[static_cast<std::size_t>(op.inputs[0])],
                          x.dtype, sp, in.unit_offset(), grp);
      int dst = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, sp.total_bytes(), y.dtype);
      Task c = group_task(prefix + "/restickify", UnitKind::sfp, "copy", grp, y.dtype);
      c.elements = sp.elements;
      c.reads.push_back(whole(src, sp.total_bytes()));
      c.writes.push_back(whole(dst, sp.total_bytes()));
      ctx.builder.add_task(std::move(c));
      emit_store(ctx, prefix + "/store_" + y.name, dst, ctx.hbm[static_cast<std::size_t>(op.outputs[0])], y.dtype,
                 out.slice(grp.base + t.begin, t.size), out.unit_offset(), grp);
    }
  }
}

void lower_slice(LowerContext& ctx, const Op& op, const std::string& kernel) {
  if (op.op == "slice") return copy_part(ctx, op, kernel, op.outputs[0], op.start, op.step, "");
  std::int64_t start = 0;  // split: each output is a slice of step 1
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    copy_part(ctx, op, kernel, op.outputs[i], start, 1, fmt::format("o{}/", i));
    start += op.sizes[i];
  }
}

}  // namespace dfsim

// Lowering of cat. Along the stick dim (the last of the device layout, where each input is
// one block of the output): each distinct input is split over the cores on its outermost
// non-trivial dim and tiled; per tile its slice is DMA-loaded into LX once and DMA-stored to
// every place the input takes in the output (cat(x, x) reads x once and writes it twice).
// Along another dim: a select over the output (lower_cat_select), as the card runs it.
#include <fmt/format.h>

#include <algorithm>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// cat along a dim other than the stick dim, as the card runs it: an elementwise select over
// the output, which loads a tile of every input for every output tile and keeps the part
// the mask selects (a masked-off load still moves its tile). k inputs cost k output-sized
// reads and one output-sized write: cat([x, x], dim=0) of [R, C] moves 6·R·C·2 bytes, where
// a copy would move 3·R·C·2 (the card's cat0 runs at half of cat1's rate for the same tensor,
// docs/accuracy.md). The output is cut into rows of its dims after the cat dim (`inner`
// elements, contiguous), divided over the cores and tiled; input i's tile is as many of its
// own rows (all of them when it has fewer), from the tile's position modulo its row count,
// wrapping around its end. Returns false when one row of every input and the output does not
// fit the tile budget (the copy lowering then runs).
bool lower_cat_select(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const Dtype dt = y.dtype;
  const auto d = static_cast<std::size_t>(op.dim);
  const std::uint64_t inner = dims_product(y.shape, d + 1, y.shape.size());
  const std::uint64_t row_bytes = dtype_bytes(dt, inner);
  const auto k = static_cast<std::uint64_t>(op.inputs.size());
  const auto out_rows = static_cast<std::int64_t>(dims_product(y.shape, 0, d + 1));
  if (inner == 0 || (k + 1) * row_bytes > ctx.budget) return false;
  // Every core's tiles first, so that nothing is emitted when a share cannot be tiled.
  struct CoreTiles {
    CoreGroup core;  // one core
    std::vector<TileRange> tiles;
  };
  std::vector<CoreTiles> plan;
  for (const CoreGroup& grp : divide_work(out_rows, ctx.cores)) {
    auto tiles = tile_units(grp.share, (k + 1) * row_bytes, 0, ctx.budget, kPipelineTiles);
    if (!tiles) return false;
    for (int c = 0; c < grp.count; ++c) {
      CoreTiles ct{CoreGroup{grp.first + c, 1, grp.share, grp.start(grp.first + c)}, {}};
      ct.tiles = *tiles;
      plan.push_back(std::move(ct));
    }
  }
  if (ctx.report) {
    KernelReport& r = ctx.report->kernel(kernel);
    r.split = fmt::format("{} rows of {} B over {} cores", out_rows, row_bytes, std::min<std::int64_t>(out_rows, ctx.cores));
    r.why = fmt::format("cat along dim {}, not the stick dim: a select over the output, every output tile loading a tile "
                        "of each of the {} inputs (as the card runs it)",
                        d, k);
  }
  auto run = [&](std::uint64_t first_row, std::uint64_t rows) {
    SlicePattern p;
    p.elements = rows * inner;
    p.offset = first_row * row_bytes;
    p.bytes = rows * row_bytes;
    return p;
  };
  for (const CoreTiles& ct : plan)
    for (std::size_t ti = 0; ti < ct.tiles.size(); ++ti) {
      const auto o = static_cast<std::uint64_t>(ct.core.base + ct.tiles[ti].begin);  // first output row
      const auto n = static_cast<std::uint64_t>(ct.tiles[ti].size);
      const std::string prefix = fmt::format("{}/c{}/t{}", kernel, ct.core.first, ti);
      Task sel = group_task(prefix + "/select", UnitKind::sfp, "where", ct.core, dt);
      sel.elements = n * inner;
      for (std::size_t i = 0; i < op.inputs.size(); ++i) {
        const int t = op.inputs[i];
        const OpTensor& x = g.tensors[static_cast<std::size_t>(t)];
        const std::uint64_t rows = dims_product(x.shape, 0, d + 1);
        if (rows == 0) continue;  // an empty input
        const std::uint64_t m = std::min(n, rows), start = o % rows, head = std::min(m, rows - start);
        const std::string name = fmt::format("{}/load_{}.{}", prefix, x.name, i);
        int buf = emit_load(ctx, name, fmt::format("{}/{}.{}", prefix, x.name, i), ctx.hbm[static_cast<std::size_t>(t)],
                            dt, run(start, head), UnitStep{}, ct.core);
        sel.reads.push_back(whole(buf, head * row_bytes));
        if (head < m) {  // the tile wraps around the input's end
          buf = emit_load(ctx, name + "b", fmt::format("{}/{}.{}b", prefix, x.name, i), ctx.hbm[static_cast<std::size_t>(t)],
                          dt, run(0, m - head), UnitStep{}, ct.core);
          sel.reads.push_back(whole(buf, (m - head) * row_bytes));
        }
      }
      const int out = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, n * row_bytes, dt);
      sel.writes.push_back(whole(out, n * row_bytes));
      ctx.builder.add_task(std::move(sel));
      emit_store(ctx, prefix + "/store_" + y.name, out, ctx.hbm[static_cast<std::size_t>(op.outputs[0])], dt, run(o, n), UnitStep{},
                 ct.core);
    }
  return true;
}

}  // namespace

void lower_cat(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (op.dim != stored_order(g, y).back() && lower_cat_select(ctx, op, kernel)) return;
  const Dtype dt = y.dtype;
  const auto d = static_cast<std::size_t>(op.dim);
  const std::size_t rank = y.shape.size();
  // The output as [outer, row]: outer = dims before d; input i fills the columns
  // [pos_i, pos_i + x_i.shape[d] * inner) of every row.
  const std::uint64_t inner = dims_product(y.shape, d + 1, rank);
  const std::uint64_t yrow = static_cast<std::uint64_t>(y.shape[d]) * inner;
  std::vector<std::uint64_t> pos;
  std::uint64_t at = 0;
  for (int t : op.inputs) {
    pos.push_back(at * inner);
    at += static_cast<std::uint64_t>(g.tensors[static_cast<std::size_t>(t)].shape[d]);
  }
  auto bytes = [&](std::uint64_t elements) { return dtype_bytes(dt, elements); };
  // An offset in the tensors: whole bytes, or an int4 slice that would start inside one.
  auto offset_of = [&](std::uint64_t elements) {
    if ((elements * dtype_bits(dt)) % 8 != 0)
      throw HalfByteSplit("a slice would start at element " + std::to_string(elements) + ", half a byte into " +
                          std::string(dtype_name(dt)) + " data");
    return elements * dtype_bits(dt) / 8;
  };
  auto step_of = [&](std::uint64_t elements) { return UnitStep{elements * dtype_bits(dt)}; };

  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const int t = op.inputs[i];
    if (std::find(op.inputs.begin(), op.inputs.begin() + static_cast<std::ptrdiff_t>(i), t) !=
        op.inputs.begin() + static_cast<std::ptrdiff_t>(i))
      continue;  // a repeated input: its first occurrence stores every copy
    std::vector<std::uint64_t> places;
    for (std::size_t k = i; k < op.inputs.size(); ++k)
      if (op.inputs[k] == t) places.push_back(pos[k]);
    const OpTensor& x = g.tensors[static_cast<std::size_t>(t)];
    // Split the outermost dim of size > 1 (all dims before it are 1, so a slice of it is
    // one contiguous run of x).
    std::size_t s = 0;
    while (s + 1 < rank && x.shape[s] == 1) ++s;
    const std::uint64_t unit = dims_product(x.shape, s + 1, rank);  // x elements per unit of s
    const std::uint64_t row = static_cast<std::uint64_t>(x.shape[d]) * inner;
    // In y, a unit of s is `mid` rows of `row` elements, yrow apart (s before d), or one run.
    const std::uint64_t mid = s < d ? dims_product(x.shape, s + 1, d) : 0;
    auto groups = divide_work(x.shape[s], ctx.cores);
    const std::string suffix = i > 0 ? fmt::format(".{}", i) : "";
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const CoreGroup& grp = groups[gi];
      auto tiles = tile_units(grp.share, bytes(unit), 0, ctx.budget, kPipelineTiles);
      if (!tiles)
        throw InputError(g.file, "/ops/" + std::to_string(op.index),
                         fmt::format("cat: one slice of \"{}\" needs {} bytes of LX, more than the {}-byte tile "
                                     "budget (tiling inside a slice is not supported yet)",
                                     x.name, bytes(unit), ctx.budget));
      for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
        const TileRange& tile = (*tiles)[ti];
        const auto begin = static_cast<std::uint64_t>(grp.base + tile.begin);
        const auto len = static_cast<std::uint64_t>(tile.size);
        const std::string prefix = fmt::format("{}/g{}/t{}", kernel, gi, ti);
        SlicePattern xp;
        xp.elements = len * unit;
        xp.offset = offset_of(begin * unit);
        xp.bytes = bytes(len * unit);
        int xt = emit_load(ctx, prefix + "/load_" + x.name + suffix, prefix + "/" + x.name + suffix,
                           ctx.hbm[static_cast<std::size_t>(t)], dt, xp, step_of(unit), grp);
        for (std::size_t k = 0; k < places.size(); ++k) {
          SlicePattern yp;
          yp.elements = xp.elements;
          std::uint64_t step = unit;  // y elements from one unit of s to the next
          if (s < d && len * mid > 1) {
            step = mid * yrow;
            yp.offset = offset_of(begin * step + places[k]);
            yp.bytes = bytes(row);
            yp.rows = len * mid;
            yp.stride = bytes(yrow);
          } else {
            if (s < d) step = mid * yrow;
            yp.offset = offset_of((s < d ? begin * step : begin * unit) + places[k]);
            yp.bytes = xp.bytes;
          }
          std::string name = prefix + "/store_" + y.name + suffix + (places.size() > 1 ? fmt::format(".{}", k) : "");
          emit_store(ctx, name, xt, ctx.hbm[op.outputs[0]], dt, yp, step_of(step), grp);
        }
      }
    }
  }
}

}  // namespace dfsim

// Lowering of cat: each distinct input is split over the cores on its outermost non-trivial
// dim and tiled; per tile its slice is DMA-loaded into LX once and DMA-stored to every place
// the input takes in the output (cat(x, x) reads x once and writes it twice).
#include <fmt/format.h>

#include <algorithm>

#include "sim/common/error.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

void lower_cat(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
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
        xp.offset = bytes(begin * unit);
        xp.bytes = bytes(len * unit);
        int xt = emit_load(ctx, prefix + "/load_" + x.name + suffix, prefix + "/" + x.name + suffix,
                           ctx.hbm[static_cast<std::size_t>(t)], dt, xp, bytes(unit), grp);
        for (std::size_t k = 0; k < places.size(); ++k) {
          SlicePattern yp;
          yp.elements = xp.elements;
          std::uint64_t step = unit;  // y elements from one unit of s to the next
          if (s < d && len * mid > 1) {
            step = mid * yrow;
            yp.offset = bytes(begin * step + places[k]);
            yp.bytes = bytes(row);
            yp.rows = len * mid;
            yp.stride = bytes(yrow);
          } else {
            if (s < d) step = mid * yrow;
            yp.offset = bytes((s < d ? begin * step : begin * unit) + places[k]);
            yp.bytes = xp.bytes;
          }
          std::string name = prefix + "/store_" + y.name + suffix + (places.size() > 1 ? fmt::format(".{}", k) : "");
          emit_store(ctx, name, xt, ctx.hbm[op.outputs[0]], dt, yp, bytes(step), grp);
        }
      }
    }
  }
}

}  // namespace dfsim

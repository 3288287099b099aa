// Lowering of embedding (a row gather by DMA) and kv_write (only the new rows move, stored in
// place into the cache's HBM buffer, which the updated cache aliases: compile.cpp).
#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

[[noreturn]] void fail_fit(const LowerContext& ctx, const Op& op, std::uint64_t need) {
  throw InputError(ctx.ops.file, "/ops/" + std::to_string(op.index),
                   fmt::format("{}: one row needs {} bytes of LX, more than the {}-byte tile budget", op.op, need, ctx.budget));
}

}  // namespace

void lower_embedding(LowerContext& ctx, const Op& op, const std::string& kernel) {
  // The ids are data: the compiler cannot know which rows a tile gathers. Id i is taken to
  // read table row (i * gap) mod V, gap = max(1, V / N): N rows spread over the table, one
  // DMA run per row (a strided gather). Each core takes a range of ids.
  const OpTensor& table = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& ids = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[1])];
  const OpTensor& y = ctx.ops.tensors[static_cast<std::size_t>(op.outputs[0])];
  const std::int64_t v = table.shape[0], n = static_cast<std::int64_t>(ids.elements());
  const std::uint64_t row = dtype_bytes(table.dtype, u64(table.shape[1]));
  const std::int64_t gap = std::max<std::int64_t>(1, v / n);
  const auto groups = divide_work(n, ctx.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    // A tile gathers at most the table's V rows (a run of distinct rows): a table smaller than
    // a core's share of ids (a token-type table of one row) is read once per tile.
    auto tiles = tile_units(grp.share, row, 0, std::min<std::uint64_t>(ctx.budget, row * u64(v)), kPipelineTiles);
    if (!tiles) fail_fit(ctx, op, row);
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& t = (*tiles)[ti];
      // One template per core when rows wrap around the table (more ids than rows).
      for (int c = grp.first; c < grp.first + grp.count; ++c) {
        const bool spmd = n <= v;
        if (spmd && c > grp.first) break;
        CoreGroup one = spmd ? grp : CoreGroup{c, 1, grp.share, grp.start(c)};
        const std::int64_t b = one.base + t.begin, k = t.size;
        const std::string prefix = spmd ? fmt::format("{}/g{}/t{}", kernel, gi, ti) : fmt::format("{}/c{}/t{}", kernel, c, ti);
        // (The ids themselves, 4 bytes per row, are the DMA's descriptors: not modelled as a load.)
        SlicePattern rows;
        const std::int64_t first = spmd ? b * gap : b % std::max<std::int64_t>(1, v - k + 1);
        rows.offset = u64(first) * row;
        rows.bytes = row;
        rows.rows = u64(k);
        rows.stride = u64(gap) * row;
        if (gap == 1 || k == 1) rows = SlicePattern{u64(first) * row, row * u64(k), 1, 0, 0};
        rows.elements = u64(k) * u64(table.shape[1]);
        int lx = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, row * u64(k), y.dtype);
        Task ld = group_task(prefix + "/gather_" + table.name, UnitKind::dma, "load", one, table.dtype);
        ld.reads.push_back(hbm_slice(ctx.hbm[static_cast<std::size_t>(op.inputs[0])], rows, UnitStep::bytes(u64(gap) * row), one));
        ld.writes.push_back(whole(lx, row * u64(k)));
        ctx.builder.add_task(std::move(ld));
        SlicePattern out{u64(b) * row, row * u64(k), 1, 0, rows.elements};
        emit_store(ctx, prefix + "/store_" + y.name, lx, ctx.hbm[static_cast<std::size_t>(op.outputs[0])], y.dtype, out,
                   UnitStep::bytes(row), one);
      }
    }
  }
}

void lower_kv_write(LowerContext& ctx, const Op& op, const std::string& kernel) {
  // cache [..., Lmax, D], new [..., T, D]: per index of the leading dims, T rows of D move into
  // rows [position, position + T) of the cache. Leading indices are split over the cores.
  const OpTensor& cache = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& fresh = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[1])];
  const std::size_t r = cache.shape.size();
  const std::int64_t outer = static_cast<std::int64_t>(dims_product(cache.shape, 0, r - 2));
  const std::uint64_t row = dtype_bytes(cache.dtype, u64(cache.shape[r - 1]));
  const std::uint64_t block = row * u64(fresh.shape[r - 2]), stride = row * u64(cache.shape[r - 2]);
  if (block > ctx.budget || outer < ctx.cores) {
    // Fewer leading indices than cores (a 2-D cache, one sequence's KV heads), or a leading
    // index's T new rows beyond the tile budget: the rows move in tiles, the (index, tile)
    // pairs dealt round-robin to the cores.
    const std::int64_t t_rows = fresh.shape[r - 2];
    // Each leading index's rows in parts (enough for every core), each part in tiles.
    const auto parts = divide_work(t_rows, std::max(1, ctx.cores / static_cast<int>(std::min<std::int64_t>(outer, ctx.cores))));
    int next = 0;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::size_t pi = 0; pi < parts.size(); ++pi)
        for (int c = parts[pi].first; c < parts[pi].first + parts[pi].count; ++c, ++next) {
          const std::int64_t begin = parts[pi].start(c), size = std::min(parts[pi].share, t_rows - begin);
          if (size <= 0) continue;
          auto tiles = tile_units(size, row, 0, ctx.budget, kPipelineTiles);
          if (!tiles) fail_fit(ctx, op, row);
          const CoreGroup one{next % ctx.cores, 1, 1, 0};
          for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
            const TileRange& t = (*tiles)[ti];
            const std::string prefix = fmt::format("{}/o{}/p{}/t{}", kernel, o, c, ti);
            const std::uint64_t bytes = u64(t.size) * row, first = u64(begin + t.begin);
            SlicePattern in{(u64(o) * u64(t_rows) + first) * row, bytes, 1, 0, bytes / dtype_bytes(cache.dtype, 1)};
            int lx = emit_load(ctx, prefix + "/load_" + fresh.name, prefix + "/" + fresh.name,
                               ctx.hbm[static_cast<std::size_t>(op.inputs[1])], fresh.dtype, in, UnitStep{}, one);
            SlicePattern out{u64(o) * stride + (u64(op.position) + first) * row, bytes, 1, 0, in.elements};
            emit_store(ctx, prefix + "/store_" + cache.name, lx, ctx.hbm[static_cast<std::size_t>(op.outputs[0])],
                       cache.dtype, out, UnitStep{}, one);
          }
        }
    return;
  }
  const auto groups = divide_work(outer, ctx.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    auto tiles = tile_units(grp.share, block, 0, ctx.budget, kPipelineTiles);
    if (!tiles) fail_fit(ctx, op, block);
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& t = (*tiles)[ti];
      const auto b = u64(grp.base + t.begin), k = u64(t.size);
      const std::string prefix = fmt::format("{}/g{}/t{}", kernel, gi, ti);
      SlicePattern in{b * block, k * block, 1, 0, k * block / dtype_bytes(cache.dtype, 1)};
      int lx = emit_load(ctx, prefix + "/load_" + fresh.name, prefix + "/" + fresh.name,
                         ctx.hbm[static_cast<std::size_t>(op.inputs[1])], fresh.dtype, in, UnitStep::bytes(block), grp);
      SlicePattern out{b * stride + u64(op.position) * row, block, k, k > 1 ? stride : 0, in.elements};
      emit_store(ctx, prefix + "/store_" + cache.name, lx, ctx.hbm[static_cast<std::size_t>(op.outputs[0])], cache.dtype,
                 out, UnitStep::bytes(stride), grp);
    }
  }
}

}  // namespace dfsim

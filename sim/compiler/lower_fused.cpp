// Lowering of a fused kernel of rowwise ops (elementwise chains, reductions, softmax,
// layernorm, rmsnorm, rope): every op is divided over the cores along the same dim; per tile
// each input is loaded once, each op runs as one or more SFP steps whose intermediates stay
// in LX, and only tensors used outside the kernel are stored.
#include <fmt/format.h>

#include <map>
#include <set>

#include "sim/common/error.h"
#include "sim/compiler/fused_plan.h"
#include "sim/compiler/hbm_layout.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {


// The coarse-tile loop (compile.tiles on the split dim): `n` ranges of the split dim, run one
// after the other, each divided over the cores. One range when no loop is asked for.
std::vector<TileRange> coarse_ranges(const LowerContext& ctx, const FusedPlan& p) {
  std::int64_t n = 1;
  for (int oi : p.ops) {
    const Op& op = ctx.ops.ops[static_cast<std::size_t>(oi)];
    for (const auto& [dim, count] : op.tiles)
      if (dim == fmt::format("d{}", p.out_split_dim)) n = std::max(n, count);
  }
  return split_even(p.extent, (p.extent + n - 1) / n);
}

}  // namespace

void lower_fused(LowerContext& ctx, const std::vector<int>& ops, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  FusedPlan p = plan_fused(g, *ctx.uses, ops, ctx.cores);
  const Op& first = g.ops[static_cast<std::size_t>(ops.front())];
  auto kept = [&](const FusedSlot& s) { return s.tensor >= 0 && (s.external_in || s.stored) && ctx.lx[s.tensor] >= 0; };
  // The LX of one tile: every slot except those kept in LX and broadcast operands (loaded once).
  std::uint64_t unit = 0, fixed = 0;
  std::vector<int> broadcast(p.slots.size(), -1);
  std::vector<TileRange> ranges = coarse_ranges(ctx, p);
  const CoreGroup last_group = divide_work(ranges.front().size, p.cores).back();
  const int used = last_group.first + last_group.count;  // cores the kernel runs on
  std::uint64_t budget = ctx.budget;
  std::vector<bool> once(p.slots.size(), false);  // loaded once for the kernel, multicast
  for (std::size_t i = 0; i < p.slots.size(); ++i) {
    const FusedSlot& s = p.slots[i];
    if (kept(s)) continue;
    if (s.external_in && !s.slicer.follows_split()) {
      once[i] = true;
      budget -= std::min(budget, s.fixed);
      continue;
    }
    unit += s.unit;
    fixed += s.fixed;
  }
  // A lone norm whose row does not fit: two passes over chunks of the row.
  if (unit + fixed > budget && ops.size() == 1 && ranges.size() == 1 &&
      find_op_info(first.op)->kind == OpKind::normalize && lower_norm_chunks(ctx, first, kernel))
    return;
  for (std::size_t i = 0; i < p.slots.size(); ++i)
    if (once[i]) {
      const OpTensor& t = *p.slots[i].slicer.tensor;
      broadcast[i] = emit_broadcast_load(ctx, kernel + "/load_" + t.name, kernel + "/" + t.name, ctx.hbm[p.slots[i].tensor],
                                         t.dtype, p.slots[i].slicer.slice(0, 1), used);
    }
  const bool lone_reduction = ops.size() == 1 && find_op_info(first.op)->kind == OpKind::reduce;
  for (std::size_t ri = 0; ri < ranges.size(); ++ri) {
    const TileRange& range = ranges[ri];
    auto groups = divide_work(range.size, p.cores);
    std::string loop = ranges.size() > 1 ? fmt::format("/i{}", ri) : "";
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const CoreGroup& grp = groups[gi];
      auto tiles = layout_tiles(g, g.tensors[static_cast<std::size_t>(first.outputs[0])], p.out_split_dim, grp.share, unit,
                                fixed, budget, lone_reduction ? 1 : kPipelineTiles);
      if (!tiles)
        throw InputError(g.file, fmt::format("/ops/{}", first.index),
                         fmt::format("{}: one row needs {} bytes of LX, more than the {}-byte tile budget", first.op,
                                     unit + fixed, budget));
      for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
        const TileRange& tile = (*tiles)[ti];
        const std::int64_t begin = range.begin + grp.base + tile.begin;
        const std::string prefix = fmt::format("{}{}/g{}/t{}", kernel, loop, gi, ti);
        // The access of each slot in this tile (loads of external inputs first).
        std::vector<Access> at(p.slots.size());
        std::vector<std::uint64_t> elems(p.slots.size(), 0);
        for (std::size_t i = 0; i < p.slots.size(); ++i) {
          const FusedSlot& s = p.slots[i];
          elems[i] = s.unit_elems * static_cast<std::uint64_t>(tile.size) + s.fixed_elems;
          const std::uint64_t bytes = s.unit * static_cast<std::uint64_t>(tile.size) + s.fixed;
          if (kept(s)) {
            at[i] = kept_part(ctx.lx[s.tensor], s.slicer, tile);
          } else if (broadcast[i] >= 0) {
            at[i] = whole(broadcast[i], s.fixed);
          } else if (s.external_in) {
            const OpTensor& t = *s.slicer.tensor;
            SlicePattern sp = s.slicer.slice(begin, tile.size);
            at[i] = whole(emit_load(ctx, prefix + "/load_" + s.name, prefix + "/" + s.name, ctx.hbm[s.tensor], t.dtype, sp,
                                    s.slicer.unit_offset(), grp),
                          sp.total_bytes());
          } else {
            at[i] = whole(ctx.builder.add_buffer(prefix + "/" + s.name, Space::lx, bytes, s.dtype), bytes);
          }
        }
        std::map<std::string, int> seen;
        for (const FusedStep& st : p.steps) {
          int n = seen[st.name]++;
          Task t = group_task(prefix + "/" + st.name + (n ? fmt::format(".{}", n) : ""), UnitKind::sfp, st.op, grp,
                              p.slots[static_cast<std::size_t>(st.write)].dtype);
          t.elements = elems[static_cast<std::size_t>(st.elements_of)];
          for (int r : st.reads) t.reads.push_back(at[static_cast<std::size_t>(r)]);
          t.writes.push_back(at[static_cast<std::size_t>(st.write)]);
          ctx.builder.add_task(std::move(t));
        }
        for (std::size_t i = 0; i < p.slots.size(); ++i) {
          const FusedSlot& s = p.slots[i];
          if (!s.stored || kept(s)) continue;
          const OpTensor& t = *s.slicer.tensor;
          emit_store(ctx, prefix + "/store_" + s.name, at[i].buffer, ctx.hbm[s.tensor], t.dtype,
                     s.slicer.slice(begin, tile.size), s.slicer.unit_offset(), grp);
        }
      }
    }
  }
}

void lower_rowwise(LowerContext& ctx, const Op& op, const std::string& kernel) { lower_fused(ctx, {op.index}, kernel); }

}  // namespace dfsim

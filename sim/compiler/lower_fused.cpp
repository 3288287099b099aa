// Lowering of a fused kernel of rowwise ops (elementwise chains, reductions, softmax,
// layernorm, rmsnorm, rope): every op is divided over the cores along the same dim; per tile
// each input is loaded once, each op runs as one or more SFP steps whose intermediates stay
// in LX, and only tensors used outside the kernel are stored.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/fused_plan.h"
#include "sim/compiler/hbm_layout.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"
#include "sim/config/chip_config.h"

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

// Whether the op graph forces the coarse-tile loop (compile.tiles on the split dim, a count of
// 1 included): the card then allocates the kernel's tensors for a core's whole share of a
// coarse tile instead of choosing smaller tiles itself.
bool forced_coarse_tiles(const LowerContext& ctx, const FusedPlan& p) {
  for (int oi : p.ops)
    if (ctx.ops.ops[static_cast<std::size_t>(oi)].tiles.count(fmt::format("d{}", p.out_split_dim))) return true;
  return false;
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
  std::uint64_t budget = ctx.budget, shared = 0;  // shared: the once-loaded operands' bytes, out of the budget
  std::vector<bool> once(p.slots.size(), false);  // loaded once for the kernel, multicast
  for (std::size_t i = 0; i < p.slots.size(); ++i) {
    const FusedSlot& s = p.slots[i];
    if (kept(s)) continue;
    if (s.external_in && !s.slicer.follows_split()) {
      once[i] = true;
      shared += s.fixed;
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
  // Spilled slots (the card's scratchpad planning with forced coarse tiles): when a core's share
  // of a coarse tile of one of the kernel's tensors is larger than the whole usable LX, no
  // buffer can hold it, so the card's planner leaves the kernel's tensors in HBM: every step
  // loads what it reads and stores what it writes (softmax 2048x512 on one core, untiled:
  // 16 MiB off-chip for a 2 MiB input, 5 loads and 3 stores of it, device record 10478).
  // dfsim still moves them in tiles that fit, so a spilled input takes one more LX buffer per
  // further read, and a temporary one per read (its scratch copy lives in HBM).
  std::vector<bool> spill(p.slots.size(), false);
  std::vector<int> scratch(p.slots.size(), -1);  // the HBM copy of a spilled temporary
  if (forced_coarse_tiles(ctx, p)) {
    if (!ctx.chip) throw std::logic_error("lower_fused: LowerContext::chip is not set");
    const std::uint64_t lx_bytes = ctx.chip->core.lx.usable_bytes;
    const auto share = static_cast<std::uint64_t>(divide_work(ranges.front().size, p.cores).front().share);
    std::uint64_t largest = 0;  // a core's share of the kernel's largest tensor
    for (std::size_t i = 0; i < p.slots.size(); ++i)
      if (!kept(p.slots[i]) && !once[i]) largest = std::max(largest, p.slots[i].unit * share + p.slots[i].fixed);
    std::vector<int> reads(p.slots.size(), 0);
    for (const FusedStep& st : p.steps)
      for (int r : st.reads) ++reads[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; largest > lx_bytes && i < p.slots.size(); ++i) {
      const FusedSlot& s = p.slots[i];
      const bool temporary = !s.external_in && !s.stored;
      // Inputs and the temporaries shaped like the tensor they are sliced from (not a
      // reduction's per-row value); a stored output is written once anyway.
      if (kept(s) || once[i] || reads[i] == 0 || (s.stored && !s.external_in) ||
          (temporary && (s.slicer.tensor == nullptr || s.unit != s.slicer.unit_bytes())))
        continue;
      spill[i] = true;
      const std::uint64_t extra = static_cast<std::uint64_t>(reads[i] - (temporary ? 0 : 1));
      unit += s.unit * extra;
      fixed += s.fixed * extra;
      if (temporary)
        scratch[i] = ctx.builder.add_buffer(kernel + "/" + s.name + "@hbm", Space::hbm, s.slicer.tensor->bytes(), s.dtype);
    }
    if (largest > lx_bytes && ctx.report)
      ctx.report->kernel(kernel).warnings.push_back(fmt::format(
          "the forced coarse tile gives a core {} B of one tensor, more than the {} B of usable LX: the kernel's "
          "tensors go through HBM, each step loading what it reads and storing what it writes",
          largest, lx_bytes));
  }
  const bool spilled = std::find(spill.begin(), spill.end(), true) != spill.end();
  // Step task names: <op>.<step>, with .1, .2 … on a name the kernel repeats.
  std::vector<std::string> step_names;
  std::map<std::string, int> seen;
  for (const FusedStep& st : p.steps) {
    const int n = seen[st.name]++;
    step_names.push_back(st.name + (n ? fmt::format(".{}", n) : ""));
  }
  const bool lone_reduction = ops.size() == 1 && find_op_info(first.op)->kind == OpKind::reduce;
  // A coarse-tile loop runs its iterations one after another on each core, as the card's loop
  // body does (every op of iteration i completes before iteration i + 1 starts): iteration
  // i + 1's loads take over the space of the last buffer iteration i stores (Buffer::after), so
  // they start once that store has drained it. Per core group: that buffer of the iteration before.
  std::map<std::size_t, int> drained, next_drained;
  if (ctx.report && ranges.size() > 1)
    ctx.report->kernel(kernel).loops.push_back(fmt::format(
        "coarse tiles: {1} iterations along d{0} (up to {2} each), one after another on each core (an iteration loads "
        "once the one before has stored, card.loop_iteration_ns later)",
        p.out_split_dim, ranges.size(), ranges.front().size));
  for (std::size_t ri = 0; ri < ranges.size(); ++ri) {
    drained.swap(next_drained);
    next_drained.clear();
    const TileRange& range = ranges[ri];
    auto groups = divide_work(range.size, p.cores);
    std::string loop = ranges.size() > 1 ? fmt::format("/i{}", ri) : "";
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const CoreGroup& grp = groups[gi];
      auto tiles = layout_tiles(g, g.tensors[static_cast<std::size_t>(first.outputs[0])], p.out_split_dim, grp.share, unit,
                                fixed, budget, lone_reduction ? 1 : kPipelineTiles);
      if (!tiles)
        throw InputError(g.file, fmt::format("/ops/{}", first.index),
                         fmt::format("{}: one row needs {} bytes of LX, more than the {}-byte tile budget{}", first.op,
                                     unit + fixed, budget,
                                     // (a layernorm's weight and bias took all of a 4096-byte budget: "the 0-byte")
                                     shared ? fmt::format(" left of {} B by the {} B of operands every tile shares "
                                                          "(loaded once and kept)", ctx.budget, shared)
                                            : std::string()));
      if (ri == 0 && gi == 0)
        describe_row_split(ctx, kernel, g.tensors[static_cast<std::size_t>(first.outputs[0])], p.out_split_dim, p.extent,
                           used, grp.share, tiles->size(), tiles->front().size, !first.split.empty(),
                           lone_reduction ? 1 : kPipelineTiles);
      // Per tile: where each slot is (loads of external inputs first) and its elements.
      struct TileSlots {
        std::int64_t begin = 0, size = 0;
        std::string prefix;
        std::vector<Access> at;
        std::vector<std::uint64_t> elems;
      };
      auto setup = [&](std::size_t ti) {
        TileSlots tl;
        tl.size = (*tiles)[ti].size;
        tl.begin = range.begin + grp.base + (*tiles)[ti].begin;
        tl.prefix = fmt::format("{}{}/g{}/t{}", kernel, loop, gi, ti);
        tl.at.resize(p.slots.size());
        tl.elems.resize(p.slots.size());
        for (std::size_t i = 0; i < p.slots.size(); ++i) {
          const FusedSlot& s = p.slots[i];
          tl.elems[i] = s.unit_elems * static_cast<std::uint64_t>(tl.size) + s.fixed_elems;
          const std::uint64_t bytes = s.unit * static_cast<std::uint64_t>(tl.size) + s.fixed;
          if (kept(s)) {
            tl.at[i] = kept_part(ctx.lx[s.tensor], s.slicer, (*tiles)[ti]);
          } else if (broadcast[i] >= 0) {
            tl.at[i] = whole(broadcast[i], s.fixed);
          } else if (s.external_in && !spill[i]) {
            const OpTensor& t = *s.slicer.tensor;
            SlicePattern sp = s.slicer.slice(tl.begin, tl.size);
            tl.at[i] = whole(emit_load(ctx, tl.prefix + "/load_" + s.name, tl.prefix + "/" + s.name, ctx.hbm[s.tensor],
                                       t.dtype, sp, s.slicer.unit_offset(), grp),
                             sp.total_bytes());
            if (auto d = drained.find(gi); d != drained.end()) ctx.builder.set_after(tl.at[i].buffer, d->second);
          } else if (!s.external_in) {  // a spilled input has no buffer of its own: each step loads it
            tl.at[i] = whole(ctx.builder.add_buffer(tl.prefix + "/" + s.name, Space::lx, bytes, s.dtype), bytes);
            if (s.stored && ranges.size() > 1) next_drained[gi] = tl.at[i].buffer;
          }
        }
        return tl;
      };
      // The HBM buffer and dtype of slot i: the scratch copy of a spilled temporary, else its tensor.
      auto hbm_of = [&](std::size_t i) {
        const FusedSlot& s = p.slots[i];
        return scratch[i] >= 0 ? std::pair{scratch[i], s.dtype} : std::pair{ctx.hbm[s.tensor], s.slicer.tensor->dtype};
      };
      auto store = [&](const TileSlots& tl, std::size_t i, const std::string& task) {
        const FusedSlot& s = p.slots[i];
        const auto [buffer, dtype] = hbm_of(i);
        emit_store(ctx, task, tl.at[i].buffer, buffer, dtype, s.slicer.slice(tl.begin, tl.size), s.slicer.unit_offset(), grp);
      };
      // Step `si` of tile `tl`: a spilled slot is loaded from HBM for each step that reads it.
      auto run_step = [&](const TileSlots& tl, std::size_t si) {
        const FusedStep& st = p.steps[si];
        const std::string step = tl.prefix + "/" + step_names[si];
        Task t = group_task(step, UnitKind::sfp, st.op, grp, p.slots[static_cast<std::size_t>(st.write)].dtype);
        t.elements = tl.elems[static_cast<std::size_t>(st.elements_of)];
        for (int r : st.reads) {
          const auto ri = static_cast<std::size_t>(r);
          const FusedSlot& s = p.slots[ri];
          if (!spill[ri]) {
            t.reads.push_back(tl.at[ri]);
            continue;
          }
          SlicePattern sp = s.slicer.slice(tl.begin, tl.size);
          const auto [from, dtype] = hbm_of(ri);
          t.reads.push_back(whole(
              emit_load(ctx, step + "/load_" + s.name, step + "/" + s.name, from, dtype, sp, s.slicer.unit_offset(), grp),
              sp.total_bytes()));
        }
        const auto wi = static_cast<std::size_t>(st.write);
        t.writes.push_back(tl.at[wi]);
        ctx.builder.add_task(std::move(t));
        if (spilled && (scratch[wi] >= 0 || (p.slots[wi].stored && !kept(p.slots[wi]))))
          store(tl, wi, step + "/store_" + p.slots[wi].name);
      };
      if (spilled) {
        // Step by step over the tiles, as the card runs a kernel whose tensors are in HBM: each
        // step streams every tile through the SFP before the next step starts, and its own
        // tiles overlap (a tile's steps one after another would wait on each other's HBM copy).
        std::vector<TileSlots> ts;
        for (std::size_t ti = 0; ti < tiles->size(); ++ti) ts.push_back(setup(ti));
        for (std::size_t si = 0; si < p.steps.size(); ++si)
          for (const TileSlots& tl : ts) run_step(tl, si);
        continue;
      }
      for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
        const TileSlots tl = setup(ti);  // a tile's loads, its steps, its stores, then the next tile
        for (std::size_t si = 0; si < p.steps.size(); ++si) run_step(tl, si);
        for (std::size_t i = 0; i < p.slots.size(); ++i)
          if (p.slots[i].stored && !kept(p.slots[i])) store(tl, i, tl.prefix + "/store_" + p.slots[i].name);
      }
    }
  }
}

void lower_rowwise(LowerContext& ctx, const Op& op, const std::string& kernel) { lower_fused(ctx, {op.index}, kernel); }

}  // namespace dfsim

// Lowering of elementwise ops and row reductions: split the outermost non-reduced dim, tile,
// and emit per tile a load per input, one SFP task and a store (intermediates kept in LX and
// broadcast operands loaded once skip their load; kept outputs skip their store).
#include <fmt/format.h>

#include <algorithm>

#include "sim/common/error.h"
#include "sim/compiler/hbm_layout.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/sparse_outputs.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

int outermost_nontrivial(const Shape& s, int skip) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (static_cast<int>(i) != skip && s[i] > 1) return static_cast<int>(i);
  for (std::size_t i = 0; i < s.size(); ++i)
    if (static_cast<int>(i) != skip) return static_cast<int>(i);
  return -1;
}

}  // namespace

bool is_rowwise(const Op& op) {
  const OpKind k = find_op_info(op.op)->kind;
  return is_elementwise(k) || k == OpKind::reduce || k == OpKind::normalize || k == OpKind::rope;
}

// The stick of the tensors' layout: 128 B = 64 fp16 (docs/compiler.md, work division).
constexpr std::uint64_t kLayoutStickBytes = 128;

PointwisePlan plan_pointwise(const OpGraph& g, const Op& op, int cores) {
  PointwisePlan p;
  p.cores = cores;
  const OpTensor& o = g.tensors[op.outputs[0]];
  p.out.tensor = &o;
  const OpKind kind = find_op_info(op.op)->kind;
  // compile.split {"d<i>": n}: output dim i over n cores (one dim; the reader checked i and n).
  int forced = -1;
  if (!op.split.empty()) {
    forced = std::stoi(op.split.begin()->first.substr(1));
    p.cores = static_cast<int>(op.split.begin()->second);
  }
  if (kind == OpKind::reduce || kind == OpKind::normalize) {
    const OpTensor& in = g.tensors[op.inputs[0]];
    const bool drop = kind == OpKind::reduce && !op.keepdim;  // output dims skip the reduced one
    int s = forced < 0 ? outermost_nontrivial(in.shape, op.dim) : (drop && forced >= op.dim ? forced + 1 : forced);
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      // Weight and bias of a norm ([D], the normalised dim) are read whole.
      const OpTensor& t = g.tensors[op.inputs[i]];
      p.in.push_back(OperandSlicer{&t, i == 0 ? s : -1, false});
    }
    if (s >= 0) {
      p.extent = in.shape[s];
      p.out.dim = !drop || s < op.dim ? s : s - 1;
      // A split of the stick dim (a reduction over an outer dim) gives every core whole
      // sticks, the unit of the layout: 512 fp16 columns go to 8 cores, not 32 B to 32.
      if (forced < 0 && s == static_cast<int>(in.shape.size()) - 1) {
        const auto per_stick = static_cast<std::int64_t>(std::max<std::uint64_t>(1, kLayoutStickBytes / dtype_bytes(in.dtype, 1)));
        p.cores = static_cast<int>(std::min<std::int64_t>(p.cores, (p.extent + per_stick - 1) / per_stick));
      }
    }
    return p;
  }
  int s = forced < 0 ? outermost_nontrivial(o.shape, -1) : forced;
  int rank = static_cast<int>(o.shape.size());
  // An input that does not follow the split dim is read whole by every core. When that is
  // large (rope's [T, D] tables under q [B, H, T, D] split along H), split the outermost dim
  // that such inputs have instead; small broadcast operands (a bias row) stay read whole.
  constexpr std::uint64_t kWholeInputBytes = 64 << 10;
  auto whole_read_is_large = [&](int dim) {
    for (int t : op.inputs) {
      const OpTensor& in = g.tensors[t];
      int d = dim - (rank - static_cast<int>(in.shape.size()));
      bool follows = d >= 0 && !(in.shape[d] == 1 && o.shape[dim] != 1);
      if (!follows && in.bytes() > kWholeInputBytes) return true;
    }
    return false;
  };
  // The outermost dim of extent >= cores (before the stick dim) keeps every core busy: q
  // [B, H, T, D] of a batch-2 prefill splits H, not B over 2 cores.
  auto usable = [&](int dim) { return o.shape[dim] > 1 && !whole_read_is_large(dim); };
  if (forced < 0) {
    int pick = -1;
    if (o.shape[s] < cores)
      for (int dim = s + 1; dim < rank - 1 && pick < 0; ++dim)
        if (usable(dim) && o.shape[dim] >= cores) pick = dim;
    if (pick < 0 && !usable(s))
      for (int dim = s + 1; dim < rank && pick < 0; ++dim)
        if (usable(dim)) pick = dim;
    if (pick >= 0) s = pick;
    // In the card's stick layout ([R, C] stored [C/64, R, 64]) a split of the rows gives a
    // core runs of its rows' sticks in every stick column: shorter than one DMA burst (32
    // sticks, core.dma.burst_sticks) when a core has fewer than 32 rows. Then, when the stick
    // dim has a stick for every core, split it instead: a core's sticks are one run.
    constexpr std::int64_t kBurstSticks = 32;
    const std::uint64_t row = dtype_bytes(o.dtype, static_cast<std::uint64_t>(o.shape[rank - 1]));
    const std::int64_t outer = static_cast<std::int64_t>(dims_product(o.shape, 0, rank - 1));
    if (uses_stick_layout(g) && rank >= 2 && row % kLayoutStickBytes == 0 &&
        static_cast<std::int64_t>(row / kLayoutStickBytes) >= cores && outer < kBurstSticks * cores && usable(rank - 1))
      s = rank - 1;
  }
  p.extent = o.shape[s];
  p.out.dim = s;
  for (int t : op.inputs) {
    const OpTensor& in = g.tensors[t];
    int d = s - (rank - static_cast<int>(in.shape.size()));
    bool pinned = d >= 0 && in.shape[d] == 1 && p.extent != 1;
    p.in.push_back(OperandSlicer{&in, d < 0 ? -1 : d, pinned});
  }
  return p;
}

std::optional<TensorSplit> tensor_split(const OpGraph& g, const Op& op, int tensor, int cores) {
  if (!op.tiles.empty()) return std::nullopt;
  return rowwise_split(g, op, tensor, cores);
}

std::optional<TensorSplit> rowwise_split(const OpGraph& g, const Op& op, int tensor, int cores) {
  if (!is_rowwise(op) || split_reduction_applies(g, op, cores)) return std::nullopt;
  PointwisePlan p = plan_pointwise(g, op, cores);
  if (op.outputs[0] == tensor) return TensorSplit{p.out.dim, p.extent, p.cores};
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] == tensor) {
      if (!p.in[i].follows_split()) return std::nullopt;
      return TensorSplit{p.in[i].dim, p.extent, p.cores};
    }
  return std::nullopt;
}

void lower_pointwise(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const bool reduction = find_op_info(op.op)->kind == OpKind::reduce;
  if (reduction && lower_split_reduction(ctx, op, kernel)) return;
  // compile.tiles over the reduced dim (kept as size 1): chunks of the row with a carry.
  if (reduction && op.keepdim && op.tiles.count(fmt::format("d{}", op.dim)) &&
      lower_row_chunks(ctx, op, kernel, op.tiles.at(fmt::format("d{}", op.dim))))
    return;
  if (reduction && lower_column_chunks(ctx, op, kernel)) return;
  if (!op.tiles.empty() || find_op_info(op.op)->kind == OpKind::normalize) return lower_rowwise(ctx, op, kernel);
  PointwisePlan p = plan_pointwise(g, op, ctx.cores);
  // A tensor stored stick-sparse moves and sits in LX as whole sticks, one per element.
  auto sparse = [&](OperandSlicer& s, int t) {
    if (!ctx.sparse.empty() && ctx.sparse[static_cast<std::size_t>(t)]) s.scale = sparse_scale(s.tensor->dtype, ctx.stick_bytes);
  };
  sparse(p.out, op.outputs[0]);
  for (std::size_t i = 0; i < p.in.size(); ++i) sparse(p.in[i], op.inputs[i]);
  // A tile's LX: a buffer per operand, except those kept in LX (they have their own space).
  std::uint64_t unit = 0, fixed = 0;
  auto count = [&](const OperandSlicer& s, int tensor) {
    if (ctx.lx[tensor] >= 0) return;
    unit += s.unit_bytes();
    fixed += s.fixed_bytes();
  };
  count(p.out, op.outputs[0]);
  // A repeated input (mul(x, x)) is loaded once: `first_use[i]` is the input it repeats.
  std::vector<std::size_t> first_use(p.in.size());
  for (std::size_t i = 0; i < p.in.size(); ++i) {
    first_use[i] = static_cast<std::size_t>(std::find(op.inputs.begin(), op.inputs.end(), op.inputs[i]) - op.inputs.begin());
    if (first_use[i] == i) count(p.in[i], op.inputs[i]);
  }
  // An elementwise op whose unit (everything but the split dim) does not fit: tile inside the
  // row, splitting the output's longest dim instead (strided slices of the outer dims).
  if (!reduction && op.split.empty() && unit + fixed > ctx.budget) {
    const Shape& os = p.out.tensor->shape;
    const auto k = static_cast<int>(std::max_element(os.begin(), os.end()) - os.begin());
    bool kept = ctx.lx[static_cast<std::size_t>(op.outputs[0])] >= 0;
    for (int t : op.inputs) kept = kept || ctx.lx[static_cast<std::size_t>(t)] >= 0;
    if (k != p.out.dim && !kept) {
      Op inner = op;
      inner.split = {{fmt::format("d{}", k), ctx.cores}};
      return lower_pointwise(ctx, inner, kernel);
    }
  }
  auto groups = divide_work(p.extent, p.cores);
  const OpTensor& out = *p.out.tensor;
  // A broadcast operand (read whole by every tile of every core) is loaded once for the op
  // and multicast to all its cores, where it stays for the whole kernel.
  const int used = groups.back().first + groups.back().count;
  std::vector<int> broadcast(p.in.size(), -1);
  for (std::size_t i = 0; i < p.in.size(); ++i)
    if (first_use[i] == i && !p.in[i].follows_split() && ctx.lx[op.inputs[i]] < 0 && used > 1) {
      const OpTensor& in = *p.in[i].tensor;
      broadcast[i] = emit_broadcast_load(ctx, kernel + "/load_" + in.name + fmt::format(".{}", i),
                                         kernel + "/" + in.name + fmt::format(".{}", i), ctx.hbm[op.inputs[i]],
                                         in.dtype, p.in[i].slice(0, 1), used);
    }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    // Elementwise ops are software-pipelined: at least kPipelineTiles tiles per core, so the
    // loads of a tile overlap the store of the previous one. (Their split dim is the
    // outermost non-trivial one, so tiles stay contiguous runs.) So are reductions over the
    // last dim (their rows are split: contiguous too), in twice as many tiles, so that the
    // SFP's cross-lane reduction of a tile overlaps the next tile's load and only an eighth
    // of it trails the last load; a reduction over an outer dim splits the kept columns,
    // strided, where cutting would shorten every row's run.
    const bool row_reduction = reduction && reduction_sfp_op(g, op) == op.op;
    int min_tiles = !reduction ? kPipelineTiles : row_reduction ? 2 * kPipelineTiles : 1;
    // (A reduction's loaded rows are its input's: their runs are what the layout cuts.)
    const OperandSlicer& rows = reduction && p.in[0].follows_split() ? p.in[0] : p.out;
    auto tiles = layout_tiles(g, *rows.tensor, rows.dim, grp.share, unit, fixed, ctx.budget, min_tiles);
    if (!tiles && reduction && lower_row_chunks(ctx, op, kernel, 1)) return;
    if (!tiles)
      throw InputError(g.file, "/ops/" + std::to_string(op.index),
                       op.op + ": one slice needs " + std::to_string(unit + fixed) + " bytes of LX, more than the " +
                           std::to_string(ctx.budget) + "-byte tile budget");
    if (gi == 0)
      describe_row_split(ctx, kernel, *rows.tensor, rows.dim, p.extent, used, grp.share, tiles->size(), tiles->front().size,
                         !op.split.empty(), min_tiles);
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& tile = (*tiles)[ti];
      std::int64_t begin = grp.base + tile.begin;
      std::string prefix = kernel + "/g" + std::to_string(gi) + "/t" + std::to_string(ti);
      Task compute = group_task(prefix + "/" + op.op, UnitKind::sfp, reduction ? reduction_sfp_op(g, op) : op.op,
                                grp, out.dtype);
      for (std::size_t i = 0; i < p.in.size(); ++i) {
        const OpTensor& in = *p.in[i].tensor;
        if (first_use[i] != i) {
          compute.reads.push_back(compute.reads[first_use[i]]);
          continue;
        }
        const std::string& nm = in.name;
        SlicePattern sp = p.in[i].slice(begin, tile.size);
        if (reduction) compute.elements = sp.elements;
        if (int kept = ctx.lx[op.inputs[i]]; kept >= 0) {
          // Kept in LX by the producer: read this tile's part of the core's slice.
          compute.reads.push_back(kept_part(kept, p.in[i], tile));
          continue;
        }
        if (broadcast[i] >= 0) {
          compute.reads.push_back(whole(broadcast[i], sp.total_bytes()));
          continue;
        }
        int lx = emit_load(ctx, prefix + "/load_" + nm, prefix + "/" + nm, ctx.hbm[op.inputs[i]], in.dtype, sp,
                           p.in[i].unit_offset(), grp);
        compute.reads.push_back(whole(lx, sp.total_bytes()));
      }
      SlicePattern osp = p.out.slice(begin, tile.size);
      if (!reduction) compute.elements = osp.elements;
      if (int kept = ctx.lx[op.outputs[0]]; kept >= 0) {
        // Kept in LX for its consumers: write this tile's part of the core's slice, no store.
        compute.writes.push_back(kept_part(kept, p.out, tile));
        ctx.builder.add_task(std::move(compute));
        continue;
      }
      int lx_out = ctx.builder.add_buffer(prefix + "/" + out.name, Space::lx, osp.total_bytes(), out.dtype);
      compute.writes.push_back(whole(lx_out, osp.total_bytes()));
      if (p.out.scale > 1 && osp.elements > 1) {
        // Stick-sparse: each result into a stick of its own (what the SFP writes, and how it
        // counts the rows it reduces); the store moves the whole sticks.
        Access& w = compute.writes.back();
        w.bytes = dtype_bytes(out.dtype, 1);
        w.rows = osp.elements;
        w.stride = w.bytes * p.out.scale;
      }
      ctx.builder.add_task(std::move(compute));
      emit_store(ctx, prefix + "/store_" + out.name, lx_out, ctx.hbm[op.outputs[0]], out.dtype, osp,
                 p.out.unit_offset(), grp);
    }
  }
}

}  // namespace dfsim

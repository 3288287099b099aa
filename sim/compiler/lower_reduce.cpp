// Lowering of a reduction whose kept elements are too few to occupy the cores, or whose kept
// split would read a stick per row (a column sum): the reduced dim is split over the cores,
// each reduces its part (a chain of tiles), and the partials meet in a binary tree over the
// ring (a reduce step is a ring copy plus an SFP combine).
#include <fmt/format.h>

#include <algorithm>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {


// Fewest elements of the reduced dim per core when it is the last dim: one stick of fp16 per
// kept row. Over an outer dim each index is a whole slice of the kept elements, as large as the
// partial a core passes on: a core takes enough of them to read kReadPerSent times that.
constexpr std::int64_t kMinPerCore = 64;
constexpr std::uint64_t kReadPerSent = 4;
// A kept split whose runs are shorter than this reads the input a few sticks per row; the
// largest partial a reduced-dim split passes around the ring instead.
constexpr std::uint64_t kShortRunBytes = 1024;
constexpr std::uint64_t kMaxPartialBytes = 64 << 10;

// Whether the kept split (lower_pointwise's plan) would cut the stick dim into runs shorter
// than kShortRunBytes: a column sum of [R, C] gives each core C / cores columns of every row.
// In the card's stick layout ([C/64, R, 64]) a stick column over every row is one run;
// row-major, splitting the reduced rows is what reads long runs.
bool kept_split_is_short(const OpGraph& g, const Op& op, int cores) {
  const OpTensor& in = g.tensors[op.inputs[0]];
  const int last = static_cast<int>(in.shape.size()) - 1;
  if (op.dim == last || stored_order(g, in).back() != last) return false;
  const PointwisePlan p = plan_pointwise(g, op, cores);
  if (p.in[0].dim != last) return false;  // a kept outer dim is split: whole rows per core
  const std::int64_t share = (p.extent + p.cores - 1) / p.cores;
  return dtype_bytes(in.dtype, static_cast<std::uint64_t>(share)) < kShortRunBytes;
}

// Cores to split the reduced dim over, or 0 when splitting the kept elements is better.
int split_parts(const OpGraph& g, const Op& op, int cores) {
  const OpTensor& in = g.tensors[op.inputs[0]];
  const OpTensor& out = g.tensors[op.outputs[0]];
  const auto d = static_cast<std::size_t>(op.dim);
  const std::uint64_t kept = dims_product(in.shape, 0, d) * dims_product(in.shape, d + 1, in.shape.size());
  const std::uint64_t slice = std::max<std::uint64_t>(1, dtype_bytes(in.dtype, kept));
  const std::int64_t least = d + 1 == in.shape.size()
                                 ? kMinPerCore
                                 : static_cast<std::int64_t>((kReadPerSent * dtype_bytes(out.dtype, kept) + slice - 1) / slice);
  int parts = static_cast<int>(std::min<std::int64_t>(cores, in.shape[d] / least));
  if (parts < 2) return 0;
  // Worth it when splitting the kept elements would leave most cores idle, or read short runs
  // (and the partials stay small, without coarse tiles of their own).
  if (kept * 2 <= static_cast<std::uint64_t>(cores)) return parts;
  const bool short_runs = op.tiles.empty() && dtype_bytes(out.dtype, kept) <= kMaxPartialBytes && kept_split_is_short(g, op, cores);
  return short_runs ? parts : 0;
}

}  // namespace

bool split_reduction_applies(const OpGraph& g, const Op& op, int cores) {
  return find_op_info(op.op)->kind == OpKind::reduce && op.split.empty() && split_parts(g, op, cores) > 0;
}

bool lower_split_reduction(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& in = g.tensors[op.inputs[0]];
  const OpTensor& out = g.tensors[op.outputs[0]];
  const auto d = static_cast<std::size_t>(op.dim);
  const std::uint64_t kept = dims_product(in.shape, 0, d) * dims_product(in.shape, d + 1, in.shape.size());
  const std::int64_t extent = in.shape[d];
  if (!split_reduction_applies(g, op, ctx.cores)) return false;
  int parts = split_parts(g, op, ctx.cores);

  if (ctx.report) {
    KernelReport& r = ctx.report->kernel(kernel);
    int steps = 0;
    while ((1 << steps) < parts) ++steps;
    r.split = fmt::format("reduced dim d{} ({}) over {} cores, the partials combined in {} ring steps", op.dim, extent,
                          parts, steps);
    r.why = kept * 2 <= static_cast<std::uint64_t>(ctx.cores)
                ? fmt::format("{} kept element(s) cannot occupy {} cores", kept, ctx.cores)
                : fmt::format("splitting the {} kept elements would give each core under {} B of every row; whole rows "
                              "are long runs (in the card's stick layout a stick column is one)",
                              kept, kShortRunBytes);
  }
  const std::string combine = op.op == "amax" ? "max" : "add";
  const std::uint64_t part_bytes = dtype_bytes(out.dtype, kept);
  OperandSlicer src{&in, static_cast<int>(d), false};

  // Phase 1: every core reduces its share of the dim, tile by tile; each tile's reduction
  // also reads the previous tile's partial, so the last one holds the core's partial.
  auto groups = divide_work(extent, parts);
  parts = groups.back().first + groups.back().count;
  std::vector<int> part(static_cast<std::size_t>(parts), -1);  // per core: LX buffer of its partial
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    auto tiles = tile_units(grp.share, src.unit_bytes(), part_bytes, ctx.budget);
    if (!tiles)
      throw InputError(g.file, "/ops/" + std::to_string(op.index),
                       op.op + ": one slice needs " + std::to_string(src.unit_bytes() + part_bytes) +
                           " bytes of LX, more than the " + std::to_string(ctx.budget) + "-byte tile budget");
    int prev = -1;
    for (std::size_t ti = 0; ti < tiles->size(); ++ti) {
      const TileRange& tile = (*tiles)[ti];
      std::string prefix = fmt::format("{}/g{}/t{}", kernel, gi, ti);
      SlicePattern sp = src.slice(grp.base + tile.begin, tile.size);
      prev = emit_carried_reduce(ctx, prefix, op, in, ctx.hbm[static_cast<std::size_t>(op.inputs[0])], out.dtype, sp, src.unit_offset(), grp, prev, part_bytes);
    }
    for (int c = grp.first; c < grp.first + grp.count; ++c) part[static_cast<std::size_t>(c)] = prev;
  }

  // Phase 2: a binary tree over the ring. At step s, core r (a multiple of 2s) receives the
  // partial of core r + s over the ring and combines it with its own on the SFP.
  for (int s = 1; s < parts; s *= 2) {
    std::string prefix = fmt::format("{}/tree{}", kernel, s);
    int recv = ctx.builder.add_buffer(prefix + "/received", Space::lx, part_bytes, out.dtype);
    int sum = ctx.builder.add_buffer(prefix + "/partial", Space::lx, part_bytes, out.dtype);
    for (int r = 0; r + s < parts; r += 2 * s) {
      CoreGroup sender{r + s, 1, 0, 0}, receiver{r, 1, 0, 0};
      Task copy = group_task(fmt::format("{}/send_c{}", prefix, r + s), UnitKind::ring, "copy", sender, out.dtype);
      copy.reads.push_back(whole(part[static_cast<std::size_t>(r + s)], part_bytes));
      Access to = whole(recv, part_bytes);
      to.core = Affine{0, r};
      copy.writes.push_back(to);
      ctx.builder.add_task(std::move(copy));
      Task add = group_task(fmt::format("{}/{}_c{}", prefix, combine, r), UnitKind::sfp, combine, receiver, out.dtype);
      add.elements = kept;
      add.reads = {whole(part[static_cast<std::size_t>(r)], part_bytes), whole(recv, part_bytes)};
      add.writes.push_back(whole(sum, part_bytes));
      ctx.builder.add_task(std::move(add));
      part[static_cast<std::size_t>(r)] = sum;
    }
  }

  // Core 0 holds the result (for mean, the final scaling is taken as part of the last step).
  SlicePattern whole_out;
  whole_out.elements = kept;
  whole_out.bytes = part_bytes;
  emit_store(ctx, kernel + "/store_" + out.name, part[0], ctx.hbm[op.outputs[0]], out.dtype, whole_out, UnitStep{},
             CoreGroup{0, 1, 0, 0});
  return true;
}

}  // namespace dfsim

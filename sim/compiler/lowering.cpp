// Shared helpers of the lowering pass: task templates over core groups, DMA slices.
#include "sim/compiler/lowering.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/compiler/compile_report.h"
#include "sim/compiler/spmd_merge.h"
#include "sim/config/chip_config.h"

namespace dfsim {

Task group_task(const std::string& name, UnitKind unit, const std::string& op, const CoreGroup& g, Dtype dtype) {
  Task t;
  t.name = name;
  t.unit = unit;
  t.op = op;
  t.first_core = g.first;
  t.core_count = g.count;
  t.dtype = dtype;
  return t;
}

Access hbm_slice(int buffer, const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g) {
  Access a;
  a.buffer = buffer;
  a.bytes = p.bytes;
  a.rows = p.rows;
  a.stride = p.stride;
  auto off = static_cast<std::int64_t>(p.offset);
  if (g.count > 1) {
    a.offset.alpha = static_cast<std::int64_t>(core_step_bytes(unit_offset, g.share));
    a.offset.beta = off - a.offset.alpha * g.first;
  } else {
    a.offset.beta = off;
  }
  return a;
}

int emit_load(LowerContext& ctx, const std::string& task_name, const std::string& lx_name, int hbm_buffer,
              Dtype dtype, const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g) {
  int lx = ctx.builder.add_buffer(lx_name, Space::lx, p.total_bytes(), dtype);
  Task t = group_task(task_name, UnitKind::dma, "load", g, dtype);
  t.reads.push_back(hbm_slice(hbm_buffer, p, unit_offset, g));
  t.writes.push_back(whole(lx, p.total_bytes()));
  ctx.builder.add_task(std::move(t));
  return lx;
}

int multicast_reach(const LowerContext& ctx) { return ctx.chip ? ctx.chip->ring.multicast_max_cores : 0; }

void describe_row_split(LowerContext& ctx, const std::string& kernel, const OpTensor& tensor, int dim, std::int64_t extent,
                        int used, std::int64_t share, std::size_t tiles, std::int64_t tile, bool forced, int min_tiles) {
  if (!ctx.report) return;
  KernelReport& r = ctx.report->kernel(kernel);
  if (!r.split.empty()) return;
  r.split = fmt::format("d{} of {} ({}) over {} of {} cores, {} each", dim, tensor.name, extent, used, ctx.cores, share);
  r.why = forced ? "forced by split"
                 : "row-wise ops split one dim of their rows, the outermost that gives every core a contiguous part "
                   "(whole sticks along the stick dim)";
  r.loops.push_back(fmt::format("d{}: {} tile{} of up to {} a core{}", dim, tiles, tiles == 1 ? "" : "s", tile,
                                min_tiles > 1 && tiles > 1
                                    ? fmt::format(" (at least {} when each keeps 16 KiB: a tile's loads overlap the store "
                                                  "of the one before)",
                                                  min_tiles)
                                    : ""));
}

std::vector<std::vector<int>> multicast_groups(const std::vector<int>& sharers, int reach) {
  if (reach <= 0 || sharers.size() <= static_cast<std::size_t>(reach)) return {sharers};
  std::vector<std::vector<int>> groups;
  for (std::size_t i = 0; i < sharers.size(); i += static_cast<std::size_t>(reach))
    groups.emplace_back(sharers.begin() + static_cast<std::ptrdiff_t>(i),
                        sharers.begin() + static_cast<std::ptrdiff_t>(std::min(sharers.size(), i + static_cast<std::size_t>(reach))));
  return groups;
}

int emit_broadcast_load(LowerContext& ctx, const std::string& task_name, const std::string& lx_name, int hbm_buffer,
                        Dtype dtype, const SlicePattern& p, int cores) {
  const std::uint64_t bytes = p.total_bytes(), stick = 128;
  int lx = ctx.builder.add_buffer(lx_name, Space::lx, bytes, dtype);
  const bool banded = p.rows == 1 && bytes % (static_cast<std::uint64_t>(cores) * stick) == 0;
  const int loaders = banded ? cores : 1;
  const std::uint64_t band = bytes / static_cast<std::uint64_t>(loaders);
  Task t = group_task(task_name, UnitKind::dma, "load", CoreGroup{0, loaders, 0, 0}, dtype);
  Access rd;
  rd.buffer = hbm_buffer;
  rd.offset = Affine{static_cast<std::int64_t>(band), static_cast<std::int64_t>(p.offset)};
  rd.bytes = banded ? band : p.bytes;
  rd.rows = banded ? 1 : p.rows;
  rd.stride = banded ? 0 : p.stride;
  if (loaders == 1) rd.offset = Affine{0, static_cast<std::int64_t>(p.offset)};
  t.reads.push_back(rd);
  for (int d = 0; d < cores; ++d) {
    Access w = whole(lx, band);
    w.offset = Affine{loaders == 1 ? 0 : static_cast<std::int64_t>(band), 0};
    w.core = Affine{0, d};
    t.writes.push_back(w);
  }
  ctx.builder.add_task(std::move(t));
  return lx;
}

void emit_band_multicast(CoreTasks& tasks, int hbm, std::uint64_t offset, std::uint64_t rows, std::uint64_t row_bytes,
                         std::uint64_t row_stride, int lx, const std::vector<int>& sharers, Dtype dtype, int reach) {
  if (reach > 0 && sharers.size() > static_cast<std::size_t>(reach)) {
    for (const std::vector<int>& group : multicast_groups(sharers, reach))
      emit_band_multicast(tasks, hbm, offset, rows, row_bytes, row_stride, lx, group, dtype, 0);
    return;
  }
  const auto n = static_cast<std::uint64_t>(sharers.size());
  const std::uint64_t h = (rows + n - 1) / n;
  for (std::uint64_t i = 0; i < n && i * h < rows; ++i) {
    const std::uint64_t band = std::min(h, rows - i * h);
    SlicePattern p;
    p.offset = offset + i * h * row_stride;
    if (row_stride == row_bytes || band == 1) {
      p.bytes = band * row_bytes;
    } else {
      p.bytes = row_bytes;
      p.rows = band;
      p.stride = row_stride;
    }
    Task t = group_task("", UnitKind::dma, "load", CoreGroup{sharers[i], 1, 0, 0}, dtype);
    t.reads.push_back(hbm_slice(hbm, p, UnitStep{}, CoreGroup{}));
    for (int d : sharers) {
      Access w = whole(lx, band * row_bytes);
      w.offset.beta = static_cast<std::int64_t>(i * h * row_bytes);
      w.core = Affine{0, d};
      t.writes.push_back(w);
    }
    tasks.add(std::move(t));
  }
}

void emit_store(LowerContext& ctx, const std::string& task_name, int lx_buffer, int hbm_buffer, Dtype dtype,
                const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g) {
  Task t = group_task(task_name, UnitKind::dma, "store", g, dtype);
  t.reads.push_back(whole(lx_buffer, p.total_bytes()));
  t.writes.push_back(hbm_slice(hbm_buffer, p, unit_offset, g));
  ctx.builder.add_task(std::move(t));
}

std::string reduction_sfp_op(const OpGraph& g, const Op& op) {
  const auto rank = static_cast<int>(g.tensors[static_cast<std::size_t>(op.inputs[0])].shape.size());
  if (op.dim == rank - 1) return op.op;
  return op.op == "amax" ? "max" : "add";
}

int emit_carried_reduce(LowerContext& ctx, const std::string& prefix, const Op& op, const OpTensor& in, int hbm_in, Dtype out,
                        const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g, int prev,
                        std::uint64_t part_bytes) {
  int lx = emit_load(ctx, prefix + "/load_" + in.name, prefix + "/" + in.name, hbm_in, in.dtype, p, unit_offset, g);
  Task t = group_task(prefix + "/" + op.op, UnitKind::sfp, reduction_sfp_op(ctx.ops, op), g, out);
  t.elements = p.elements;
  t.reads.push_back(whole(lx, p.total_bytes()));
  if (prev >= 0) t.reads.push_back(whole(prev, part_bytes));
  int part = ctx.builder.add_buffer(prefix + "/partial", Space::lx, part_bytes, out);
  t.writes.push_back(whole(part, part_bytes));
  ctx.builder.add_task(std::move(t));
  return part;
}

Access kept_part(int buffer, const OperandSlicer& s, const TileRange& t) {
  Access a;
  a.buffer = buffer;
  // In bits: a tile of int4 units starts on a whole byte or not at all.
  const std::uint64_t begin = s.unit_bits() * static_cast<std::uint64_t>(t.begin);
  if (begin % 8 != 0)
    throw HalfByteSplit("a tile of " + s.tensor->name + " kept in LX would start half a byte in");
  a.offset.beta = static_cast<std::int64_t>(begin / 8);
  a.bytes = (s.unit_bits() * static_cast<std::uint64_t>(t.size) + 7) / 8;
  return a;
}

}  // namespace dfsim

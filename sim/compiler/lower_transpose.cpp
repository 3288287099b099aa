// Lowering of transpose: one dim of the output is split over the cores and tiled; per tile
// the input region is DMA-loaded into LX and the output slice DMA-stored. When the stick
// (innermost) dim stays, the loads gather whole runs straight into output order (DMA only);
// when it moves, elements must be reshuffled inside sticks: one SFP copy pass per tile (the
// card's on-chip transpose stage) between the load and the store.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// Loads per tile above which a stick-keeping transpose reshuffles on the SFP instead of
// gathering run by run (many tiny DMA tasks).
constexpr std::int64_t kMaxGatherLoads = 64;

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  return static_cast<std::int64_t>(dims_product(s, from, to));
}

// The transpose with size-1 dims dropped and input dims that stay adjacent and in order
// merged: the same byte layouts with the fewest dims. y dim i is x dim perm[i].
struct Reduced {
  Shape x, y;
  std::vector<int> perm;
  bool stick_moves() const { return perm.back() != static_cast<int>(perm.size()) - 1; }
};

Reduced reduce(const Shape& xs, const std::vector<int>& perm) {
  std::vector<int> seq;  // kept input dims in output order
  for (int d : perm)
    if (xs[static_cast<std::size_t>(d)] > 1) seq.push_back(d);
  Reduced r;
  if (seq.empty()) {
    r.x = r.y = {1};
    r.perm = {0};
    return r;
  }
  // Groups of consecutive entries of seq that are consecutive kept input dims.
  std::vector<int> kept = seq;
  std::sort(kept.begin(), kept.end());
  auto rank_of = [&](int d) { return static_cast<int>(std::find(kept.begin(), kept.end(), d) - kept.begin()); };
  std::vector<std::vector<int>> groups;  // in output order, each a run of input dims
  for (int d : seq) {
    if (!groups.empty() && rank_of(groups.back().back()) + 1 == rank_of(d)) groups.back().push_back(d);
    else groups.push_back({d});
  }
  // Input order of the groups = order of their first dims.
  std::vector<int> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return groups[a][0] < groups[b][0]; });
  std::vector<int> pos(groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) pos[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  auto extent = [&](const std::vector<int>& gdims) {
    std::int64_t e = 1;
    for (int d : gdims) e *= xs[static_cast<std::size_t>(d)];
    return e;
  };
  for (int gi : order) r.x.push_back(extent(groups[static_cast<std::size_t>(gi)]));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    r.y.push_back(extent(groups[i]));
    r.perm.push_back(pos[i]);
  }
  return r;
}

// Units of `d` needed for a run of at least one stick when a unit spans `unit_bytes`.
std::int64_t stick_units(std::uint64_t unit_bytes, std::uint64_t stick) {
  return unit_bytes >= stick ? 1 : static_cast<std::int64_t>((stick + unit_bytes - 1) / unit_bytes);
}

// divide_work in whole groups of `g` units (the last core may get a partial group).
std::vector<CoreGroup> divide_granular(std::int64_t extent, std::int64_t g, int cores) {
  std::vector<CoreGroup> out;
  for (CoreGroup cg : divide_work((extent + g - 1) / g, cores)) {
    cg.share *= g;
    cg.base *= g;
    std::int64_t end = cg.base + cg.count * cg.share;
    if (end > extent && cg.count > 1) {
      out.push_back(CoreGroup{cg.first, cg.count - 1, cg.share, cg.base});
      std::int64_t last = cg.base + (cg.count - 1) * cg.share;
      out.push_back(CoreGroup{cg.first + cg.count - 1, 1, extent - last, last});
    } else {
      if (end > extent) cg.share = extent - cg.base;
      out.push_back(cg);
    }
  }
  return out;
}

// Tiles of a core's `share` units, each a multiple of `g` units (bar the last), of at most
// `max_units`; at least kPipelineTiles when each keeps kMinPipelinedTileBytes.
std::vector<TileRange> granular_tiles(std::int64_t share, std::int64_t g, std::int64_t max_units,
                                      std::uint64_t unit_bytes) {
  std::int64_t groups = (share + g - 1) / g;
  std::int64_t max_groups = std::max<std::int64_t>(1, max_units / g);
  std::int64_t pipelined = (groups + kPipelineTiles - 1) / kPipelineTiles;
  if (static_cast<std::uint64_t>(pipelined * g) * unit_bytes >= kMinPipelinedTileBytes)
    max_groups = std::min(max_groups, pipelined);
  std::vector<TileRange> out;
  for (const TileRange& t : split_even(groups, max_groups)) {
    std::int64_t b = t.begin * g;
    out.push_back(TileRange{b, std::min(share, (t.begin + t.size) * g) - b});
  }
  return out;
}

// A strided access from a (offset, run, rows, stride) in elements; a contiguous pattern
// becomes one run.
Access pattern(int buffer, Dtype dt, std::int64_t offset, std::int64_t run, std::int64_t rows, std::int64_t stride) {
  Access a;
  a.buffer = buffer;
  a.offset.beta = static_cast<std::int64_t>(dtype_bytes(dt, static_cast<std::uint64_t>(offset)));
  if (rows > 1 && stride == run) {
    run *= rows;
    rows = 1;
  }
  a.bytes = dtype_bytes(dt, static_cast<std::uint64_t>(run));
  a.rows = static_cast<std::uint64_t>(rows);
  a.stride = rows > 1 ? dtype_bytes(dt, static_cast<std::uint64_t>(stride)) : 0;
  return a;
}

// Row-major strides (elements) of a shape.
std::vector<std::int64_t> strides(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (std::size_t i = s.size() - 1; i-- > 0;) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// The split: output dim q over the cores, in groups of g units (runs of at least a stick on
// both sides where the shape allows).
struct Split {
  int q = -1;
  std::int64_t g = 1;
  std::uint64_t unit_bytes = 0;  // LX per unit of q (both tile buffers when the stick moves)
};

// Among the output dims whose unit group fits the tile budget: the one that occupies the
// most cores, then the outermost.
std::optional<Split> choose_split(const Reduced& r, Dtype dt, int cores, std::uint64_t budget, std::uint64_t stick,
                                  std::uint64_t* need) {
  std::optional<Split> best;
  std::int64_t best_par = 0;
  const std::int64_t total = product(r.y, 0, r.y.size());
  *need = 0;
  for (std::size_t q = 0; q < r.y.size(); ++q) {
    if (r.y[q] == 1 && r.y.size() > 1) continue;
    auto p = static_cast<std::size_t>(r.perm[q]);
    std::int64_t gx = stick_units(dtype_bytes(dt, static_cast<std::uint64_t>(product(r.x, p + 1, r.x.size()))), stick);
    std::int64_t gy = stick_units(dtype_bytes(dt, static_cast<std::uint64_t>(product(r.y, q + 1, r.y.size()))), stick);
    Split s{static_cast<int>(q), std::min(std::lcm(gx, gy), r.y[q]), 0};
    s.unit_bytes = dtype_bytes(dt, static_cast<std::uint64_t>(total / r.y[q])) * (r.stick_moves() ? 2 : 1);
    std::uint64_t group = s.unit_bytes * static_cast<std::uint64_t>(s.g);
    if (group > budget) {
      *need = *need == 0 ? group : std::min(*need, group);
      continue;
    }
    std::int64_t par = std::min<std::int64_t>(cores, (r.y[q] + s.g - 1) / s.g);
    if (!best || par > best_par) {
      best = s;
      best_par = par;
    }
  }
  return best;
}

// Runs (bytes) beyond which a longer one no longer helps a block transpose: a few sticks in
// a row of the same DRAM page serve at the stream rate.
constexpr std::uint64_t kBlockRunCap = 1024;
// Runs (bytes) a block may be cut down to so that a core has several blocks, its loads
// overlapping its stores: with one block a core loads and then stores, and 32 identical cores
// do so in step, a read phase then a write phase near the one-direction rates (2048 x 2048 at
// 147 GB/s where the card moves every size at ~116: accuracy.md, "Still off", transport).
constexpr std::uint64_t kPipelinedRunFloor = 512;

// A block grid for a 2-D transpose that moves the stick: x's rows over `rows` cores, its columns
// over `cols`; each core's part cut into blocks of `an` x rows by `bn` x columns.
struct BlockGrid {
  int rows = 1, cols = 1;
  std::int64_t share_r = 0, share_c = 0;  // x rows and columns per core (whole sticks)
  std::int64_t an = 0, bn = 0;            // x rows and columns per block
  int used = 0;                           // cores with work
  std::uint64_t run = 0;                  // the shorter side's run, capped at kBlockRunCap
};

// The grid that keeps the most cores busy, then the longest runs on both sides (the card's
// stick layout makes a 64 x 64 block one contiguous run on each side; row-major, a block's
// runs are its row and column lengths), then the fewest grid rows. Blocks fit the tile budget
// (both buffers, as loaded and reshuffled) and, while their runs stay at kPipelinedRunFloor or
// more, are cut in kPipelineTiles per core so that loads overlap stores.
BlockGrid choose_grid(std::int64_t a, std::int64_t b, Dtype dt, std::int64_t stick, int cores, std::uint64_t budget) {
  auto bytes_of = [&](std::int64_t n) { return dtype_bytes(dt, static_cast<std::uint64_t>(n)); };
  const std::int64_t ga = (a + stick - 1) / stick, gb = (b + stick - 1) / stick;  // stick groups
  BlockGrid best;
  for (int cr = 1; cr <= cores && cr <= ga; ++cr) {
    const int cc = static_cast<int>(std::min<std::int64_t>(cores / cr, gb));
    BlockGrid g;
    g.rows = cr;
    g.cols = cc;
    g.share_r = (ga + cr - 1) / cr * stick;
    g.share_c = (gb + cc - 1) / cc * stick;
    g.used = static_cast<int>(((a + g.share_r - 1) / g.share_r) * ((b + g.share_c - 1) / g.share_c));
    g.an = std::min(g.share_r, a);
    g.bn = std::min(g.share_c, b);
    auto bytes = [&] { return 2 * bytes_of(g.an * g.bn); };
    auto halve = [&](std::int64_t& n) { n = std::max(stick, (n / 2 + stick - 1) / stick * stick); };
    auto shrink = [&](std::uint64_t limit, std::int64_t floor) {
      floor = std::max(floor, stick);  // halving stops at a stick: a floor below it never came (stick_bytes 4096)
      while (bytes() > limit && (g.an > floor || g.bn > floor)) halve(g.an >= g.bn ? g.an : g.bn);
    };
    shrink(budget, stick);
    const std::uint64_t per_core = bytes_of(std::min(g.share_r, a) * std::min(g.share_c, b));
    const auto floor_units = static_cast<std::int64_t>(kPipelinedRunFloor * 8 / dtype_bits(dt));
    const std::uint64_t pipelined = std::max<std::uint64_t>(2 * kMinPipelinedTileBytes, 2 * per_core / kPipelineTiles);
    shrink(pipelined, floor_units);
    // A core left with one block still loads it whole and then stores it, in step with the
    // others: cut it in two, one side's runs down to half the floor (the other keeps it).
    auto blocks = [&] { return ((std::min(g.share_r, a) + g.an - 1) / g.an) * ((std::min(g.share_c, b) + g.bn - 1) / g.bn); };
    const std::int64_t half_floor = std::max(stick, floor_units / 2);
    while (blocks() < 2 && bytes() > pipelined && std::min(g.an, g.bn) >= floor_units && std::max(g.an, g.bn) > half_floor)
      halve(g.an >= g.bn ? g.an : g.bn);
    g.run = std::min<std::uint64_t>(kBlockRunCap, bytes_of(std::min(g.an, g.bn)));
    if (g.used > best.used || (g.used == best.used && g.run > best.run)) best = g;
  }
  return best;
}

// A 2-D transpose x [A, B] -> y [B, A] that moves the stick: x cut into blocks over a grid of
// cores (choose_grid), one strided load, an SFP copy and one strided store per block. The
// cores of one grid row take consecutive column shares (one template); grid rows are emitted
// one by one.
void lower_blocks(LowerContext& ctx, const Op& op, const std::string& kernel, const Reduced& r) {
  const OpGraph& g = ctx.ops;
  const OpTensor& x = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const Dtype dt = x.dtype;
  const std::int64_t a = r.x[0], b = r.x[1];
  // Counted in elements, converted by dtype_bytes, so that int4 (two per byte) is exact: every
  // block starts and ends on whole bytes, as rows and columns of x are whole bytes (the caller
  // checks) and blocks are whole sticks (256 int4).
  auto bytes_of = [&](std::uint64_t n) { return dtype_bytes(dt, n); };
  const std::int64_t stick = std::max<std::int64_t>(1, static_cast<std::int64_t>(ctx.stick_bytes * 8 / dtype_bits(dt)));
  const BlockGrid grid = choose_grid(a, b, dt, stick, ctx.cores, ctx.budget);
  const std::uint64_t block_bytes = 2 * bytes_of(static_cast<std::uint64_t>(grid.an * grid.bn));
  if (block_bytes > ctx.budget)
    throw InputError(g.file, "/ops/" + std::to_string(op.index),
                     fmt::format("transpose: one {} x {} block needs {} bytes of LX, more than the {}-byte tile budget",
                                 grid.an, grid.bn, block_bytes, ctx.budget));
  if (ctx.report) {
    KernelReport& rep = ctx.report->kernel(kernel);
    rep.split = fmt::format("x rows over {} x columns over {} ({} of {} cores)", grid.rows, grid.cols, grid.used, ctx.cores);
    rep.why = fmt::format("a transpose that moves the stick, in blocks of {} x {} elements: runs of {} B loaded and {} B "
                          "stored (the card's stick layout makes a block one run on each side)",
                          grid.an, grid.bn, bytes_of(static_cast<std::uint64_t>(grid.bn)), bytes_of(static_cast<std::uint64_t>(grid.an)));
  }
  const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  auto strided = [&](std::uint64_t off, std::uint64_t run, std::uint64_t rows, std::uint64_t stride) {
    SlicePattern p;
    p.offset = bytes_of(off);
    p.elements = run * rows;
    p.bytes = bytes_of(rows > 1 && run == stride ? run * rows : run);
    p.rows = rows > 1 && run != stride ? rows : 1;
    p.stride = p.rows > 1 ? bytes_of(stride) : 0;
    return p;
  };
  const std::vector<CoreGroup> row_groups = divide_granular(a, stick, grid.rows);
  const std::vector<CoreGroup> col_groups = divide_granular(b, stick, grid.cols);
  int gi = 0;
  for (const CoreGroup& rg : row_groups)
    for (int rc = rg.first; rc < rg.first + rg.count; ++rc) {
      const std::int64_t row0 = rg.start(rc);
      for (const CoreGroup& cg : col_groups) {
        // The cores of this grid row that share a column share: core rc * cols + j, each the
        // group's column share further on (a step of 1 unit of that many bytes per core).
        const CoreGroup grp{rc * grid.cols + cg.first, cg.count, 1, cg.base};
        const std::uint64_t x_step = bytes_of(static_cast<std::uint64_t>(cg.share)), y_step = x_step * ua;
        // Blocks of whole sticks but the last (as the shares are): split_even's near-equal
        // blocks could start an int4 block half a byte into a row of y.
        const std::vector<TileRange> rts = split_sticks(rg.share, grid.an, stick), cts = split_sticks(cg.share, grid.bn, stick);
        for (std::size_t ti = 0; ti < rts.size(); ++ti)
          for (std::size_t ci = 0; ci < cts.size(); ++ci) {
            const auto r0 = static_cast<std::uint64_t>(row0 + rts[ti].begin), rn = static_cast<std::uint64_t>(rts[ti].size);
            const auto c0 = static_cast<std::uint64_t>(cg.base + cts[ci].begin), cn = static_cast<std::uint64_t>(cts[ci].size);
            const std::string prefix = fmt::format("{}/g{}/t{}/b{}", kernel, gi, ti, ci);
            SlicePattern xp = strided(r0 * ub + c0, cn, rn, ub), yp = strided(c0 * ua + r0, rn, cn, ua);
            int xt = emit_load(ctx, prefix + "/load_" + x.name, prefix + "/" + x.name, ctx.hbm[op.inputs[0]], dt, xp, UnitStep::bytes(x_step), grp);
            int yt = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, yp.total_bytes(), dt);
            Task t = group_task(prefix + "/transpose", UnitKind::sfp, "copy", grp, dt);
            t.elements = yp.elements;
            t.reads.push_back(whole(xt, xp.total_bytes()));
            t.writes.push_back(whole(yt, yp.total_bytes()));
            ctx.builder.add_task(std::move(t));
            emit_store(ctx, prefix + "/store_" + y.name, yt, ctx.hbm[op.outputs[0]], dt, yp, UnitStep::bytes(y_step), grp);
          }
        ++gi;
      }
    }
}

}  // namespace

void lower_transpose(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& x = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const Dtype dt = x.dtype;
  const Reduced r = reduce(x.shape, op.perm);
  // A 2-D transpose that moves the stick: blocks over a grid of cores, runs on both sides
  // (rows and columns of whole bytes: an int4 tensor of an odd dim splits as below).
  const bool whole_bytes = r.x.size() == 2 && (static_cast<std::uint64_t>(r.x[0]) * dtype_bits(dt)) % 8 == 0 &&
                           (static_cast<std::uint64_t>(r.x[1]) * dtype_bits(dt)) % 8 == 0;
  if (r.x.size() == 2 && r.stick_moves() && whole_bytes) return lower_blocks(ctx, op, kernel, r);
  std::uint64_t need = 0;
  auto split = choose_split(r, dt, ctx.cores, ctx.budget, ctx.stick_bytes, &need);
  if (!split)
    throw InputError(g.file, "/ops/" + std::to_string(op.index),
                     fmt::format("transpose: one slice needs {} bytes of LX, more than the {}-byte tile budget "
                                 "(tiling inside a slice is not supported yet)",
                                 need, ctx.budget));
  const auto q = static_cast<std::size_t>(split->q);
  const auto p = static_cast<std::size_t>(r.perm[q]);
  // The reduced tensors have the same byte layouts as x and y; slice them like any operand.
  OpTensor rx{x.name, r.x, dt}, ry{y.name, r.y, dt};
  OperandSlicer xs{&rx, static_cast<int>(p), false}, ys{&ry, static_cast<int>(q), false};
  const std::vector<std::int64_t> xst = strides(r.x);
  const std::size_t n = r.y.size();
  // Loads to gather one tile run by run (stick kept): one per index of the output dims
  // outside the two innermost; `fixed` of them per unit of q when q is one of those dims.
  const bool q_outer = q + 2 < n;
  const std::int64_t fixed = n > 2 ? product(r.y, 0, n - 2) / (q_outer ? r.y[q] : 1) : 1;
  const bool reshuffle = r.stick_moves() || fixed * (q_outer ? split->g : 1) > kMaxGatherLoads;
  const std::uint64_t unit_bytes = reshuffle && !r.stick_moves() ? split->unit_bytes * 2 : split->unit_bytes;
  if (unit_bytes * static_cast<std::uint64_t>(split->g) > ctx.budget)
    throw InputError(g.file, "/ops/" + std::to_string(op.index),
                     fmt::format("transpose: one slice needs {} bytes of LX, more than the {}-byte tile budget "
                                 "(tiling inside a slice is not supported yet)",
                                 unit_bytes * static_cast<std::uint64_t>(split->g), ctx.budget));
  auto max_units = static_cast<std::int64_t>(ctx.budget / unit_bytes);
  if (!reshuffle && q_outer) max_units = std::min(max_units, std::max(split->g, kMaxGatherLoads / fixed));

  auto groups = divide_granular(r.y[q], split->g, ctx.cores);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    auto tiles = granular_tiles(grp.share, split->g, max_units, unit_bytes);
    for (std::size_t ti = 0; ti < tiles.size(); ++ti) {
      const TileRange& tile = tiles[ti];
      const std::int64_t begin = grp.base + tile.begin;
      const std::string prefix = fmt::format("{}/g{}/t{}", kernel, gi, ti);
      SlicePattern xp = xs.slice(begin, tile.size), yp = ys.slice(begin, tile.size);
      int yt = -1;
      if (reshuffle) {
        // Load the input region as it lies, reshuffle it into output order on the SFP.
        int xt = emit_load(ctx, prefix + "/load_" + x.name, prefix + "/" + x.name, ctx.hbm[op.inputs[0]], dt, xp,
                           xs.unit_offset(), grp);
        yt = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, yp.total_bytes(), dt);
        Task t = group_task(prefix + "/transpose", UnitKind::sfp, "copy", grp, dt);
        t.elements = yp.elements;
        t.reads.push_back(whole(xt, xp.total_bytes()));
        t.writes.push_back(whole(yt, yp.total_bytes()));
        ctx.builder.add_task(std::move(t));
      } else {
        // Gather: the tile buffer is in output order; each load moves, for one index of the
        // output dims outside the two innermost, `rows` runs of the innermost dim.
        yt = ctx.builder.add_buffer(prefix + "/" + y.name, Space::lx, yp.total_bytes(), dt);
        Shape tshape = r.y;
        tshape[q] = tile.size;
        const std::vector<std::int64_t> lst = strides(tshape);
        auto sx = [&](std::size_t j) { return xst[static_cast<std::size_t>(r.perm[j])]; };
        const std::int64_t run = tshape[n - 1];
        const std::int64_t rows = n > 1 ? tshape[n - 2] : 1;
        const std::int64_t outer = n > 2 ? product(tshape, 0, n - 2) : 1;
        for (std::int64_t k = 0; k < outer; ++k) {
          std::int64_t xoff = begin * xst[p], loff = 0, rest = k;
          for (std::size_t jj = 0; jj + 2 < n; ++jj) {  // dims n-3 down to 0
            const std::size_t j = n - 3 - jj;
            std::int64_t idx = rest % tshape[j];
            rest /= tshape[j];
            xoff += idx * sx(j);
            loff += idx * lst[j];
          }
          Task t = group_task(outer > 1 ? fmt::format("{}/load_{}.{}", prefix, x.name, k) : prefix + "/load_" + x.name,
                              UnitKind::dma, "load", grp, dt);
          Access from = pattern(ctx.hbm[op.inputs[0]], dt, xoff, run, rows, n > 1 ? sx(n - 2) : run);
          if (grp.count > 1) {
            from.offset.alpha = static_cast<std::int64_t>(core_step_bytes(xs.unit_offset(), grp.share));
            from.offset.beta -= from.offset.alpha * grp.first;
          }
          t.reads.push_back(from);
          t.writes.push_back(pattern(yt, dt, loff, run, rows, n > 1 ? lst[n - 2] : run));
          ctx.builder.add_task(std::move(t));
        }
      }
      emit_store(ctx, prefix + "/store_" + y.name, yt, ctx.hbm[op.outputs[0]], dt, yp, ys.unit_offset(), grp);
    }
  }
}

}  // namespace dfsim

// Lowering of a norm over the last dim (softmax, layernorm, rmsnorm) whose rows do not fit
// LX: each row range is tiled inside the row in chunks, in two passes. Pass 1 walks the
// chunks and carries the row statistics (softmax: the running max and the running sum with
// its exp correction; layernorm: sum and sum of squares; rmsnorm: sum of squares); pass 2
// reloads each chunk and writes the output. The input is read twice, the output once.
#include <fmt/format.h>

#include <map>

#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Emits the SFP tasks of one row tile on one core group.
class ChunkEmitter {
 public:
  ChunkEmitter(LowerContext& ctx, const CoreGroup& grp, Dtype dt) : ctx_(ctx), grp_(grp), dt_(dt) {}

  // Registers an LX buffer written elsewhere (a load) so steps can read it.
  int known(int b, std::uint64_t bytes) {
    bytes_[b] = bytes;
    return b;
  }
  // `op` reads `reads` and writes a new buffer `out` of `bytes`; `elements` per instance.
  int step(const std::string& name, const std::string& op, std::vector<int> reads, const std::string& out,
           std::uint64_t bytes, std::uint64_t elements) {
    int w = known(ctx_.builder.add_buffer(out, Space::lx, bytes, dt_), bytes);
    Task t = group_task(name, UnitKind::sfp, op, grp_, dt_);
    t.elements = elements;
    for (int r : reads)
      if (r >= 0) t.reads.push_back(whole(r, bytes_.at(r)));
    t.writes.push_back(whole(w, bytes));
    ctx_.builder.add_task(std::move(t));
    return w;
  }

 private:
  LowerContext& ctx_;
  const CoreGroup& grp_;
  Dtype dt_;
  std::map<int, std::uint64_t> bytes_;
};

}  // namespace

bool lower_norm_chunks(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& x = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (op.dim != static_cast<int>(x.shape.size()) - 1) return false;
  if (ctx.lx[static_cast<std::size_t>(op.inputs[0])] >= 0 || ctx.lx[static_cast<std::size_t>(op.outputs[0])] >= 0)
    return false;  // kept in LX between kernels: the tiles would not line up with the kept slices
  const std::int64_t d = x.shape.back(), rows = static_cast<std::int64_t>(x.elements()) / d;
  const std::uint64_t es = dtype_bytes(x.dtype, 1);
  const bool softmax = op.op == "softmax";
  const std::size_t weights = op.inputs.size() - 1;
  // Chunk length: whole sticks such that a tile of up to 16 rows (x, two temporaries and y
  // per row, 6 row statistics) and the weight chunks fit the budget; the weight chunks are
  // re-read for every row tile, so more rows per tile means less weight traffic.
  const std::int64_t stick = std::max<std::int64_t>(1, static_cast<std::int64_t>(ctx.stick_bytes / es));
  const std::uint64_t stats = 6 * es;
  const auto target = u64(std::min<std::int64_t>(16, (rows + ctx.cores - 1) / ctx.cores));
  const std::uint64_t per_elem = (4 * target + weights) * es;
  if (ctx.budget < stats * target + per_elem * u64(stick)) return false;
  const std::int64_t len =
      std::min<std::int64_t>(d, static_cast<std::int64_t>((ctx.budget - stats * target) / per_elem) / stick * stick);
  const std::vector<TileRange> chunks = split_even(d, len);
  const std::uint64_t row_bytes = u64(len) * (4 * es) + stats;
  const auto groups = divide_work(rows, ctx.cores);
  const int hx = ctx.hbm[static_cast<std::size_t>(op.inputs[0])];
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const CoreGroup& grp = groups[gi];
    auto row_tiles = tile_units(grp.share, row_bytes, u64(len) * weights * es, ctx.budget, 1);
    if (!row_tiles) return false;
    for (std::size_t ri = 0; ri < row_tiles->size(); ++ri) {
      const TileRange& rt = (*row_tiles)[ri];
      const auto r0 = u64(grp.base + rt.begin), rn = u64(rt.size);
      const std::uint64_t vec = rn * es;
      ChunkEmitter e(ctx, grp, y.dtype);
      auto chunk_of = [&](const TileRange& c) {
        SlicePattern p;
        p.offset = (r0 * u64(d) + u64(c.begin)) * es;
        p.bytes = u64(c.size) * es;
        p.rows = rn;
        p.stride = rn > 1 ? u64(d) * es : 0;
        p.elements = rn * u64(c.size);
        return p;
      };
      // Pass 1: the statistics, carried chunk to chunk.
      int m = -1, s = -1, q = -1;
      for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
        const std::string pre = fmt::format("{}/g{}/t{}/p1c{}", kernel, gi, ri, ci);
        SlicePattern sp = chunk_of(chunks[ci]);
        const std::uint64_t n = sp.elements, b = sp.total_bytes();
        int xc = e.known(emit_load(ctx, pre + "/load_" + x.name, pre + "/" + x.name, hx, x.dtype, sp, UnitStep::bytes(u64(d) * es), grp), b);
        if (softmax) {
          int m2 = e.step(pre + "/softmax.amax", "amax", {xc, m}, pre + "/max", vec, n);
          int t = e.step(pre + "/softmax.sub", "sub", {xc, m2}, pre + "/shifted", b, n);
          int ex = e.step(pre + "/softmax.exp", "exp", {t}, pre + "/exp", b, n);
          s = e.step(pre + "/softmax.sum", "sum", {ex, s, m, m2}, pre + "/sum", vec, n);  // rescales the carry by exp(m - m2)
          m = m2;
        } else {
          if (op.op == "layernorm") s = e.step(pre + "/" + op.op + ".sum", "sum", {xc, s}, pre + "/sum", vec, n);
          int sq = e.step(pre + "/" + op.op + ".square", "mul", {xc}, pre + "/sq", b, n);
          q = e.step(pre + "/" + op.op + ".sum_sq", "sum", {sq, q}, pre + "/sum_sq", vec, n);
        }
      }
      const std::string tile = fmt::format("{}/g{}/t{}", kernel, gi, ri);
      int r = softmax ? -1 : e.step(tile + "/" + op.op + ".rsqrt", "rsqrt", {q, s}, tile + "/rstd", vec, rn);
      // Pass 2: each chunk again, normalised and stored.
      for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
        const std::string pre = fmt::format("{}/p2c{}", tile, ci);
        SlicePattern sp = chunk_of(chunks[ci]);
        const std::uint64_t n = sp.elements, b = sp.total_bytes();
        int xc = e.known(emit_load(ctx, pre + "/load_" + x.name, pre + "/" + x.name, hx, x.dtype, sp, UnitStep::bytes(u64(d) * es), grp), b);
        int out = -1;
        if (softmax) {
          int t = e.step(pre + "/softmax.sub", "sub", {xc, m}, pre + "/shifted", b, n);
          int ex = e.step(pre + "/softmax.exp", "exp", {t}, pre + "/exp", b, n);
          out = e.step(pre + "/softmax.div", "div", {ex, s}, pre + "/" + y.name, b, n);
        } else {
          int c = op.op == "layernorm" ? e.step(pre + "/layernorm.sub", "sub", {xc, s}, pre + "/centred", b, n) : xc;
          int nrm = e.step(pre + "/" + op.op + ".scale", "mul", {c, r}, weights ? pre + "/normed" : pre + "/" + y.name, b, n);
          out = nrm;
          if (weights) {
            // This chunk of the weight (and bias): the same bytes for every core of the group.
            std::vector<int> w;
            for (std::size_t i = 1; i <= weights; ++i) {
              const OpTensor& wt = g.tensors[static_cast<std::size_t>(op.inputs[i])];
              SlicePattern wp{u64(chunks[ci].begin) * es, u64(chunks[ci].size) * es, 1, 0, u64(chunks[ci].size)};
              w.push_back(e.known(emit_load(ctx, pre + "/load_" + wt.name, pre + "/" + wt.name,
                                            ctx.hbm[static_cast<std::size_t>(op.inputs[i])], wt.dtype, wp, UnitStep{}, grp),
                                  wp.bytes));
            }
            std::vector<int> rd = {nrm};
            rd.insert(rd.end(), w.begin(), w.end());
            out = e.step(pre + "/" + op.op + (weights == 2 ? ".affine" : ".weight"), weights == 2 ? "fma" : "mul", rd,
                         pre + "/" + y.name, b, n);
          }
        }
        emit_store(ctx, pre + "/store_" + y.name, out, ctx.hbm[static_cast<std::size_t>(op.outputs[0])], y.dtype, sp,
                   UnitStep::bytes(u64(d) * es), grp);
      }
    }
  }
  return true;
}

}  // namespace dfsim

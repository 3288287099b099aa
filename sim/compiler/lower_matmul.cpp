// Lowering of 2-D matmul [M,K] @ [K,N]: a grid of cores over M and N; per core, tiles of
// m x n with a chain of k-steps, each a PT task reading A(m,k), B(k,n) and the previous fp32
// accumulator.
#include <fmt/format.h>
#include <stdexcept>

#include "sim/common/error.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

// Byte pattern of the sub-matrix rows [r, r+nr) x cols [c, c+nc) of a row-major matrix.
SlicePattern block(const OpTensor& t, std::int64_t r, std::int64_t nr, std::int64_t c, std::int64_t nc) {
  auto cols = static_cast<std::uint64_t>(t.shape[1]);
  SlicePattern p;
  p.elements = static_cast<std::uint64_t>(nr * nc);
  p.offset = dtype_bytes(t.dtype, static_cast<std::uint64_t>(r) * cols + static_cast<std::uint64_t>(c));
  if (static_cast<std::uint64_t>(nc) == cols || nr == 1) {
    p.bytes = dtype_bytes(t.dtype, p.elements);
  } else {
    p.rows = static_cast<std::uint64_t>(nr);
    p.bytes = dtype_bytes(t.dtype, static_cast<std::uint64_t>(nc));
    p.stride = dtype_bytes(t.dtype, cols);
  }
  return p;
}

InputError no_tile(const LowerContext& ctx, const Op& op) {
  return InputError(ctx.ops.file, "/ops/" + std::to_string(op.index),
                    "matmul: even a 1x1x1 tile does not fit the " + std::to_string(ctx.budget) + "-byte tile budget");
}

// An affine value that is `at_first` on core `first` and grows by `step` per core.
Affine affine_from(int first, std::int64_t at_first, std::int64_t step) {
  return Affine{step, at_first - step * first};
}

// Operand sharing over the grid: when M and N divide evenly over it, every core runs the same
// tiles, so the A tile of a grid row is identical on its C cores and the B tile of a grid
// column on its R cores. Each core loads 1/C of the A tile (a band of its rows) and 1/R of
// the B tile (a band of its k rows) and multicasts them over the ring: every operand byte
// crosses the off-chip bus once per tile instead of once per core.
//
// With `ksplit` > 1 (a forced work division), K is divided over `ksplit` such grids (grid g
// on cores [g R C, (g+1) R C) takes K range g): each ends a tile's k chain with an fp32
// partial, and the partials of one output tile meet in a binary tree over the ring (a ring
// copy and an SFP add per step) before grid 0 stores the tile.
//
// Returns false (nothing emitted) when the shape does not divide evenly or no tile splits
// into the bands.
bool lower_shared(LowerContext& ctx, const Op& op, const std::string& kernel, const CoreGrid& grid, int ksplit) {
  const OpGraph& g = ctx.ops;
  const OpTensor& A = g.tensors[op.inputs[0]];
  const OpTensor& B = g.tensors[op.inputs[1]];
  const OpTensor& C = g.tensors[op.outputs[0]];
  std::int64_t M = A.shape[0], K = A.shape[1], N = B.shape[1];
  const int R = grid.rows, Cn = grid.cols, RC = R * Cn;
  if (RC * ksplit < 2 || M % R != 0 || N % Cn != 0 || K % ksplit != 0) return false;
  const std::int64_t mshare = M / R, nshare = N / Cn, kpart = K / ksplit;
  OperandSharing sharing{Cn, R, ksplit > 1};
  auto tile = plan_matmul_tile(mshare, nshare, kpart, A.dtype, ctx.budget, sharing);
  if (!tile) return false;
  auto mt = split_even(mshare, tile->m), nt = split_even(nshare, tile->n), kt = split_even(kpart, tile->k);
  const int a_hbm = ctx.hbm[op.inputs[0]], b_hbm = ctx.hbm[op.inputs[1]], c_hbm = ctx.hbm[op.outputs[0]];
  // The cores of K group kk: all of its grid, or its grid row r.
  auto grid_group = [&](int kk) { return CoreGroup{kk * RC, RC, 0, 0}; };
  auto row_group = [&](int kk, int r) { return CoreGroup{kk * RC + r * Cn, Cn, nshare, 0}; };
  auto kname = [&](const std::string& prefix, int kk) { return ksplit > 1 ? prefix + "/g" + std::to_string(kk) : prefix; };

  // Core r*Cn + j of grid row r loads band j of the A tile (rows [row, row+mrows) of grid row
  // r's M slice, k range kr) and multicasts it to the Cn cores of its grid row.
  auto load_a = [&](const std::string& name, int kk, int buf, std::int64_t mrow, std::int64_t mrows, const TileRange& kr) {
    std::int64_t band = mrows / Cn;
    for (int r = 0; r < R; ++r) {
      CoreGroup rg = row_group(kk, r);
      SlicePattern p = block(A, r * mshare + mrow, band, kr.begin, kr.size);
      Task t = group_task(name + "/r" + std::to_string(r), UnitKind::dma, "load", rg, A.dtype);
      Access rd = hbm_slice(a_hbm, p, 0, rg);
      rd.offset = affine_from(rg.first, static_cast<std::int64_t>(p.offset),
                              static_cast<std::int64_t>(dtype_bytes(A.dtype, static_cast<std::uint64_t>(band * K))));
      t.reads.push_back(rd);
      for (int d = 0; d < Cn; ++d) {
        Access w = whole(buf, p.total_bytes());
        w.offset = affine_from(rg.first, 0, static_cast<std::int64_t>(p.total_bytes()));
        w.core = Affine{0, rg.first + d};
        t.writes.push_back(w);
      }
      ctx.builder.add_task(std::move(t));
    }
  };
  // Core r*Cn + j loads band r of the B tile of grid column j (k rows of kr, columns
  // [col, col+ncols) of column j's N slice) and multicasts it to the R cores of column j.
  auto load_b = [&](const std::string& name, int kk, int buf, std::int64_t col, std::int64_t ncols, const TileRange& kr) {
    std::int64_t band = kr.size / R;
    for (int r = 0; r < R; ++r) {
      CoreGroup rg = row_group(kk, r);
      SlicePattern p = block(B, kr.begin + r * band, band, col, ncols);
      Task t = group_task(name + "/r" + std::to_string(r), UnitKind::dma, "load", rg, B.dtype);
      Access rd = hbm_slice(b_hbm, p, 0, rg);
      rd.offset = affine_from(rg.first, static_cast<std::int64_t>(p.offset),
                              static_cast<std::int64_t>(dtype_bytes(B.dtype, static_cast<std::uint64_t>(nshare))));
      t.reads.push_back(rd);
      for (int i = 0; i < R; ++i) {
        Access w = whole(buf, p.total_bytes());
        w.offset = Affine{0, r * static_cast<std::int64_t>(p.total_bytes())};
        w.core = Affine{1, (i - r) * Cn};
        t.writes.push_back(w);
      }
      ctx.builder.add_task(std::move(t));
    }
  };
  // K range of group kk, k-step ki.
  auto krange = [&](int kk, std::size_t ki) { return TileRange{kk * kpart + kt[ki].begin, kt[ki].size}; };

  for (std::size_t mi = 0; mi < mt.size(); ++mi) {
    std::int64_t mrow = mt[mi].begin, mrows = mt[mi].size;
    std::string mp = kernel + "/m" + std::to_string(mi);
    const std::uint64_t ab = dtype_bytes(A.dtype, static_cast<std::uint64_t>(mrows * kt[0].size));
    // With a single k-step, the A tile is loaded once and shared by every n tile.
    std::vector<int> a_shared(static_cast<std::size_t>(ksplit), -1);
    if (kt.size() == 1)
      for (int kk = 0; kk < ksplit; ++kk) {
        std::string p = kname(mp, kk);
        a_shared[static_cast<std::size_t>(kk)] = ctx.builder.add_buffer(p + "/" + A.name, Space::lx, ab, A.dtype);
        load_a(p + "/load_" + A.name, kk, a_shared[static_cast<std::size_t>(kk)], mrow, mrows, krange(kk, 0));
      }
    for (std::size_t ni = 0; ni < nt.size(); ++ni) {
      std::string np = mp + "/n" + std::to_string(ni);
      std::int64_t col = nt[ni].begin, ncols = nt[ni].size;
      const auto elems = static_cast<std::uint64_t>(mrows * ncols);
      std::vector<int> part(static_cast<std::size_t>(ksplit), -1);  // per K group: its result
      for (int kk = 0; kk < ksplit; ++kk) {
        int acc = -1;
        std::uint64_t acc_bytes = 0;
        for (std::size_t ki = 0; ki < kt.size(); ++ki) {
          std::string kp = kname(np, kk) + "/k" + std::to_string(ki);
          bool last = ki + 1 == kt.size();
          auto ksz = static_cast<std::uint64_t>(kt[ki].size);
          int a = a_shared[static_cast<std::size_t>(kk)];
          std::uint64_t abk = dtype_bytes(A.dtype, static_cast<std::uint64_t>(mrows) * ksz);
          if (a < 0) {
            a = ctx.builder.add_buffer(kp + "/" + A.name, Space::lx, abk, A.dtype);
            load_a(kp + "/load_" + A.name, kk, a, mrow, mrows, krange(kk, ki));
          }
          std::uint64_t bb = dtype_bytes(B.dtype, ksz * static_cast<std::uint64_t>(ncols));
          int b = ctx.builder.add_buffer(kp + "/" + B.name, Space::lx, bb, B.dtype);
          load_b(kp + "/load_" + B.name, kk, b, col, ncols, krange(kk, ki));
          // The chain ends in the output dtype, or in an fp32 partial when K is split.
          Dtype od = last && ksplit == 1 ? C.dtype : Dtype::fp32;
          std::uint64_t ob = dtype_bytes(od, elems);
          int out = ctx.builder.add_buffer(kp + (last && ksplit == 1 ? "/" + C.name : "/acc"), Space::lx, ob, od);
          Task pt = group_task(kp + "/matmul", UnitKind::pt, "matmul", grid_group(kk), od);
          pt.m = static_cast<std::uint64_t>(mrows);
          pt.n = static_cast<std::uint64_t>(ncols);
          pt.k = ksz;
          pt.reads = {whole(a, abk), whole(b, bb)};
          if (acc >= 0) pt.reads.push_back(whole(acc, acc_bytes));
          pt.writes.push_back(whole(out, ob));
          ctx.builder.add_task(std::move(pt));
          acc = out;
          acc_bytes = ob;
        }
        part[static_cast<std::size_t>(kk)] = acc;
      }
      // K groups' partials meet in a binary tree: at step s, grid kk + s sends its partial
      // to grid kk (a multiple of 2s), core for core, and grid kk adds the two.
      for (int s = 1; s < ksplit; s *= 2)
        for (int kk = 0; kk + s < ksplit; kk += 2 * s) {
          std::string tp = np + "/tree" + std::to_string(s) + "/g" + std::to_string(kk);
          bool final = kk == 0 && 2 * s >= ksplit;
          const std::uint64_t pb = dtype_bytes(Dtype::fp32, elems);
          int recv = ctx.builder.add_buffer(tp + "/received", Space::lx, pb, Dtype::fp32);
          Task copy = group_task(tp + "/send", UnitKind::ring, "copy", grid_group(kk + s), Dtype::fp32);
          copy.reads.push_back(whole(part[static_cast<std::size_t>(kk + s)], pb));
          Access to = whole(recv, pb);
          to.core = Affine{1, -s * RC};
          copy.writes.push_back(to);
          ctx.builder.add_task(std::move(copy));
          Dtype od = final ? C.dtype : Dtype::fp32;
          int sum = ctx.builder.add_buffer(tp + (final ? "/" + C.name : "/partial"), Space::lx, dtype_bytes(od, elems), od);
          Task add = group_task(tp + "/add", UnitKind::sfp, "add", grid_group(kk), od);
          add.elements = elems;
          add.reads = {whole(part[static_cast<std::size_t>(kk)], pb), whole(recv, pb)};
          add.writes.push_back(whole(sum, dtype_bytes(od, elems)));
          ctx.builder.add_task(std::move(add));
          part[static_cast<std::size_t>(kk)] = sum;
        }
      for (int r = 0; r < R; ++r)
        emit_store(ctx, np + "/store_" + C.name + "/r" + std::to_string(r), part[0], c_hbm, C.dtype,
                   block(C, r * mshare + mrow, mrows, col, ncols), static_cast<std::uint64_t>(dtype_bytes(C.dtype, 1)),
                   row_group(0, r));
    }
  }
  return true;
}

// Every core loads its own A and B tiles. The cores of one grid row that get a full N share
// form an SPMD group: A is the same for all of them, B and C move by one N share per core.
void lower_per_core(LowerContext& ctx, const Op& op, const std::string& kernel, const CoreGrid& grid) {
  const OpGraph& g = ctx.ops;
  const OpTensor& A = g.tensors[op.inputs[0]];
  const OpTensor& B = g.tensors[op.inputs[1]];
  const OpTensor& C = g.tensors[op.outputs[0]];
  std::int64_t M = A.shape[0], K = A.shape[1], N = B.shape[1];
  std::uint64_t b_col = dtype_bytes(B.dtype, 1), c_col = dtype_bytes(C.dtype, 1);
  auto mgroups = divide_work(M, grid.rows);
  auto ngroups = divide_work(N, grid.cols);
  int gi = 0;
  for (const CoreGroup& mg : mgroups)
    for (int r = mg.first; r < mg.first + mg.count; ++r)
      for (const CoreGroup& ng : ngroups) {
        CoreGroup grp{r * grid.cols + ng.first, ng.count, ng.share, ng.base};
        std::int64_t row0 = mg.start(r), mshare = mg.share;
        auto tile = plan_matmul_tile(mshare, ng.share, K, A.dtype, ctx.budget);
        if (!tile) throw no_tile(ctx, op);
        auto mt = split_even(mshare, tile->m), nt = split_even(ng.share, tile->n), kt = split_even(K, tile->k);
        std::string gp = kernel + "/g" + std::to_string(gi++);
        for (std::size_t mi = 0; mi < mt.size(); ++mi) {
          std::int64_t row = row0 + mt[mi].begin, mrows = mt[mi].size;
          std::string mp = gp + "/m" + std::to_string(mi);
          // With a single k-step, the A tile is loaded once and shared by every n tile.
          int a_shared = -1;
          std::uint64_t a_bytes = 0;
          if (kt.size() == 1) {
            SlicePattern ap = block(A, row, mrows, 0, K);
            a_bytes = ap.total_bytes();
            a_shared = emit_load(ctx, mp + "/load_" + A.name, mp + "/" + A.name, ctx.hbm[op.inputs[0]], A.dtype, ap, 0, grp);
          }
          for (std::size_t ni = 0; ni < nt.size(); ++ni) {
            std::string np = mp + "/n" + std::to_string(ni);
            std::int64_t col = ng.base + nt[ni].begin, ncols = nt[ni].size;
            int acc = -1;
            std::uint64_t acc_bytes = 0;
            for (std::size_t ki = 0; ki < kt.size(); ++ki) {
              std::string kp = np + "/k" + std::to_string(ki);
              bool last = ki + 1 == kt.size();
              int a = a_shared;
              std::uint64_t ab = a_bytes;
              if (a < 0) {
                SlicePattern ap = block(A, row, mrows, kt[ki].begin, kt[ki].size);
                ab = ap.total_bytes();
                a = emit_load(ctx, kp + "/load_" + A.name, kp + "/" + A.name, ctx.hbm[op.inputs[0]], A.dtype, ap, 0, grp);
              }
              SlicePattern bp = block(B, kt[ki].begin, kt[ki].size, col, ncols);
              int b = emit_load(ctx, kp + "/load_" + B.name, kp + "/" + B.name, ctx.hbm[op.inputs[1]], B.dtype, bp,
                                b_col, grp);
              Dtype od = last ? C.dtype : Dtype::fp32;
              std::uint64_t ob = dtype_bytes(od, static_cast<std::uint64_t>(mrows * ncols));
              int out = ctx.builder.add_buffer(kp + (last ? "/" + C.name : "/acc"), Space::lx, ob, od);
              Task pt = group_task(kp + "/matmul", UnitKind::pt, "matmul", grp, od);
              pt.m = static_cast<std::uint64_t>(mrows);
              pt.n = static_cast<std::uint64_t>(ncols);
              pt.k = static_cast<std::uint64_t>(kt[ki].size);
              pt.reads = {whole(a, ab), whole(b, bp.total_bytes())};
              if (acc >= 0) pt.reads.push_back(whole(acc, acc_bytes));
              pt.writes.push_back(whole(out, ob));
              ctx.builder.add_task(std::move(pt));
              acc = out;
              acc_bytes = ob;
            }
            emit_store(ctx, np + "/store_" + C.name, acc, ctx.hbm[op.outputs[0]], C.dtype,
                       block(C, row, mrows, col, ncols), c_col, grp);
          }
        }
      }
}

}  // namespace

bool matmul_epilogue_ok(const OpGraph&, const Op&, const std::vector<int>&, const Op&) {
  return false;  // not lowered yet: the fusion pass keeps matmuls in kernels of their own
}

void lower_matmul(LowerContext& ctx, const Op& op, const std::string& kernel, const std::vector<int>& epilogue) {
  const OpGraph& g = ctx.ops;
  if (!epilogue.empty())
    throw std::logic_error("lower_matmul: epilogue fusion is not implemented yet");
  std::int64_t M = g.tensors[op.inputs[0]].shape[0], K = g.tensors[op.inputs[0]].shape[1];
  std::int64_t N = g.tensors[op.inputs[1]].shape[1];
  // A grid of cores over [M, N]: grid row r takes an M slice, grid column c an N slice; the
  // op's work_division attribute forces the grid and may split K over several grids.
  if (op.work_division) {
    const WorkDivision& wd = *op.work_division;
    std::string at = "/ops/" + std::to_string(op.index) + "/attrs/work_division";
    if (wd.m * wd.n * wd.k > ctx.cores)
      throw InputError(g.file, at, fmt::format("needs m x n x k = {} x {} x {} = {} cores, the program has {}", wd.m,
                                               wd.n, wd.k, wd.m * wd.n * wd.k, ctx.cores));
    CoreGrid grid{wd.m, wd.n};
    if (lower_shared(ctx, op, kernel, grid, wd.k)) return;
    if (wd.k > 1)
      throw InputError(g.file, at, fmt::format("k = {} needs M, N and K divisible by m, n and k ({} x {} x {} here) "
                                               "and a tile whose partials fit the LX", wd.k, M, N, K));
    lower_per_core(ctx, op, kernel, grid);
    return;
  }
  CoreGrid grid = choose_matmul_grid(M, N, K, ctx.cores);
  if (!lower_shared(ctx, op, kernel, grid, 1)) lower_per_core(ctx, op, kernel, grid);
}

}  // namespace dfsim

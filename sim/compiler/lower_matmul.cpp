// Lowering of 2-D matmul [M,K] @ [K,N]: a grid of cores over M and N; per core, tiles of
// m x n with a chain of k-steps, each a PT task reading A(m,k), B(k,n) and the previous fp32
// accumulator.
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

}  // namespace

void lower_matmul(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& A = g.tensors[op.inputs[0]];
  const OpTensor& B = g.tensors[op.inputs[1]];
  const OpTensor& C = g.tensors[op.outputs[0]];
  std::int64_t M = A.shape[0], K = A.shape[1], N = B.shape[1];
  // A grid of cores over [M, N]: grid row r takes an M slice, grid column c an N slice. The
  // cores of one grid row that get a full N share form an SPMD group: A is the same for all
  // of them, B and C move by one N share per core.
  CoreGrid grid = choose_matmul_grid(M, N, K, ctx.cores);
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
        if (!tile)
          throw InputError(g.file, "/ops/" + std::to_string(op.index),
                           "matmul: even a 1x1x1 tile does not fit the " + std::to_string(ctx.budget) +
                               "-byte tile budget");
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

}  // namespace dfsim

// The matmul family as batched 2-D products (see matmul_problem.h).
#include "sim/compiler/matmul_problem.h"

#include "sim/common/error.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

SlicePattern StoredMatrix::stored_block(std::int64_t b, std::int64_t r, std::int64_t nr, std::int64_t c,
                                        std::int64_t nc) const {
  const auto cols = static_cast<std::uint64_t>(row_stride ? row_stride : stored_cols());
  const Dtype dt = tensor->dtype;
  SlicePattern p;
  p.elements = static_cast<std::uint64_t>(nr * nc);
  p.offset = dtype_bytes(dt, batch_elems[static_cast<std::size_t>(b)] + static_cast<std::uint64_t>(r) * cols +
                                 static_cast<std::uint64_t>(c));
  if (static_cast<std::uint64_t>(nc) == cols || nr == 1) {
    p.bytes = dtype_bytes(dt, p.elements);
  } else {
    p.rows = static_cast<std::uint64_t>(nr);
    p.bytes = dtype_bytes(dt, static_cast<std::uint64_t>(nc));
    p.stride = dtype_bytes(dt, cols);
  }
  return p;
}

SlicePattern StoredMatrix::block(std::int64_t b, std::int64_t r, std::int64_t nr, std::int64_t c,
                                 std::int64_t nc) const {
  return transposed ? stored_block(b, c, nc, r, nr) : stored_block(b, r, nr, c, nc);
}

StoredMatrix sub_matrix(const StoredMatrix& m, std::int64_t b0, std::int64_t nb, std::int64_t r0, std::int64_t nr,
                        std::int64_t c0, std::int64_t nc) {
  StoredMatrix s = m;
  const auto stride = static_cast<std::uint64_t>(m.row_stride ? m.row_stride : m.stored_cols());
  const std::uint64_t origin = m.transposed ? static_cast<std::uint64_t>(c0) * stride + static_cast<std::uint64_t>(r0)
                                            : static_cast<std::uint64_t>(r0) * stride + static_cast<std::uint64_t>(c0);
  s.batch_elems.clear();
  for (std::int64_t b = b0; b < b0 + nb; ++b) s.batch_elems.push_back(m.batch_elems[static_cast<std::size_t>(b)] + origin);
  s.rows = nr;
  s.cols = nc;
  s.row_stride = static_cast<std::int64_t>(stride) == s.stored_cols() ? 0 : static_cast<std::int64_t>(stride);
  return s;
}

MatmulProblem k_part(const MatmulProblem& p, std::int64_t k0, std::int64_t nk) {
  MatmulProblem q = p;
  q.K = nk;
  q.a = sub_matrix(p.a, 0, p.batches, 0, p.M, k0, nk);
  q.b = sub_matrix(p.b, 0, p.batches, k0, nk, 0, p.N);
  return q;
}

namespace {

// Element strides of each dim of `shape` stored in device dim order `order` (stored_order):
// the last dim of the order is contiguous.
std::vector<std::uint64_t> strides_of(const Shape& shape, const std::vector<int>& order) {
  std::vector<std::uint64_t> st(shape.size(), 0);
  std::uint64_t s = 1;
  for (std::size_t i = order.size(); i-- > 0;) {
    st[static_cast<std::size_t>(order[i])] = s;
    s *= static_cast<std::uint64_t>(shape[static_cast<std::size_t>(order[i])]);
  }
  return st;
}

// Element offset of each batch (row-major over `batch`) in a tensor whose leading dims
// `shape[0 .. rank-2)` broadcast to `batch` (aligned on the right; size-1 or absent dims stay).
std::vector<std::uint64_t> batch_offsets(const Shape& shape, const Shape& batch, const std::vector<std::uint64_t>& stride) {
  const std::size_t own = shape.size() - 2;
  const std::uint64_t n = dims_product(batch, 0, batch.size());
  std::vector<std::uint64_t> out(n, 0);
  for (std::uint64_t b = 0; b < n; ++b) {
    std::uint64_t rest = b, off = 0;
    for (std::size_t d = batch.size(); d-- > 0;) {
      auto extent = static_cast<std::uint64_t>(batch[d]);
      std::uint64_t idx = rest % extent;
      rest /= extent;
      std::size_t from_end = batch.size() - 1 - d;
      if (from_end < own) {
        std::size_t od = own - 1 - from_end;
        if (shape[od] != 1) off += idx * stride[od];
      }
    }
    out[b] = off;
  }
  return out;
}

StoredMatrix matrix(const OpGraph& g, int t, std::int64_t rows, std::int64_t cols, bool transposed,
                    std::vector<std::uint64_t> batch_elems) {
  StoredMatrix m;
  m.tensor = &g.tensors[static_cast<std::size_t>(t)];
  m.index = t;
  m.rows = rows;
  m.cols = cols;
  m.transposed = transposed;
  m.batch_elems = std::move(batch_elems);
  return m;
}

// Operand `t` of a batched matmul: logical [rows, cols] in its last two dims (swapped when
// `swap`), batches broadcast to `batch`, read with the strides of its layout.
StoredMatrix operand(const OpGraph& g, int t, std::int64_t rows, std::int64_t cols, bool swap, const Shape& batch) {
  const OpTensor& x = g.tensors[static_cast<std::size_t>(t)];
  const std::vector<std::uint64_t> st = strides_of(x.shape, stored_order(g, x));
  const std::size_t r = x.shape.size();
  const std::size_t rd = swap ? r - 1 : r - 2, cd = swap ? r - 2 : r - 1;
  StoredMatrix m = matrix(g, t, rows, cols, false, batch_offsets(x.shape, batch, st));
  if (st[cd] == 1 || cols == 1) {
    m.row_stride = static_cast<std::int64_t>(st[rd]);
  } else if (st[rd] == 1 || rows == 1) {
    m.transposed = true;
    m.row_stride = static_cast<std::int64_t>(st[cd]);
  } else {
    throw InputError(g.file, "/compile/layouts/" + x.name,
                     "the stick dim (last of the layout) of matmul operand \"" + x.name +
                         "\" must be one of its two matrix dims; restickify it first (a transpose)");
  }
  if (m.row_stride == m.stored_cols()) m.row_stride = 0;
  return m;
}

}  // namespace

MatmulProblem matmul_problem(const OpGraph& g, const Op& op) {
  MatmulProblem p;
  const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const Shape& as = g.tensors[static_cast<std::size_t>(op.inputs[0])].shape;
  const Shape& bs = g.tensors[static_cast<std::size_t>(op.inputs[1])].shape;
  if (op.op == "linear") {  // x [..., K] viewed as [rows, K]; weight [N, K]: B stored transposed
    p.K = as.back();
    p.N = bs[0];
    p.M = static_cast<std::int64_t>(dims_product(as, 0, as.size() - 1));
    p.a = matrix(g, op.inputs[0], p.M, p.K, false, {0});
    p.b = matrix(g, op.inputs[1], p.K, p.N, true, {0});
    p.c = matrix(g, op.outputs[0], p.M, p.N, false, {0});
    if (op.inputs.size() == 3) p.bias = op.inputs[2];
    p.folded = as.size() > 2;
    return p;
  }
  const std::size_t r = out.shape.size();
  p.M = out.shape[r - 2];
  p.N = out.shape[r - 1];
  p.K = op.transpose_a ? as[as.size() - 2] : as.back();
  Shape batch(out.shape.begin(), out.shape.end() - 2);
  p.batches = static_cast<std::int64_t>(dims_product(batch, 0, batch.size()));
  p.a = operand(g, op.inputs[0], p.M, p.K, op.transpose_a, batch);
  p.b = operand(g, op.inputs[1], p.K, p.N, op.transpose_b, batch);
  p.c = operand(g, op.outputs[0], p.M, p.N, false, batch);
  // A projection [..., M, K] @ [K, N]: every batch shares B and the batches of A and C lie one
  // after another, so the batch is more rows of one 2-D product, unless a forced split names
  // the batch (then each batch group runs its batches as the split says and loads B itself).
  bool fold = p.batches > 1 && !p.a.transposed && p.a.row_stride == 0 && p.c.row_stride == 0 && !p.c.transposed &&
              !(op.split.count("B") && op.split.at("B") > 1);
  for (std::int64_t b = 0; fold && b < p.batches; ++b) {
    auto i = static_cast<std::uint64_t>(b);
    fold = p.b.batch_elems[i] == 0 && p.a.batch_elems[i] == i * static_cast<std::uint64_t>(p.M * p.K) &&
           p.c.batch_elems[i] == i * static_cast<std::uint64_t>(p.M * p.N);
  }
  if (fold) {
    p.M *= p.batches;
    p.batches = 1;
    p.a.rows = p.c.rows = p.M;
    p.a.batch_elems = p.b.batch_elems = p.c.batch_elems = {0};
    p.folded = true;
  }
  return p;
}

}  // namespace dfsim

// The matmul family as batched 2-D products (see matmul_problem.h).
#include "sim/compiler/matmul_problem.h"

#include "sim/graph/op_shapes.h"

namespace dfsim {

SlicePattern StoredMatrix::stored_block(std::int64_t b, std::int64_t r, std::int64_t nr, std::int64_t c,
                                        std::int64_t nc) const {
  const auto cols = static_cast<std::uint64_t>(stored_cols());
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

namespace {

// Element offset of each batch (row-major over `batch`) in a tensor whose leading dims
// `shape[0 .. rank-2)` broadcast to `batch` (aligned on the right; size-1 or absent dims stay).
std::vector<std::uint64_t> batch_offsets(const Shape& shape, const Shape& batch) {
  const std::size_t own = shape.size() - 2;
  const std::uint64_t matrix = dims_product(shape, own, shape.size());
  std::vector<std::uint64_t> stride(own, 0);
  std::uint64_t s = matrix;
  for (std::size_t i = own; i-- > 0;) {
    stride[i] = s;
    s *= static_cast<std::uint64_t>(shape[i]);
  }
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
  p.a = matrix(g, op.inputs[0], p.M, p.K, op.transpose_a, batch_offsets(as, batch));
  p.b = matrix(g, op.inputs[1], p.K, p.N, op.transpose_b, batch_offsets(bs, batch));
  p.c = matrix(g, op.outputs[0], p.M, p.N, false, batch_offsets(out.shape, batch));
  // A projection [..., M, K] @ [K, N]: every batch shares B and the batches of A and C lie one
  // after another, so the batch is more rows of one 2-D product.
  bool fold = p.batches > 1 && !p.a.transposed;
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

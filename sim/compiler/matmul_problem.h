#pragma once
// The matmul family as one problem: `batches` independent [M, K] @ [K, N] products whose
// operands are row-major matrices in HBM, each possibly stored transposed, at per-batch
// offsets that follow torch.matmul broadcasting (an operand without a batch dim is shared).
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/compiler/slicing.h"
#include "sim/compiler/stick_layout.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

// One operand (or the output) of a batched matmul: a logical [rows, cols] matrix per batch,
// stored row-major as [rows, cols] or, when `transposed`, as [cols, rows].
struct StoredMatrix {
  const OpTensor* tensor = nullptr;
  int index = -1;                       // op graph tensor
  std::int64_t rows = 0, cols = 0;      // logical
  bool transposed = false;
  std::int64_t row_stride = 0;          // elements between stored rows (0: stored_cols(), row-major)
  std::vector<std::uint64_t> batch_elems;  // element offset of each batch's matrix
  // The card's stick layout its HBM buffer is stored in (compile.hbm_layout), when it has one:
  // the offsets above stay row-major, the plan's estimate reads the device runs through it.
  std::optional<StickLayout> layout;
  std::int64_t stored_rows() const { return transposed ? cols : rows; }
  std::int64_t stored_cols() const { return transposed ? rows : cols; }
  // Byte pattern of stored rows [r, r+nr) x stored cols [c, c+nc) of batch b.
  SlicePattern stored_block(std::int64_t b, std::int64_t r, std::int64_t nr, std::int64_t c, std::int64_t nc) const;
  // Byte pattern of logical rows [r, r+nr) x cols [c, c+nc) of batch b.
  SlicePattern block(std::int64_t b, std::int64_t r, std::int64_t nr, std::int64_t c, std::int64_t nc) const;
};

struct MatmulProblem {
  std::int64_t batches = 1, M = 0, N = 0, K = 0;
  StoredMatrix a, b, c;                 // a: [M, K], b: [K, N], c: [M, N]
  int bias = -1;                        // linear: the [N] bias tensor, else -1
  bool folded = false;                  // batch dims folded into M (B shared by every batch)
  std::uint64_t macs() const { return static_cast<std::uint64_t>(batches * M * N * K); }
};

// Logical rows [r0, r0 + nr) x cols [c0, c0 + nc) of batches [b0, b0 + nb) of `m` as a matrix of
// its own: the same bytes, addressed from the part's first element with the whole's row stride.
StoredMatrix sub_matrix(const StoredMatrix& m, std::int64_t b0, std::int64_t nb, std::int64_t r0, std::int64_t nr,
                        std::int64_t c0, std::int64_t nc);
// The problem of K's part [k0, k0 + nk) of `p` (one iteration of a coarse loop over K): A's
// columns and B's rows of that part, all of C.
MatmulProblem k_part(const MatmulProblem& p, std::int64_t k0, std::int64_t nk);

// matmul or linear. A shared B ([..., M, K] @ [K, N], linear) folds the batch into M. A
// tensor with a device layout (compile.layouts: dim order, the last the stick dim) is read with
// that layout's strides; its stick dim must be one of its matrix dims (InputError otherwise).
MatmulProblem matmul_problem(const OpGraph& g, const Op& op);

}  // namespace dfsim

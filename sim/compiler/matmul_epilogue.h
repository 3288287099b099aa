#pragma once
// Matmul epilogues: the elementwise ops a matmul kernel runs on the SFP on each output tile
// before storing it (linear's bias, an activation, a residual add, SwiGLU's product).
#include <string>
#include <vector>

#include "sim/compiler/matmul_problem.h"

namespace dfsim {

// One elementwise op applied to each output tile: `operand` (an op graph tensor, or -1 for a
// unary op or one whose operands are both the running tile) in `view`, or a row vector [N].
struct EpilogueStep {
  std::string op;
  int operand = -1;
  bool row_vector = false;
  StoredMatrix view;  // operand laid out like the output (when not a row vector)
  Dtype out = Dtype::fp16;
};

// A tensor that broadcasts to the output [..., M, N] as a row vector: every dim 1 but the last.
bool is_row_vector(const Shape& s, std::int64_t n);

// The steps of `op` (linear's bias first) followed by the epilogue ops (op graph indices).
std::vector<EpilogueStep> epilogue_steps(const OpGraph& g, const MatmulProblem& p, const Op& op,
                                         const std::vector<int>& epilogue);

}  // namespace dfsim

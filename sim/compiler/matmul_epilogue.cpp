// Matmul epilogues (see matmul_epilogue.h) and the fusion pass's question, matmul_epilogue_ok.
#include "sim/compiler/matmul_epilogue.h"

#include <algorithm>

#include "sim/compiler/lowering.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

// A tensor that broadcasts to the output [..., M, N] as a row vector: every dim 1 but the last.
bool is_row_vector(const Shape& s, std::int64_t n) {
  return s.back() == n && dims_product(s, 0, s.size() - 1) == 1;
}

std::vector<EpilogueStep> epilogue_steps(const OpGraph& g, const MatmulProblem& p, const Op& op,
                                         const std::vector<int>& epilogue) {
  std::vector<EpilogueStep> steps;
  auto operand_step = [&](const std::string& name, int tensor) {
    EpilogueStep s;
    s.op = name;
    s.operand = tensor;
    const OpTensor& t = g.tensors[static_cast<std::size_t>(tensor)];
    s.row_vector = is_row_vector(t.shape, p.N);
    s.view = p.c;
    s.view.tensor = &t;
    s.view.index = tensor;
    s.out = p.c.tensor->dtype;
    return s;
  };
  if (p.bias >= 0) steps.push_back(operand_step("add", p.bias));
  int running = op.outputs[0];
  for (int e : epilogue) {
    const Op& next = g.ops[static_cast<std::size_t>(e)];
    EpilogueStep s;
    s.op = next.op;
    for (int in : next.inputs)
      if (in != running) s = operand_step(next.op, in);
    s.out = g.tensors[static_cast<std::size_t>(next.outputs[0])].dtype;
    steps.push_back(s);
    running = next.outputs[0];
  }
  return steps;
}

bool matmul_epilogue_ok(const OpGraph& g, const TensorUses& uses, const Op& matmul, const std::vector<int>& epilogue,
                        const Op& next) {
  const OpInfo* info = find_op_info(next.op);
  if (find_op_info(matmul.op)->kind != OpKind::matmul || !info ||
      (info->kind != OpKind::binary && info->kind != OpKind::unary) || next.outputs.size() != 1)
    return false;
  const int running = epilogue.empty() ? matmul.outputs[0] : g.ops[static_cast<std::size_t>(epilogue.back())].outputs[0];
  const Shape& shape = g.tensors[static_cast<std::size_t>(matmul.outputs[0])].shape;
  if (std::find(next.inputs.begin(), next.inputs.end(), running) == next.inputs.end()) return false;
  if (g.tensors[static_cast<std::size_t>(next.outputs[0])].shape != shape) return false;
  // The running tensor is read by `next` only and is not a graph output.
  if (uses.read_elsewhere(running, next.index)) return false;
  for (int in : next.inputs) {
    if (in == running) continue;
    const OpTensor& t = g.tensors[static_cast<std::size_t>(in)];
    if (t.shape != shape && !is_row_vector(t.shape, shape.back())) return false;
    const int p = uses.producer(in);
    if (p >= 0 && uses.position(p) >= uses.position(matmul.index)) return false;
  }
  return true;
}

}  // namespace dfsim

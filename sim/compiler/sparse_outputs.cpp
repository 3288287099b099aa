// Which tensors the card stores stick-sparse (see sparse_outputs.h).
#include "sim/compiler/sparse_outputs.h"

#include <algorithm>

#include "sim/compiler/lowering.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

std::uint64_t sparse_scale(Dtype dtype, std::uint64_t stick_bytes) {
  return std::max<std::uint64_t>(1, stick_bytes / dtype_bytes(dtype, 1));
}

std::vector<bool> stick_sparse_tensors(const OpGraph& g, const TensorUses& uses, const std::vector<KernelPlan>& kernels,
                                       const ResidencyPlan& residency, const std::vector<int>& alias, int cores,
                                       std::uint64_t budget, std::uint64_t stick_bytes) {
  std::vector<bool> sparse(g.tensors.size(), false);
  std::vector<bool> alone(g.ops.size(), false);  // an op with a kernel of its own
  for (const KernelPlan& k : kernels)
    if (k.ops.size() == 1 && !k.matmul_epilogue) alone[static_cast<std::size_t>(k.ops.front())] = true;
  std::vector<bool> aliased(g.tensors.size(), false);
  for (int a : alias)
    if (a >= 0) aliased[static_cast<std::size_t>(a)] = true;
  // Whether `op` lowers through lower_pointwise's own path.
  auto plain = [&](const Op& op) { return alone[static_cast<std::size_t>(op.index)] && op.tiles.empty(); };
  for (const Op& op : g.ops) {
    if (find_op_info(op.op)->kind != OpKind::reduce || !plain(op) || split_reduction_applies(g, op, cores)) continue;
    const OpTensor& in = g.tensors[static_cast<std::size_t>(op.inputs[0])];
    if (stored_order(g, in).back() != op.dim) continue;  // not the stick dim
    const auto t = static_cast<std::size_t>(op.outputs[0]);
    if (g.is_input(static_cast<int>(t)) || alias[t] >= 0 || aliased[t] || residency.kept_bytes[t] > 0) continue;
    // Whole bytes per element that divide a stick (not int4), and a size that stays countable.
    const OpTensor& out = g.tensors[t];
    const std::uint64_t elem = dtype_bytes(out.dtype, 1);
    if (dtype_bits(out.dtype) % 8 != 0 || elem > stick_bytes || stick_bytes % elem != 0 ||
        out.bytes() > UINT64_MAX / 2 / sparse_scale(out.dtype, stick_bytes))
      continue;
    const std::vector<int>& readers = uses.readers(static_cast<int>(t));
    if (std::all_of(readers.begin(), readers.end(), [&](int r) {
          const Op& reader = g.ops[static_cast<std::size_t>(r)];
          return plain(reader) && is_elementwise(find_op_info(reader.op)->kind);
        }))
      sparse[t] = true;
  }
  // Every op touching a sparse tensor must still fit a tile of one unit of its split dim with
  // the sticks in LX; where one does not, its sparse tensors stay dense (until nothing changes).
  for (bool changed = true; changed;) {
    changed = false;
    for (const Op& op : g.ops) {
      std::vector<int> touched = op.inputs;
      touched.insert(touched.end(), op.outputs.begin(), op.outputs.end());
      if (std::none_of(touched.begin(), touched.end(), [&](int t) { return sparse[static_cast<std::size_t>(t)]; })) continue;
      PointwisePlan p = plan_pointwise(g, op, cores);
      std::uint64_t need = 0;
      auto count = [&](OperandSlicer s, int t) {
        if (sparse[static_cast<std::size_t>(t)]) s.scale = sparse_scale(s.tensor->dtype, stick_bytes);
        need += s.unit_bytes() + s.fixed_bytes();
      };
      count(p.out, op.outputs[0]);
      for (std::size_t i = 0; i < p.in.size(); ++i) count(p.in[i], op.inputs[i]);
      if (need <= std::min(budget, residency.tile_budget[static_cast<std::size_t>(op.index)])) continue;
      for (int t : touched)
        if (sparse[static_cast<std::size_t>(t)]) sparse[static_cast<std::size_t>(t)] = false, changed = true;
    }
  }
  return sparse;
}

}  // namespace dfsim

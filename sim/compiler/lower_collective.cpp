// Lowering of the ops between cards: a collective (all_reduce, all_gather, reduce_scatter,
// broadcast) or a host transfer (from_host, to_host) is one "link" task per card of its group,
// reading and writing whole HBM tensors; the PCIe models time it (models/pcie/).
#include "sim/compiler/lowering.h"

namespace dfsim {

void lower_collective(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpTensor& x = ctx.ops.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = ctx.ops.tensors[static_cast<std::size_t>(op.outputs[0])];
  Task t;
  t.name = kernel + "/" + op.op;
  t.unit = UnitKind::link;
  t.op = op.op;
  t.dtype = x.dtype;
  t.cards = op.group;
  if (find_op_info(op.op)->kind == OpKind::collective) t.algorithm = op.algorithm;
  t.root = op.root;
  // A host transfer's other end is the host: from_host only writes its card's copy, to_host
  // only reads it.
  if (op.op != "from_host") t.reads.push_back(whole(ctx.hbm[static_cast<std::size_t>(op.inputs[0])], x.bytes()));
  if (op.op != "to_host") t.writes.push_back(whole(ctx.hbm[static_cast<std::size_t>(op.outputs[0])], y.bytes()));
  ctx.builder.add_task(std::move(t));
}

}  // namespace dfsim

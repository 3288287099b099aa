#include "sim/graph/tensor_uses.h"

namespace dfsim {

TensorUses::TensorUses(const OpGraph& g)
    : readers_(g.tensors.size()), producer_(g.tensors.size(), -1), position_(g.ops.size(), 0),
      input_(g.tensors.size(), false), output_(g.tensors.size(), false) {
  for (const Op& op : g.ops) {
    for (int t : op.inputs) {
      std::vector<int>& r = readers_[static_cast<std::size_t>(t)];
      if (r.empty() || r.back() != op.index) r.push_back(op.index);  // an op reading t twice counts once
    }
    for (int t : op.outputs) producer_[static_cast<std::size_t>(t)] = op.index;
  }
  for (int t : g.inputs) input_[static_cast<std::size_t>(t)] = true;
  for (int t : g.outputs) output_[static_cast<std::size_t>(t)] = true;
  for (std::size_t i = 0; i < g.order.size(); ++i) position_[static_cast<std::size_t>(g.order[i])] = static_cast<int>(i);
}

bool TensorUses::read_elsewhere(int t, int except) const {
  if (is_output(t)) return true;
  for (int r : readers(t))
    if (r != except) return true;
  return false;
}

}  // namespace dfsim

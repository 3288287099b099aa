// Residency pass (see residency.h).
#include "sim/compiler/residency.h"

#include <algorithm>

#include "sim/compiler/lowering.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// Bytes of the largest per-core slice of `t` divided along `s` over `cores`.
std::uint64_t slice_bytes(const OpTensor& t, const TensorSplit& s) {
  const int cores = s.cores;
  std::uint64_t per_unit = t.elements() / static_cast<std::uint64_t>(t.shape[static_cast<std::size_t>(s.dim)]);
  auto share = static_cast<std::uint64_t>((s.extent + cores - 1) / cores);
  return dtype_bytes(t.dtype, per_unit * share);
}

bool same(const TensorSplit& a, const TensorSplit& b) { return a.dim == b.dim && a.extent == b.extent && a.cores == b.cores; }

}  // namespace

ResidencyPlan plan_residency(const OpGraph& g, LxPlanning policy, int cores, std::uint64_t usable_lx,
                             const std::vector<bool>& fused_away) {
  ResidencyPlan plan;
  plan.kept_bytes.assign(g.tensors.size(), 0);
  // Position of each op in execution (topological) order.
  std::vector<int> pos(g.ops.size(), 0);
  for (std::size_t i = 0; i < g.order.size(); ++i) pos[static_cast<std::size_t>(g.order[i])] = static_cast<int>(i);
  std::vector<std::uint64_t> live(g.order.size(), 0);  // kept bytes per position
  const std::uint64_t cap = usable_lx / 4;

  for (int oi : g.order) {
      const Op& producer = g.ops[static_cast<std::size_t>(oi)];
      const int t = producer.outputs[0];
      const bool reduction = find_op_info(producer.op)->kind == OpKind::reduce;
      // The producer's own compile.lx_planning decides for its output.
      const LxPlanning own = producer.lx_planning.value_or(policy);
      if (own == LxPlanning::none || (own == LxPlanning::reductions && !reduction)) continue;
      if (g.is_input(t) || std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) continue;
      if (!fused_away.empty() && fused_away[static_cast<std::size_t>(t)]) continue;
      auto split = tensor_split(g, producer, t, cores);
      if (!split || split->dim < 0) continue;
      // Every consumer must read the tensor split the same way; the tensor is live from its
      // producer to its last consumer.
      bool ok = true;
      int first = pos[static_cast<std::size_t>(oi)], last = first;
      for (const Op& c : g.ops)
        if (std::find(c.inputs.begin(), c.inputs.end(), t) != c.inputs.end()) {
          auto cs = tensor_split(g, c, t, cores);
          ok = ok && cs && same(*cs, *split);
          last = std::max(last, pos[static_cast<std::size_t>(c.index)]);
        }
      if (!ok || last == first) continue;
      std::uint64_t bytes = slice_bytes(g.tensors[static_cast<std::size_t>(t)], *split);
      bool fits = true;
      for (int p = first; p <= last; ++p) fits = fits && live[static_cast<std::size_t>(p)] + bytes <= cap;
      if (!fits) continue;
      for (int p = first; p <= last; ++p) live[static_cast<std::size_t>(p)] += bytes;
      plan.kept_bytes[static_cast<std::size_t>(t)] = bytes;
    }

  plan.tile_budget.assign(g.ops.size(), usable_lx / 2);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    plan.tile_budget[i] = (usable_lx - live[static_cast<std::size_t>(pos[i])]) / 2;
  return plan;
}

}  // namespace dfsim

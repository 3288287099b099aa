// Residency pass (see residency.h).
#include "sim/compiler/residency.h"

#include <algorithm>
#include <optional>

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

ResidencyPlan plan_residency(const OpGraph& g, const TensorUses& uses, LxPlanning policy, int cores,
                             std::uint64_t usable_lx, const std::vector<bool>& fused_away) {
  ResidencyPlan plan;
  plan.kept_bytes.assign(g.tensors.size(), 0);
  auto pos = [&](int op) { return uses.position(op); };  // in execution (topological) order
  std::vector<std::uint64_t> live(g.order.size(), 0);  // kept bytes per position
  const std::uint64_t cap = usable_lx / 4;
  // A clone may take up to two thirds (the softmax 512x1024 input on one core, 1 MiB of the
  // card's 1.55 MB): its readers' tiles get the rest.
  const std::uint64_t clone_cap = usable_lx / 3 * 2;

  plan.cloned.assign(g.tensors.size(), false);
  plan.clone_split.assign(g.tensors.size(), TensorSplit{});
  // Every reader divides `t` like `split`; sets the positions of its first and last reader.
  auto readers_agree = [&](int t, const TensorSplit& split, int& first, int& last) {
    bool ok = true;
    for (int r : uses.readers(t)) {
      auto cs = tensor_split(g, g.ops[static_cast<std::size_t>(r)], t, cores);
      ok = ok && cs && same(*cs, split);
      first = std::min(first, pos(r));
      last = std::max(last, pos(r));
    }
    return ok;
  };
  // Kept bytes per position are capped at a quarter of the LX, clones aside; with clones,
  // at two thirds in all.
  std::vector<std::uint64_t> cloned_live(g.order.size(), 0);
  auto reserve = [&](int t, std::uint64_t bytes, int from, int to, bool clone) {
    for (int p = from; p <= to; ++p) {
      const auto i = static_cast<std::size_t>(p);
      if (live[i] + bytes > clone_cap || (!clone && live[i] - cloned_live[i] + bytes > cap)) return false;
    }
    for (int p = from; p <= to; ++p) {
      live[static_cast<std::size_t>(p)] += bytes;
      if (clone) cloned_live[static_cast<std::size_t>(p)] += bytes;
    }
    plan.kept_bytes[static_cast<std::size_t>(t)] = bytes;
    return true;
  };
  const bool any_clone = policy == LxPlanning::clone ||
                         std::any_of(g.ops.begin(), g.ops.end(), [](const Op& o) { return o.lx_planning == LxPlanning::clone; });
  // clone: graph inputs read by two or more ops (each of which asks for clone), split alike by all.
  if (any_clone)
    for (int t : g.inputs) {
      std::optional<TensorSplit> split;
      int readers = 0;
      bool asks = true;
      for (int r : uses.readers(t)) {
        const Op& c = g.ops[static_cast<std::size_t>(r)];
        ++readers;
        asks = asks && c.lx_planning.value_or(policy) == LxPlanning::clone;
        if (!split) split = tensor_split(g, c, t, cores);
      }
      if (readers < 2 || !asks || !split || split->dim < 0) continue;
      int first = static_cast<int>(g.order.size()), last = -1;
      if (!readers_agree(t, *split, first, last)) continue;
      if (!reserve(t, slice_bytes(g.tensors[static_cast<std::size_t>(t)], *split), first, last, true)) continue;
      plan.cloned[static_cast<std::size_t>(t)] = true;
      plan.clone_split[static_cast<std::size_t>(t)] = *split;
    }
  for (int oi : g.order) {
    const Op& producer = g.ops[static_cast<std::size_t>(oi)];
    const int t = producer.outputs[0];
    const OpKind kind = find_op_info(producer.op)->kind;
    // The producer's own compile.lx_planning decides for its output.
    const LxPlanning own = producer.lx_planning.value_or(policy);
    const bool level = own == LxPlanning::all || (own > LxPlanning::none && kind == OpKind::reduce) ||
                       ((own == LxPlanning::inplace || own == LxPlanning::clone) && is_elementwise(kind));
    if (!level) continue;
    if (uses.is_input(t) || uses.is_output(t)) continue;
    if (!fused_away.empty() && fused_away[static_cast<std::size_t>(t)]) continue;
    auto split = tensor_split(g, producer, t, cores);
    if (!split || split->dim < 0) continue;
    // Every consumer must read the tensor split the same way; the tensor is live from its
    // producer to its last consumer.
    const int at = pos(oi);
    int first = at, last = at;
    if (!readers_agree(t, *split, first, last) || last == at) continue;
    const std::uint64_t bytes = slice_bytes(g.tensors[static_cast<std::size_t>(t)], *split);
    // In place: an elementwise output of the same size as a kept input whose last reader is
    // this op takes over that input's space at this op.
    int from = at;
    if (own != LxPlanning::all && is_elementwise(kind))
      for (int u : producer.inputs) {
        int uf = static_cast<int>(g.order.size()), ul = -1;
        if (plan.kept_bytes[static_cast<std::size_t>(u)] == bytes && readers_agree(u, *split, uf, ul) && ul == at)
          from = at + 1;
      }
    reserve(t, bytes, from, last, false);
  }

  plan.tile_budget.assign(g.ops.size(), usable_lx / 2);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    plan.tile_budget[i] = (usable_lx - live[static_cast<std::size_t>(pos(static_cast<int>(i)))]) / 2;
  return plan;
}

}  // namespace dfsim

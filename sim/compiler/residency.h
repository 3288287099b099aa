#pragma once
// Residency pass: which intermediate tensors stay in LX between kernels (compile.lx_planning).
#include <cstdint>
#include <vector>

#include "sim/compiler/lowering.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

// The plan: per op graph tensor, the LX bytes per core of its kept slice (0: through HBM),
// and per op (by index) the LX left for its tiles while kept tensors are live.
struct ResidencyPlan {
  std::vector<std::uint64_t> kept_bytes;   // per tensor
  // Per tensor: a graph input cloned into LX (loaded once by a clone kernel before its first
  // reader); split over the cores as `clone_split[t]`.
  std::vector<bool> cloned;
  std::vector<TensorSplit> clone_split;
  std::vector<std::uint64_t> tile_budget;  // per op: (usable - kept bytes live) / 2
};

// A tensor is kept when the policy (its producer's compile.lx_planning, else `policy`)
// allows it (reductions: outputs of reductions; inplace: also outputs of elementwise ops,
// which take over the space of a kept input they are the last reader of; clone: also graph
// inputs read by two or more ops, loaded once; all: any
// pointwise or reduction output), it is neither a graph input nor a graph output, its
// producer and every consumer divide it over the cores the same way (same dim, same extent),
// and the slices kept at any one time take at most a quarter of the usable LX.
// `fused_away` (per tensor, may be empty): tensors that are never candidates (those that live
// only inside a fused kernel, a matmul kernel's stored output).
ResidencyPlan plan_residency(const OpGraph& g, const TensorUses& uses, LxPlanning policy, int cores,
                             std::uint64_t usable_lx, const std::vector<bool>& fused_away = {});

}  // namespace dfsim

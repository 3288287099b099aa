#pragma once
// Stick-sparse tensors: the card stores the result of a reduction over the stick dim with one
// element per 128-B stick (torch-spyre's StickFormat::Sparse), so a row reduction of R rows
// writes R sticks, not 2R bytes (docs/compiler.md, "Reductions over the stick dim").
#include <cstdint>
#include <vector>

#include "sim/compiler/fusion.h"
#include "sim/compiler/residency.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/tensor_uses.h"

namespace dfsim {

// Per op graph tensor: whether it is stored stick-sparse. A tensor is when a reduction over its
// input's stick dim (the last stored dim) produces it in a kernel of its own, it lives in HBM
// only (not kept in LX, not an alias's buffer, not a graph input), and every reader is an
// elementwise op in a kernel of its own, so each lowering that touches it is the pointwise one,
// which moves whole sticks (OperandSlicer::scale). Elsewhere (a reduction fused with its
// readers, a split reduction, coarse tiles) the result stays dense: in LX or as dfsim's bytes.
std::vector<bool> stick_sparse_tensors(const OpGraph& g, const TensorUses& uses, const std::vector<KernelPlan>& kernels,
                                       const ResidencyPlan& residency, const std::vector<int>& alias, int cores,
                                       std::uint64_t budget, std::uint64_t stick_bytes);

// Bytes a stick-sparse tensor of `dtype` takes per element, over its dense bytes: 64 for fp16.
std::uint64_t sparse_scale(Dtype dtype, std::uint64_t stick_bytes);

}  // namespace dfsim

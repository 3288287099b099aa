#pragma once
// Kernel formation pass: which ops share a kernel (compile.fuse; docs/compiler.md, fusion).
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/graph/tensor_uses.h"

namespace dfsim {

// One kernel of the compiled graph: its ops (indices into OpGraph::ops) in execution order.
// A matmul with an epilogue: ops[0] is the matmul, the rest its epilogue.
struct KernelPlan {
  std::vector<int> ops;
  bool matmul_epilogue = false;
  // Why the kernel's first op did not join the kernel before it, when that was a decision of
  // the scratchpad planning (compile.lx_planning "off"); empty otherwise. For --explain.
  std::string not_fused;
};

// Groups the ops (in topological order) into kernels. With fusion on, a rowwise op (an
// elementwise op, a reduction, a norm, rope) joins the kernel before it when it reads a
// tensor that kernel produces, divided over the cores the same way, and the joined kernel's
// tile still fits `tile_budget` bytes of LX; an elementwise op joins a matmul's kernel as
// its epilogue when matmul_epilogue_ok() agrees. Ops with fuse false or a forced split keep a
// kernel of their own; rowwise ops with coarse tiles on their split dim fuse with ops under
// the same tiles (one coarse-tile loop around the chain), other tiles keep their own kernel
// (a matmul with tiles still takes an untiled epilogue).
std::vector<KernelPlan> form_kernels(const OpGraph& g, const TensorUses& uses, int cores, std::uint64_t tile_budget);

// Per tensor: true when it is produced and consumed only inside one kernel (never stored).
std::vector<bool> fused_away_tensors(const OpGraph& g, const TensorUses& uses, const std::vector<KernelPlan>& kernels);

// The kernel's name: <op>_<output tensor> for one op; fused_<first op>_<last output> else.
std::string kernel_name(const OpGraph& g, const KernelPlan& k);

}  // namespace dfsim

// Kernel formation pass (see fusion.h): contiguous runs of the topological order whose ops
// chain through tensors split the same way become one kernel.
#include "sim/compiler/fusion.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/compiler/fused_plan.h"
#include "sim/compiler/lowering.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// Ops one kernel may fuse. Planning a fused kernel costs time growing faster than its ops, each
// op that joins re-plans the kernel: a chain of 5000 elementwise ops took minutes to compile
// (a hostile input); the shipped workloads fuse a handful.
constexpr std::size_t kMaxFusedOps = 64;

bool same_split(const std::optional<TensorSplit>& a, const std::optional<TensorSplit>& b) {
  return a && b && a->dim >= 0 && a->dim == b->dim && a->extent == b->extent && a->cores == b->cores;
}

// The tensor `next` reads that an op of kernel `k` produces under compile.lx_planning "off"
// (-1: none): the card with its scratchpad planning off keeps no tensor in LX, so the
// producer stores it and `next` loads it, as between two kernels (the record add6 8192x1024
// with LX_PLANNING=0 moves 15 tensors' bytes, every intermediate stored and loaded again).
int stored_intermediate(const OpGraph& g, const KernelPlan& k, const Op& next) {
  for (int oi : k.ops) {
    const Op& producer = g.ops[static_cast<std::size_t>(oi)];
    if (producer.lx_planning.value_or(g.compile.lx_planning) != LxPlanning::off) continue;
    for (int t : next.inputs)
      if (std::count(producer.outputs.begin(), producer.outputs.end(), t)) return t;
  }
  return -1;
}

// A matmul whose coarse tiles loop over K stores a partial output every iteration: an
// epilogue cannot run on it, so none joins its kernel.
bool k_loop(const Op& matmul) { return matmul.tiles.count("K") && matmul.tiles.at("K") > 1; }

// Forced coarse tiles a fused kernel can run: none, or a loop over the dim the op's output is
// divided along (lower_fused's coarse-tile loop, which the card's num_tiles_per_dim hint puts
// around a whole chain). Tiles over another dim (a reduction's row chunks) keep the op's own
// lowering.
bool coarse_tiles_fuse(const OpGraph& g, const Op& op, int cores) {
  if (op.tiles.empty()) return true;
  const auto s = rowwise_split(g, op, op.outputs[0], cores);
  return s && op.tiles.size() == 1 && op.tiles.begin()->first == fmt::format("d{}", s->dim);
}

// An op that may share a kernel with its neighbours at all (a forced split keeps its own).
bool fusable(const OpGraph& g, const Op& op, int cores) {
  return op_fuses(g, op) && op.split.empty() && coarse_tiles_fuse(g, op, cores);
}

// Whether rowwise op `next` may join the rowwise kernel `k`.
bool joins_rowwise(const OpGraph& g, const TensorUses& uses, const KernelPlan& k, const Op& next, int cores,
                   std::uint64_t budget) {
  if (!is_rowwise(next)) return false;
  bool linked = false;
  for (int t : next.inputs)
    for (int oi : k.ops) {
      const Op& other = g.ops[static_cast<std::size_t>(oi)];
      const auto mine = rowwise_split(g, next, t, cores), theirs = rowwise_split(g, other, t, cores);
      if (other.outputs[0] == t) {  // produced in the kernel: divided the same way
        if (!same_split(theirs, mine)) return false;
        linked = true;
      } else if (std::count(other.inputs.begin(), other.inputs.end(), t) && mine.has_value() != theirs.has_value()) {
        return false;  // an input the kernel loads already, sliced another way
      } else if (std::count(other.inputs.begin(), other.inputs.end(), t) && mine && !same_split(mine, theirs)) {
        return false;
      }
    }
  if (!linked) return false;
  std::vector<int> ops = k.ops;
  ops.push_back(next.index);
  return plan_fused(g, uses, ops, cores).unit_bytes() <= budget;
}

}  // namespace

std::vector<KernelPlan> form_kernels(const OpGraph& g, const TensorUses& uses, int cores, std::uint64_t tile_budget) {
  std::vector<KernelPlan> out;
  bool open = false;  // the last kernel may take more ops
  for (int oi : g.order) {
    const Op& op = g.ops[static_cast<std::size_t>(oi)];
    std::string not_fused;
    if (open && fusable(g, op, cores) && out.back().ops.size() < kMaxFusedOps) {
      KernelPlan& k = out.back();
      const Op& head = g.ops[static_cast<std::size_t>(k.ops.front())];
      const bool matmul = find_op_info(head.op)->kind == OpKind::matmul;
      std::vector<int> epilogue(k.ops.begin() + 1, k.ops.end());
      const int last = g.ops[static_cast<std::size_t>(k.ops.back())].outputs[0];
      // A matmul epilogue stores only its last output: the tensors before it must not be
      // needed elsewhere.
      const int stored = stored_intermediate(g, k, op);
      // The ops of a rowwise kernel run under one coarse-tile loop: the same tiles, or none.
      const bool same_tiles = head.tiles == op.tiles;
      const bool joins = stored >= 0 ? false
                         : matmul ? op.tiles.empty() && !k_loop(head) && !uses.read_elsewhere(last, oi) &&
                                        matmul_epilogue_ok(g, uses, head, epilogue, op)
                                  : same_tiles && joins_rowwise(g, uses, k, op, cores, tile_budget);
      if (joins) {
        k.ops.push_back(oi);
        k.matmul_epilogue = matmul;
        continue;
      }
      if (stored >= 0)
        not_fused = "not fused with the kernel before: " + g.tensors[static_cast<std::size_t>(stored)].name +
                    " is produced under lx_planning \"off\" (nothing stays in LX), so it is stored and loaded again";
      else if (!matmul && !same_tiles && joins_rowwise(g, uses, k, op, cores, tile_budget))
        not_fused = "not fused with the kernel before: its coarse tiles differ (one kernel runs one coarse-tile loop)";
    }
    out.push_back(KernelPlan{{oi}, false, not_fused});
    const OpKind kind = find_op_info(op.op)->kind;
    // A kernel stays open for fusion when its op fuses and is rowwise (and not a split
    // reduction, whose output lands on one core) or a matmul (for its epilogue).
    open = op_fuses(g, op) && ((is_rowwise(op) && fusable(g, op, cores) && rowwise_split(g, op, op.outputs[0], cores)) ||
                               kind == OpKind::matmul);
  }
  return out;
}

std::vector<bool> fused_away_tensors(const OpGraph& g, const TensorUses& uses, const std::vector<KernelPlan>& kernels) {
  std::vector<bool> away(g.tensors.size(), false);
  std::vector<int> kernel_of(g.ops.size(), -1);
  for (std::size_t k = 0; k < kernels.size(); ++k)
    for (int oi : kernels[k].ops) kernel_of[static_cast<std::size_t>(oi)] = static_cast<int>(k);
  for (const Op& op : g.ops) {
    const int k = kernel_of[static_cast<std::size_t>(op.index)];
    if (kernels[static_cast<std::size_t>(k)].ops.size() < 2) continue;
    for (int t : op.outputs) {
      bool inside = !uses.is_output(t);
      for (int r : uses.readers(t))
        if (kernel_of[static_cast<std::size_t>(r)] != k) inside = false;
      away[static_cast<std::size_t>(t)] = inside;
    }
  }
  return away;
}

std::string kernel_name(const OpGraph& g, const KernelPlan& k) {
  const Op& first = g.ops[static_cast<std::size_t>(k.ops.front())];
  const Op& last = g.ops[static_cast<std::size_t>(k.ops.back())];
  const std::string& out = g.tensors[static_cast<std::size_t>(last.outputs[0])].name;
  if (k.ops.size() == 1) return first.op + "_" + g.tensors[static_cast<std::size_t>(first.outputs[0])].name;
  return (k.matmul_epilogue ? first.op + "_epilogue_" : "fused_" + first.op + "_") + out;
}

}  // namespace dfsim

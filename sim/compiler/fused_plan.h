#pragma once
// Plan of a fused kernel of rowwise ops: the LX slots of one tile (inputs, intermediates,
// outputs, temporaries of the norms) and the SFP steps between them.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/compiler/lowering.h"

namespace dfsim {

// One LX buffer of a tile: an op graph tensor's slice or a temporary of a norm.
struct FusedSlot {
  std::string name;
  int tensor = -1;                 // op graph tensor, -1 for a temporary
  OperandSlicer slicer;            // how tiles slice it (a temporary: its source tensor's)
  std::uint64_t unit = 0, fixed = 0;            // LX bytes per unit of the split dim, and per tile
  std::uint64_t unit_elems = 0, fixed_elems = 0;
  Dtype dtype = Dtype::fp16;
  bool external_in = false;        // read from outside the kernel (loaded once per tile)
  bool stored = false;             // used outside the kernel (stored once per tile)
};

// One SFP task per tile: `op` reads slots `reads`, writes slot `write`; its element count is
// that of slot `elements_of` (the input of a reduction, the output otherwise).
struct FusedStep {
  std::string name, op;
  std::vector<int> reads;
  int write = -1;
  int elements_of = -1;
};

struct FusedPlan {
  std::vector<int> ops;
  std::vector<FusedSlot> slots;
  std::vector<FusedStep> steps;
  std::int64_t extent = 1;         // units of the split dim
  int cores = 1;
  int out_split_dim = 0;           // the split dim as a dim of the first op's output
  // LX bytes of a one-unit tile: one unit of every slot a tile holds, plus the broadcast
  // operands, loaded once and kept for the kernel (lower_fused takes them off the budget).
  std::uint64_t unit_bytes() const;
};

// Plans `ops` (op indices in execution order, each rowwise, divided over the cores the same
// way) as one kernel for `cores` cores.
FusedPlan plan_fused(const OpGraph& g, const TensorUses& uses, const std::vector<int>& ops, int cores);

}  // namespace dfsim

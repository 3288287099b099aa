#pragma once
// The accumulation step of a matmul's coarse-tile loop over K: the running sum of the parts'
// products, an elementwise pass over the whole output after each part (matmul_accumulate.cpp).
#include <string>

#include "sim/compiler/lowering.h"

namespace dfsim {

// Emits sum = before + product over `out`'s shape ([..., M, N]), all three HBM buffers shaped
// like `out`: the M rows divided over the cores, each core's share in tiles that load both
// operands, add them on the SFP and store the sum. A core's tile spans every batch (the card's
// stick layout keeps a band of rows of all batches together) when it fits the tile budget, else
// single rows. Returns the LX buffer of the sum of the first core group's last tile.
int emit_accumulate(LowerContext& ctx, const std::string& prefix, const OpTensor& out, int before, int product, int sum);

}  // namespace dfsim

#pragma once
// Closed-form cycle counts and LX traffic of the PT systolic array (see docs/models.md).
#include <cstdint>

#include "sim/config/chip_config.h"

namespace dfsim {

// What one m x n x k matmul costs on a core's PT arrays.
struct PtCost {
  std::uint64_t cycles = 0;       // compute cycles of the busiest corelet: fills, steady state, drains
  std::uint64_t folds = 0;        // array folds (tile passes) of the busiest corelet
  std::uint64_t fold_rows = 0;    // PE rows / cols used by a full fold (min of the array and the shape)
  std::uint64_t fold_cols = 0;
  std::uint64_t feed_bytes = 0;   // operand bytes the arrays read from LX (a broadcast operand counted once)
  std::uint64_t psum_bytes = 0;   // fp32 partial sums written to LX and read back again (each way)
};

// The array is rows x cols PEs of `simd` MAC ways; `corelets` arrays share the work (and the
// core's LX ports). Per dataflow (docs/models.md, "PT"), a fold maps (Sr, Sc, T):
//   os: PE rows <- m, PE cols <- n, time <- ceil(k / simd)      (outputs stay in the PEs)
//   ws: PE rows <- ceil(k / simd), PE cols <- n, time <- m       (B tile stays in the PEs)
//   is: PE rows <- ceil(k / simd), PE cols <- m, time <- n       (A tile stays in the PEs)
// A fold alone takes 2 Sr + Sc + T - 2 cycles (preload or result shift-out Sr, skew Sr + Sc - 2,
// stream T); back to back the next fold starts max(T, Sr) after the previous one (double-
// buffered stationary registers), so only the last fold pays its fill and drain.
// `in` is the operand precision (bytes of the LX feed). With `broadcast` one LX read of the
// operand both corelets stream feeds both arrays; without it each corelet reads its own.
// `fold_stream_limit` > 0: folds do not overlap, and a fold streams at most that many steps
// before its accumulators drain; every part of a fold then costs 2 Sr + Sc - 2 + its stream
// (docs/models.md, "PT"; docs/calibration.md, "Fold stream limit"). 0: the overlap above.
PtCost pt_matmul_cost(std::uint64_t m, std::uint64_t n, std::uint64_t k, int rows, int cols, int simd,
                      int corelets, Dataflow dataflow, Dtype in = Dtype::fp16, bool broadcast = true,
                      int fold_stream_limit = 0);

// pt_matmul_cost(...).cycles
std::uint64_t pt_matmul_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k, int rows, int cols, int simd,
                               int corelets, Dataflow dataflow, int fold_stream_limit = 0);

}  // namespace dfsim

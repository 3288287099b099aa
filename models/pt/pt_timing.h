#pragma once
// Closed-form cycle counts of the PT systolic array (see docs/models.md).
#include <cstdint>

#include "sim/config/chip_config.h"

namespace dfsim {

// Cycles for an m x n x k matmul on `corelets` PT arrays of rows x cols PEs with `simd`
// MAC ways each. Each corelet takes its share of the m rows; it computes its output in
// rows x cols tiles, each streaming ceil(k / simd) reduction steps; tiles run back to back,
// and the pipeline fills and drains once (rows + cols - 2 cycles of skew).
std::uint64_t pt_matmul_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k, int rows, int cols,
                               int simd, int corelets);

}  // namespace dfsim

#pragma once
// Closed-form cycle counts of the SFP vector unit (see docs/models.md).
#include <cstdint>
#include <string>

#include "sim/config/chip_config.h"

namespace dfsim {

// The function class an SFP op belongs to (a key of core.sfp.cycles_per_vector).
std::string sfp_function_class(const std::string& op);

// Cycles for `elements` of `op` in `dtype` on `corelets` SFPs: vectors of `lanes` elements
// per corelet, each costing the class's cycles (divided by fp32_rate for fp32/int32), plus
// the pipeline latency once.
// A `reduce`-class op with `rows` > 0 is a row reduction of `rows` rows of elements / rows:
// rows are split over the corelets, each row is vectorised on its own (a partial vector per
// row), and every row then takes one pass through the cross-lane adder tree (one cycle per
// row, pipelined) whose depth ceil(log2(lanes)) is paid once.
std::uint64_t sfp_cycles(const SfpConfig& sfp, const std::string& op, Dtype dtype, std::uint64_t elements,
                         int corelets, std::uint64_t rows = 0);

}  // namespace dfsim

#include "models/sfp/sfp_timing.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/graph/unit_ops.h"

namespace dfsim {

std::string sfp_function_class(const std::string& op) { return sfp_op_class(op); }

std::uint64_t sfp_cycles(const SfpConfig& sfp, const std::string& op, Dtype dtype, std::uint64_t elements,
                         int corelets, std::uint64_t rows) {
  if (elements == 0) return 0;
  const std::uint64_t L = static_cast<std::uint64_t>(std::max(corelets, 1));
  const std::uint64_t lanes = static_cast<std::uint64_t>(sfp.lanes);
  std::string cls = sfp_function_class(op);
  std::uint64_t per_corelet = (elements + L - 1) / L;
  std::uint64_t vectors = (per_corelet + lanes - 1) / lanes;
  std::uint64_t tail = 0;  // cross-lane reduction of each row
  auto it = sfp.cycles_per_vector.find(cls);
  double cost = it == sfp.cycles_per_vector.end() ? 1.0 : it->second;
  if (cls == "reduce" && rows > 0) {
    std::uint64_t rows_c = (std::min(rows, elements) + L - 1) / L;
    std::uint64_t row_len = (per_corelet + rows_c - 1) / rows_c;
    vectors = rows_c * ((row_len + lanes - 1) / lanes);
    std::uint64_t depth = 0;
    while ((std::uint64_t{1} << depth) < lanes) ++depth;
    tail = rows_c + depth;
    // An unpipelined tree takes one vector at a time, each for all its levels.
    cost = std::max(cost, static_cast<double>(depth * static_cast<std::uint64_t>(sfp.tree_level_cycles)));
  }
  if (dtype == Dtype::fp32 || dtype == Dtype::int32) cost /= sfp.fp32_rate;
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(vectors) * cost)) + tail + sfp.pipeline_cycles;
}

}  // namespace dfsim

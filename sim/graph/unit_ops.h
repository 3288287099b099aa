#pragma once
// The one place that lists which ops each unit kind accepts; add new SFP functions here.
#include <string>
#include <vector>

#include "sim/graph/kernel_graph.h"

namespace dfsim {

// Ops a unit accepts, in the order error messages list them.
const std::vector<std::string>& unit_ops(UnitKind u);
bool unit_accepts(UnitKind u, const std::string& op);

}  // namespace dfsim

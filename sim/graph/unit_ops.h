#pragma once
// The one place that lists which ops each unit kind accepts and, for SFP ops, their function
// class; add new SFP functions here.
#include <string>
#include <vector>

#include "sim/graph/kernel_graph.h"

namespace dfsim {

// Ops a unit accepts, in the order error messages list them.
const std::vector<std::string>& unit_ops(UnitKind u);
bool unit_accepts(UnitKind u, const std::string& op);
// The SFP function class (timing class, `core.sfp.cycles_per_vector` key) of an SFP op;
// "add" for an op that is not an SFP op.
const std::string& sfp_op_class(const std::string& op);

}  // namespace dfsim

#pragma once
// The "placement" section of summary.json for `dfsim run --placement` (docs/placement.md):
// each workload's cards and when it started and ended in the shared run; its terminal lines.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/graph/placement.h"
#include "sim/runtime/simulation.h"

namespace dfsim {

nlohmann::ordered_json placement_json(const Placement& p, const std::vector<int>& task_workload, const Simulation& sim);
std::string placement_text(const nlohmann::ordered_json& summary);

}  // namespace dfsim

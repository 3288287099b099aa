#pragma once
// The "placement" section of summary.json for `dfsim run --placement` (docs/placement.md):
// each workload's cards and when it started and ended in the shared run, against its run alone
// (--solo); its terminal lines.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/graph/placement.h"
#include "sim/stats/workload_activity.h"

namespace dfsim {

// `activity`: each workload's (sim/stats/workload_activity.h); `solo_ns` (--solo; empty: none):
// each workload's duration alone, giving its solo_ns and slowdown.
nlohmann::ordered_json placement_json(const Placement& p, const std::vector<WorkloadActivity>& activity,
                                      const std::vector<double>& solo_ns = {});
std::string placement_text(const nlohmann::ordered_json& summary);

}  // namespace dfsim

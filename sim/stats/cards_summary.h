#pragma once
// The several-cards parts of summary.json (docs/outputs.md): a section per card (its off-chip
// bytes, compute and the share of the run its PCIe port spent communicating) and the PCIe
// links' bytes and utilization; and their terminal line.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/runtime/simulation.h"

namespace dfsim {

nlohmann::ordered_json cards_json(Simulation& sim, const RunResult& res);
nlohmann::ordered_json pcie_json(Simulation& sim, const RunResult& res);
std::string cards_text(const nlohmann::ordered_json& summary);

}  // namespace dfsim

#pragma once
// summary.json: the run's figures with a stable, documented schema (docs/outputs.md).
// Everything outside "host" is deterministic.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/runtime/simulation.h"

namespace dfsim {

struct EnergyReport;

struct RunInfo {
  std::string workload_file, config_file;
  std::string workload_format;  // dfsim.ops or dfsim.kernels
  const EnergyReport* energy = nullptr;  // computed by the caller; null: make_summary computes it
};

nlohmann::ordered_json make_summary(Simulation& sim, const RunResult& res, const RunInfo& info);

// A few human-readable lines for the terminal.
std::string summary_text(const nlohmann::ordered_json& s);

}  // namespace dfsim

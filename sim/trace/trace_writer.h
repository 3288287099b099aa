#pragma once
// Writes trace.json (Chrome trace-event format, for Perfetto) at a chosen level of detail.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/runtime/simulation.h"
#include "sim/stats/recorder.h"
#include "sim/stats/workload_activity.h"

namespace dfsim {

struct TraceOptions {
  TraceLevel level = TraceLevel::units;
  std::string flows_kernel;  // draw dependency arrows into and out of this kernel ("" none)
  // A placement run's workloads (docs/placement.md), drawn as the "workloads" process: their
  // activity and summary.json's placement[] entries (the slices' names and args); null: none.
  const std::vector<WorkloadActivity>* workloads = nullptr;
  const nlohmann::ordered_json* placement = nullptr;
};

void write_trace(std::ostream& out, Simulation& sim, const RunResult& res, const TraceOptions& opt = {});

}  // namespace dfsim

#pragma once
// Writes trace.json (Chrome trace-event format, for Perfetto) at a chosen level of detail.
#include <ostream>
#include <string>

#include "sim/runtime/simulation.h"
#include "sim/stats/recorder.h"

namespace dfsim {

struct TraceOptions {
  TraceLevel level = TraceLevel::units;
  std::string flows_kernel;  // draw dependency arrows into and out of this kernel ("" none)
};

void write_trace(std::ostream& out, Simulation& sim, const RunResult& res, const TraceOptions& opt = {});

}  // namespace dfsim

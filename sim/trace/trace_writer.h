#pragma once
// trace.json in Chrome trace-event format (opens in Perfetto and chrome://tracing): a
// process per core, memory and ring; a thread per unit, channel and link; task slices with
// their arguments; counter tracks for LX occupancy and off-chip bandwidth.
#include <ostream>

#include "sim/runtime/simulation.h"

namespace dfsim {

void write_trace(std::ostream& out, Simulation& sim, const RunResult& res);

}  // namespace dfsim

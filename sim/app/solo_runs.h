#pragma once
// `dfsim run --placement FILE --solo`: each workload of a placement simulated alone, in a child
// `dfsim run --placement FILE --only NAME` (one simulation per process), for what it loses in
// the shared run (docs/placement.md).
#include <string>
#include <vector>

#include "sim/graph/placement.h"

namespace dfsim {

// The duration (ns) of each workload of `p` (read from `placement_file`) run alone; `options`
// are the child runs' other `dfsim run` options (config, --set, compile flags), the same as the
// shared run's. SimError if a run fails.
std::vector<double> run_workloads_alone(const Placement& p, const std::string& placement_file,
                                        const std::vector<std::string>& options);

}  // namespace dfsim

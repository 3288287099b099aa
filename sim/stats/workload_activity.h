#pragma once
// Per workload of a placement run (docs/placement.md): when it ran and when its ready work
// waited for a unit another workload held, from the task records after the run. One copy for
// the summary's placement[] (held_by_others_ns, held_by) and the trace's "workloads" tracks.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/common/time.h"
#include "sim/runtime/simulation.h"

namespace dfsim {

// An interval during which some instance of a workload was ready but waited for its unit while
// instances of the workloads `on` (ascending) held it; a workload's waits are disjoint, sorted,
// and two that touch have different `on`.
struct WorkloadWait {
  Tick begin = 0, end = 0;
  std::vector<int> on;
};

// One workload's activity: the span of its fired instances and its waits on others.
struct WorkloadActivity {
  Tick start = 0;  // its first fired instance's start (0 if none fired)
  Tick end = 0;    // its last one's end (the start of one still running when the run stopped)
  std::uint64_t instances = 0;  // instances fired
  bool finished = true;         // every instance of it fired and ended (false in a run stopped early)
  std::vector<WorkloadWait> waits;
  Tick held_by_others = 0;      // the waits' total length (their union: wall time)
  // (workload, the total length of the waits naming it), by workload, for those named at all:
  // sparse, as thousands of workloads on one card would make a square table.
  std::vector<std::pair<int, Tick>> held_by;
};

// `task_workload`: the workload of each task of the merged graph (sim/graph/placement.h).
std::vector<WorkloadActivity> workload_activity(std::size_t workloads, const std::vector<int>& task_workload,
                                                const Simulation& sim);

}  // namespace dfsim

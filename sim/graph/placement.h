#pragma once
// A placement ("format": "dfsim.placement", docs/placement.md): several workloads on one
// system, each on its cards (optionally a core range of them), at a start time and/or after
// another one's end. They are merged into one kernel graph (buffers, tasks and kernels prefixed
// "<workload>/", cards and cores mapped) that runs in one simulation, so they share what they
// really share: a card's memory and ring (and cores, where their ranges overlap) when placed on
// the same card, the PCIe fabric always.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

inline constexpr int kPlacementVersion = 1;
// The most workloads one placement may list.
inline constexpr std::size_t kMaxPlacedWorkloads = 1024;

struct PlacedWorkload {
  std::string name;       // unique; the prefix of its kernels, tasks and buffers
  std::string file;       // the workload (op graph or kernel graph), relative to the placement file
  std::vector<int> cards; // the system's cards its cards 0, 1, ... run on
  int after = -1;         // index of the workload whose end it waits for (an earlier one), -1: none
  double start_ns = 0;    // no task of it starts earlier
  int first_core = 0;     // its cores 0, 1, ... run on the cards' cores first_core, first_core + 1, ...
  int core_count = 0;     // cores of the range; 0: no range given (from core 0, as many as it uses)
};

struct Placement {
  std::string name, description, file;
  std::vector<PlacedWorkload> workloads;
};

Placement read_placement(const Json& j, const std::string& file);
Placement load_placement(const std::string& path);

// Workload `w` of `p` alone: the same cards, core range and start_ns, without its "after" (what
// `dfsim run --placement FILE --only NAME` runs, and `--solo` for each workload).
Placement solo_placement(const Placement& p, std::size_t w);

// InputError when a workload's core range goes beyond a card's `card_cores`, or a card it names
// beyond the system's `system_cards` (before loading them).
void check_placement_fits(const Placement& p, int card_cores, int system_cards);

// One kernel graph of every workload's graph (`graphs[i]` is workload i's), each moved to its
// cards and core range, and for each of its tasks the workload it came from. InputError when a
// graph's cards are not its placement's, or it uses more cores than its range.
KernelGraph merge_placement(const Placement& p, const std::vector<KernelGraph>& graphs, std::vector<int>* task_workload);

// Adds the "after" dependencies: every instance of a workload without a dependency waits for
// every instance of the workload it follows that nothing else of that workload waits for. Sets
// the start times: those instances are not released before their workload's start_ns (every
// other instance depends on them).
void add_placement_dependencies(const Placement& p, const std::vector<int>& task_workload, ExpandedGraph& x);

}  // namespace dfsim

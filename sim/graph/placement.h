#pragma once
// A placement ("format": "dfsim.placement", docs/placement.md): several workloads on one
// system, each on its cards, optionally after another one's end. They are merged into one
// kernel graph (buffers, tasks and kernels prefixed "<workload>/", cards mapped) that runs in
// one simulation, so they share what they really share: a card's cores and memory when placed
// on the same card, the PCIe fabric always.
#include <string>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

inline constexpr int kPlacementVersion = 1;

struct PlacedWorkload {
  std::string name;       // unique; the prefix of its kernels, tasks and buffers
  std::string file;       // the workload (op graph or kernel graph), relative to the placement file
  std::vector<int> cards; // the system's cards its cards 0, 1, ... run on
  int after = -1;         // index of the workload whose end it waits for (an earlier one), -1: none
};

struct Placement {
  std::string name, description, file;
  std::vector<PlacedWorkload> workloads;
};

Placement read_placement(const Json& j, const std::string& file);
Placement load_placement(const std::string& path);

// One kernel graph of every workload's graph (`graphs[i]` is workload i's), and for each of
// its tasks the workload it came from. InputError when a graph's cards are not its placement's.
KernelGraph merge_placement(const Placement& p, const std::vector<KernelGraph>& graphs, std::vector<int>* task_workload);

// Adds the "after" dependencies: every instance of a workload without a dependency waits for
// every instance of the workload it follows that nothing else of that workload waits for.
void add_placement_dependencies(const Placement& p, const std::vector<int>& task_workload, ExpandedGraph& x);

}  // namespace dfsim

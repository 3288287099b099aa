#pragma once
// Expansion of a kernel graph into task instances with data dependencies.
#include "sim/graph/kernel_graph.h"

namespace dfsim {

struct ChipConfig;

// Instantiates every task template on each of its cores (template order, then core
// ascending) and computes the dependencies between instances from their concrete regions
// (reads_of / writes_of: computed when used, not stored). Checks the graph against the chip
// first (check_kernel_graph_fits). Throws InputError (graph.file and the task's JSON path)
// on: a preloaded buffer written, two writers of overlapping ranges of one buffer instance,
// a dependency cycle (the message names the tasks on it).
ExpandedGraph expand_graph(const KernelGraph& g, const ChipConfig& config);

// "task X core c", as error messages name an instance.
std::string instance_label(const KernelGraph& g, const TaskInstance& inst);

}  // namespace dfsim

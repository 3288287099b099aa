#pragma once
// Compiler from an op graph to a compiled kernel graph (see docs/compiler.md).
#include <cstdint>

#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

struct ChipConfig;
struct CompileReport;

// Compiles every op of `ops` into one kernel, dividing the work over `cores` cores of
// `config`. Throws InputError (the op graph's file and JSON path) when `cores` exceeds the
// chip or an op cannot be tiled into half of the usable LX.
// With `report`, what the compiler decided per kernel goes there too (compile_report.h).
// `max_tasks` (0: no limit): an InputError at the op being lowered as soon as the graph's task
// instances pass it (--max-tasks), before the memory for them is spent.
KernelGraph compile_ops(const OpGraph& ops, const ChipConfig& config, int cores, CompileReport* report = nullptr,
                        std::uint64_t max_tasks = 0);

}  // namespace dfsim

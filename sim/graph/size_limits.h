#pragma once
// Size guards checked before any work proportional to a graph's size, with overflow-safe
// arithmetic, so a huge input is refused in milliseconds (exit 2) rather than exhausting
// host memory or time. See docs/reliability.md ("Guards before work").
#include <cstdint>
#include <string>

#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

// The most elements one op graph tensor may have: their offsets in bits fit 64 bits.
inline constexpr std::uint64_t kMaxTensorElements = std::uint64_t(1) << 58;

struct ChipConfig;

// The default of --max-tasks: task instances a graph may expand to (each costs host memory,
// about 400 B while simulating, with the compiled templates): 2 M is about 0.8 GB.
inline constexpr std::uint64_t kDefaultMaxTasks = 2'000'000;

// a * b, saturating at UINT64_MAX instead of wrapping.
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b);
std::uint64_t add_sat(std::uint64_t a, std::uint64_t b);

// Every tensor of an op graph, and all of them together, within memory.capacity_bytes
// (InputError at /tensors/<name>/shape, or /tensors).
void check_op_graph_fits(const OpGraph& ops, const ChipConfig& cfg);

// Before compiling: every coarse-tile iteration an op's compile.tiles asks for is at least one
// task instance, so their sum over the ops is a lower bound of the compiled graph's; beyond
// `max_tasks` (0: kDefaultMaxTasks) an InputError at the op that crosses it (/ops/<i>).
void check_op_graph_tiles(const OpGraph& ops, std::uint64_t max_tasks);

// The task instances of a compiled graph within `max_tasks` (0: kDefaultMaxTasks); InputError
// naming `file` and the limit otherwise.
void check_task_count(const KernelGraph& g, const std::string& file, std::uint64_t max_tasks);

}  // namespace dfsim

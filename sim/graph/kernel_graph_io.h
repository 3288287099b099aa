#pragma once
// Reading, checking and writing the compiled kernel graph format ("format": "dfsim.kernels", v1).
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

struct ChipConfig;

// Version 2 added several cards ("cards", a task's "cards") and the PCIe "link" unit; a graph
// that uses neither is written as version 1, which every version reads.
inline constexpr int kKernelGraphVersion = 2;

// "dfsim.ops", "dfsim.kernels", or "" (configs and anything else carry no known "format").
std::string detect_format(const Json& j);

// Parses and checks a kernel graph (everything that does not depend on a chip config).
// Tasks read while a large file's JSON text was parsed (parse_workload_text), per kernel in
// file order; `active` once any was.
struct StreamedTasks {
  bool active = false;
  std::vector<std::vector<Task>> per_kernel;
};

// Throws InputError naming `file` and the JSON path. With `streamed` active, each kernel's tasks
// are taken from it (its "tasks" list in `j` is empty).
KernelGraph read_kernel_graph(const Json& j, const std::string& file, StreamedTasks* streamed = nullptr);
KernelGraph load_kernel_graph(const std::string& path);

// A workload file's JSON text as a document. From `stream_bytes` of text on, a kernel graph's
// tasks are read into `streamed` as the parser meets them and left out of the document (a
// 2048-token prefill's 1 GB graph took 10 GB as a whole document), when its "format" and
// "buffers" come before "kernels" as write_kernel_graph orders them; the same checks and
// errors, possibly in another order when a file has several.
inline constexpr std::size_t kStreamKernelGraphBytes = std::size_t{16} << 20;
Json parse_workload_text(const std::string& text, const std::string& file, StreamedTasks* streamed,
                         std::size_t stream_bytes = kStreamKernelGraphBytes);

// Structural checks on an in-memory graph (also run by read_kernel_graph): ops per unit,
// access bounds, core ranges, spaces. Errors name graph.file and the task's JSON path.
void check_kernel_graph(const KernelGraph& g);

// Checks against the chip: graph.cores <= config cores, every LX buffer fits the usable LX.
void check_kernel_graph_fits(const KernelGraph& g, const ChipConfig& config);

// The file form; read_kernel_graph(write_kernel_graph(g)) reproduces g exactly.
Json write_kernel_graph(const KernelGraph& g);
// The same text as write_kernel_graph(g).dump(1), printed member by member without building
// the whole document (a 2048-token prefill's graph is 1 GB of text: its Json was 9 GB).
void write_kernel_graph(const KernelGraph& g, std::ostream& os);

}  // namespace dfsim

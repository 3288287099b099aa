#pragma once
// The dfsim command line: one function per subcommand, each returning the exit code
// (0 success, 1 the simulation failed, 2 bad input or usage).
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

int cmd_run(const std::vector<std::string>& args);
int cmd_compile(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_info(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_serve(const std::vector<std::string>& args);

// Shared by the subcommands.
std::string default_config_path();
std::string default_workloads_dir();  // workloads/ here, else the source tree's
// Command-line overrides of an op graph's "compile" section.
struct CompileOverrides {
  int cores = 0;                           // > 0: overrides compile.cores
  std::optional<LxPlanning> lx_planning;   // overrides compile.lx_planning
};
// --lx-planning's value: none, reductions or all (UsageError otherwise).
LxPlanning parse_lx_planning(const std::string& s);

// A workload file (op graph compiled on the fly, or compiled kernel graph) as a kernel graph,
// with the overrides applied to an op graph. `format` receives the file's format.
KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, const CompileOverrides& over,
                          std::string* format);
inline KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, int cores, std::string* format) {
  return load_workload(file, cfg, CompileOverrides{cores, std::nullopt}, format);
}

// Thrown for command-line misuse (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace dfsim

#pragma once
// The dfsim command line: one function per subcommand, each returning the exit code
// (0 success, 1 the simulation failed, 2 bad input or usage).
#include <string>
#include <vector>

#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

int cmd_run(const std::vector<std::string>& args);
int cmd_compile(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_info(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);

// Shared by the subcommands.
std::string default_config_path();
std::string default_workloads_dir();  // workloads/ here, else the source tree's
// A workload file (op graph compiled on the fly, or compiled kernel graph) as a kernel graph.
// `cores` > 0 overrides the op graph's compile.cores. `format` receives the file's format.
KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, int cores, std::string* format);

// Thrown for command-line misuse (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace dfsim

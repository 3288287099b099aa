// Loading a workload file of either format, and the default config location.
#include <filesystem>

#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/compiler/compile.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

std::string default_config_path() {
  if (std::filesystem::exists("configs/spyre.json")) return "configs/spyre.json";
  return std::string(DFSIM_SOURCE_DIR) + "/configs/spyre.json";
}

std::string default_workloads_dir() {
  if (std::filesystem::is_directory("workloads")) return "workloads";
  return std::string(DFSIM_SOURCE_DIR) + "/workloads";
}

KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, int cores, std::string* format) {
  Json j = load_json_file(file);
  std::string f = detect_format(j);
  if (format) *format = f;
  if (f == "dfsim.ops") {
    OpGraph ops = read_op_graph(j, file);
    int n = cores > 0 ? cores : ops.compile.cores;
    if (n > cfg.cores)
      throw InputError(cores > 0 ? "--cores" : file, cores > 0 ? "" : "/compile/cores",
                       "the program asks for " + std::to_string(n) + " cores, the config \"" + cfg.name +
                           "\" has " + std::to_string(cfg.cores));
    KernelGraph g = compile_ops(ops, cfg, n);
    g.file = file;
    return g;
  }
  if (f == "dfsim.kernels") {
    if (cores > 0) throw InputError("--cores", "", "applies to op graphs only; a compiled kernel graph fixes its cores");
    return read_kernel_graph(j, file);
  }
  throw InputError(file, "/format", "expected \"dfsim.ops\" or \"dfsim.kernels\"");
}

}  // namespace dfsim

// Loading a workload file of either format, and the default config location.
#include <filesystem>
#include <iostream>

#include "sim/app/cli.h"
#include "sim/app/run_control.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/compiler/compile.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/size_limits.h"

namespace dfsim {

std::string default_config_path() {
  if (std::filesystem::exists("configs/spyre.json")) return "configs/spyre.json";
  return std::string(DFSIM_SOURCE_DIR) + "/configs/spyre.json";
}

std::string default_workloads_dir() {
  if (std::filesystem::is_directory("workloads")) return "workloads";
  return std::string(DFSIM_SOURCE_DIR) + "/workloads";
}

LxPlanning parse_lx_planning(const std::string& s) {
  for (LxPlanning p : {LxPlanning::none, LxPlanning::reductions, LxPlanning::all})
    if (s == lx_planning_name(p)) return p;
  throw UsageError("--lx-planning: expected none, reductions or all, got \"" + s + "\"");
}

KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, const CompileOverrides& over,
                          std::string* format) {
  Json j = load_json_file(file);
  std::string f = detect_format(j);
  if (format) *format = f;
  if (f == "dfsim.ops") {
    OpGraph ops = read_op_graph(j, file);
    int n = over.cores > 0 ? over.cores : ops.compile.cores;
    if (over.cores > cfg.cores)
      throw InputError("--cores", "", "the program asks for " + std::to_string(n) + " cores, the config \"" +
                                          cfg.name + "\" has " + std::to_string(cfg.cores));
    if (n > cfg.cores) {  // the file's default: compile for the whole (smaller) chip
      std::cerr << "note: " << file << ": /compile/cores asks for " << n << " cores, the config \"" << cfg.name
                << "\" has " << cfg.cores << ": compiling for " << cfg.cores << " (--cores N to choose)\n";
      n = cfg.cores;
    }
    if (over.lx_planning) ops.compile.lx_planning = *over.lx_planning;
    check_op_graph_fits(ops, cfg);
    set_phase(Phase::compiling);
    KernelGraph g = compile_ops(ops, cfg, n);
    g.file = file;
    check_task_count(g, file, over.max_tasks);
    return g;
  }
  if (f == "dfsim.kernels") {
    if (over.cores > 0)
      throw InputError("--cores", "", "applies to op graphs only; a compiled kernel graph fixes its cores");
    if (over.lx_planning)
      throw InputError("--lx-planning", "", "applies to op graphs only; a compiled kernel graph fixes its buffers");
    KernelGraph g = read_kernel_graph(j, file);
    check_task_count(g, file, over.max_tasks);
    return g;
  }
  throw InputError(file, "/format", "expected \"dfsim.ops\" or \"dfsim.kernels\"");
}

}  // namespace dfsim

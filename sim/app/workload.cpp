// Loading a workload file of either format, and the default config location.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "sim/app/cli.h"
#include "sim/app/run_control.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/common/text_file.h"
#include "sim/compiler/compile.h"
#include "sim/config/params.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/placement.h"
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

std::string default_models_dir() { return default_workloads_dir() + "/models"; }

LxPlanning parse_lx_planning(const std::string& s) {
  for (LxPlanning p : lx_plannings())
    if (s == lx_planning_name(p)) return p;
  throw UsageError("--lx-planning: expected " + lx_planning_names() + ", got \"" + s + "\"");
}

std::map<std::string, std::int64_t> parse_dim_map(const std::string& flag, const std::string& s) {
  std::map<std::string, std::int64_t> m;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    std::size_t eq = item.find('=');
    std::int64_t n = 0;
    bool ok = eq != std::string::npos && eq > 0 && eq + 1 < item.size();
    if (ok) {
      try {
        std::size_t used = 0;
        n = std::stoll(item.substr(eq + 1), &used);
        ok = used == item.size() - eq - 1 && n >= 1 && n <= (1 << 20);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok) throw UsageError(flag + ": expected DIM=N[,DIM=N...] with N >= 1 (e.g. M=4,N=8 or d0=8), got \"" + s + "\"");
    if (!m.emplace(item.substr(0, eq), n).second)
      throw UsageError(flag + ": " + item.substr(0, eq) + " given twice in \"" + s + "\"");
    pos = end + 1;
  }
  return m;
}

void add_compile_flags(boost::program_options::options_description& opts, CompileFlags& f) {
  opts.add_options()
      ("no-fuse", boost::program_options::bool_switch(&f.no_fuse), "op graphs: one kernel per op (overrides compile.fuse)")
      ("split", boost::program_options::value(&f.split),
       "op graphs: force a work division, cores per named dim, for every op with those dims: M=4,N=8 (matmuls: B M N K; others: d0 d1 ...)")
      ("tiles", boost::program_options::value(&f.tiles),
       "op graphs: a sequential coarse-tile loop over a named dim, for every op with that dim: M=8 or d0=8");
}

void apply_compile_flags(const CompileFlags& f, CompileOverrides& over) {
  over.no_fuse = f.no_fuse;
  if (!f.split.empty()) over.split = parse_dim_map("--split", f.split);
  if (!f.tiles.empty()) over.tiles = parse_dim_map("--tiles", f.tiles);
}

void not_a_workload(const Json& j, const std::string& file) {
  const Json* f = j.is_object() && j.contains("format") ? &j["format"] : nullptr;
  const std::string got = f && f->is_string() ? ", got " + format_label(f->get<std::string>()) : "";
  throw InputError(file, "/format", "expected dfsim.ops or dfsim.kernels" + got);
}

void check_workload_file(const std::string& file) {
  StreamedTasks streamed;  // a large kernel graph's tasks, read while parsing
  Json j = parse_workload_text(read_input_file(file, "a JSON file", true), file, &streamed);
  const std::string f = detect_format(j);
  if (f == "dfsim.ops") read_op_graph(j, file);
  else if (f == "dfsim.kernels") read_kernel_graph(j, file, &streamed);
  else not_a_workload(j, file);
}

KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, const CompileOverrides& over,
                          std::string* format, CompileReport* report) {
  StreamedTasks streamed;  // a large kernel graph's tasks, read while parsing
  Json j = parse_workload_text(read_input_file(file, "a JSON file", true), file, &streamed);
  return workload_from_json(j, streamed, file, cfg, over, format, report);
}

KernelGraph workload_from_json(const Json& j, StreamedTasks& streamed, const std::string& file, const ChipConfig& cfg,
                               const CompileOverrides& over, std::string* format, CompileReport* report) {
  std::string f = detect_format(j);
  if (format) *format = f;
  if (f == "dfsim.ops") {
    OpGraph ops = read_op_graph(j, file);
    int n = over.cores > 0 ? over.cores : ops.compile.cores;
    if (over.cores > cfg.cores)
      throw InputError("--cores", "", "the program asks for " + std::to_string(n) + " cores, the config \"" +
                                          cfg.name + "\" has " + std::to_string(cfg.cores));
    if (n > cfg.cores) {  // the file's default: compile for the whole (smaller) chip
      note("note: " + file + ": /compile/cores asks for " + std::to_string(n) + " cores, the config \"" + cfg.name +
           "\" has " + std::to_string(cfg.cores) + ": compiling for " + std::to_string(cfg.cores) + " (--cores N to choose)");
      n = cfg.cores;
    }
    if (over.core_limit > 0 && over.cores == 0) n = std::min(n, over.core_limit);
    if (over.lx_planning) {
      ops.compile.lx_planning = *over.lx_planning;
      for (Op& op : ops.ops) op.lx_planning.reset();
    }
    if (over.no_fuse) {
      ops.compile.fuse = false;
      for (Op& op : ops.ops) op.fuse = false;
    }
    for (bool tiles : {false, true}) {
      const auto& m = tiles ? over.tiles : over.split;
      if (!m.empty() && apply_dim_map(ops, m, tiles) == 0)
        throw InputError(tiles ? "--tiles" : "--split", "",
                         "names dims no op of the graph has (matmuls: B, M, N, K; other ops: d0, d1, ... of their output)");
    }
    check_op_graph_fits(ops, cfg);
    check_op_graph_tiles(ops, over.max_tasks);
    set_phase(Phase::compiling);
    KernelGraph g = compile_ops(ops, cfg, n, report, over.max_tasks > 0 ? over.max_tasks : kDefaultMaxTasks);
    g.file = file;
    check_task_count(g, file, over.max_tasks);
    return g;
  }
  if (f == "dfsim.kernels") {
    if (over.cores > 0)
      throw InputError("--cores", "", "applies to op graphs only; a compiled kernel graph fixes its cores");
    if (over.lx_planning)
      throw InputError("--lx-planning", "", "applies to op graphs only; a compiled kernel graph fixes its buffers");
    if (over.no_fuse || !over.split.empty() || !over.tiles.empty())
      throw InputError(over.no_fuse ? "--no-fuse" : !over.split.empty() ? "--split" : "--tiles", "",
                       "applies to op graphs only; a compiled kernel graph fixes its kernels");
    for (const std::string& s : over.sets) {  // read by the compiler alone: the graph already holds its effect
      const std::string key = s.substr(0, s.find('='));
      const Param* param = find_param(key);
      if (param && param->compile_time)
        throw InputError("--set", key,
                         "a compile-time setting, which a compiled kernel graph (" + file +
                             ") already fixes; set it when compiling the op graph (dfsim compile --set " + key + "=...)");
    }
    KernelGraph g = read_kernel_graph(j, file, &streamed);
    check_task_count(g, file, over.max_tasks);
    return g;
  }
  not_a_workload(j, file);
}

KernelGraph load_placement_graph(const Placement& p, const ChipConfig& cfg, const CompileOverrides& over,
                                 std::vector<int>* task_workload) {
  std::vector<KernelGraph> graphs;
  std::string format;
  check_placement_fits(p, cfg.cores, cfg.system.cards);
  for (const PlacedWorkload& w : p.workloads) {
    CompileOverrides o = over;
    o.core_limit = w.core_count;
    try {
      graphs.push_back(load_workload(w.file, cfg, o, &format));
    } catch (const InputError& e) {  // a command-line option that fails one workload: say which
      if (e.file().rfind("--", 0) != 0) throw;
      throw InputError(e.file(), e.path(), "workload \"" + w.name + "\" (" + w.file + "): " + e.detail());
    }
  }
  return merge_placement(p, graphs, task_workload);
}

}  // namespace dfsim

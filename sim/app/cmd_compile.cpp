// `dfsim compile`: op graph -> compiled kernel graph (JSON).
#include <filesystem>
#include <iostream>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/output_dir.h"
#include "sim/app/run_control.h"
#include "sim/runtime/progress.h"
#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/size_limits.h"

namespace dfsim {

int cmd_compile(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, input, output;
  std::vector<std::string> sets;
  int cores = 0;
  std::int64_t max_tasks = static_cast<std::int64_t>(kDefaultMaxTasks);
  std::string lx_planning;
  bool explain = false, quiet = false;
  opts.add_options()
      ("input", po::value(&input)->required(), "op graph (dfsim.ops)")
      ("output,o", po::value(&output)->required(), "kernel graph to write (dfsim.kernels)")
      ("config,c", po::value(&config), "chip config (default configs/spyre.json)")
      ("set,s", po::value(&sets)->composing(), "override a config value: key.path=value")
      ("cores,n", po::value(&cores), "cores to compile for (overrides compile.cores; a file asking for more than the chip gets all of the chip)")
      ("lx-planning", po::value(&lx_planning),
       "op graphs: what stays in LX: off, none, reductions, inplace, clone or all (overrides compile.lx_planning)")
      ("max-tasks", po::value(&max_tasks)->default_value(max_tasks), "refuse graphs of more task instances than this");
  opts.add_options()
      ("explain", po::bool_switch(&explain),
       "print, per kernel, the ops in it, the split and why, tile loops, LX-resident buffers, operand sharing, "
       "off-chip bytes per buffer, the roofline bound and warnings (docs/outputs.md)")
      ("quiet,q", po::bool_switch(&quiet), "print nothing on success but what --explain asks for (no status line, no progress)");
  CompileFlags flags;
  add_compile_flags(opts, flags);
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_options("compile", "OPS.json -o KERNELS.json [--config FILE] [--cores N] [--lx-planning P] [--no-fuse] [--split D=N,...] [--tiles D=N] [--explain] [-q]",
                     "dfsim compile workloads/matmul_1024.json -o matmul.kernels.json --cores 8", opts, &pos, args, vm))
    return 0;
  if (vm.count("cores") && cores < 1) throw UsageError("--cores must be >= 1");
  check_limit_option(vm, "max-tasks", static_cast<double>(max_tasks));
  install_run_control();
  StepProgress steps(stderr_is_terminal() && !quiet ? stderr : nullptr, current_phase_name);  // on a terminal
  CompileOverrides over;
  over.cores = cores;
  over.max_tasks = static_cast<std::uint64_t>(max_tasks);
  apply_compile_flags(flags, over);
  if (vm.count("lx-planning")) over.lx_planning = parse_lx_planning(lx_planning);
  if (config.empty()) config = default_config_path();
  ChipConfig cfg = load_chip_config(config, sets);
  // The compiled graph would replace a file it comes from (a typo costs the input).
  refuse_overwriting_inputs(output, "-o", {{"the input op graph", input}, {"--config", config}});
  OutputFile out(output);  // a path that cannot be written fails before compiling
  std::string format;
  CompileReport report;
  KernelGraph g = load_workload(input, cfg, over, &format, &report);
  if (format != "dfsim.ops") throw InputError(input, "/format", "expected an op graph (dfsim.ops), got " + format);
  set_phase(Phase::expanding);
  expand_graph(g, cfg);  // the compiled graph must pass the loader's checks
  set_phase(Phase::writing);
  out.write([&](std::ostream& f) {
    write_kernel_graph(g, f);
    f << "\n";
  });
  steps.stop();
  auto count = [](std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  if (!quiet)
    (is_standard_output(output) ? std::cerr : std::cout)
        << output << ": " << count(g.tasks.size(), "task template") << " in " << count(g.kernels.size(), "kernel") << ", "
        << count(g.buffers.size(), "buffer") << ", " << count(static_cast<std::size_t>(g.cores), "core") << "\n";
  if (explain) std::cout << report.text();
  return 0;
}

}  // namespace dfsim

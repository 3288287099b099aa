// `dfsim validate`: checks configs, op graphs, compiled graphs and regression suites against their
// formats, every file given (exit 2 if any is bad).
#include <algorithm>
#include <iostream>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/common/text_file.h"
#include "sim/gen/model_spec.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/placement.h"
#include "sim/graph/size_limits.h"
#include "sim/regress/suite.h"
#include "sim/runtime/scheduler.h"
#include "sim/sweep/sweep_spec.h"

namespace dfsim {

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::vector<std::string> files;
  std::string config;
  std::int64_t max_tasks = static_cast<std::int64_t>(kDefaultMaxTasks);
  opts.add_options()
      ("files", po::value(&files)->required()->multitoken(), "files to check")
      ("config,c", po::value(&config), "config to check graphs against (default configs/spyre.json)")
      ("max-tasks", po::value(&max_tasks)->default_value(max_tasks), "refuse graphs of more task instances than this (as run)");
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  if (!parse_options("validate", "FILE... [--config FILE] [--max-tasks N]",
                     "dfsim validate configs/*.json workloads/*.json tests/regression/*.suite.json", opts, &pos, args, vm))
    return 0;
  check_limit_option(vm, "max-tasks", static_cast<double>(max_tasks));
  CompileOverrides over;
  over.max_tasks = static_cast<std::uint64_t>(max_tasks);
  if (config.empty()) config = default_config_path();
  // Every file is checked and reported (one line each, ok or the error); exit 2 if any is bad.
  int bad = 0;
  bool config_used = false;  // a graph or placement was checked against the chip
  for (const auto& f : files) {
    try {
      StreamedTasks streamed;  // a large kernel graph's tasks, read while parsing
      Json j = parse_workload_text(read_input_file(f, "a JSON file", true), f, &streamed);
      std::string format = detect_format(j);
      if (j.is_object() && j.contains("format") && j["format"] == "dfsim.suite") {
        Suite s = load_suite(f);
        std::cout << f << ": ok (dfsim.suite, " << s.cases.size() << " cases)\n";
        continue;
      }
      if (j.is_object() && j.contains("format") && j["format"] == "dfsim.placement") {
        // Its workloads are loaded and merged against the config (its cores and system.cards).
        Placement p = load_placement(f);
        std::vector<int> task_workload;
        config_used = true;
        KernelGraph g = load_placement_graph(p, load_chip_config(config), over, &task_workload);
        check_task_count(g, f, over.max_tasks);
        std::cout << f << ": ok (dfsim.placement, " << p.workloads.size() << " workloads on " << g.cards << " card(s))\n";
        continue;
      }
      std::string declared = j.is_object() && j.contains("format") && j["format"].is_string() ? j["format"].get<std::string>() : "";
      if (declared == "dfsim.sweep") {  // was read as a config: "/axes: unknown key"
        SweepSpec s = read_sweep_file(f);
        std::cout << f << ": ok (dfsim.sweep, " << s.rows.size() << " points)\n";
        continue;
      }
      if (declared == "dfsim.model") {
        ModelSpec m = load_model_spec(f);
        std::cout << f << ": ok (dfsim.model, " << m.name << ")\n";
        continue;
      }
      if (format.empty() && !declared.empty())
        throw InputError(f, "/format",
                         "unknown format \"" + declared +
                             "\", expected dfsim.ops, dfsim.kernels, dfsim.suite, dfsim.placement, dfsim.sweep or dfsim.model "
                             "(a config has no \"format\")");
      if (format.empty()) {
        load_chip_config(f);
        std::cout << f << ": ok (config)\n";
        continue;
      }
      config_used = true;
      ChipConfig cfg = load_chip_config(config);
      KernelGraph g = workload_from_json(j, streamed, f, cfg, over, &format);
      ExpandedGraph x = expand_graph(g, cfg);
      if (std::any_of(g.buffers.begin(), g.buffers.end(), [](const Buffer& b) { return b.after >= 0; })) {
        Recorder rec(1);  // (the scheduler's bookkeeping only: nothing runs)
        Scheduler sched(g, x, rec);
        sched.set_program_order_allocation(cfg.core.lx.allocation == "program_order");
        sched.check_takeovers();
      }
      std::cout << f << ": ok (" << format << ", " << x.instances.size() << " task instances)\n";
    } catch (const InputError& e) {
      std::cout.flush();
      std::cerr << e.what() << "\n";
      ++bad;
    }
  }
  if (bad > 0) return 2;
  // --config and --max-tasks check graphs against a chip: with none listed they did nothing.
  if (!config_used && (vm.count("config") || !vm["max-tasks"].defaulted()))
    throw UsageError(std::string(vm.count("config") ? "--config " + config : "--max-tasks") +
                     " applies to op graphs, kernel graphs and placements, and none of the files is one");
  return 0;
}

}  // namespace dfsim

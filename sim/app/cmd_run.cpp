// `dfsim run`: simulate a workload on a config and write summary.json, trace.json and
// utilization.csv to the output directory.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/output_dir.h"
#include "sim/energy/energy_report.h"
#include "sim/app/run_control.h"
#include "sim/app/solo_runs.h"
#include "sim/common/stop_request.h"
#include "sim/graph/expand.h"
#include "sim/graph/placement.h"
#include "sim/graph/size_limits.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/runtime/progress.h"
#include "sim/runtime/simulation.h"
#include "sim/runtime/watchdog.h"
#include "sim/compiler/compile_report.h"
#include "sim/stats/placement_summary.h"
#include "sim/stats/summary.h"
#include "sim/stats/utilization_csv.h"
#include "sim/trace/gzip_stream.h"
#include "sim/trace/trace_writer.h"

namespace dfsim {

// (dfsim gen checks every option.)
std::vector<std::string> gen_step_args(const std::string& text, const std::string& output) {
  Json j;
  try {  // the JSON reader every file goes through: a key twice is refused, not the last taken
    j = parse_json_text(text, "--gen-step");
  } catch (const InputError& e) {
    throw UsageError(e.path() + ": " + e.detail());
  }
  if (!j.is_object())  // (the caller prefixes "--gen-step: ")
    throw UsageError("expected a JSON object of dfsim gen options, got " +
                     (text.size() > 60 ? text.substr(0, 60) + "..." : text));
  std::vector<std::string> args{"-q", "-o", output};
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string() && !v.is_number_integer())
      throw UsageError("\"" + k + "\": expected a string or an integer, got " + v.dump(-1, ' ', false, Json::error_handler_t::replace).substr(0, 60));
    std::string value = v.is_string() ? v.get<std::string>() : v.dump();
    if (k == "output")  // the graph goes to --out DIR/graph.json
      throw UsageError("\"" + k + "\": not a dfsim gen option here (the step's graph is written to --out DIR/graph.json)");
    if (k == "model") args.push_back(value);
    else args.insert(args.end(), {"--" + k, value});
  }
  return args;
}

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, workload, out, gen_step, placement_file, only;
  std::vector<std::string> sets;
  int cores = 0;
  std::string lx_planning;
  double max_sim_ns = 0, timeout_s = 0;
  std::int64_t max_events = 0, max_tasks = static_cast<std::int64_t>(kDefaultMaxTasks);
  std::string trace_level = "units", trace_format = "json";
  TraceOptions trace;
  opts.add_options()
      ("config,c", po::value(&config), "chip config (default configs/spyre.json)")
      ("workload,w", po::value(&workload), "op graph (dfsim.ops) or compiled kernel graph (dfsim.kernels)")
      ("gen-step", po::value(&gen_step),
       "instead of --workload: first write OUT/graph.json with `dfsim gen`, its options as a JSON object "
       "({\"model\": \"llama-3.1-8b\", \"phase\": \"decode\", \"context\": 2048}); needs --out (what dfsim sweep runs for a gen base)")
      ("placement", po::value(&placement_file),
       "instead of --workload: several workloads on one system, each on its cards (a dfsim.placement file, docs/placement.md)")
      ("solo", "with --placement: also simulate each workload alone (its cards, cores and start_ns, nothing else placed) "
               "and report its solo_ns and slowdown: what it loses to the others")
      ("only", po::value(&only), "with --placement: simulate only the workload of this name, alone (what --solo runs for each)")
      ("out,o", po::value(&out), "output directory (default out/<workload>-<config>/)")
      ("set,s", po::value(&sets)->composing(), "override a config value: key.path=value (repeatable)")
      ("cores,n", po::value(&cores), "cores to compile an op graph for (overrides compile.cores; a file asking for more than the chip gets all of the chip)")
      ("lx-planning", po::value(&lx_planning),
       "op graphs: which intermediates stay in LX: off, none, reductions, inplace, clone or all (overrides compile.lx_planning)")
      ("max-sim-time", po::value(&max_sim_ns), "stop after this much simulated time, ns (> 0; exit 1)")
      ("max-events", po::value(&max_events), "stop after this many model activations (> 0; exit 1)")
      ("timeout", po::value(&timeout_s),
       "stop after this many host seconds, in any phase (> 0; exit 1; partial outputs once simulating)")
      ("max-tasks", po::value(&max_tasks)->default_value(max_tasks),
       "refuse graphs of more task instances than this (exit 2)")
      ("trace", po::value(&trace_level),
       "trace detail: off, kernels, units (default) or full (adds ring links, DRAM channels, queue counters)")
      ("trace-format", po::value(&trace_format), "json (default) or json.gz (gzip; Perfetto opens both)")
      ("trace-flows", po::value(&trace.flows_kernel), "draw dependency arrows into and out of this kernel (levels units, full)")
      ("verbose,v", "log progress to stderr")
      ("quiet,q", "print nothing on success");
  CompileFlags flags;
  add_compile_flags(opts, flags);
  po::positional_options_description pos;
  pos.add("workload", 1);
  po::variables_map vm;
  if (!parse_options("run", "(--workload FILE | --gen-step JSON --out DIR | --placement FILE [--solo | --only NAME]) [--config FILE] [--out DIR] [--set key=value ...] [--cores N] [--lx-planning P] [--no-fuse] [--split D=N,...] [--tiles D=N] [--trace LEVEL]",
                     "dfsim run --config configs/spyre.json --workload workloads/add_2048x1024.json --cores 8",
                     opts, &pos, args, vm))
    return 0;
  if (!workload.empty() + !gen_step.empty() + !placement_file.empty() != 1)
    throw UsageError("give one of --workload FILE, --gen-step JSON and --placement FILE");
  const bool solo = vm.count("solo");
  if ((solo || vm.count("only")) && placement_file.empty()) throw UsageError("--solo and --only need --placement FILE");
  if (solo && vm.count("only")) throw UsageError("--solo and --only exclude each other");
  if (!gen_step.empty() && out.empty()) throw UsageError("--gen-step needs --out DIR (the graph is written there)");
  if (vm.count("cores") && cores < 1) throw UsageError("--cores must be >= 1");
  CompileOverrides over;
  over.cores = cores;
  over.sets = sets;
  apply_compile_flags(flags, over);
  if (vm.count("lx-planning")) over.lx_planning = parse_lx_planning(lx_planning);
  check_limit_option(vm, "max-events", static_cast<double>(max_events));
  // Simulated time is femtoseconds, converted through a signed 64-bit rounding (ns_to_ticks): a
  // limit past 2^63 fs became another one. A host timeout past 1e9 s (31 years) overflowed the timer.
  check_limit_option(vm, "max-sim-time", max_sim_ns, 9.2e12, "9.2e12 ns, 2.5 hours of simulated time (its range)");
  check_limit_option(vm, "timeout", timeout_s, 1e9, "1e9 s, 31 years");
  check_limit_option(vm, "max-tasks", static_cast<double>(max_tasks));
  if (!parse_trace_level(trace_level, &trace.level))
    throw UsageError("--trace must be off, kernels, units or full, got \"" + trace_level + "\"");
  if (trace_format != "json" && trace_format != "json.gz")
    throw UsageError("--trace-format must be json or json.gz, got \"" + trace_format + "\"");
  if (!trace.flows_kernel.empty() && trace.level < TraceLevel::units)
    throw UsageError("--trace-flows needs --trace units or full");
  bool quiet = vm.count("quiet"), verbose = vm.count("verbose");
  if (!spdlog::get("dfsim-stderr"))  // the log goes to stderr, as --help says (spdlog's default is stdout)
    spdlog::set_default_logger(spdlog::stderr_color_mt("dfsim-stderr"));
  spdlog::set_level(verbose ? spdlog::level::info : spdlog::level::warn);
  if (config.empty()) config = default_config_path();

  // SIGINT / SIGTERM / --timeout: before simulated time an immediate exit with nothing
  // written; while simulating, valid outputs marked partial (exit 130 / 143 / 1).
  install_run_control(timeout_s);
  // On a terminal, the steps before the simulation (seconds for a whole model's prefill)
  // show which one is running; the simulation's own line takes over from it.
  StepProgress steps(!quiet && stderr_is_terminal() ? stderr : nullptr, current_phase_name);
  // Everything is loaded and checked before time starts.
  ChipConfig cfg = load_chip_config(config, sets);
  if (!cfg.sim.trace && (vm.count("trace") ? trace.level != TraceLevel::off : !trace.flows_kernel.empty()))
    throw UsageError(std::string(vm.count("trace") ? "--trace " + trace_level : "--trace-flows") +
                     " asks for a trace, but sim.trace is false in the config (or --set)");
  if (trace.level == TraceLevel::off && vm.count("trace-format"))
    throw UsageError("--trace-format " + trace_format + " needs a trace; --trace is off");
  std::string format;
  CompileReport report;
  over.max_tasks = static_cast<std::uint64_t>(max_tasks);
  const std::vector<std::string> run_outputs{"summary.json", "trace.json", "trace.json.gz", "utilization.csv"};
  if (out.empty())
    out = "out/" + std::filesystem::path(placement_file.empty() ? workload : placement_file).stem().string() + "-" + cfg.name;
  // Refused before any work: the outputs would replace the files the run reads.
  refuse_overwriting_inputs(out, run_outputs, {}, "--out",
                            {{"--workload", workload}, {"--config", config}, {"--placement", placement_file}});
  // --gen-step's graph.json, removed (with DIR, if this run made it) when the run stops before
  // simulating: bad input or an interrupt leaves nothing behind.
  struct GeneratedGraph {
    std::string file, dir;
    bool made_dir = false, kept = true;
    ~GeneratedGraph() {
      if (kept) return;
      std::error_code ec;
      std::filesystem::remove(file, ec);
      if (made_dir) std::filesystem::remove(dir, ec);  // only if empty
    }
    void keep() {  // (also from an interrupt's abrupt exit, which runs no destructor)
      kept = true;
      keep_file_on_abrupt_exit(file);
      if (made_dir) keep_on_abrupt_exit(dir);
    }
  } generated;
  if (!gen_step.empty()) {
    workload = out + "/graph.json";
    std::error_code ec;
    generated.file = workload;
    generated.dir = out;
    generated.made_dir = !std::filesystem::exists(out, ec);
    generated.kept = std::filesystem::exists(workload, ec);  // one there before is the user's
    try {
      if (int code = cmd_gen(gen_step_args(gen_step, workload))) return code;
    } catch (const UsageError& e) {  // gen's flags are members of --gen-step here
      throw UsageError(std::string("--gen-step: ") + e.what());
    }
    if (!generated.kept) remove_file_on_abrupt_exit(workload);
    if (generated.made_dir) remove_on_abrupt_exit(out);
  }
  std::optional<Placement> placement;
  std::vector<int> task_workload;  // a placement's: the workload of each task
  KernelGraph g;
  if (!placement_file.empty()) {
    placement = load_placement(placement_file);
    if (vm.count("only")) {
      auto& ws = placement->workloads;
      auto it = std::find_if(ws.begin(), ws.end(), [&](const PlacedWorkload& w) { return w.name == only; });
      if (it == ws.end()) throw UsageError("--only: " + placement_file + " has no workload \"" + only + "\"");
      placement = solo_placement(*placement, static_cast<std::size_t>(it - ws.begin()));
    }
    g = load_placement_graph(*placement, cfg, over, &task_workload);
    check_task_count(g, placement_file, over.max_tasks);
    workload = placement_file;
    format = "dfsim.placement";
  } else {
    g = load_workload(workload, cfg, over, &format, &report);
  }
  spdlog::info("{}: {} buffers, {} task templates, {} kernels", workload, g.buffers.size(), g.tasks.size(), g.kernels.size());
  if (!trace.flows_kernel.empty() &&
      std::none_of(g.kernels.begin(), g.kernels.end(), [&](const Kernel& k) { return k.name == trace.flows_kernel; }))
    throw UsageError("--trace-flows: the workload has no kernel \"" + trace.flows_kernel + "\"");
  if (!cfg.sim.trace) trace.level = TraceLevel::off;
  set_phase(Phase::expanding);
  ExpandedGraph x = expand_graph(g, cfg);
  if (placement) add_placement_dependencies(*placement, task_workload, x);
  spdlog::info("{} task instances on {} cores", x.instances.size(), g.cores);
  // The default level grows with the task instances (about 500 B each): past
  // sim.trace_auto_instances a run asked for no level gets the kernels level, and says so.
  const std::uint64_t auto_max = cfg.sim.trace_auto_instances;
  if (!vm.count("trace") && trace.flows_kernel.empty() && trace.level > TraceLevel::kernels && auto_max > 0 &&
      x.instances.size() > auto_max) {
    trace.level = TraceLevel::kernels;
    if (!quiet)
      note(fmt::format("dfsim: {} task instances (more than sim.trace_auto_instances = {}): the trace is drawn at "
                       "level kernels; --trace units draws every instance (about {} MB)",
                       x.instances.size(), auto_max, x.instances.size() / 2000));
  }
  OutputDir dir(out, run_outputs);

  Simulation sim(g, x, cfg, trace.level);
  generated.keep();  // the run's input from here on
  steps.stop();
  set_phase(Phase::simulating);
  RunResult res =
      sim.run(RunLimits{max_sim_ns, static_cast<std::uint64_t>(max_events), timeout_s, !quiet && stderr_is_terminal()});
  spdlog::info("simulated in {:.3f} s, {} events", res.wall_seconds, res.activations);
  stop_request() = 0;  // a stop during the simulation is in `res`; one from now on aborts the writing
  set_phase(Phase::writing);

  EnergyReport energy = compute_energy(sim, res);
  record_power(sim.recorder(), energy, g.cards);
  auto summary = make_summary(sim, res, RunInfo{workload, config, format, &energy});
  if (format == "dfsim.ops")  // what the compiler decided (docs/outputs.md, explain)
    summary["explain"] = nlohmann::ordered_json::parse(report.to_json().dump());
  std::vector<double> solo_ns;  // --solo: each workload's duration alone, with the same options
  if (solo && res.ok()) {
    std::vector<std::string> opts{"--config", config, "--max-tasks", std::to_string(max_tasks)};
    for (const auto& s : sets) opts.insert(opts.end(), {"--set", s});
    if (vm.count("cores")) opts.insert(opts.end(), {"--cores", std::to_string(cores)});
    if (vm.count("lx-planning")) opts.insert(opts.end(), {"--lx-planning", lx_planning});
    if (flags.no_fuse) opts.push_back("--no-fuse");
    if (!flags.split.empty()) opts.insert(opts.end(), {"--split", flags.split});
    if (!flags.tiles.empty()) opts.insert(opts.end(), {"--tiles", flags.tiles});
    solo_ns = run_workloads_alone(*placement, placement_file, opts);
  }
  std::vector<WorkloadActivity> activity;  // a placement's workloads: for the summary and the trace
  if (placement) {
    activity = workload_activity(placement->workloads.size(), task_workload, sim);
    summary["placement"] = placement_json(*placement, activity, solo_ns);
    trace.workloads = &activity;
    trace.placement = &summary["placement"];
  }
  dir.open("summary.json") << summary.dump(2) << "\n";
  std::string trace_file = trace.level == TraceLevel::off ? "" : "trace." + trace_format;
  if (!trace_file.empty()) {
    auto f = dir.open(trace_file);
    if (trace_format == "json.gz") {
      GzipOStream z(f);
      write_trace(z, sim, res, trace);
      // A failed write (full disk, a stop) is reported by commit() with its reason.
      if (!z.finish() && f) throw OutputError(dir.path(trace_file) + ": gzip compression failed");
    } else {
      write_trace(f, sim, res, trace);
    }
  }
  {
    auto f = dir.open("utilization.csv");
    write_utilization_csv(f, sim.recorder(), res.end);
  }
  dir.commit();

  // A run stopped before one power window has passed has no window's average to judge: its
  // average over a stub of the run (1 ns after --max-sim-time 1) says nothing about the budget.
  if (std::string w = power_budget_warning(energy); !w.empty() && (res.ok() || energy.window < energy.profile.end))
    std::cerr << w << "\n";
  if (!res.ok()) {
    std::cerr << "dfsim: " << res.reason << "\n";
    for (const auto& line : res.blocked) std::cerr << "  " << line << "\n";
    std::cerr << "outputs (partial): " << dir.dir() << "/\n";
    return res.status == RunResult::Status::interrupted ? 128 + res.signal : 1;
  }
  if (!quiet) {
    std::cout << summary_text(summary) << placement_text(summary);
    std::cout << "outputs: " << dir.path("summary.json") << (trace_file.empty() ? "" : ", " + trace_file)
              << ", utilization.csv\n";
  }
  return 0;
}

}  // namespace dfsim

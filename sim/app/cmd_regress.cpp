// `dfsim regress`: runs the cases of one or more suites (dfsim.suite), compares each case's
// metrics with the expected values and tolerances, prints a table and exits 0 (all pass),
// 1 (a regression) or 2 (bad input: one line, no table, nothing written). Each case is a child
// `dfsim run` or `dfsim serve` (SystemC elaborates once per process), `--jobs` of them at a
// time; the output is in case order whatever the jobs.
#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/run_control.h"
#include "sim/common/error.h"
#include "sim/common/temp_dir.h"
#include "sim/config/chip_config.h"
#include "sim/regress/child_runs.h"
#include "sim/regress/evaluate.h"
#include "sim/app/output_dir.h"
#include "sim/regress/junit.h"
#include "sim/regress/suite.h"
#include "sim/regress/write_file.h"
#include "sim/serve/serve_setup.h"
#include "sim/serve/step_table.h"
#include "sim/sweep/base_kinds.h"

namespace dfsim {

namespace {

bool selected(const std::string& name, const std::string& pattern) {
  return pattern.empty() || name.find(pattern) != std::string::npos ||
         fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// One selected case and where its runs are.
struct Planned {
  const Suite* suite;
  const SuiteCase* c;
  std::size_t run, repeat;  // indices into the child list (repeat == run: none)
};

// The case's workload loaded and compiled as its `dfsim run` child will (the same config, sets
// and compile flags), before any run: a workload the run would reject, and an expectation of a
// kernel the compiled graph does not have, are suite errors now rather than after the runs.
// `compiled` caches the kernel names by the child's arguments.
void check_case_workload(const Suite& s, const SuiteCase& c, const std::vector<std::string>& sets,
                         std::map<std::vector<std::string>, std::vector<std::string>>& compiled) {
  std::vector<std::string> key = case_run_args(c, "", sets, false);
  auto it = compiled.find(key);
  if (it == compiled.end()) {
    std::vector<std::string> all = c.sets;
    all.insert(all.end(), sets.begin(), sets.end());
    ChipConfig cfg = load_chip_config(c.config, all);
    CompileOverrides over;
    over.cores = c.compile.cores;
    if (!c.compile.lx_planning.empty()) over.lx_planning = parse_lx_planning(c.compile.lx_planning);
    over.no_fuse = c.compile.fuse && !*c.compile.fuse;
    over.split = c.compile.split;
    over.tiles = c.compile.tiles;
    over.sets = all;
    std::string format;
    KernelGraph g;
    try {
      g = load_workload(c.workload, cfg, over, &format);
    } catch (const InputError& e) {  // a compile option or a "set" of the case: name the suite and where
      if (c.is_gen() && e.file() == c.workload) {  // the generated step (a scratch file): name the case's "gen"
        // and the config it was compiled for, whose sets (the case's or the command line's) may be the cause
        std::string on;
        if (!c.sets.empty()) on = fmt::format(" with the case's set {}", fmt::join(c.sets, ", "));
        if (!sets.empty()) on += fmt::format(" {} --set {}", on.empty() ? "with" : "and", fmt::join(sets, ", "));
        throw InputError(s.file, c.json_path + "/gen", "the generated step" + on + ": " + e.detail());
      }
      if (e.file().rfind("--", 0) != 0) throw;
      if (e.file() == "--set") {
        const bool the_case = std::any_of(c.sets.begin(), c.sets.end(), [&](const std::string& x) {
          return x.substr(0, x.find('=')) == e.path();
        });
        if (!the_case) throw;  // the command line's --set
        throw InputError(s.file, c.json_path + "/set", e.path() + ": " + e.detail());
      }
      throw InputError(s.file, c.json_path + "/compile", e.file() + ": " + e.detail());
    }
    std::vector<std::string> names;
    for (const Kernel& k : g.kernels) names.push_back(k.name);
    it = compiled.emplace(std::move(key), std::move(names)).first;
  }
  const std::vector<std::string>& names = it->second;
  for (const Expectation& e : c.expect) {
    if (e.kernel.empty() || std::find(names.begin(), names.end(), e.kernel) != names.end()) continue;
    std::string hint = closest_match(e.kernel, names);
    throw InputError(s.file, c.json_path + "/kernels/" + json_path_join("", e.kernel).substr(1),
                     fmt::format("no kernel \"{}\" in {} as compiled for this case{}", e.kernel,
                                 c.is_gen() ? "the generated step" : c.workload,
                                 hint.empty() ? fmt::format(" ({} kernels)", names.size())
                                              : fmt::format(" (did you mean \"{}\"?)", hint)));
  }
}

// The widths of the table's case and metric columns: at least 28 and 40, wider for longer names
// (a kernel's metric, "kernels[linear_epilogue_l0.mlp.residual].duration_ns").
struct Columns {
  std::size_t name = 28, metric = 40;
};

void print_row(std::ostream& out, const Columns& w, const std::string& name, const MetricRow& r, bool updated) {
  out << fmt::format("{:<{}} {:<{}} {:>14} {:>14} {:>10} {:>9}  {}\n", name, w.name, r.metric, w.metric, r.expected,
                     r.got, r.delta, r.tolerance, updated ? "updated" : r.pass ? "pass" : "FAIL");
}

}  // namespace

int cmd_regress(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::vector<std::string> suite_files, sets;
  std::string junit, only;
  int jobs = 1;
  opts.add_options()
      ("suite", po::value(&suite_files)->multitoken(), "suite file(s) (dfsim.suite)")
      ("update", "rewrite the expected values with what the runs gave (tolerances and order kept)")
      ("junit", po::value(&junit), "also write JUnit XML to this file (one testcase per case)")
      ("jobs,j", po::value(&jobs), "cases to run at a time, in child processes (default 1)")
      ("set,s", po::value(&sets)->composing(), "override a config value in every case: key.path=value (repeatable)")
      ("only", po::value(&only), "run only the cases whose name contains PATTERN or matches it as a glob")
      ("quiet,q", "print only failing rows and the totals");
  po::positional_options_description pos;
  pos.add("suite", -1);
  po::variables_map vm;
  if (!parse_options("regress", "SUITE.json... [--update] [--junit FILE] [--jobs N] [--set key=value ...] [--only PATTERN]",
                     "dfsim regress tests/regression/workloads-spyre.suite.json --jobs 2 --junit regress.xml",
                     opts, &pos, args, vm))
    return 0;
  if (jobs < 1) throw UsageError("--jobs must be >= 1");
  if (suite_files.empty()) throw UsageError("expected one or more suite files");
  bool update = vm.count("update"), quiet = vm.count("quiet");

  // Everything is read and checked before the first run: suites, and each case's config with
  // its overrides and the command line's.
  std::vector<Suite> suites;
  for (const auto& f : suite_files) suites.push_back(load_suite(f));
  for (const auto& s : suites)
    for (const auto& c : s.cases) {
      if (!selected(c.name, only)) continue;
      try {
        load_chip_config(c.config, c.sets);
      } catch (const InputError& e) {  // a bad "set" of the suite: name the suite and where it is
        if (e.file() != "--set") throw;
        std::string where = c.json_path + "/set";
        try {  // the suite's "defaults" alone fail too: the mistake is there
          load_chip_config(c.config, {c.sets.begin(), c.sets.begin() + static_cast<std::ptrdiff_t>(c.default_sets)});
        } catch (const InputError&) {
          where = "/defaults/set";
        }
        throw InputError(s.file, where, e.path().empty() ? e.detail() : e.path() + ": " + e.detail());
      }
      std::vector<std::string> all = c.sets;
      all.insert(all.end(), sets.begin(), sets.end());
      load_chip_config(c.config, all);  // the command line's --set
      if (c.is_serve() && c.serve.contains("step_table") && !sets.empty()) {  // one the case's table makes inert
        try {
          serve::check_step_table_sets(sets, serve::read_step_table(c.serve["step_table"].get<std::string>()).has_energy());
        } catch (const InputError& e) {
          if (e.file() != "--set") throw;
          throw InputError("--set", e.path(), "case " + c.name + " of " + s.file + ": " + e.detail());
        }
      }
    }

  // A gen case's step is generated here, as `dfsim gen` writes it, once per distinct step: its
  // runs, and the compile below, read that op graph.
  ScratchDir scratch("dfsim-regress");
  std::map<std::string, std::string> generated;  // the step's options -> its op graph
  for (auto& s : suites)
    for (auto& c : s.cases) {
      if (!selected(c.name, only) || !c.is_gen()) continue;
      const std::string graph = fmt::format("{}/gen-{}.json", scratch.path(), generated.size());
      auto [it, fresh] = generated.try_emplace(c.gen.dump(), graph);
      c.workload = it->second;
      try {
        if (fresh && cmd_gen(gen_step_args(c.gen.dump(), graph)) != 0)
          throw InputError(s.file, c.json_path + "/gen", "dfsim gen failed on this step");
      } catch (const UsageError& e) {  // what the options did not show alone (gen checks the step whole)
        throw InputError(s.file, c.json_path + "/gen", e.what());
      }
    }

  std::map<std::vector<std::string>, std::vector<std::string>> compiled;
  for (const auto& s : suites)
    for (const auto& c : s.cases)
      if (selected(c.name, only) && !c.is_serve()) check_case_workload(s, c, sets, compiled);
  drop_notes();  // "compiling for 2 cores": the runs say it if it matters

  if (!junit.empty()) {
    std::vector<NamedInput> inputs;
    for (const auto& s : suites) {
      inputs.push_back({"the suite", s.file});
      for (const auto& c : s.cases) {
        if (c.is_serve() || c.is_gen())
          for (const auto& f : find_base_kind(c.is_gen() ? "gen" : "serve")->input_files(c.is_gen() ? c.gen : c.serve, ""))
            inputs.push_back({"an input of case " + c.name + ",", f});
        else
          inputs.push_back({"the workload of case " + c.name + ",", c.workload});
        inputs.push_back({"the config of case " + c.name + ",", c.config});
      }
    }
    refuse_overwriting_inputs(junit, "--junit", inputs);
    check_writable(junit, "--junit");
  }
  if (update)
    for (const auto& s : suites) check_writable(s.file, "--update");
  std::vector<ChildRun> children;
  std::vector<Planned> plan;
  for (const auto& s : suites)
    for (const auto& c : s.cases) {
      if (!selected(c.name, only)) continue;
      bool twice = std::find(c.checks.begin(), c.checks.end(), Check::determinism) != c.checks.end();
      Planned p{&s, &c, children.size(), children.size()};
      children.emplace_back(case_run_args(c, fmt::format("{}/{}", scratch.path(), children.size()), sets, twice));
      if (twice) {
        p.repeat = children.size();
        children.emplace_back(case_run_args(c, fmt::format("{}/{}", scratch.path(), children.size()), sets, true));
      }
      plan.push_back(p);
    }
  if (plan.empty()) throw UsageError("--only \"" + only + "\" selects no case");
  run_children(children, jobs);

  // Every case judged before anything is printed or written: a suite error (a run the loader
  // rejected, a metric summary.json does not have) is one line and exit 2, with no table.
  std::vector<CaseResult> results;
  for (const Planned& p : plan) {
    CaseResult res;
    const ChildRun* broken = nullptr;
    for (std::size_t i : {p.run, p.repeat})
      if (children[i].exit_code != 0 && !broken) broken = &children[i];
    if (broken && broken->exit_code == 2)
      throw InputError(p.suite->file, p.c->json_path,
                       fmt::format("dfsim {} rejected the case: {}", p.c->subcommand(), broken->first_error));
    if (broken) {
      res.status = CaseResult::Status::fail;
      res.error = fmt::format("the run did not finish (exit {}): {}", broken->exit_code, broken->first_error);
    } else {
      res = evaluate_case(*p.suite, *p.c, fmt::format("{}/{}", scratch.path(), p.run),
                          p.repeat != p.run ? fmt::format("{}/{}", scratch.path(), p.repeat) : "");
    }
    results.push_back(std::move(res));
  }

  // With --junit /dev/stdout the XML is stdout: the table goes to stderr, or the XML would
  // follow it in one stream that no JUnit reader parses.
  std::ostream& report = is_standard_output(junit) ? std::cerr : std::cout;
  Columns w;
  for (std::size_t n = 0; n < plan.size(); ++n) {
    w.name = std::max(w.name, plan[n].c->name.size());
    for (const auto& r : results[n].rows) w.metric = std::max(w.metric, r.metric.size());
  }
  report << fmt::format("{:<{}} {:<{}} {:>14} {:>14} {:>10} {:>9}  {}\n", "case", w.name, "metric", w.metric, "expected",
                        "got", "delta", "tolerance", "result");
  int passed = 0, failed = 0, errors = 0;
  std::vector<JUnitSuite> junit_suites;
  const Suite* junit_suite = nullptr;  // the suite of junit_suites.back()
  std::map<const Suite*, std::map<std::string, Json>> updates;
  for (std::size_t n = 0; n < plan.size(); ++n) {
    const Planned& p = plan[n];
    const CaseResult& res = results[n];
    if (p.suite != junit_suite) {  // one testsuite per suite file; two files of one name are told apart by their paths
      junit_suite = p.suite;
      const bool shared = std::count_if(suites.begin(), suites.end(), [&](const Suite& x) { return x.name == p.suite->name; }) > 1;
      junit_suites.push_back({shared ? p.suite->name + " (" + p.suite->file + ")" : p.suite->name, {}});
    }
    JUnitCase jc(p.c->name);
    int out_of_tolerance = 0;
    for (const auto& r : res.rows) {
      bool updated = update && !r.json_path.empty() && r.got_value != r.expected_value;
      if (updated) updates[p.suite][r.json_path] = r.got_value;
      bool counts = !r.pass && !updated;
      if (!quiet || counts) print_row(report, w, p.c->name, r, updated);
      if (counts) {
        ++out_of_tolerance;
        jc.detail += fmt::format("{}: expected {} ({}), got {} ({})\n", r.metric, r.expected, r.tolerance, r.got, r.delta);
      }
    }
    if (!res.error.empty()) {
      report << fmt::format("{:<{}} {}\n", p.c->name, w.name, res.error);
      jc.outcome = JUnitCase::Outcome::error;
      jc.message = res.error;
      jc.detail = res.error;
      ++errors;
    } else if (out_of_tolerance > 0) {
      jc.outcome = JUnitCase::Outcome::failure;
      jc.message = fmt::format("{} metric(s) out of tolerance", out_of_tolerance);
      ++failed;
    } else {
      ++passed;
    }
    junit_suites.back().cases.push_back(jc);
  }
  // The JUnit file first: when it cannot be written (a full disk), the command fails with the
  // suites as they were, not rewritten by a command that reports failure.
  if (!junit.empty()) write_junit(junit, junit_suites);
  for (const auto& [suite, values] : updates) {
    update_suite_values(suite->file, values);  // (throws if the file cannot be written: no "updated" line then)
    for (const auto& c : suite->cases)
      for (const auto& e : c.expect)
        if (auto it = values.find(e.json_path); it != values.end())
          report << fmt::format("updated {}: {} {}: {} -> {}\n", suite->file, c.name, e.label(),
                                metric_text(e.expected), metric_text(it->second));
  }
  report << fmt::format("\n{} case(s): {} passed, {} failed, {} error(s){}\n", plan.size(), passed, failed, errors,
                        update ? fmt::format("; {} suite(s) updated", updates.size()) : "");
  return failed + errors > 0 ? 1 : 0;
}

}  // namespace dfsim

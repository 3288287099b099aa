// `dfsim sweep`: runs every point of a sweep file (docs/sweeps.md) as its own `dfsim run` in the
// point store, on a local pool of processes, a Dask cluster or a Slurm job array, and writes
// results.csv and results.jsonl.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/output_dir.h"
#include "sim/common/error.h"
#include "sim/common/self_executable.h"
#include "sim/sweep/child_process.h"
#include "sim/sweep/engines.h"
#include "sim/sweep/results_table.h"

namespace dfsim {

namespace {

namespace fs = std::filesystem;

// Keeps the rows whose cells match every "COLUMN=VALUE" filter (values as in results.csv).
void select_rows(SweepSpec& spec, const std::vector<std::string>& filters) {
  for (const auto& f : filters) {
    auto eq = f.find('=');
    std::string col = f.substr(0, eq), names;
    std::size_t c = spec.columns.size();
    for (std::size_t i = 0; i < spec.columns.size(); ++i) {
      names += " " + spec.columns[i].name;
      if (spec.columns[i].name == col) c = i;
    }
    if (eq == std::string::npos || c == spec.columns.size())
      throw UsageError("--only " + f + ": expected COLUMN=VALUE with one of the axis columns:" + names);
    std::string value = f.substr(eq + 1);
    // Into new vectors: moving a row onto itself (a kept first row) would empty it.
    decltype(spec.rows) rows;
    std::vector<std::size_t> numbers;
    for (std::size_t i = 0; i < spec.rows.size(); ++i) {
      const auto& cell = spec.rows[i][c];
      if ((cell ? cell_text(*cell) : "") != value) continue;
      rows.push_back(std::move(spec.rows[i]));
      numbers.push_back(spec.numbers[i]);
    }
    spec.rows = std::move(rows);
    spec.numbers = std::move(numbers);
  }
  if (spec.rows.empty()) throw UsageError("--only: no point of the sweep matches");
}

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string file, out, store, dask, slurm, run_point;
  std::vector<std::string> only;
  int jobs = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  opts.add_options()
      ("sweep", po::value(&file), "the sweep file (dfsim.sweep)")
      ("jobs,j", po::value(&jobs), "local engine: points run at once (default: the number of cores)")
      ("dask", po::value(&dask), "run the points on the Dask scheduler at ADDRESS (tcp://host:8786)")
      ("slurm", po::value(&slurm), "write a Slurm job-array script and its gather command into DIR; run nothing")
      ("out,o", po::value(&out), "results directory (default out/sweeps/<name>/)")
      ("points", po::value(&store), "the point store, shareable between sweeps (default OUT/points/)")
      ("resume", "keep the points already done in the store (default: run every point again)")
      ("only", po::value(&only)->composing(), "run only the points whose COLUMN=VALUE (repeatable, all must match)")
      ("gather", "run nothing: write the results from the point store (after a Slurm array)")
      ("run-point", po::value(&run_point), "run the one point whose point.json is in DIR (what Slurm and Dask tasks do)")
      ("quiet,q", "print nothing on success");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  if (!parse_options("sweep",
                     "SWEEP.json [--jobs N | --dask ADDRESS | --slurm DIR] [--out DIR] [--resume] [--only COLUMN=VALUE]",
                     "dfsim sweep workloads/sweeps/lx_by_cores.json --jobs 2 --out out/lx",
                     opts, &pos, args, vm))
    return 0;
  const std::string self = self_executable();
  if (vm.count("run-point")) {  // one point of a sweep already planned: nothing else applies
    for (const char* o : {"sweep", "jobs", "dask", "slurm", "out", "points", "resume", "only", "gather"})
      if (vm.count(o)) throw UsageError(std::string("--run-point DIR runs the one point in DIR and takes no ") +
                                        (std::string(o) == "sweep" ? "sweep file" : "--" + std::string(o)));
    return run_point_dir(self, run_point);
  }
  if (file.empty()) throw UsageError("expected a sweep file");
  if (vm.count("jobs") + vm.count("dask") + vm.count("slurm") + vm.count("gather") > 1)
    throw UsageError("--jobs, --dask, --slurm and --gather choose how points run: give one");
  if (jobs < 1) throw UsageError("--jobs must be >= 1");
  bool quiet = vm.count("quiet"), resume = vm.count("resume"), gather = vm.count("gather");
  if (gather && resume) throw UsageError("--gather runs nothing, so --resume has nothing to keep: give one");

  SweepSpec spec = read_sweep_file(file);
  select_rows(spec, only);
  if (out.empty()) out = "out/sweeps/" + spec.name;
  if (store.empty()) store = out + "/points";
  SweepPlan plan = plan_sweep(std::move(spec), store);  // bad inputs are reported before anything is written
  OutputDir results(out);  // fails now, before any run, if it cannot be written

  std::vector<std::size_t> todo;
  std::size_t reused = 0;
  std::set<std::string> planned;  // a point listed twice (the same inputs) runs once
  for (const auto& p : plan.points) {
    if (!p.error.empty() || gather || !planned.insert(p.id).second) continue;
    if (resume && point_done(p.dir, p.point["key"])) {
      ++reused;
      continue;
    }
    todo.push_back(p.index);
  }
  // What can refuse the engine is checked before any point directory is written.
  std::unique_ptr<OutputDir> slurm_dir;
  if (!slurm.empty() && !todo.empty()) {
    check_slurm_dir(absolute(slurm));
    slurm_dir = std::make_unique<OutputDir>(absolute(slurm));
  }
  if (!dask.empty() && !todo.empty()) check_dask_scheduler(dask);
  PreparedPoints prepared;  // undone unless an engine takes the points
  for (auto i : todo) prepared.prepare(plan.points[i].dir, plan.points[i].point);

  std::map<std::size_t, PointResult> unrecorded;
  if (slurm_dir) {
    std::string cmd = "cd " + shell_quote(fs::current_path().string()) + " && " + shell_quote(self) + " sweep " +
                      shell_quote(absolute(file)) + " --out " + shell_quote(absolute(out)) + " --points " +
                      shell_quote(plan.store) + " --gather";
    for (const auto& f : only) cmd += " --only " + shell_quote(f);
    std::string submit = write_slurm_array(self, *slurm_dir, plan, todo, cmd);
    prepared.keep();
    if (!quiet)  // (the script and gather.sh are in DIR, as --help says)
      std::cout << "sweep " << plan.spec.name << ": " << todo.size() << " of " << plan.points.size()
                << " points to run as a Slurm job array\n  submit:  " << submit << "\n  then:    sh "
                << shell_quote(slurm_dir->path("gather.sh")) << "\n";
    return 0;
  }
  if (!dask.empty() && !todo.empty()) {
    int code = run_on_dask(self, dask, plan, todo, out + "/.dask-points.txt");
    if (code == 2) return 2;  // nothing ran: the prepared points are undone
    prepared.keep();
    if (code != 0) throw SimError("sweep: the Dask driver failed (exit " + std::to_string(code) + ")");
  } else if (!todo.empty()) {
    int signal = 0;
    prepared.keep();
    unrecorded = run_local_pool(self, plan, todo, jobs, &signal);
    if (signal) {
      std::cerr << "dfsim sweep: interrupted; the points done so far are kept (run again with --resume)\n";
      return 128 + signal;
    }
  }

  auto rows = collect_rows(plan, unrecorded);
  auto write = [&](const std::string& name, auto&& fill) {
    auto f = results.open(name);
    fill(f);
    f.flush();
    if (!f) throw InputError(results.path(name), "", "cannot be written");
  };
  write("results.csv", [&](std::ostream& f) { write_results_csv(f, plan, rows); });
  write("results.jsonl", [&](std::ostream& f) { write_results_jsonl(f, plan, rows); });
  write("sweep.json", [&](std::ostream& f) { f << plan.spec.text; });
  results.commit();
  std::size_t failed = 0, not_run = 0;
  for (const auto& r : rows) {
    failed += r.result.status != "ok" && r.result.status != "not_run";
    not_run += r.result.status == "not_run";
  }
  if (!quiet || failed || not_run) {
    std::cout << "sweep " << plan.spec.name << ": " << rows.size() << " points (" << todo.size() << " run, " << reused
              << " reused), " << failed << " failed" << (not_run ? ", " + std::to_string(not_run) + " not run" : "")
              << "\n";
    std::cout << "results: " << results.path("results.csv") << ", results.jsonl\n";
  }
  return failed || not_run ? 1 : 0;
}

}  // namespace dfsim

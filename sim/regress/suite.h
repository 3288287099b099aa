#pragma once
// A regression suite ("format": "dfsim.suite", v1; docs/regression.md): cases that each run
// a workload, a model step or a `dfsim serve` run on a config, with the metrics they are expected
// to give and how far each may move.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/regress/metrics.h"

namespace dfsim {

inline constexpr int kSuiteVersion = 1;

// One expected metric: a summary.json path, or a field of a kernel named `kernel`.
struct Expectation {
  std::string kernel;     // "" for a summary.json metric
  std::string metric;     // dotted path (in summary.json, or in the kernel's entry)
  Json expected;          // number, string or boolean
  Tolerance tolerance;
  std::string json_path;  // of this expectation in the suite file ("/cases/0/expect/sim_time_ns")
  std::string label() const { return kernel.empty() ? metric : "kernels[" + kernel + "]." + metric; }
};

// The compile options a case passes to `dfsim run` as flags.
struct CaseCompile {
  int cores = 0;               // --cores
  std::string lx_planning;     // --lx-planning
  std::optional<bool> fuse;    // false: --no-fuse
  std::map<std::string, std::int64_t> split, tiles;  // --split M=4,N=8 / --tiles M=8
};

// Analytical cross-checks a case can ask for (docs/regression.md).
enum class Check { roofline, offchip_peak, determinism };

// One case of a suite: a workload run (`dfsim run`), a model step's run (generated as `dfsim
// gen` does, then run) or a serving run (`dfsim serve`).
struct SuiteCase {
  // Paths resolved against the suite's directory. A gen case's workload is the op graph
  // `dfsim regress` generates before the runs ("" until then); a serve case has none.
  std::string name, config, workload;
  // A gen case's step ({"model", "phase", ...}: gen's options) and a serve case's options
  // (serve's flags with '_' for '-'), files resolved against the suite's directory, checked as a
  // sweep's base of that kind checks them; null for the other kinds of case.
  Json gen, serve;
  bool is_gen() const { return !gen.is_null(); }
  bool is_serve() const { return !serve.is_null(); }
  const char* subcommand() const { return is_serve() ? "serve" : "run"; }
  std::vector<std::string> sets;       // --set key=value, the suite's defaults first
  std::size_t default_sets = 0;        // how many of `sets` come from "defaults"
  CaseCompile compile;
  std::vector<Check> checks;
  std::vector<Expectation> expect;
  std::string json_path;               // "/cases/3"
};

struct Suite {
  std::string file, name, description;
  std::vector<SuiteCase> cases;
};

// Reads and checks a suite (InputError naming the file and JSON path); every config, workload
// and serve input it names must exist.
Suite load_suite(const std::string& file);

// The arguments of the `dfsim run` (or `dfsim serve`) child of a case (`extra_sets` after the
// case's own).
std::vector<std::string> case_run_args(const SuiteCase& c, const std::string& out_dir,
                                       const std::vector<std::string>& extra_sets, bool trace);

// Rewrites the "value" of each expectation (by its json_path) in the suite file, keeping the
// file's member order and everything else (comments are not kept). The write is atomic.
void update_suite_values(const std::string& file, const std::map<std::string, Json>& values);

const char* check_name(Check c);

}  // namespace dfsim

#pragma once
// The dfsim command line: one function per subcommand, each returning the exit code
// (0 success, 1 the simulation failed, 2 bad input or usage).
#include <boost/program_options.hpp>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

struct CompileReport;

int cmd_run(const std::vector<std::string>& args);
int cmd_compile(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_info(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_regress(const std::vector<std::string>& args);
int cmd_diff(const std::vector<std::string>& args);
int cmd_accuracy(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_serve(const std::vector<std::string>& args);
int cmd_gen(const std::vector<std::string>& args);

// Shared by the subcommands.
// `dfsim gen`'s arguments (quiet, writing `output`) for a JSON object of its options: "model" is
// its MODEL, every other member --NAME VALUE (`run --gen-step`, a regress gen case). UsageError
// for text that is not such an object.
std::vector<std::string> gen_step_args(const std::string& json_text, const std::string& output);
std::string default_config_path();
std::string default_workloads_dir();  // workloads/ here, else the source tree's
std::string default_models_dir();     // its models/: the model files of `dfsim gen` and `serve`
// Command-line overrides of an op graph's "compile" section.
struct CompileOverrides {
  int cores = 0;                           // > 0: overrides compile.cores
  std::optional<LxPlanning> lx_planning;   // overrides compile.lx_planning
  bool no_fuse = false;                    // --no-fuse: one kernel per op
  std::uint64_t max_tasks = 0;             // task instances allowed (0: kDefaultMaxTasks of size_limits.h)
  std::map<std::string, std::int64_t> split, tiles;  // --split, --tiles: for every op whose dims they name
  int core_limit = 0;                      // > 0 (a placement's core range): without --cores, compile for at most this many
  std::vector<std::string> sets;           // the command line's --set key=value: a key only the compiler reads is
                                           // refused on a compiled kernel graph, where it would change nothing
};
// --split / --tiles value "M=4,N=8" (UsageError otherwise).
std::map<std::string, std::int64_t> parse_dim_map(const std::string& flag, const std::string& s);
// Adds --no-fuse, --split and --tiles to a subcommand's options; apply_compile_flags fills
// `over` from the parsed values.
struct CompileFlags {
  bool no_fuse = false;
  std::string split, tiles;
};
void add_compile_flags(boost::program_options::options_description& opts, CompileFlags& f);
void apply_compile_flags(const CompileFlags& f, CompileOverrides& over);
// --lx-planning's value: one of lx_plannings() (UsageError otherwise).
LxPlanning parse_lx_planning(const std::string& s);

// A workload file (op graph compiled on the fly, or compiled kernel graph) as a kernel graph,
// with the overrides applied to an op graph. `format` receives the file's format.
// With `report`, an op graph's compile report goes there (a kernel graph leaves it empty).
KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, const CompileOverrides& over,
                          std::string* format, CompileReport* report = nullptr);
// The same from the file's document already parsed by parse_workload_text (with the tasks it
// read while parsing, if any).
struct StreamedTasks;
KernelGraph workload_from_json(const Json& j, StreamedTasks& streamed, const std::string& file, const ChipConfig& cfg,
                               const CompileOverrides& over, std::string* format, CompileReport* report = nullptr);
// A parsed document that is no workload: "/format: expected dfsim.ops or dfsim.kernels, got
// dfsim.suite" (InputError naming `file`).
[[noreturn]] void not_a_workload(const Json& j, const std::string& file);
// Reads a workload file as `run` does before it needs a config (an op graph's format, names,
// shapes and dataflow; a kernel graph's loader checks): InputError naming `file` if bad.
void check_workload_file(const std::string& file);
inline KernelGraph load_workload(const std::string& file, const ChipConfig& cfg, int cores, std::string* format) {
  CompileOverrides over;
  over.cores = cores;
  return load_workload(file, cfg, over, format);
}

// A placement's workloads loaded (each as load_workload) and merged into one kernel graph;
// `task_workload` receives the workload of each task (sim/graph/placement.h).
struct Placement;
KernelGraph load_placement_graph(const Placement& p, const ChipConfig& cfg, const CompileOverrides& over,
                                 std::vector<int>* task_workload);

// Thrown for command-line misuse (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace dfsim

#include "sim/app/solo_runs.h"

#include <fmt/format.h>

#include <filesystem>

#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/common/temp_dir.h"
#include "sim/regress/child_runs.h"

namespace dfsim {

namespace fs = std::filesystem;

std::vector<double> run_workloads_alone(const Placement& p, const std::string& placement_file,
                                        const std::vector<std::string>& options) {
  ScratchDir scratch("dfsim-solo");
  // The shared child runner: one at a time (the shared run's host figures are not disturbed and
  // the order of outputs is fixed), Ctrl-C / SIGTERM stop the child and fail with one line.
  std::vector<ChildRun> runs;
  for (std::size_t i = 0; i < p.workloads.size(); ++i) {
    std::vector<std::string> args{"run", "-q", "--placement", placement_file, "--only", p.workloads[i].name,
                                  "--out", scratch.path() + "/" + std::to_string(i), "--trace", "off"};
    args.insert(args.end(), options.begin(), options.end());
    runs.emplace_back(std::move(args));
  }
  run_children(runs, 1);
  std::vector<double> solo;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].exit_code != 0)
      throw SimError(fmt::format("--solo: the run of workload \"{}\" alone failed (exit {}): {}", p.workloads[i].name,
                                 runs[i].exit_code, runs[i].first_error));
    const fs::path summary = fs::path(scratch.path()) / std::to_string(i) / "summary.json";
    solo.push_back(load_json_file(summary.string()).at("placement").at(0).at("duration_ns").get<double>());
  }
  return solo;
}

}  // namespace dfsim

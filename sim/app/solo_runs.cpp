#include "sim/app/solo_runs.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/common/self_executable.h"
#include "sim/sweep/child_process.h"

namespace dfsim {

namespace {

namespace fs = std::filesystem;

// A temporary directory, removed with everything in it.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "dfsim-solo-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw SimError("--solo: cannot create a temporary directory");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string first_line(const fs::path& file) {
  std::ifstream f(file);
  std::string line;
  std::getline(f, line);
  return line;
}

}  // namespace

std::vector<double> run_workloads_alone(const Placement& p, const std::string& placement_file,
                                        const std::vector<std::string>& options) {
  ScratchDir scratch;
  const std::string self = self_executable();
  std::vector<double> solo;
  for (std::size_t i = 0; i < p.workloads.size(); ++i) {
    const std::string& name = p.workloads[i].name;
    const fs::path out = scratch.path / std::to_string(i), err = scratch.path / (std::to_string(i) + ".err");
    std::vector<std::string> argv{self, "run", "-q", "--placement", placement_file, "--only", name,
                                  "--out", out.string(), "--trace", "off"};
    argv.insert(argv.end(), options.begin(), options.end());
    const int code = exit_code_of(wait_child(spawn_child(argv, "", "", err.string())));
    if (code != 0)
      throw SimError(fmt::format("--solo: the run of workload \"{}\" alone failed (exit {}): {}", name, code, first_line(err)));
    solo.push_back(load_json_file((out / "summary.json").string()).at("placement").at(0).at("duration_ns").get<double>());
  }
  return solo;
}

}  // namespace dfsim

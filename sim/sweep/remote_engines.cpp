// The engines that run points elsewhere: a Dask cluster through tools/sweep_dask.py, and a
// Slurm job array written as a script for the user to submit.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/app/output_dir.h"
#include "sim/common/error.h"
#include "sim/sweep/child_process.h"
#include "sim/sweep/engines.h"

namespace dfsim {

namespace fs = std::filesystem;

namespace {

// tools/<name> here, else in the source tree this dfsim was built from.
std::string tool_path(const std::string& name) {
  if (fs::exists("tools/" + name)) return fs::absolute("tools/" + name).string();
  return std::string(DFSIM_SOURCE_DIR) + "/tools/" + name;
}

void write_point_list(OutputDir& out, const std::string& name, const SweepPlan& plan,
                      const std::vector<std::size_t>& todo) {
  auto f = out.open(name);
  for (auto i : todo) f << plan.points[i].dir << "\n";
}

}  // namespace

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_on_dask(const std::string& dfsim, const std::string& address, const SweepPlan& plan,
                const std::vector<std::size_t>& todo, const std::string& list_file) {
  fs::path list = fs::absolute(list_file);
  {
    OutputDir out(list.parent_path().string());
    write_point_list(out, list.filename().string(), plan, todo);
    out.commit();
  }
  // Debian's python3 has python3-distributed; DFSIM_PYTHON picks another interpreter.
  const char* py = std::getenv("DFSIM_PYTHON");
  std::vector<std::string> argv{py && *py ? py : "/usr/bin/python3", tool_path("sweep_dask.py"), "--scheduler", address,
                                "--dfsim", dfsim, "--points", list.string(), "--name", plan.spec.name};
  int code = exit_code_of(wait_child(spawn_child(argv, "", "", "")));
  fs::remove(list);
  return code;
}

std::string write_slurm_array(const std::string& dfsim, const std::string& dir, const SweepPlan& plan,
                              const std::vector<std::size_t>& todo, const std::string& gather) {
  std::string abs = fs::absolute(dir).lexically_normal().string();
  OutputDir out(abs);
  write_point_list(out, "points.txt", plan, todo);
  {
    auto f = out.open("sweep.sbatch");
    f << "#!/bin/bash\n"
      << "# dfsim sweep \"" << plan.spec.name << "\": " << todo.size() << " points as a Slurm job array; task i runs\n"
      << "# the point whose directory is line i+1 of points.txt. Submit: sbatch " << shell_quote(abs + "/sweep.sbatch")
      << "\n# When the array has finished: sh " << shell_quote(abs + "/gather.sh") << "\n"
      << "#SBATCH --job-name=dfsim-" << plan.spec.name << "\n"
      << "#SBATCH --array=0-" << todo.size() - 1 << "\n"
      << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
      << "#SBATCH --output=" << abs << "/logs/%A_%a.log\n"
      << "set -eu\n"
      << "point=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " << shell_quote(abs + "/points.txt") << ")\n"
      << "test -n \"$point\" || { echo \"no point $SLURM_ARRAY_TASK_ID in points.txt\" >&2; exit 2; }\n"
      << "exec " << shell_quote(dfsim) << " sweep --run-point \"$point\"\n";
  }
  out.open("gather.sh") << "#!/bin/sh\n# Writes the sweep's results.csv and results.jsonl from the point store.\n"
                        << gather << "\n";
  out.commit();
  fs::create_directories(abs + "/logs");
  for (const char* f : {"sweep.sbatch", "gather.sh"})
    fs::permissions(abs + "/" + f, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  return "sbatch " + shell_quote(abs + "/sweep.sbatch");
}

}  // namespace dfsim

#pragma once
// The engines that run a sweep's points: a local pool of processes, a Dask cluster (through
// tools/sweep_dask.py) and a Slurm job array (a script the user submits). Each runs the same
// point.json commands and records into the same point store, so the results do not depend on
// the engine.
#include <map>
#include <string>
#include <vector>

#include "sim/app/output_dir.h"
#include "sim/sweep/point_store.h"
#include "sim/sweep/sweep_plan.h"

namespace dfsim {

// Runs `todo` (indices into plan.points, already prepared) at most `jobs` at a time, with a
// progress line on a terminal. Results of runs that ended without a record are returned by
// index. SIGINT / SIGTERM stop it: running points are stopped, `*signal` is set.
std::map<std::size_t, PointResult> run_local_pool(const std::string& dfsim, const SweepPlan& plan,
                                                  const std::vector<std::size_t>& todo, int jobs, int* signal);

// Waits up to DFSIM_DASK_TIMEOUT seconds (default 20) for a TCP connection to the scheduler at
// `address` (tcp://host:port or host:port; other schemes are left to the driver): InputError
// (exit 2) if none, so that an unreachable scheduler is found before any point is prepared.
void check_dask_scheduler(const std::string& address);

// Runs `todo` on the Dask scheduler at `address` through `python tools/sweep_dask.py`; returns
// the driver's exit code (2: the scheduler could not be reached).
int run_on_dask(const std::string& dfsim, const std::string& address, const SweepPlan& plan,
                const std::vector<std::size_t>& todo, const std::string& list_file);

// A --slurm directory (absolute) that an #SBATCH line can name, else InputError: no white
// space, quotes, backslash or '%' (sbatch splits its lines at spaces; '%' starts a pattern).
void check_slurm_dir(const std::string& abs);

// Writes DIR/sweep.sbatch (a job array, task i runs the i-th directory of DIR/points.txt) and
// DIR/gather.sh (`gather` is its command) into `dir`, opened with an absolute path before the
// points were prepared (a bad --slurm DIR is found first); returns the sbatch command line.
std::string write_slurm_array(const std::string& dfsim, OutputDir& dir, const SweepPlan& plan,
                              const std::vector<std::size_t>& todo, const std::string& gather);

// Single-quotes `s` for a POSIX shell.
std::string shell_quote(const std::string& s);

}  // namespace dfsim

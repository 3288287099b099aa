#pragma once
// One run: builds the System from a config, binds every task instance of a compiled graph
// to its unit, runs SystemC until no event is left (or a limit), and keeps everything the
// output writers need. One Simulation per process (SystemC elaborates once).
#include <memory>
#include <string>
#include <vector>

#include "sim/common/time.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"
#include "sim/runtime/scheduler.h"
#include "sim/stats/recorder.h"

namespace dfsim {

class System;

struct RunLimits {
  double max_sim_time_ns = 0;     // 0: none
  std::uint64_t max_events = 0;   // 0: none
  double timeout_seconds = 0;     // host seconds; 0: none
  bool progress = false;          // a progress line on stderr for long runs (a terminal)
};

struct RunResult {
  enum class Status { finished, deadlock, limit, interrupted } status = Status::finished;
  int signal = 0;                       // the signal that interrupted the run
  std::string reason;                   // why it did not finish
  std::vector<std::string> blocked;     // one line per blocked task instance (deadlock)
  Tick end = 0;                         // completion of the last task
  std::uint64_t activations = 0;        // SC_METHOD activations ("events processed")
  double wall_seconds = 0;
  bool ok() const { return status == Status::finished; }
};

class Simulation {
 public:
  // `trace`: what the recorder keeps for trace.json (off when the config's sim.trace is false).
  Simulation(const KernelGraph& g, const ExpandedGraph& x, const ChipConfig& cfg,
             TraceLevel trace = TraceLevel::units);
  ~Simulation();
  RunResult run(const RunLimits& limits = {});

  const KernelGraph& graph() const { return g_; }
  const ExpandedGraph& expanded() const { return x_; }
  const ChipConfig& config() const { return cfg_; }
  const Recorder& recorder() const { return rec_; }
  const Scheduler& scheduler() const { return sched_; }
  Recorder& recorder() { return rec_; }
  System& system() { return *system_; }
  const std::vector<std::uint64_t>& hbm_base() const { return hbm_base_; }

 private:
  const KernelGraph& g_;
  const ExpandedGraph& x_;
  const ChipConfig& cfg_;
  Recorder rec_;
  std::vector<std::uint64_t> hbm_base_;
  Scheduler sched_;
  std::unique_ptr<System> system_;
};

}  // namespace dfsim

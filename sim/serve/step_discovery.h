#pragma once
// Finding the step shapes a serving run needs before it runs, so that they can be simulated
// several at once: the scheduler runs with estimated times for the shapes the cache lacks, the
// shapes it met are simulated (up to --jobs at a time), and again, until a pass meets only
// cached shapes. Estimates steer the passes only: the real run uses simulated times alone.
#include <functional>

#include "sim/config/chip_config.h"
#include "sim/serve/model_info.h"
#include "sim/serve/simulated_step_times.h"

namespace dfsim::serve {

// A rough time for a shape no simulation has given yet: the nearest simulated shape of the
// same phase, else the roofline of its weight and KV bytes and its MACs (only to steer passes).
std::int64_t estimate_step_ns(const ModelInfo& model, const ChipConfig& cfg, const StepShape& shape);

struct DiscoveryResult {
  int passes = 0;        // scheduler passes run
  int shapes = 0;        // shapes simulated by the passes
};

// `run_all` runs every serving run of the command with the provider it is given.
DiscoveryResult discover_steps(SimulatedStepTimes& sim, const ModelInfo& model, const ChipConfig& cfg,
                               const std::function<void(StepTimeProvider&)>& run_all, int max_passes = 8);

}  // namespace dfsim::serve

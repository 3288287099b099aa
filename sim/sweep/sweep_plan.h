#pragma once
// A sweep's points made ready to run: for each, the command that runs it and the key
// (everything that changes its answer: dfsim version, the config after overrides, the input's
// content, the options) whose hash names its directory in the point store.
#include <string>
#include <vector>

#include "sim/sweep/sweep_spec.h"

namespace dfsim {

struct SweepPoint {
  std::size_t index = 0;
  std::string id;     // 16 hex digits, the hash of point["key"]; "" when the point cannot run
  std::string error;  // why it cannot run (a rejected override): a failed row, no run
  Json point;         // point.json: {"key", "cwd", "args"}
  std::string dir;    // its directory in the store
};

struct SweepPlan {
  SweepSpec spec;
  std::string store;  // absolute
  std::vector<SweepPoint> points;
};

// Plans every point. The base (config, input, base options) and every input file must be good:
// InputError (exit 2) otherwise; a point whose own overrides are rejected gets `error` instead.
// An empty spec.config becomes the default config.
SweepPlan plan_sweep(SweepSpec spec, const std::string& store);


}  // namespace dfsim

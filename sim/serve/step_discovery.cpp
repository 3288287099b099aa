#include "sim/serve/step_discovery.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace dfsim::serve {

std::int64_t estimate_step_ns(const ModelInfo& model, const ChipConfig& cfg, const StepShape& shape) {
  double bytes_per_ns = cfg.memory.channels * cfg.memory.data_rate_mtps * 1e6 * cfg.memory.bus_bits / 8 / 1e9;
  double bytes = static_cast<double>(model.weight_bytes()) +
                 static_cast<double>(shape.batch) * shape.kv_tokens * static_cast<double>(model.kv_bytes_per_token());
  double macs = static_cast<double>(model.parameters()) * shape.batch * shape.query_tokens;
  double macs_per_ns = 1000.0 * cfg.cores;  // about what a core sustains on large matmuls (docs/calibration.md)
  return std::max<std::int64_t>(1, std::llround(std::max(bytes / bytes_per_ns, macs / macs_per_ns)));
}

namespace {

// Simulated times for cached shapes; for the others, an estimate, and the shape is noted.
class DiscoveryTimes : public StepTimeProvider {
 public:
  DiscoveryTimes(SimulatedStepTimes& sim, const ModelInfo& m, const ChipConfig& cfg) : sim_(sim), m_(m), cfg_(cfg) {}
  StepCost cost(const StepShape& shape) override {
    if (auto it = known_.find(shape); it != known_.end()) return {it->second};
    if (!missing_.count(shape) && sim_.cached(shape)) {
      StepCost c = sim_.cost(shape);
      known_[shape] = c.ns;
      return c;
    }
    missing_.insert(shape);
    return {nearest(shape)};
  }
  std::string describe() const override { return "discovery"; }
  const std::set<StepShape>& missing() const { return missing_; }

 private:
  std::int64_t nearest(const StepShape& s) const {
    auto lg = [](int x) { return std::log2(static_cast<double>(std::max(1, x))); };
    double best = 1e300;
    std::int64_t ns = 0;
    for (const auto& [k, t] : known_) {
      if (k.phase != s.phase) continue;
      double d = std::abs(lg(k.batch) - lg(s.batch)) + std::abs(lg(k.kv_tokens) - lg(s.kv_tokens)) +
                 std::abs(lg(k.query_tokens) - lg(s.query_tokens));
      if (d < best) best = d, ns = t;
    }
    return ns > 0 ? ns : estimate_step_ns(m_, cfg_, s);
  }
  SimulatedStepTimes& sim_;
  const ModelInfo& m_;
  const ChipConfig& cfg_;
  std::map<StepShape, std::int64_t> known_;
  std::set<StepShape> missing_;
};

}  // namespace

DiscoveryResult discover_steps(SimulatedStepTimes& sim, const ModelInfo& model, const ChipConfig& cfg,
                               const std::function<void(StepTimeProvider&)>& run_all, int max_passes) {
  DiscoveryResult r;
  for (int pass = 0; pass < max_passes; ++pass) {
    DiscoveryTimes d(sim, model, cfg);
    run_all(d);
    ++r.passes;
    if (d.missing().empty()) break;
    sim.prefetch(std::vector<StepShape>(d.missing().begin(), d.missing().end()));
    r.shapes += static_cast<int>(d.missing().size());
  }
  return r;
}

}  // namespace dfsim::serve

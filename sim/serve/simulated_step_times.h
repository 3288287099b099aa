#pragma once
// Step times from dfsim itself: each distinct step shape's op graph (from the model, via
// make_step_graph) is simulated once in a child `dfsim run` and memoised in a cache file keyed
// by everything that changes the answer (model file, resolved config, TP, shape, dfsim version).
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "sim/common/json_io.h"
#include "sim/config/chip_config.h"
#include "sim/serve/model_info.h"
#include "sim/serve/step_times.h"

namespace dfsim::serve {

// Builds the op graph (dfsim.ops) of one forward step of `model` at `shape` on `tp` cards.
using StepGraphBuilder = std::function<Json(const ModelInfo& model, const StepShape& shape, int tp)>;

// The builder serving uses: `dfsim gen`'s step graph of the shape (a decode step over the
// bucket's KV length, or a prefill chunk after the earlier chunks). One card only for now.
Json make_step_graph(const ModelInfo& model, const StepShape& shape, int tp);

class SimulatedStepTimes : public StepTimeProvider {
 public:
  // `cache_dir` holds step-cache.jsonl (created if missing); `dfsim_binary` runs the children.
  SimulatedStepTimes(ModelInfo model, const ChipConfig& cfg, int tp, std::string cache_dir, std::string dfsim_binary,
                     StepGraphBuilder builder = make_step_graph);
  std::int64_t step_ns(const StepShape& shape) override;
  std::string describe() const override;
  int children_run() const { return children_; }   // simulations run (cache misses)
  std::string cache_file() const { return cache_dir_ + "/step-cache.jsonl"; }
  std::string key_of(const StepShape& shape) const;

 private:
  std::int64_t simulate(const StepShape& shape, const std::string& key);
  ModelInfo model_;
  std::string config_json_, key_base_, cache_dir_, binary_;
  int tp_, cores_;
  StepGraphBuilder builder_;
  std::map<std::string, std::int64_t> cache_;
  int children_ = 0, hits_ = 0;
};

}  // namespace dfsim::serve

#pragma once
// Step costs from dfsim itself: each distinct step shape's op graph (from the model, via
// make_step_graph) is simulated in child `dfsim run`s, several at once (--jobs), and memoised
// in a cache file keyed by everything that changes the answer (model file, resolved config,
// TP, shape, layers simulated, dfsim version). By default a step is simulated with the model's
// first one and first two layers and extrapolated to all of them (the layers are identical:
// T = T1 + (L - 1) (T2 - T1), likewise for energy; docs/serving.md gives its error against
// whole-model runs); `full` simulates every layer.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/config/chip_config.h"
#include "sim/serve/model_info.h"
#include "sim/serve/step_times.h"

namespace dfsim::serve {

// Builds the op graph (dfsim.ops) of one forward step of `model` at `shape` on `tp` cards,
// with the model's first `layers` layers (0: all).
using StepGraphBuilder = std::function<Json(const ModelInfo& model, const StepShape& shape, int tp, int layers)>;

// The builder serving uses: `dfsim gen`'s step graph of the shape (a decode step over the
// bucket's KV length, or a prefill chunk after the earlier chunks). One card only for now.
Json make_step_graph(const ModelInfo& model, const StepShape& shape, int tp, int layers);

enum class StepSimMode { layers, full };  // layers: 1 and 2 layers, extrapolated; full: all layers

class SimulatedStepTimes : public StepTimeProvider {
 public:
  // `cache_dir` holds step-cache.jsonl (created if missing); `dfsim_binary` runs the children,
  // up to `jobs` at once.
  SimulatedStepTimes(ModelInfo model, const ChipConfig& cfg, int tp, std::string cache_dir, std::string dfsim_binary,
                     StepSimMode mode = StepSimMode::layers, int jobs = 1, StepGraphBuilder builder = make_step_graph);
  StepCost cost(const StepShape& shape) override;  // simulates what the cache lacks
  std::string describe() const override;
  std::string method() const;  // "1 and 2 layers, extrapolated" or "all layers"
  bool cached(const StepShape& shape) const;       // every run the shape needs is in the cache
  // Simulates every run the shapes need that the cache lacks, up to `jobs` at once.
  void prefetch(const std::vector<StepShape>& shapes);
  // Child simulations run (cache misses); read by a progress line's thread too.
  int children_run() const { return children_.load(std::memory_order_relaxed); }
  std::string cache_file() const { return cache_dir_ + "/step-cache.jsonl"; }
  // The cache key of one child run: a shape simulated with `layers` layers (0: all).
  std::string key_of(const StepShape& shape, int layers) const;

 private:
  std::string model_arg() const;  // the model as dfsim gen takes it: its name if shipped, else its file
  struct Run {            // one child simulation
    StepShape shape;
    int layers = 0;
  };
  struct Result {
    std::int64_t ns = 0;
    double energy_j = 0;
  };
  std::vector<int> layer_runs() const;  // the layer counts a step is simulated with
  void simulate(const std::vector<Run>& runs);
  void remember(const Run& run, const std::string& key, const Result& r);
  ModelInfo model_;
  std::string config_json_, config_name_, key_base_, cache_dir_, binary_;
  int tp_, cores_;
  StepSimMode mode_;
  int jobs_;
  StepGraphBuilder builder_;
  std::map<std::string, Result> cache_;
  std::atomic<int> children_{0};
};

}  // namespace dfsim::serve

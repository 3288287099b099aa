#pragma once
// Where step times come from: the serving loop asks a provider for the cost of each distinct
// step shape. Two providers: a table (step_table.h, measured or other times) and simulation
// (simulated_step_times.h, child `dfsim run`s per shape, memoised). There is deliberately no
// analytic fallback.
#include <cstdint>
#include <map>
#include <string>

#include "sim/serve/buckets.h"

namespace dfsim::serve {

// What one step of a shape costs on the cards.
struct StepCost {
  std::int64_t ns = 0;      // step time (> 0)
  double energy_j = -1;     // energy of the step, static included (< 0: the source does not know)
  bool has_energy() const { return energy_j >= 0; }
};

class StepTimeProvider {
 public:
  virtual ~StepTimeProvider() = default;
  // The cost of one step of this shape. InputError if the provider cannot give it (a table
  // without the row, a model without step graphs).
  virtual StepCost cost(const StepShape& shape) = 0;
  virtual std::string describe() const = 0;  // one line for the summary: where times come from
};

// Remembers each shape's answer and how many steps used it (for --export-step-table).
class MemoStepTimes : public StepTimeProvider {
 public:
  explicit MemoStepTimes(StepTimeProvider& inner) : inner_(inner) {}
  StepCost cost(const StepShape& shape) override {
    auto it = memo_.find(shape);
    if (it == memo_.end()) it = memo_.emplace(shape, Use{inner_.cost(shape), 0}).first;
    ++it->second.steps;
    return it->second.cost;
  }
  std::string describe() const override { return inner_.describe(); }
  struct Use {
    StepCost cost;
    std::int64_t steps = 0;
  };
  const std::map<StepShape, Use>& used() const { return memo_; }

 private:
  StepTimeProvider& inner_;
  std::map<StepShape, Use> memo_;
};

}  // namespace dfsim::serve

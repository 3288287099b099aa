#pragma once
// Where step times come from: the serving loop asks a provider for the time of each distinct
// step shape. Two providers: a table (step_table.h, measured or other times) and simulation
// (simulated_step_times.h, a child `dfsim run` per shape, memoised). There is deliberately no
// analytic fallback.
#include <cstdint>
#include <map>
#include <string>

#include "sim/serve/buckets.h"

namespace dfsim::serve {

class StepTimeProvider {
 public:
  virtual ~StepTimeProvider() = default;
  // The time of one step of this shape, in nanoseconds (> 0). InputError if the provider cannot
  // give it (a table without the row, a model without step graphs).
  virtual std::int64_t step_ns(const StepShape& shape) = 0;
  virtual std::string describe() const = 0;  // one line for the summary: where times come from
};

// Remembers each shape's answer and how many steps used it (for --export-step-table).
class MemoStepTimes : public StepTimeProvider {
 public:
  explicit MemoStepTimes(StepTimeProvider& inner) : inner_(inner) {}
  std::int64_t step_ns(const StepShape& shape) override {
    auto it = memo_.find(shape);
    if (it == memo_.end()) it = memo_.emplace(shape, Use{inner_.step_ns(shape), 0}).first;
    ++it->second.steps;
    return it->second.ns;
  }
  std::string describe() const override { return inner_.describe(); }
  struct Use {
    std::int64_t ns = 0;
    std::int64_t steps = 0;
  };
  const std::map<StepShape, Use>& used() const { return memo_; }

 private:
  StepTimeProvider& inner_;
  std::map<StepShape, Use> memo_;
};

}  // namespace dfsim::serve

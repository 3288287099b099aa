#pragma once
// SPMD folding: per-core task instances (absolute offsets and cores) merged into templates
// whose offsets and target cores are affine in the core, like the core folds of a SuperDSC.
#include <string>
#include <vector>

#include "sim/compiler/graph_builder.h"

namespace dfsim {

// One logical step of a lowering, described core by core: add() one Task per core that runs
// it (first_core = that core, core_count = 1, every Affine with alpha = 0), then flush() adds
// the fewest templates to the builder: runs of consecutive cores whose instances differ only
// by offsets and target cores that grow by the same step from core to core. A template is
// named `name`, or `name/c<first core>` when the step needs several.
// The folding itself: per-core tasks (core_count = 1, absolute offsets) to the fewest templates.
std::vector<Task> fold_core_tasks(std::vector<Task> tasks, const std::string& name);

class CoreTasks {
 public:
  explicit CoreTasks(std::string name) : name_(std::move(name)) {}
  void add(Task t) { tasks_.push_back(std::move(t)); }
  bool empty() const { return tasks_.empty(); }
  void flush(GraphBuilder& b);

 private:
  std::string name_;
  std::vector<Task> tasks_;
};

}  // namespace dfsim

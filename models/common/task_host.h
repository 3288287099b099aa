#pragma once
// What a unit needs from whoever fires its tasks: the graph, the LX reservation of a task's
// outputs, and the fired / completed notices. The runtime's Scheduler implements it, so the
// hardware in models/ depends on nothing in sim/runtime.
#include "sim/common/time.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

class TaskUnit;
class LxScratchpad;

class TaskHost {
 public:
  virtual ~TaskHost() = default;

  virtual const KernelGraph& graph() const = 0;
  virtual const TaskInstance& instance(int i) const = 0;
  virtual const Task& task_of(int i) const = 0;
  // Wiring: the LX scratchpad of each core, for the reservations.
  virtual void set_lx(int core, LxScratchpad* lx) = 0;

  // Before firing `inst`: reserves the LX space of every LX buffer it writes, all or nothing.
  // On failure `waiter` is woken when space frees.
  virtual bool reserve_outputs(int inst, TaskUnit* waiter) = 0;
  // `inst` fired at `now` (streaming consumers may become ready).
  virtual void fired(int inst, Tick now) = 0;
  // The unit's work on `inst` is done: false while a streaming producer of it still runs; the
  // unit is then resumed (TaskUnit::resume) when the last one completes.
  virtual bool may_complete(int inst, TaskUnit* unit) = 0;
  // `inst` completed at `now`.
  virtual void complete(int inst, Tick now) = 0;
};

}  // namespace dfsim

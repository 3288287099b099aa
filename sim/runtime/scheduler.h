#pragma once
// The firing rule, and the only scheduler: a task instance fires when every buffer it reads
// holds its data (all writers of what it reads have completed, or the data was preloaded),
// the LX space for what it writes is reserved, and its unit is free. Streaming reads relax
// the first condition: a consumer whose reads of a producer's output are all streaming may
// fire once that producer has fired, and completes no earlier than the producer. LX space is
// granted per core in program order (a topological order of the instances), unless the
// config asks for first-come allocation.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/common/task_host.h"
#include "sim/common/time.h"
#include "sim/graph/kernel_graph.h"
#include "sim/runtime/release_timer.h"
#include "sim/stats/recorder.h"

namespace dfsim {

class Scheduler : public TaskHost {
 public:
  Scheduler(const KernelGraph& g, const ExpandedGraph& x, Recorder& rec);
  ~Scheduler();

  // Wiring, before the run.
  void bind(int inst, TaskUnit* unit) { unit_of_[inst] = unit; }
  const TaskUnit* unit_of(int inst) const { return unit_of_[inst]; }
  void set_lx(int core, LxScratchpad* lx) override;
  // true: each core grants LX space to its buffers in program order (the default).
  void set_program_order_allocation(bool on) { in_order_ = on; }
  // A kernel's launch (card.kernel_launch_ns): its instances on a card fire no earlier than
  // `t` after the first of them is ready there. 0: none.
  void set_kernel_launch(Tick t) { launch_ = t; }
  // A coarse-tile loop iteration's start (card.loop_iteration_ns): a buffer that takes over
  // another's space gets it no earlier than `t` after that one is released. 0: at once.
  void set_loop_iteration(Tick t) { loop_iteration_ = t; }
  // Throws InputError when some LX buffer's takeover (Buffer::after) can never be served: the
  // run would deadlock (takeover_check.cpp). start() calls it; `dfsim validate` too.
  void check_takeovers() const;
  // Reserves preloaded LX buffers and hands every instance without dependencies to its unit
  // (at its not_before time, if later).
  void start();

  // The units' side (TaskHost): a reservation only for outputs not yet reserved.
  bool reserve_outputs(int inst, TaskUnit* waiter) override;
  void fired(int inst, Tick now) override;
  bool may_complete(int inst, TaskUnit* unit) override;
  void complete(int inst, Tick now) override;

  const KernelGraph& graph() const override { return g_; }
  const ExpandedGraph& expanded() const { return x_; }
  const TaskInstance& instance(int i) const override { return x_.instances[i]; }
  const Task& task_of(int i) const override { return g_.tasks[x_.instances[i].task]; }

  std::size_t completed() const { return completed_; }
  std::size_t total() const { return x_.instances.size(); }
  bool finished() const { return completed_ == x_.instances.size(); }
  Tick last_completion() const { return last_end_; }

  // Why each unfinished instance is not done, one line each (for a deadlock report).
  std::vector<std::string> blocked_report(std::size_t max_lines) const;

 private:
  // One LX buffer instance (buffer, core): its reservation and how many have used it.
  struct LxBuf {
    int buffer = -1, core = -1;
    std::uint64_t bytes = 0;
    int writers = 0, writers_done = 0, readers = 0, readers_done = 0;
    bool reserved = false, released = false;
  };
  // The LxBuf whose space b takes over (Buffer::after), -1: none. after_ and released_at_ (per
  // LxBuf) are empty unless the graph has such buffers: LxBuf stays 40 bytes for the others.
  int after_of(int b) const { return after_.empty() ? -1 : after_[static_cast<std::size_t>(b)]; }
  // Whether LxBuf b waits for the one whose space it takes over to be released.
  bool waits_for_space_of(int b) const { return after_of(b) >= 0 && !lxbufs_[after_of(b)].released; }
  int lx_index(int buffer, int core);
  void build_allocation_order();
  // The first buffer on `core` that must get space before the unreserved outputs of `inst`
  // there, or -1 if it is their turn.
  int allocation_blocker(int inst, int core) const;
  void maybe_release(LxBuf& b, Tick now);
  void make_ready(int inst, Tick now);
  // The (kernel, card) slot of `inst` in launched_at_; kNoSlot without launches or kernel.
  std::size_t launch_slot(int inst) const;
  // When the kernel of `inst` is (or was) launched on its card; kNever when not yet or no launch.
  Tick launch_of(int inst) const;
  void link_streaming();
  // false when the instance can never fire (a read nothing provides).
  bool may_fire(int inst) const { return never_ready_.empty() || never_ready_.count(inst) == 0; }

  const KernelGraph& g_;
  const ExpandedGraph& x_;
  Recorder& rec_;
  std::vector<TaskUnit*> unit_of_;
  std::vector<LxScratchpad*> lx_;          // per core
  std::vector<LxBuf> lxbufs_;
  bool in_order_ = true;
  std::vector<std::vector<int>> alloc_order_;   // per core: LxBuf indices in program order
  std::vector<std::size_t> alloc_next_;         // per core: first not yet reserved in that order
  // Per-instance state in flat arrays (millions of instances: no container per instance).
  IdLists reads_lx_, writes_lx_;           // per instance: LxBuf indices (sorted, unique)
  std::vector<int> missing_;               // per instance: dependencies not yet complete
  std::vector<int> stream_unfired_;        // per instance: streaming producers not yet fired
  std::vector<int> stream_open_;           // per instance: streaming producers not yet complete
  std::vector<char> stream_edge_;          // per consumer edge (x_.consumers order): it streams
  std::unordered_map<int, TaskUnit*> deferred_;  // instance -> unit waiting to complete it
  std::map<int, std::string> never_ready_; // instance -> why it can never fire (usually empty)
  std::vector<char> done_;
  std::vector<std::pair<int, std::uint64_t>> need_;  // reserve_outputs: LX bytes per core
  Tick loop_iteration_ = 0;
  std::vector<int> after_;         // per LxBuf, when some buffer takes over another's space
  std::vector<Tick> released_at_;  // per LxBuf, the same
  std::unique_ptr<ReleaseTimer> wake_timer_;  // wakes a scratchpad's waiters when a taken-over space is due
  std::unique_ptr<ReleaseTimer> timer_;    // when some instance has a not_before time or kernels a launch
  Tick launch_ = 0;
  std::vector<Tick> launched_at_;          // per (kernel, card): when its tasks may fire; kNever: not yet
  static constexpr Tick kNever = ~Tick{0};
  static constexpr std::size_t kNoSlot = ~std::size_t{0};
  std::size_t completed_ = 0;
  Tick last_end_ = 0;
};

}  // namespace dfsim

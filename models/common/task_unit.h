#pragma once
// Base of every unit that executes task instances (PT, SFP, DMA, ring port): a queue of
// ready instances served lowest-id first, the LX reservation check, and one SC_METHOD that
// dispatches whenever the unit is woken. Derived units implement start() and call finish().
#include <queue>
#include <string>
#include <systemc>
#include <vector>

#include "sim/common/time.h"
#include "sim/stats/recorder.h"

namespace dfsim {

class TaskHost;

// Counts SC_METHOD activations of all models: the "events processed" figure.
struct ActivationCounter {
  static std::uint64_t& value() {
    static std::uint64_t v = 0;
    return v;
  }
};

// Current simulated time in ticks (sc_time_stamp without its out-of-line call).
inline Tick sim_now() { return static_cast<Tick>(sc_core::sc_get_curr_simcontext()->time_stamp().value()); }

class TaskUnit : public sc_core::sc_module {
 public:
  TaskUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec);

  void push_ready(int inst);   // from the scheduler: inputs present
  void wake();                 // LX space was freed, or work arrived
  void resume(int inst);       // the streaming producers of `inst` have completed: finish it
  const std::string& unit_kind() const { return kind_; }

 protected:
  virtual void start(int inst) = 0;  // fires `inst` at now; must later call finish(inst)
  void finish(int inst);             // `inst` completed at now
  // The running task goes on without the unit (a collective waiting for the rest of its
  // group): the unit may start its next task; the task completes with finish_detached().
  void detach();
  void finish_detached(int inst);    // detached `inst` completed at now
  bool busy() const { return busy_; }

  TaskHost& sched_;
  Recorder& rec_;
  std::string kind_;

 private:
  void dispatch();
  sc_core::sc_event wake_ev_;
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready_;
  bool busy_ = false;
  int waiting_lx_ = -1;      // instance at the head that is waiting for LX space
  int resumed_ = -1;         // instance to finish at the next dispatch
  Tick waiting_since_ = 0;
};

}  // namespace dfsim

#include "models/pcie/link_port.h"

#include "models/common/task_host.h"
#include "models/pcie/collective_engine.h"
#include "models/pcie/pcie_fabric.h"

namespace dfsim {

LinkPort::LinkPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int card, PcieFabric& fabric,
                   CollectiveEngine& engine)
    : TaskUnit(n, s, r), card_(card), fabric_(fabric), engine_(engine) {
  kind_ = "link";
  track_ = r.add_track("pcie", "card " + std::to_string(card) + " port", "link");
  SC_HAS_PROCESS(LinkPort);
  SC_METHOD(done);
  sensitive << done_ev_;
  dont_initialize();
}

void LinkPort::start(int inst) {
  current_ = inst;
  rec_.tasks()[inst].track = track_;
  const Task& t = sched_.task_of(inst);
  const TaskInstance& ti = sched_.instance(inst);
  Tick now = sim_now();
  if (t.op == "from_host" || t.op == "to_host") {
    bool in = t.op == "from_host";
    std::uint64_t bytes = (in ? ti.writes : ti.reads).at(0).total_bytes();
    complete_at(fabric_.transfer(now, in ? PcieFabric::kHost : card_, in ? card_ : PcieFabric::kHost, bytes));
    return;
  }
  engine_.arrive(inst, *this);
}

void LinkPort::complete_at(Tick end) {
  Tick now = sim_now();
  rec_.busy(track_, rec_.tasks()[current_].start, end);
  done_ev_.notify(sc_core::sc_time::from_value(end - now));
}

void LinkPort::done() {
  ++ActivationCounter::value();
  finish(current_);
}

}  // namespace dfsim

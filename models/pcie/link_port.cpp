#include "models/pcie/link_port.h"

#include <algorithm>

#include "models/common/task_host.h"
#include "models/pcie/collective_engine.h"
#include "models/pcie/link_dma.h"
#include "models/pcie/pcie_fabric.h"

namespace dfsim {

LinkPort::LinkPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int card, PcieFabric& fabric,
                   CollectiveEngine& engine, LinkDma& dma)
    : TimedTaskUnit(n, s, r), card_(card), fabric_(fabric), engine_(engine), dma_(dma) {
  kind_ = "link";
  track_ = r.add_track("pcie", "card " + std::to_string(card) + " port", "link");
}

void LinkPort::start(int inst) {
  current_ = inst;
  rec_.tasks()[inst].track = track_;
  const Task& t = sched_.task_of(inst);
  const TaskInstance& ti = sched_.instance(inst);
  Tick now = sim_now();
  if (t.op == "from_host" || t.op == "to_host") {
    bool in = t.op == "from_host";
    const KernelGraph& g = sched_.graph();
    const Region r = (in ? writes_of(g, ti) : reads_of(g, ti)).at(0);
    std::uint64_t bytes = r.total_bytes();
    Tick arrived = fabric_.transfer(now, in ? PcieFabric::kHost : card_, in ? card_ : PcieFabric::kHost, bytes, t.kernel);
    fabric_.tally_memory(t.kernel, in ? 0 : bytes, in ? bytes : 0);
    // Done when the link has passed the last byte and the card's memory has written (read) it.
    dma_.stream(r, bytes, in, now, fabric_.duration(dma_.burst_bytes(), false),
                [this, arrived](Tick t) { finish_at(std::max(arrived, t)); });
    return;
  }
  engine_.arrive(inst, *this);
  detach();
}

void LinkPort::collective_done(int inst) {
  rec_.busy(track_, rec_.tasks()[inst].start, sim_now());
  finish_detached(inst);
}

void LinkPort::finish_at(Tick end) {
  end = std::max(end, sim_now());
  rec_.busy(track_, rec_.tasks()[current_].start, end);
  complete_at(end);
}

}  // namespace dfsim

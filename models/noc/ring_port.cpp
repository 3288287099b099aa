#include "models/noc/ring_port.h"

#include "models/lx/lx_scratchpad.h"
#include "models/noc/ring.h"
#include "models/common/task_host.h"

namespace dfsim {

RingPort::RingPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int core, Ring& ring,
                   std::vector<LxScratchpad*>& lx)
    : TimedTaskUnit(n, s, r), ring_(ring), lx_(lx) {
  kind_ = "ring_port";
  track_ = r.add_track("core " + std::to_string(core), "ring port", "ring_port");
}

void RingPort::start(int inst) {
  current_ = inst;
  const TaskInstance& ti = sched_.instance(inst);
  const Region src = reads_of(sched_.graph(), ti).at(0);
  const Region dst = writes_of(sched_.graph(), ti).at(0);
  std::uint64_t bytes = src.total_bytes();
  Tick now = sim_now();
  LxScratchpad* a = lx_[src.core];
  LxScratchpad* b = lx_[dst.core];
  Tick r = a->read_time(bytes), w = b->write_time(bytes);
  a->bytes_read += bytes;
  b->bytes_written += bytes;
  Tick sent = a->read_port().reserve(now, r) + r;
  Tick arrived = ring_.transfer(sent, src.core, dst.core, bytes);
  Tick end = b->write_port().reserve(arrived, w) + w;
  rec_.tasks()[inst].track = track_;
  rec_.busy(track_, now, end);
  complete_at(end);
}

}  // namespace dfsim

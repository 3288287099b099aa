#include "models/common/compute_unit.h"

#include <algorithm>

#include "models/lx/lx_scratchpad.h"
#include "models/common/task_host.h"

namespace dfsim {

ComputeUnit::ComputeUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec,
                         const ChipConfig& cfg, LxScratchpad& lx, int core, const char* kind)
    : TaskUnit(n, sched, rec), cfg_(cfg), clk_(cfg.core.clock_mhz), lx_(lx) {
  kind_ = kind;
  for (int c = 0; c < cfg.core.corelets; ++c)
    tracks_.push_back(rec.add_track("core " + std::to_string(core),
                                    std::string(kind) + "." + std::to_string(c), kind));
  SC_HAS_PROCESS(ComputeUnit);
  SC_METHOD(done);
  sensitive << done_ev_;
  dont_initialize();
}

ComputeUnit::LxTraffic ComputeUnit::lx_traffic(const Task&, const TaskInstance& inst, int) const {
  LxTraffic x;
  for (const Region& r : inst.reads) x.read += r.total_bytes();
  for (const Region& r : inst.writes) x.write += r.total_bytes();
  return x;
}

Tick ComputeUnit::duration(const Task& t, const TaskInstance& inst) const {
  int corelets = corelets_of(t);
  LxTraffic x = lx_traffic(t, inst, corelets);
  Tick compute = clk_.cycles(compute_cycles(t, corelets));
  return std::max({compute, lx_.read_time(x.read), lx_.write_time(x.write)});
}

void ComputeUnit::start(int inst) {
  current_ = inst;
  const TaskInstance& ti = sched_.instance(inst);
  const Task& t = sched_.task_of(inst);
  Tick now = sim_now(), d = duration(t, ti);
  LxTraffic x = lx_traffic(t, ti, corelets_of(t));
  lx_.bytes_read += x.read;
  lx_.bytes_written += x.write;
  rec_.tasks()[inst].track = t.corelet >= 0 ? tracks_[t.corelet % tracks_.size()] : tracks_[0];
  if (t.corelet >= 0) {
    rec_.busy(tracks_[t.corelet % tracks_.size()], now, now + d);
  } else {
    for (int tr : tracks_) rec_.busy(tr, now, now + d);
  }
  done_ev_.notify(sc_core::sc_time::from_value(d));
}

void ComputeUnit::done() {
  ++ActivationCounter::value();
  finish(current_);
}

}  // namespace dfsim

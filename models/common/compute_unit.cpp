#include "models/common/compute_unit.h"

#include <algorithm>

#include "models/lx/lx_scratchpad.h"
#include "models/common/task_host.h"

namespace dfsim {

ComputeUnit::ComputeUnit(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec,
                         const ChipConfig& cfg, LxScratchpad& lx, int core, const char* kind)
    : TimedTaskUnit(n, sched, rec), cfg_(cfg), clk_(cfg.core.clock_mhz), lx_(lx) {
  kind_ = kind;
  for (int c = 0; c < cfg.core.corelets; ++c)
    tracks_.push_back(rec.add_track("core " + std::to_string(core),
                                    std::string(kind) + "." + std::to_string(c), kind));
}

ComputeUnit::LxTraffic ComputeUnit::lx_traffic(const Task&, const TaskInstance& inst, int) const {
  LxTraffic x;
  for (const Region& r : reads_of(sched_.graph(), inst)) x.read += r.total_bytes();
  for (const Region& r : writes_of(sched_.graph(), inst)) x.write += r.total_bytes();
  return x;
}

Tick ComputeUnit::duration(const Task& t, const TaskInstance& inst) const {
  int corelets = corelets_of(t);
  LxTraffic x = lx_traffic(t, inst, corelets);
  Tick compute = clk_.cycles(compute_cycles(t, corelets));
  return std::max({compute, lx_.read_time(x.read), lx_.write_time(x.write)});
}

Tick ComputeUnit::book(Tick at, Tick d) {
  Tick now = sim_now();
  Tick start = std::max({at, busy() ? task_end_ : Tick(0), booked_to_});
  if (booked_to_ <= now) booked_from_ = start;
  booked_to_ = start + d;
  for (int tr : tracks_) rec_.busy(tr, start, start + d);
  return start;
}

void ComputeUnit::start(int inst) {
  current_ = inst;
  const TaskInstance& ti = sched_.instance(inst);
  const Task& t = sched_.task_of(inst);
  Tick d = duration(t, ti), now = sim_now();
  // Runs now unless it would overlap a booking: then after it. Before a booking already drawn
  // on the tracks, it fills the gap (a backfill).
  const bool before_booking = booked_to_ > now && now + d <= booked_from_;
  if (booked_to_ > now && !before_booking) {
    now = booked_to_;
    rec_.tasks()[inst].start = now;
  }
  task_end_ = now + d;
  auto draw = [&](int tr) { before_booking ? rec_.busy_backfill(tr, now, now + d) : rec_.busy(tr, now, now + d); };
  LxTraffic x = lx_traffic(t, ti, corelets_of(t));
  lx_.bytes_read += x.read;
  lx_.bytes_written += x.write;
  rec_.tasks()[inst].track = t.corelet >= 0 ? tracks_[t.corelet % tracks_.size()] : tracks_[0];
  if (t.corelet >= 0) {
    draw(tracks_[t.corelet % tracks_.size()]);
  } else {
    for (int tr : tracks_) draw(tr);
  }
  complete_at(task_end_);
}

}  // namespace dfsim

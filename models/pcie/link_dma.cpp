#include "models/pcie/link_dma.h"

#include <algorithm>

#include "models/common/task_unit.h"

namespace dfsim {

LinkDma::LinkDma(sc_core::sc_module_name n, const ChipConfig& cfg, IMemory& mem,
                 const std::vector<std::uint64_t>& hbm_base)
    : sc_core::sc_module(n),
      mem_(mem),
      hbm_base_(hbm_base),
      burst_(static_cast<std::uint64_t>(cfg.core.dma.stick_bytes) * cfg.core.dma.burst_sticks),
      ideal_(cfg.memory.ideal) {
  SC_HAS_PROCESS(LinkDma);
  SC_METHOD(issue);
  sensitive << ev_;
  dont_initialize();
}

void LinkDma::stream(const Region& r, std::uint64_t bytes, bool write, Tick start, Tick burst_ticks,
                     std::function<void(Tick)> done) {
  if (ideal_ || bytes == 0) {
    done(start);
    return;
  }
  std::uint64_t tag = streams_.size();
  if (!free_.empty()) {
    tag = free_.back();
    free_.pop_back();
  } else {
    streams_.emplace_back();
  }
  Stream& s = streams_[tag];
  s = Stream{hbm_base_[static_cast<std::size_t>(r.buffer)] + r.offset, std::max<std::uint64_t>(r.total_bytes(), 1), 0, bytes,
             write, true, start, burst_ticks, start, 0, std::move(done)};
  ev_.notify(sc_core::sc_time::from_value(start - sim_now()));
}

void LinkDma::issue() {
  ++ActivationCounter::value();
  const Tick now = sim_now();
  Tick next = ~Tick(0);
  for (std::uint64_t tag = 0; tag < streams_.size(); ++tag) {
    // Not a reference across send(): a memory model may complete a request at once.
    while (streams_[tag].active && streams_[tag].left > 0 && streams_[tag].next <= now) {
      Stream& s = streams_[tag];
      std::uint32_t n = static_cast<std::uint32_t>(std::min({s.left, burst_, s.span - s.pos}));
      MemRequest req{s.base + s.pos, n, s.write, now, this, tag};
      s.pos = (s.pos + n) % s.span;
      s.left -= n;
      s.next += s.every;
      ++s.outstanding;
      mem_.send(req);
    }
    const Stream& s = streams_[tag];
    if (s.active && s.left > 0) next = std::min(next, s.next);
  }
  if (next != ~Tick(0)) ev_.notify(sc_core::sc_time::from_value(next - now));
}

void LinkDma::mem_done(std::uint64_t tag, Tick t) {
  Stream& s = streams_[tag];
  --s.outstanding;
  s.last = std::max(s.last, t);
  if (s.left > 0 || s.outstanding > 0) return;
  s.active = false;
  const Tick last = s.last;
  std::function<void(Tick)> done = std::move(s.done);
  free_.push_back(tag);
  done(last);
}

}  // namespace dfsim

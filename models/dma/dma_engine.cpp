#include "models/dma/dma_engine.h"

#include <algorithm>

#include "models/lx/lx_scratchpad.h"
#include "models/memory/memory.h"
#include "models/noc/ring.h"
#include "sim/runtime/scheduler.h"

namespace dfsim {

DmaEngine::DmaEngine(sc_core::sc_module_name n, Scheduler& s, Recorder& r, const ChipConfig& cfg, int core,
                     IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& lx,
                     const std::vector<std::uint64_t>& hbm_base)
    : TaskUnit(n, s, r),
      cfg_(cfg),
      core_(core),
      mem_(mem),
      ring_(ring),
      lx_(lx),
      hbm_base_(hbm_base),
      clk_(cfg.core.clock_mhz),
      burst_bytes_(static_cast<std::uint64_t>(cfg.core.dma.stick_bytes) * cfg.core.dma.burst_sticks) {
  kind_ = "dma";
  track_ = r.add_track("core " + std::to_string(core), "dma", "dma");
  SC_HAS_PROCESS(DmaEngine);
  SC_METHOD(step);
  sensitive << step_ev_;
  dont_initialize();
}

std::uint64_t DmaEngine::hbm_addr(const Region& r, std::uint64_t row, std::uint64_t off) const {
  return hbm_base_[r.buffer] + r.offset + row * r.stride + off;
}

void DmaEngine::start(int inst) {
  current_ = inst;
  const TaskInstance& ti = sched_.instance(inst);
  const KernelGraph& g = sched_.graph();
  Transfer& x = xfer_;
  x = Transfer{};
  x.src = ti.reads.at(0);
  x.dst = ti.writes.at(0);
  x.src_hbm = g.buffers[x.src.buffer].space == Space::hbm;
  x.dst_hbm = g.buffers[x.dst.buffer].space == Space::hbm;
  x.pattern = (x.dst_hbm && !x.src_hbm) ? &x.dst : &x.src;
  x.total = x.src.total_bytes();
  // Count the bursts: each row of the pattern side is cut at burst_bytes.
  std::uint64_t per_row = (x.pattern->bytes + burst_bytes_ - 1) / burst_bytes_;
  x.bursts_left = per_row * x.pattern->rows;
  std::uint64_t sticks = x.pattern->rows * ((x.pattern->bytes + cfg_.core.dma.stick_bytes - 1) /
                                            cfg_.core.dma.stick_bytes);
  stats_.bursts += x.bursts_left;
  stats_.sticks += sticks;
  if (x.src_hbm && x.dst_hbm) stats_.hbm_to_hbm += x.total;
  else if (x.src_hbm) stats_.hbm_to_lx += x.total;
  else if (x.dst_hbm) stats_.lx_to_hbm += x.total;
  else stats_.lx_to_lx += x.total;
  rec_.tasks()[inst].track = track_;
  next_issue_ = sim_now();
  outstanding_ = 0;
  if (cfg_.memory.ideal && (x.src_hbm || x.dst_hbm)) {
    // Ideal memory: off-chip transfers take no time.
    x.bursts_left = 0;
  }
  step_ev_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::issue_burst(Tick now) {
  Transfer& x = xfer_;
  const Region& p = *x.pattern;
  std::uint32_t bytes = static_cast<std::uint32_t>(std::min(burst_bytes_, p.bytes - x.row_off));
  std::uint64_t row = x.row, off = x.row_off;
  x.row_off += bytes;
  if (x.row_off == p.bytes) {
    x.row_off = 0;
    ++x.row;
  }
  x.moved += bytes;
  auto done = [this](Tick t) {
    completions_.push(t);
    step_ev_.notify(sc_core::sc_time::from_value(t - sim_now()));
  };
  int src_core = x.src.core, dst_core = x.dst.core;
  if (x.src_hbm) {
    std::uint64_t addr = hbm_addr(x.src, row, off);
    int mc = ring_.controller_stop(mem_.channel_of(addr));
    MemRequest req{addr, bytes, false, now, nullptr};
    if (x.dst_hbm) {
      std::uint64_t waddr = hbm_addr(x.dst, row, off);
      req.on_done = [this, waddr, bytes, done](Tick t) { mem_.send(MemRequest{waddr, bytes, true, t, done}); };
    } else {
      LxScratchpad* lx = lx_[dst_core];
      req.on_done = [this, mc, dst_core, bytes, lx, done](Tick t) {
        Tick arrive = ring_.transfer(t, mc, dst_core, bytes);
        Tick w = lx->write_time(bytes);
        lx->bytes_written += bytes;
        done(lx->write_port().reserve(arrive, w) + w);
      };
    }
    mem_.send(std::move(req));
    return;
  }
  LxScratchpad* src = lx_[src_core];
  Tick r = src->read_time(bytes);
  src->bytes_read += bytes;
  Tick read_done = src->read_port().reserve(now, r) + r;
  if (x.dst_hbm) {
    std::uint64_t addr = hbm_addr(x.dst, row, off);
    int mc = ring_.controller_stop(mem_.channel_of(addr));
    Tick at_mc = ring_.transfer(read_done, src_core, mc, bytes);
    mem_.send(MemRequest{addr, bytes, true, at_mc, done});
  } else {
    LxScratchpad* dst = lx_[dst_core];
    Tick arrive = ring_.transfer(read_done, src_core, dst_core, bytes);
    Tick w = dst->write_time(bytes);
    dst->bytes_written += bytes;
    done(dst->write_port().reserve(arrive, w) + w);
  }
}

void DmaEngine::step() {
  ++ActivationCounter::value();
  if (current_ < 0) return;
  Tick now = sim_now();
  while (!completions_.empty() && completions_.top() <= now) {
    completions_.pop();
    --outstanding_;
    --xfer_.bursts_left;
  }
  const Tick issue_cost = clk_.cycles(cfg_.core.dma.issue_cycles);
  while (xfer_.moved < xfer_.total && xfer_.bursts_left > 0 && outstanding_ < cfg_.core.dma.max_outstanding &&
         next_issue_ <= now) {
    issue_burst(now);
    ++outstanding_;
    next_issue_ = now + issue_cost;
  }
  if (xfer_.bursts_left == 0) {
    int inst = current_;
    current_ = -1;
    rec_.busy(track_, rec_.tasks()[inst].start, now);
    finish(inst);
    return;
  }
  // Otherwise wake at the next completion or issue slot, whichever is first.
  Tick next = completions_.empty() ? ~Tick(0) : completions_.top();
  if (xfer_.moved < xfer_.total && outstanding_ < cfg_.core.dma.max_outstanding)
    next = std::min(next, next_issue_);
  if (next != ~Tick(0)) step_ev_.notify(sc_core::sc_time::from_value(next - now));
}

}  // namespace dfsim

#include "models/dma/dma_engine.h"

#include <algorithm>

#include "models/lx/lx_scratchpad.h"
#include "models/memory/memory.h"
#include "models/noc/ring.h"
#include "models/common/task_host.h"

namespace dfsim {

DmaEngine::DmaEngine(sc_core::sc_module_name n, TaskHost& s, Recorder& r, const ChipConfig& cfg, int core,
                     IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& lx,
                     const std::vector<std::uint64_t>& hbm_base, const std::string& track_name)
    : TaskUnit(n, s, r),
      cfg_(cfg),
      mem_(mem),
      ring_(ring),
      lx_(lx),
      hbm_base_(hbm_base),
      clk_(cfg.core.clock_mhz),
      burst_bytes_(static_cast<std::uint64_t>(cfg.core.dma.stick_bytes) * cfg.core.dma.burst_sticks),
      lookahead_(ns_to_ticks(cfg.sim.dma_lookahead_ns)) {
  kind_ = "dma";
  track_ = r.add_track("core " + std::to_string(core), track_name, "dma");
  SC_HAS_PROCESS(DmaEngine);
  SC_METHOD(step);
  sensitive << step_ev_;
  dont_initialize();
}

bool DmaEngine::outbound(const KernelGraph& g, const TaskInstance& t) {
  const InstanceRegions reads = reads_of(g, t);
  return !reads.empty() && g.buffers[reads[0].buffer].space == Space::lx;
}

std::uint64_t DmaEngine::hbm_addr(const Region& r, std::uint64_t row, std::uint64_t off) const {
  return hbm_base_[r.buffer] + r.offset + row * r.stride + off;
}

int DmaEngine::fanout_of(const InstanceRegions& writes) {
  std::vector<int> cores;
  for (const Region& w : writes) cores.push_back(w.core);
  auto it = std::find(fanouts_.begin(), fanouts_.end(), cores);
  if (it != fanouts_.end()) return static_cast<int>(it - fanouts_.begin());
  fanouts_.push_back(std::move(cores));
  fanout_routes_.resize(fanouts_.size() * ring_.stops(), -1);
  return static_cast<int>(fanouts_.size() - 1);
}

void DmaEngine::start(int inst) {
  current_ = inst;
  const TaskInstance& ti = sched_.instance(inst);
  const KernelGraph& g = sched_.graph();
  Transfer& x = xfer_;
  x.parts.clear();
  x.part = 0;
  x.fanout = -1;
  x.row = x.row_off = x.moved = 0;
  const InstanceRegions reads = reads_of(g, ti), writes = writes_of(g, ti);
  x.src = reads.at(0);
  x.dst = writes.at(0);
  x.src_hbm = g.buffers[x.src.buffer].space == Space::hbm;
  x.dst_hbm = g.buffers[x.dst.buffer].space == Space::hbm;
  const bool store = x.dst_hbm && !x.src_hbm;
  if (store) x.parts.assign(writes.begin(), writes.end());
  else if (x.src_hbm && !x.dst_hbm) x.parts.assign(reads.begin(), reads.end());
  else x.parts.push_back(x.src);
  x.total = 0;
  x.stick.clear();
  for (const Region& r : x.parts) {
    x.total += r.total_bytes();
    x.stick.push_back(g.buffers[static_cast<std::size_t>(r.buffer)].stick_layout);
  }
  if (!store && writes.size() > 1) {
    x.fanout = fanout_of(writes);
    stats_.multicast_extra += x.total * (writes.size() - 1);
  }
  // Count the bursts: each row of the pattern side is cut at burst_bytes.
  x.bursts_left = 0;
  std::uint64_t sticks = 0;
  for (const Region& r : x.parts) {
    x.bursts_left += r.rows * ((r.bytes + burst_bytes_ - 1) / burst_bytes_);
    sticks += r.rows * ((r.bytes + cfg_.core.dma.stick_bytes - 1) / cfg_.core.dma.stick_bytes);
  }
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
    x.moved = x.total;  // nothing to issue: no burst may reach the memory model
  }
  step_ev_.notify(sc_core::SC_ZERO_TIME);
}

std::uint64_t DmaEngine::new_slot(const Pending& p) {
  if (free_slots_.empty()) {
    slots_.push_back(p);
    return slots_.size() - 1;
  }
  std::uint64_t tag = free_slots_.back();
  free_slots_.pop_back();
  slots_[tag] = p;
  return tag;
}

void DmaEngine::burst_done(Tick t, Tick issued) {
  stats_.burst_time += t - issued;
  completions_.push(t);
  // Completions reported from inside step() are seen by it; others need a wake-up.
  if (!in_step_) step_ev_.notify(sc_core::sc_time::from_value(t - sim_now()));
}

void DmaEngine::mem_done(std::uint64_t tag, Tick t) {
  Pending p = slots_[tag];
  if (p.next == Pending::Next::write_hbm) {
    slots_[tag].next = Pending::Next::none;
    mem_.send(MemRequest{p.write_addr, p.bytes, true, t, this, tag});
    return;
  }
  free_slots_.push_back(tag);
  if (p.next == Pending::Next::to_lx && p.fanout >= 0) {
    // Multicast: every destination writes the burst once the ring has delivered it to the
    // last of them (a few hops' latency of pessimism for the nearer ones).
    const std::vector<int>& dsts = fanouts_[p.fanout];
    int& route = fanout_routes_[static_cast<std::size_t>(p.fanout) * ring_.stops() + p.mc];
    if (route < 0) route = ring_.multicast_route(p.mc, dsts);
    Tick arrive = ring_.multicast(ring_.memory_port_multicast(t, route, p.bytes, p.stick_layout), route, p.bytes);
    Tick end = arrive;
    for (int c : dsts) {
      LxScratchpad* lx = lx_[c];
      Tick w = lx->write_time(p.bytes);
      lx->bytes_written += p.bytes;
      end = std::max(end, lx->write_port().reserve(arrive, w) + w);
    }
    t = end;
  } else if (p.next == Pending::Next::to_lx) {
    LxScratchpad* lx = lx_[p.core];
    t = ring_.memory_port(t, p.core, p.bytes, false, p.stick_layout);
    Tick arrive = ring_.transfer(t, p.mc, p.core, p.bytes);
    Tick w = lx->write_time(p.bytes);
    lx->bytes_written += p.bytes;
    t = lx->write_port().reserve(arrive, w) + w;
  }
  burst_done(t, p.issued);
}

std::uint32_t DmaEngine::issue_burst(Tick t) {
  Transfer& x = xfer_;
  const Region& p = x.parts[x.part];
  const bool stick = x.stick[x.part];
  std::uint32_t bytes = static_cast<std::uint32_t>(std::min(burst_bytes_, p.bytes - x.row_off));
  std::uint64_t row = x.row, off = x.row_off;
  x.row_off += bytes;
  if (x.row_off == p.bytes) {
    x.row_off = 0;
    if (++x.row == p.rows && x.part + 1 < x.parts.size()) {
      x.row = 0;
      ++x.part;
    }
  }
  x.moved += bytes;
  int src_core = x.src.core, dst_core = x.dst.core;
  if (x.src_hbm) {
    std::uint64_t addr = hbm_addr(p, row, off);
    Pending pend;
    pend.bytes = bytes;
    pend.issued = t;
    if (x.dst_hbm) {
      pend.next = Pending::Next::write_hbm;
      pend.write_addr = hbm_addr(x.dst, row, off);
    } else {
      pend.next = Pending::Next::to_lx;
      pend.stick_layout = stick;
      pend.mc = ring_.controller_stop(mem_.channel_of(addr));
      pend.core = dst_core;
      pend.fanout = x.fanout;
    }
    mem_.send(MemRequest{addr, bytes, false, t, this, new_slot(pend)});
    return bytes;
  }
  LxScratchpad* src = lx_[src_core];
  Tick r = src->read_time(bytes);
  src->bytes_read += bytes;
  Tick read_done = src->read_port().reserve(t, r) + r;
  if (x.dst_hbm) {
    std::uint64_t addr = hbm_addr(p, row, off);
    int mc = ring_.controller_stop(mem_.channel_of(addr));
    Tick at_mc = ring_.memory_port(ring_.transfer(read_done, src_core, mc, bytes), src_core, bytes, true, stick);
    Pending pend;
    pend.bytes = bytes;
    pend.issued = t;
    mem_.send(MemRequest{addr, bytes, true, at_mc, this, new_slot(pend)});
  } else {
    LxScratchpad* dst = lx_[dst_core];
    Tick arrive = ring_.transfer(read_done, src_core, dst_core, bytes);
    Tick w = dst->write_time(bytes);
    dst->bytes_written += bytes;
    burst_done(dst->write_port().reserve(arrive, w) + w, t);
  }
  return bytes;
}

void DmaEngine::step() {
  ++ActivationCounter::value();
  if (current_ < 0) return;
  in_step_ = true;
  Tick now = sim_now();
  auto retire = [&] {
    completions_.pop();
    --outstanding_;
    --xfer_.bursts_left;
  };
  while (!completions_.empty() && completions_.top() <= now) retire();
  // Issue every burst whose issue slot falls within the look-ahead window: a slot opens
  // issue_cycles (plus stick_issue_cycles per stick of the previous burst) after the previous
  // issue, and once a request in flight has completed.
  const DmaConfig& dc = cfg_.core.dma;
  const int max_out = dc.max_outstanding;
  while (xfer_.moved < xfer_.total) {
    Tick t = std::max(next_issue_, now);
    bool full = outstanding_ >= max_out;
    if (full) {
      if (completions_.empty()) break;  // waiting for an asynchronous memory model
      t = std::max(t, completions_.top());
    }
    if (t > now + lookahead_) break;
    if (full) retire();
    std::uint32_t bytes = issue_burst(t);
    ++outstanding_;
    stats_.max_outstanding = std::max(stats_.max_outstanding, outstanding_);
    std::uint64_t sticks = (bytes + dc.stick_bytes - 1) / dc.stick_bytes;
    next_issue_ = t + clk_.cycles(dc.issue_cycles + dc.stick_issue_cycles * sticks);
  }
  in_step_ = false;
  if (xfer_.bursts_left == 0) {
    int inst = current_;
    current_ = -1;
    rec_.busy(track_, rec_.tasks()[inst].start, now);
    finish(inst);
    return;
  }
  // Otherwise wake at the next completion or issue slot, whichever is first.
  Tick next = completions_.empty() ? ~Tick(0) : completions_.top();
  if (xfer_.moved < xfer_.total && outstanding_ < max_out) next = std::min(next, next_issue_);
  if (next != ~Tick(0)) step_ev_.notify(sc_core::sc_time::from_value(next > now ? next - now : 0));
}

}  // namespace dfsim

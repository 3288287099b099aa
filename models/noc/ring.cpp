#include "models/noc/ring.h"

#include <algorithm>
#include <string>

namespace dfsim {

void Ring::init(const ChipConfig& cfg, Recorder& rec) {
  stops_ = cfg.cores;
  clk_ = ClockDomain(cfg.core.clock_mhz);
  bytes_per_cycle_ = cfg.ring.bytes_per_cycle;
  hop_ = clk_.cycles(cfg.ring.hop_cycles);
  for (int i = 0; i < stops_; ++i) {
    int next = (i + 1) % stops_, prev = (i + stops_ - 1) % stops_;
    cw_.emplace_back(&rec, rec.add_track("ring", "cw " + std::to_string(i) + "->" + std::to_string(next), "ring"));
    ccw_.emplace_back(&rec, rec.add_track("ring", "ccw " + std::to_string(i) + "->" + std::to_string(prev), "ring"));
  }
  mc_stops_ = cfg.memory.ring_stops;
  if (mc_stops_.empty()) {
    // Spread the controllers evenly around the ring.
    for (int ch = 0; ch < cfg.memory.channels; ++ch)
      mc_stops_.push_back(static_cast<int>((static_cast<long>(ch) * stops_) / cfg.memory.channels));
  }
  for (int& s : mc_stops_) s %= stops_;
  port_bytes_per_cycle_ = cfg.memory.port_bytes_per_cycle;
  for (int p = 0; p < cfg.memory.ports; ++p) {
    port_in_.emplace_back(&rec, rec.add_track("ring", "mem port " + std::to_string(p) + " rd", "ring"));
    port_out_.emplace_back(&rec, rec.add_track("ring", "mem port " + std::to_string(p) + " wr", "ring"));
  }
}

Tick Ring::memory_port(Tick t, int core, std::uint64_t bytes, bool to_memory) {
  if (port_in_.empty()) return t;
  std::size_t p = static_cast<std::size_t>(core) * port_in_.size() / static_cast<std::size_t>(stops_);
  Resource& r = to_memory ? port_out_[p] : port_in_[p];
  Tick occ = clk_.cycles((bytes + port_bytes_per_cycle_ - 1) / port_bytes_per_cycle_);
  return r.reserve(t, occ) + occ;
}

Tick Ring::memory_port(Tick t, const std::vector<int>& cores, std::uint64_t bytes) {
  if (port_in_.empty()) return t;
  std::vector<char> used(port_in_.size(), 0);
  Tick end = t;
  for (int c : cores) {
    std::size_t p = static_cast<std::size_t>(c) * port_in_.size() / static_cast<std::size_t>(stops_);
    if (used[p]) continue;
    used[p] = 1;
    end = std::max(end, memory_port(t, c, bytes, false));
  }
  return end;
}

int Ring::hops(int src, int dst) const {
  int fwd = ((dst - src) % stops_ + stops_) % stops_;
  return std::min(fwd, stops_ - fwd);
}

Tick Ring::occupancy(std::uint64_t bytes) const {
  return clk_.cycles((bytes + bytes_per_cycle_ - 1) / bytes_per_cycle_);
}

Tick Ring::send(Tick t, int src, int n, bool clockwise, Tick occ) {
  Tick head = t;
  int at = src;
  for (int h = 0; h < n; ++h) {
    Resource& link = clockwise ? cw_[at] : ccw_[at];
    head = link.reserve(head, occ) + hop_;
    at = clockwise ? (at + 1) % stops_ : (at + stops_ - 1) % stops_;
  }
  return head;
}

Tick Ring::transfer(Tick t, int src, int dst, std::uint64_t bytes) {
  bytes_ += bytes;
  int fwd = ((dst - src) % stops_ + stops_) % stops_;
  if (fwd == 0) return t;
  bool clockwise = fwd <= stops_ - fwd;  // ties go clockwise
  byte_hops_ += bytes * static_cast<std::uint64_t>(clockwise ? fwd : stops_ - fwd);
  Tick occ = occupancy(bytes);
  return send(t, src, clockwise ? fwd : stops_ - fwd, clockwise, occ) + occ;
}

Tick Ring::multicast(Tick t, int src, const std::vector<int>& dsts, std::uint64_t bytes) {
  // The farthest destination in each direction sets how far that direction's message runs.
  int cw = 0, ccw = 0;
  for (int d : dsts) {
    int fwd = ((d - src) % stops_ + stops_) % stops_;
    if (fwd == 0) continue;
    if (fwd <= stops_ - fwd) cw = std::max(cw, fwd);
    else ccw = std::max(ccw, stops_ - fwd);
  }
  bytes_ += bytes * static_cast<std::uint64_t>((cw > 0) + (ccw > 0));
  byte_hops_ += bytes * static_cast<std::uint64_t>(cw + ccw);
  Tick occ = occupancy(bytes);
  Tick end = t;
  if (cw > 0) end = std::max(end, send(t, src, cw, true, occ) + occ);
  if (ccw > 0) end = std::max(end, send(t, src, ccw, false, occ) + occ);
  return end;
}

}  // namespace dfsim

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
  set_link_calendar(cfg.ring.link_order == "arrival");  // "auto": the card decides (Card)
  mc_stops_ = cfg.memory.ring_stops;
  if (mc_stops_.empty()) {
    // Spread the controllers evenly around the ring.
    for (int ch = 0; ch < cfg.memory.channels; ++ch)
      mc_stops_.push_back(static_cast<int>((static_cast<long>(ch) * stops_) / cfg.memory.channels));
  }
  for (int& s : mc_stops_) s %= stops_;
  port_bytes_per_cycle_ = cfg.memory.port_bytes_per_cycle;
  port_request_ = ns_to_ticks(cfg.memory.port_request_ns);
  request_all_ = cfg.memory.port_request_scope != "stick_layout";
  for (int p = 0; p < cfg.memory.ports; ++p) {
    port_in_.emplace_back(&rec, rec.add_track("ring", "mem port " + std::to_string(p) + " rd", "ring"));
    port_out_.emplace_back(&rec, rec.add_track("ring", "mem port " + std::to_string(p) + " wr", "ring"));
  }
  // Walking order: cw_walk_[j] is the link leaving stop j mod stops clockwise; ccw_walk_[j]
  // the link leaving stop (stops - 1 - j) mod stops counter-clockwise.
  for (int j = 0; j < 2 * stops_; ++j) {
    cw_walk_.push_back(&cw_[j % stops_]);
    ccw_walk_.push_back(&ccw_[(2 * stops_ - 1 - j) % stops_]);
  }
  paths_.resize(static_cast<std::size_t>(stops_) * stops_);
  for (int src = 0; src < stops_; ++src)
    for (int dst = 0; dst < stops_; ++dst) {
      int fwd = (dst - src + stops_) % stops_;
      bool clockwise = fwd <= stops_ - fwd;  // ties go clockwise
      paths_[static_cast<std::size_t>(src) * stops_ + dst] = path(src, clockwise ? fwd : stops_ - fwd, clockwise);
    }
}

Ring::Path Ring::path(int src, int n, bool clockwise) const {
  Path p;
  p.links = clockwise ? &cw_walk_[src] : &ccw_walk_[stops_ - 1 - src];
  p.hops = n;
  return p;
}

void Ring::set_link_calendar(bool on) {
  for (auto* list : {&cw_, &ccw_})
    for (Resource& l : *list) l.set_calendar(on);
}

void Ring::set_port_backfill(bool on) {
  for (auto* list : {&port_in_, &port_out_})
    for (Resource& r : *list) r.set_backfill(on);
}

Tick Ring::memory_port(Tick t, int core, std::uint64_t bytes, bool to_memory, bool stick_layout) {
  if (port_in_.empty()) return t;
  std::size_t p = port_of(core);
  Resource& r = to_memory ? port_out_[p] : port_in_[p];
  Tick occ = port_occupancy(bytes, stick_layout);
  return r.reserve(t, occ) + occ;
}

Tick Ring::memory_port_multicast(Tick t, int route, std::uint64_t bytes, bool stick_layout) {
  const McRoute& r = mc_routes_[route];
  if (r.ports.empty()) return t;
  Tick occ = port_occupancy(bytes, stick_layout);
  Tick end = t;
  for (Resource* p : r.ports) end = std::max(end, p->reserve(t, occ) + occ);
  return end;
}

int Ring::hops(int src, int dst) const {
  int fwd = ((dst - src) % stops_ + stops_) % stops_;
  return std::min(fwd, stops_ - fwd);
}

Tick Ring::port_occupancy(std::uint64_t bytes, bool stick_layout) const {
  const Tick data = clk_.cycles((bytes + port_bytes_per_cycle_ - 1) / port_bytes_per_cycle_);
  return request_all_ || stick_layout ? std::max(data, port_request_) : data;
}

Tick Ring::occupancy(std::uint64_t bytes) const {
  return clk_.cycles((bytes + bytes_per_cycle_ - 1) / bytes_per_cycle_);
}

Tick Ring::send(Tick t, const Path& p, Tick occ) {
  Tick head = t;
  for (int h = 0; h < p.hops; ++h) head = p.links[h]->reserve(head, occ) + hop_;
  return head;
}

Tick Ring::transfer(Tick t, int src, int dst, std::uint64_t bytes) {
  bytes_ += bytes;
  const Path& p = paths_[static_cast<std::size_t>(src) * stops_ + dst];
  if (p.hops == 0) return t;
  byte_hops_ += bytes * static_cast<std::uint64_t>(p.hops);
  Tick occ = occupancy(bytes);
  return send(t, p, occ) + occ;
}

int Ring::multicast_route(int src, const std::vector<int>& dsts) {
  auto [it, fresh] = mc_index_.try_emplace({src, dsts}, static_cast<int>(mc_routes_.size()));
  if (!fresh) return it->second;
  // The farthest destination in each direction sets how far that direction's message runs.
  int cw = 0, ccw = 0;
  for (int d : dsts) {
    int fwd = ((d - src) % stops_ + stops_) % stops_;
    if (fwd == 0) continue;
    if (fwd <= stops_ - fwd) cw = std::max(cw, fwd);
    else ccw = std::max(ccw, stops_ - fwd);
  }
  McRoute r;
  r.cw = path(src, cw, true);
  r.ccw = path(src, ccw, false);
  if (!port_in_.empty()) {
    std::vector<char> used(port_in_.size(), 0);
    for (int c : dsts) {
      std::size_t p = port_of(c);
      if (!used[p]) r.ports.push_back(&port_in_[p]);
      used[p] = 1;
    }
  }
  mc_routes_.push_back(std::move(r));
  return it->second;
}

Tick Ring::multicast(Tick t, int src, const std::vector<int>& dsts, std::uint64_t bytes) {
  return multicast(t, multicast_route(src, dsts), bytes);
}

Tick Ring::multicast(Tick t, int route, std::uint64_t bytes) {
  const McRoute& r = mc_routes_[route];
  bytes_ += bytes * static_cast<std::uint64_t>((r.cw.hops > 0) + (r.ccw.hops > 0));
  byte_hops_ += bytes * static_cast<std::uint64_t>(r.cw.hops + r.ccw.hops);
  Tick occ = occupancy(bytes);
  Tick end = t;
  if (r.cw.hops > 0) end = std::max(end, send(t, r.cw, occ) + occ);
  if (r.ccw.hops > 0) end = std::max(end, send(t, r.ccw, occ) + occ);
  return end;
}

}  // namespace dfsim

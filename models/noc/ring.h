#pragma once
// Bidirectional ring joining the cores (stop i = core i) and the memory controllers (at
// configured stops). Shortest-direction routing, cut-through, per-link bandwidth and hop
// latency; each link is a resource, so transfers that share a link queue behind each other.
// Optionally (memory.ports) the controllers reach the ring through a few ports, each the only
// path for the off-chip traffic of a contiguous block of cores. Routes are computed once (per
// source and destination at set-up, per multicast set on first use) and reused by every message.
#include <cstdint>
#include <map>
#include <systemc>
#include <utility>
#include <vector>

#include "models/common/resource.h"
#include "sim/config/chip_config.h"

namespace dfsim {

class Ring : public sc_core::sc_module {
 public:
  explicit Ring(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  void init(const ChipConfig& cfg, Recorder& rec);
  // The memory ports serve bookings made ahead in the gaps they leave (Resource::set_backfill;
  // docs/performance.md, "The coarse memory model").
  void set_port_backfill(bool on);
  // The links serve bookings in the order the bursts arrive, however they are booked
  // (Resource::set_calendar), or in the order booked (ring.link_order; docs/models.md, "Ring").
  void set_link_calendar(bool on);

  // Moves `bytes` from stop `src` to stop `dst`, the head leaving at `t`.
  // Returns when the last byte has arrived at dst.
  Tick transfer(Tick t, int src, int dst, std::uint64_t bytes);
  // Multicast: moves `bytes` from `src` to every stop in `dsts` as one message per direction
  // (each destination takes the shorter way; a link is crossed once however many stops lie
  // beyond it). Returns when the last byte has arrived at the last destination.
  Tick multicast(Tick t, int src, const std::vector<int>& dsts, std::uint64_t bytes);
  // The route of a multicast from `src` to `dsts` (found or computed once): its id for the
  // calls below, which do what multicast() and memory_port() do for that set.
  int multicast_route(int src, const std::vector<int>& dsts);
  Tick multicast(Tick t, int route, std::uint64_t bytes);

  // Passes `bytes` of off-chip traffic of `core` through its memory port (memory.ports), the
  // head arriving at `t`: towards memory for writes, towards the cores for reads. Returns when
  // the last byte has passed (t itself when there are no ports). `stick_layout`: the request
  // is to a tensor in the card's stick layout (port_occupancy).
  Tick memory_port(Tick t, int core, std::uint64_t bytes, bool to_memory, bool stick_layout);
  // The same for a multicast read along `route` (multicast_route): the bytes pass each port
  // that serves one of its destinations once; returns when the last port has passed them.
  Tick memory_port_multicast(Tick t, int route, std::uint64_t bytes, bool stick_layout);
  int memory_ports() const { return static_cast<int>(port_in_.size()); }

  int stops() const { return stops_; }
  int hops(int src, int dst) const;
  int controller_stop(int channel) const { return mc_stops_[channel % mc_stops_.size()]; }
  std::uint64_t bytes_carried() const { return bytes_; }
  // Bytes times links crossed (a multicast crosses each link once): what the ring's energy scales with.
  std::uint64_t byte_hops() const { return byte_hops_; }
  Tick occupancy(std::uint64_t bytes) const;
  // How long one request of `bytes` holds a memory port in its direction: its bytes at the
  // port's width, but at least memory.port_request_ns (the port's request rate) when the
  // rate applies to it (memory.port_request_scope: every request, or `stick_layout` ones).
  Tick port_occupancy(std::uint64_t bytes, bool stick_layout) const;

 private:
  int stops_ = 1;
  ClockDomain clk_;
  int bytes_per_cycle_ = 128;
  Tick hop_ = 0;
  std::vector<Resource> cw_, ccw_;   // cw_[i]: i -> i+1, ccw_[i]: i -> i-1
  std::vector<int> mc_stops_;
  std::vector<Resource> port_in_, port_out_;   // per memory port: reads to cores, writes to memory
  int port_bytes_per_cycle_ = 64;
  Tick port_request_ = 0;
  bool request_all_ = true;  // memory.port_request_scope "all"; else stick-layout requests only
  std::uint64_t bytes_ = 0;
  std::uint64_t byte_hops_ = 0;
  // A message's way in one direction: the links it crosses, in order.
  struct Path {
    Resource* const* links = nullptr;
    int hops = 0;
  };
  // Multicast routes: hops each way from the source, and the memory ports of the destinations.
  struct McRoute {
    Path cw, ccw;
    std::vector<Resource*> ports;  // read direction (towards the cores), each port once
  };
  // Links in walking order, twice round, so that any path is a contiguous run of pointers.
  std::vector<Resource*> cw_walk_, ccw_walk_;
  std::vector<Path> paths_;  // per (src, dst): src * stops_ + dst
  std::vector<McRoute> mc_routes_;
  std::map<std::pair<int, std::vector<int>>, int> mc_index_;
  Path path(int src, int n, bool clockwise) const;
  std::size_t port_of(int core) const {
    return static_cast<std::size_t>(core) * port_in_.size() / static_cast<std::size_t>(stops_);
  }
  // Sends one message along `p`; returns when its head arrives at the last stop.
  Tick send(Tick t, const Path& p, Tick occ);
};

}  // namespace dfsim

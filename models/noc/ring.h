#pragma once
// Bidirectional ring joining the cores (stop i = core i) and the memory controllers (at
// configured stops). Shortest-direction routing, cut-through, per-link bandwidth and hop
// latency; each link is a resource, so transfers that share a link queue behind each other.
#include <cstdint>
#include <systemc>
#include <vector>

#include "models/common/resource.h"
#include "sim/config/chip_config.h"

namespace dfsim {

class Ring : public sc_core::sc_module {
 public:
  explicit Ring(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  void init(const ChipConfig& cfg, Recorder& rec);

  // Moves `bytes` from stop `src` to stop `dst`, the head leaving at `t`.
  // Returns when the last byte has arrived at dst.
  Tick transfer(Tick t, int src, int dst, std::uint64_t bytes);
  // Multicast: moves `bytes` from `src` to every stop in `dsts` as one message per direction
  // (each destination takes the shorter way; a link is crossed once however many stops lie
  // beyond it). Returns when the last byte has arrived at the last destination.
  Tick multicast(Tick t, int src, const std::vector<int>& dsts, std::uint64_t bytes);

  int stops() const { return stops_; }
  int hops(int src, int dst) const;
  int controller_stop(int channel) const { return mc_stops_[channel % mc_stops_.size()]; }
  std::uint64_t bytes_carried() const { return bytes_; }
  Tick occupancy(std::uint64_t bytes) const;

 private:
  int stops_ = 1;
  ClockDomain clk_;
  int bytes_per_cycle_ = 128;
  Tick hop_ = 0;
  std::vector<Resource> cw_, ccw_;   // cw_[i]: i -> i+1, ccw_[i]: i -> i-1
  std::vector<int> mc_stops_;
  std::uint64_t bytes_ = 0;
  // Sends one message `n` hops from `src` in one direction; returns when its head arrives.
  Tick send(Tick t, int src, int n, bool clockwise, Tick occ);
};

}  // namespace dfsim

#include "models/pcie/pcie_fabric.h"

#include <cmath>

namespace dfsim {

PcieFabric::PcieFabric(const ChipConfig& cfg, Recorder& rec)
    : cards_(cfg.system.cards),
      per_drawer_(cfg.system.cards_per_drawer),
      clk_(cfg.core.clock_mhz),
      // GB/s = bytes per ns; per core cycle: x 1000 / MHz.
      link_bytes_per_cycle_(cfg.system.pcie.link_gbps * cfg.system.pcie.efficiency * 1000.0 / cfg.core.clock_mhz),
      uplink_bytes_per_cycle_(cfg.system.pcie.uplink_gbps * cfg.system.pcie.efficiency * 1000.0 / cfg.core.clock_mhz),
      latency_(clk_.cycles(static_cast<std::uint64_t>(std::ceil(cfg.system.pcie.latency_ns * cfg.core.clock_mhz / 1000.0 - 1e-9)))) {
  auto add = [&](const std::string& name, double gbps) {
    links_.push_back(Link{name, Resource(&rec, rec.add_track("pcie", name, "pcie")), 0, gbps});
  };
  for (int c = 0; c < cards_; ++c) {
    add("card " + std::to_string(c) + " up", cfg.system.pcie.link_gbps);
    add("card " + std::to_string(c) + " down", cfg.system.pcie.link_gbps);
  }
  for (int d = 0; d < cfg.system.drawers(); ++d) {
    add("drawer " + std::to_string(d) + " uplink up", cfg.system.pcie.uplink_gbps);
    add("drawer " + std::to_string(d) + " uplink down", cfg.system.pcie.uplink_gbps);
  }
}

Tick PcieFabric::duration(std::uint64_t bytes, bool uplink) const {
  double per_cycle = uplink ? uplink_bytes_per_cycle_ : link_bytes_per_cycle_;
  return clk_.cycles(static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / per_cycle - 1e-9)));
}

Tick PcieFabric::transfer(Tick t, int src, int dst, std::uint64_t bytes) {
  std::vector<Link*> path;
  if (src != kHost) path.push_back(&up(src));
  bool via_host = src == kHost || dst == kHost || drawer_of(src) != drawer_of(dst);
  if (via_host && src != kHost) path.push_back(&uplink(drawer_of(src), true));
  if (via_host && dst != kHost) path.push_back(&uplink(drawer_of(dst), false));
  if (dst != kHost) path.push_back(&down(dst));
  // Cut-through: the head enters each link once it is free; the tail leaves the last one
  // its duration later; the latency (descriptor, switch, completion) is added once.
  Tick start = t, end = t;
  for (Link* l : path) {
    bool is_uplink = l >= &links_[static_cast<std::size_t>(2 * cards_)];
    Tick d = duration(bytes, is_uplink);
    start = l->res.reserve(start, d);
    end = std::max(end, start + d);
    l->bytes += bytes;
  }
  sent_ += bytes;
  return end + latency_;
}

std::uint64_t PcieFabric::bytes_sent() const { return sent_; }

}  // namespace dfsim

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

PcieFabric::KernelTraffic& PcieFabric::traffic(int kernel) {
  if (static_cast<std::size_t>(kernel) >= by_kernel_.size()) by_kernel_.resize(static_cast<std::size_t>(kernel) + 1);
  KernelTraffic& k = by_kernel_[static_cast<std::size_t>(kernel)];
  if (k.link_bytes.empty()) k.link_bytes.assign(links_.size(), 0);
  return k;
}

std::vector<std::size_t> pcie_route(int cards, int per_drawer, int src, int dst) {
  const auto up = [](int c) { return static_cast<std::size_t>(2 * c); };
  const auto uplink = [&](int drawer, bool to_host) {
    return static_cast<std::size_t>(2 * cards + 2 * drawer + (to_host ? 0 : 1));
  };
  std::vector<std::size_t> path;
  if (src != PcieFabric::kHost) path.push_back(up(src));
  bool via_host = src == PcieFabric::kHost || dst == PcieFabric::kHost || src / per_drawer != dst / per_drawer;
  if (via_host && src != PcieFabric::kHost) path.push_back(uplink(src / per_drawer, true));
  if (via_host && dst != PcieFabric::kHost) path.push_back(uplink(dst / per_drawer, false));
  if (dst != PcieFabric::kHost) path.push_back(up(dst) + 1);  // its link down
  return path;
}

Tick PcieFabric::transfer(Tick t, int src, int dst, std::uint64_t bytes, int kernel) {
  // Cut-through: the head enters each link once it is free; the tail leaves the last one
  // its duration later; the latency (descriptor, switch, completion) is added once.
  Tick start = t, end = t;
  KernelTraffic* k = kernel >= 0 ? &traffic(kernel) : nullptr;
  if (k) k->sent += bytes;
  for (std::size_t i : pcie_route(cards_, per_drawer_, src, dst)) {
    Link& l = links_[i];
    Tick d = duration(bytes, pcie_is_uplink(cards_, i));
    start = l.res.reserve(start, d);
    end = std::max(end, start + d);
    l.bytes += bytes;
    if (k) k->link_bytes[i] += bytes;
  }
  sent_ += bytes;
  return end + latency_;
}

std::uint64_t PcieFabric::bytes_sent() const { return sent_; }

}  // namespace dfsim

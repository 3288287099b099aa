#pragma once
// The PCIe fabric of a system: each card's link to its drawer's switch (one Resource per
// direction) and each switch's uplink to the host, shared by the drawer's cards. A transfer
// crosses its links cut-through: it holds each for bytes / rate, in arrival order.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/resource.h"
#include "sim/config/chip_config.h"

namespace dfsim {

class PcieFabric {
 public:
  static constexpr int kHost = -1;  // the host as a transfer's source or destination

  PcieFabric(const ChipConfig& cfg, Recorder& rec);

  // Moves `bytes` from `src` to `dst` (card indices or kHost), starting at `t`: card to card in
  // one drawer through its switch (peer to peer), across drawers through the host.
  // Returns when the last byte has arrived.
  Tick transfer(Tick t, int src, int dst, std::uint64_t bytes);
  Tick latency() const { return latency_; }
  Tick duration(std::uint64_t bytes, bool uplink) const;  // time one link is held for `bytes`

  // One direction of one link: its name, the bytes it carried and its busy time.
  struct Link {
    std::string name;        // "card 1 up" (card to switch), "drawer 0 uplink down" (host to switch)
    Resource res;
    std::uint64_t bytes = 0;
    double nominal_gbps = 0; // system.pcie.link_gbps or uplink_gbps (before efficiency): the roofline's rate
  };
  const std::vector<Link>& links() const { return links_; }
  std::uint64_t bytes_sent() const;  // every byte a card or the host put on the fabric, once

 private:
  int drawer_of(int card) const { return card / per_drawer_; }
  Link& up(int card) { return links_[static_cast<std::size_t>(2 * card)]; }
  Link& down(int card) { return links_[static_cast<std::size_t>(2 * card + 1)]; }
  Link& uplink(int drawer, bool to_host) {
    return links_[static_cast<std::size_t>(2 * cards_ + 2 * drawer + (to_host ? 0 : 1))];
  }

  int cards_, per_drawer_;
  ClockDomain clk_;
  double link_bytes_per_cycle_, uplink_bytes_per_cycle_;
  Tick latency_;
  std::vector<Link> links_;
  std::uint64_t sent_ = 0;
};

}  // namespace dfsim

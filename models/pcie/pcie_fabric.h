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

// The links a transfer from `src` to `dst` (card indices, or -1 for the host) crosses in a
// system of `cards` cards, `per_drawer` to a drawer, as indices into PcieFabric::links(): card c's
// link up 2c and down 2c + 1, drawer d's uplink up 2 cards + 2d and down 2 cards + 2d + 1. Card
// to card in one drawer through its switch, across drawers or to and from the host through the
// uplinks. Pure arithmetic: the compile report's PCIe bound routes the same way.
std::vector<std::size_t> pcie_route(int cards, int per_drawer, int src, int dst);
inline bool pcie_is_uplink(int cards, std::size_t link) { return link >= static_cast<std::size_t>(2 * cards); }

class PcieFabric {
 public:
  static constexpr int kHost = -1;  // the host as a transfer's source or destination

  PcieFabric(const ChipConfig& cfg, Recorder& rec);

  // Moves `bytes` from `src` to `dst` (card indices or kHost), starting at `t`: card to card in
  // one drawer through its switch (peer to peer), across drawers through the host.
  // Returns when the last byte has arrived. `kernel` (the graph's index of the kernel whose
  // task moves them, -1 for none) is where its bytes are tallied (kernel_traffic).
  Tick transfer(Tick t, int src, int dst, std::uint64_t bytes, int kernel = -1);
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

  // What one kernel's transfers put on the fabric and streamed through the cards' memories:
  // the roofline of its group in the model report has a PCIe term and a memory term from them.
  struct KernelTraffic {
    std::vector<std::uint64_t> link_bytes;  // per link, as links()
    std::uint64_t sent = 0;                 // each transfer once
    std::uint64_t memory_read = 0, memory_written = 0;  // off-chip, by the ports' DMAs for it
  };
  // Bytes a port's DMA streams from (`read`) and to (`written`) off-chip memory for `kernel`:
  // a collective step's send, receive and reducing read; a host transfer's.
  void tally_memory(int kernel, std::uint64_t read, std::uint64_t written) {
    if (kernel < 0) return;
    traffic(kernel).memory_read += read;
    traffic(kernel).memory_written += written;
  }
  // Indexed by kernel; kernels that moved nothing have empty entries (or none at the end).
  const std::vector<KernelTraffic>& kernel_traffic() const { return by_kernel_; }

 private:
  KernelTraffic& traffic(int kernel);

  int cards_, per_drawer_;
  ClockDomain clk_;
  double link_bytes_per_cycle_, uplink_bytes_per_cycle_;
  Tick latency_;
  std::vector<Link> links_;
  std::uint64_t sent_ = 0;
  std::vector<KernelTraffic> by_kernel_;
};

}  // namespace dfsim

#pragma once
// The DMA behind a card's PCIe port: moves a transfer's bytes between the card's off-chip
// memory and the link in bursts (core.dma's burst size), one burst per burst-time of the link
// from the transfer's start, through the card's memory model like a core's DMA does, so PCIe
// traffic and the card's kernels share its DRAM channels. Tells its caller when the last
// burst is done. One SC_METHOD for every stream in flight on the card.
#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>
#include <vector>

#include "models/memory/memory.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

class LinkDma : public sc_core::sc_module, public MemClient {
 public:
  LinkDma(sc_core::sc_module_name n, const ChipConfig& cfg, IMemory& mem, const std::vector<std::uint64_t>& hbm_base);

  // Reads (write: writes) `bytes` of region `r`'s buffer, from its start on (wrapping around
  // within the region when `bytes` is more), one burst every `burst_ticks` from `start`
  // (>= now); calls done(t) once, t the completion of the last burst (start with memory.ideal,
  // or for 0 bytes).
  void stream(const Region& r, std::uint64_t bytes, bool write, Tick start, Tick burst_ticks,
              std::function<void(Tick)> done);
  std::uint64_t burst_bytes() const { return burst_; }
  void mem_done(std::uint64_t tag, Tick t) override;

 private:
  struct Stream {
    std::uint64_t base = 0, span = 1, pos = 0, left = 0;  // the region, the next offset in it
    bool write = false, active = false;
    Tick next = 0, every = 0, last = 0;
    int outstanding = 0;
    std::function<void(Tick)> done;
  };
  void issue();

  IMemory& mem_;
  const std::vector<std::uint64_t>& hbm_base_;
  std::uint64_t burst_;
  bool ideal_;
  std::deque<Stream> streams_;       // by tag; a deque: a callback may add one while another is referenced
  std::vector<std::uint64_t> free_;  // tags of finished streams
  sc_core::sc_event ev_;
};

}  // namespace dfsim

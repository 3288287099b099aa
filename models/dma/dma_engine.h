#pragma once
// DMA engine (one queue) of one core: cuts a transfer into bursts of at most burst_sticks
// sticks along the rows of its off-chip side, issues one request every issue_cycles (plus
// stick_issue_cycles per stick) with at most max_outstanding in flight, and moves each burst
// through memory, ring and LX port. A core has one such queue, or two (core.dma.queues):
// inbound and outbound, each with its own request generator, running concurrently.
// A load with several LX writes is a multicast: each burst is read once and the ring
// delivers it to every destination core.
#include <algorithm>
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "models/common/task_unit.h"
#include "models/memory/memory.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

class Ring;
class LxScratchpad;

// Bytes a DMA engine moved, by direction.
struct DmaStats {
  std::uint64_t hbm_to_lx = 0, lx_to_hbm = 0, lx_to_lx = 0, hbm_to_hbm = 0;
  std::uint64_t bursts = 0, sticks = 0;
  std::uint64_t multicast_extra = 0;  // LX bytes delivered by multicast beyond the first copy
  Tick burst_time = 0;                // sum over bursts of issue -> completion
  int max_outstanding = 0;            // most bursts in flight at once
  DmaStats& operator+=(const DmaStats& o) {
    burst_time += o.burst_time;
    max_outstanding = std::max(max_outstanding, o.max_outstanding);
    hbm_to_lx += o.hbm_to_lx;
    lx_to_hbm += o.lx_to_hbm;
    lx_to_lx += o.lx_to_lx;
    hbm_to_hbm += o.hbm_to_hbm;
    bursts += o.bursts;
    sticks += o.sticks;
    multicast_extra += o.multicast_extra;
    return *this;
  }
};

class DmaEngine : public TaskUnit, public MemClient {
 public:
  DmaEngine(sc_core::sc_module_name n, TaskHost& s, Recorder& r, const ChipConfig& cfg, int core,
            IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& lx, const std::vector<std::uint64_t>& hbm_base,
            const std::string& track_name = "dma");
  const DmaStats& stats() const { return stats_; }
  // True for a transfer that reads LX (LX->HBM, LX->LX): the outbound queue's work.
  static bool outbound(const KernelGraph& g, const TaskInstance& t);
  void mem_done(std::uint64_t tag, Tick t) override;

 private:
  // What remains of a burst after its memory access: the leg to LX, a second (write) access,
  // or nothing.
  struct Pending {
    enum class Next { to_lx, write_hbm, none } next = Next::none;
    int mc = 0, core = 0;
    int fanout = -1;                   // multicast: index into fanouts_ (then `core` is unused)
    std::uint32_t bytes = 0;
    bool stick_layout = false;         // the HBM tensor is in the card's stick layout (Ring::port_occupancy)
    std::uint64_t write_addr = 0;
    Tick issued = 0;
  };
  // Where the bytes of the current task go, burst by burst.
  struct Transfer {
    Region src, dst;
    int fanout = -1;                   // multicast load: index into fanouts_
    bool src_hbm = false, dst_hbm = false;
    // The side whose rows set the burst boundaries: the HBM regions of a load (reads) or a
    // store (writes), several for a gather or scatter, moved one after another; else src.
    std::vector<Region> parts;
    std::vector<char> stick;           // per part: its buffer is in the card's stick layout (Ring::port_occupancy)
    std::size_t part = 0;
    std::uint64_t row = 0, row_off = 0, moved = 0, total = 0;
    std::uint64_t bursts_left = 0;     // issued but not yet complete, plus not yet issued
  };
  void start(int inst) override;
  void step();
  std::uint32_t issue_burst(Tick t);  // returns the burst's bytes
  void burst_done(Tick t, Tick issued);
  std::uint64_t new_slot(const Pending& p);
  int fanout_of(const InstanceRegions& writes);
  std::uint64_t hbm_addr(const Region& r, std::uint64_t row, std::uint64_t off) const;

  const ChipConfig& cfg_;
  IMemory& mem_;
  Ring& ring_;
  std::vector<LxScratchpad*>& lx_;
  const std::vector<std::uint64_t>& hbm_base_;
  ClockDomain clk_;
  std::uint64_t burst_bytes_;
  int track_;
  int current_ = -1;
  Transfer xfer_;
  Tick next_issue_ = 0;
  int outstanding_ = 0;
  std::priority_queue<Tick, std::vector<Tick>, std::greater<Tick>> completions_;
  std::vector<Pending> slots_;
  std::vector<std::uint64_t> free_slots_;
  std::vector<std::vector<int>> fanouts_;  // destination core sets of multicast loads seen so far
  std::vector<int> fanout_routes_;         // per (fanout, source stop): the ring's route id, -1 until used
  Tick lookahead_ = 0;
  bool in_step_ = false;
  sc_core::sc_event step_ev_;
  DmaStats stats_;
};

}  // namespace dfsim

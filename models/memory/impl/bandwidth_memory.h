#pragma once
// "bandwidth": a coarse, opt-in stand-in for "lpddr5" that is several times faster to
// simulate. The same channels and address map (memory.lpddr5.*), but each channel is one
// server booked in closed form when a request is sent (no events); DMA engines book ahead, so
// a request that arrives before the latest booking may fill the idle gap that booking left
// (one gap per channel is remembered). A piece
// occupies it for its column accesses at tCCD (ECC columns included), stretched by the share
// of time refresh takes; reads and writes that mix on a channel pay the bus turnarounds of
// one write drain (tRTW + tWTR) spread over the writes of a drain. No banks, rows or
// controller queues. Its error against "lpddr5" is in docs/performance.md.
#include <vector>

#include "models/memory/impl/lpddr5_memory.h"
#include "models/memory/memory.h"

namespace dfsim {

class BandwidthMemory : public IMemory {
 public:
  explicit BandwidthMemory(sc_core::sc_module_name n) : IMemory(n) {}
  void init(const ChipConfig& cfg, Recorder& rec) override;
  void send(MemRequest req) override;
  int channel_of(std::uint64_t addr) const override { return map_.channel(addr); }
  int channels() const override { return static_cast<int>(chans_.size()); }
  const MemStats& stats() const override { return total_; }
  std::vector<MemStats> channel_stats() const override;
  bool tells_completion_at_send() const override { return true; }

 private:
  struct Channel {
    int track = -1;
    Tick free_at = 0;                 // end of the latest booking
    Tick hole_start = 0, hole_end = 0;  // the idle gap the latest booking left before it
    Tick last_read = 0;      // latest read arrival
    bool read_seen = false;
    MemStats stats;
  };
  Lpddr5Config t_;
  ClockDomain clk_;
  Lpddr5AddressMap map_;
  std::vector<Channel> chans_;
  MemStats total_;
  std::vector<Tick> occupy_;  // bus time of a piece by its column accesses, refresh share included
  Tick occupy_block_ = 0;     // the same for a whole interleave block
  Tick turn_per_write_ = 0;   // turnaround time charged to each write while reads mix in
  Tick mix_window_ = 0;       // reads and writes this close together count as mixed
  Tick read_latency_ = 0, write_latency_ = 0;
  Recorder* rec_ = nullptr;
  // Start of a piece of `occupy` arriving at `arrival`: in the channel's gap if it fits, else
  // after the latest booking.
  Tick book(Channel& ch, Tick arrival, Tick occupy);
  // Bus time of `n` bytes starting `in_block` bytes into an interleave block.
  Tick occupy_of(std::uint64_t in_block, std::uint64_t n) const;
};

}  // namespace dfsim

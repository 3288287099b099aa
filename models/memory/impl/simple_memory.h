#pragma once
// "simple": channels interleaved by address, each a bus served in arrival order at
// data_rate x bus width, with a fixed access latency and a penalty whenever the bus turns
// between reads and writes. The first-version model; LPDDR5 bank timing comes later.
#include <vector>

#include "models/common/resource.h"
#include "models/memory/memory.h"

namespace dfsim {

class SimpleMemory : public IMemory {
 public:
  explicit SimpleMemory(sc_core::sc_module_name n) : IMemory(n) {}
  void init(const ChipConfig& cfg, Recorder& rec) override;
  void send(MemRequest req) override;
  int channel_of(std::uint64_t addr) const override;
  int channels() const override { return static_cast<int>(chans_.size()); }
  const MemStats& stats() const override { return total_; }
  std::vector<MemStats> channel_stats() const override;
  bool tells_completion_at_send() const override { return true; }

  // Time the bus is occupied by `bytes` (rounded up to whole bus beats).
  Tick transfer_time(std::uint32_t bytes) const;

 private:
  // One channel: its bus and what it last did.
  struct Channel {
    Resource bus;
    bool last_write = false;
    bool used = false;
    MemStats stats;
  };
  ClockDomain clk_;
  std::uint64_t interleave_ = 4096;
  double bytes_per_cycle_ = 32;
  Tick latency_ = 0, turnaround_ = 0;
  std::vector<Channel> chans_;
  MemStats total_;
};

}  // namespace dfsim

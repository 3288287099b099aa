#include "models/memory/impl/simple_memory.h"

#include <cmath>

namespace dfsim {

DFSIM_REGISTER_MEMORY(SimpleMemory, "simple");

void SimpleMemory::init(const ChipConfig& cfg, Recorder& rec) {
  const MemoryConfig& m = cfg.memory;
  clk_ = ClockDomain(m.clock_mhz);
  interleave_ = m.interleave_bytes;
  // bytes per memory-clock cycle = bus bytes x transfers per clock
  bytes_per_cycle_ = (m.bus_bits / 8.0) * (m.data_rate_mtps / m.clock_mhz);
  latency_ = clk_.cycles(m.latency_cycles);
  turnaround_ = clk_.cycles(m.turnaround_cycles);
  chans_.resize(m.channels);
  for (int i = 0; i < m.channels; ++i)
    chans_[i].bus = Resource(&rec, rec.add_track("memory", "ch " + std::to_string(i), "dram"));
}

Tick SimpleMemory::transfer_time(std::uint32_t bytes) const {
  auto cycles = static_cast<std::uint64_t>(std::ceil(bytes / bytes_per_cycle_));
  return clk_.cycles(cycles);
}

int SimpleMemory::channel_of(std::uint64_t addr) const {
  return static_cast<int>((addr / interleave_) % chans_.size());
}

void SimpleMemory::send(MemRequest req) {
  Channel& ch = chans_[channel_of(req.addr)];
  Tick arrival = req.issued;
  // A change of direction idles the bus for the turnaround before this burst.
  if (ch.used && ch.last_write != req.write) {
    arrival = std::max(arrival, ch.bus.free_at() + turnaround_);
    ++ch.stats.turnarounds;
    ++total_.turnarounds;
  }
  ch.used = true;
  ch.last_write = req.write;
  Tick start = ch.bus.reserve(arrival, transfer_time(req.bytes));
  Tick done = start + transfer_time(req.bytes) + latency_;
  for (MemStats* s : {&ch.stats, &total_}) {
    if (req.write) {
      s->bytes_written += req.bytes;
      ++s->writes;
    } else {
      s->bytes_read += req.bytes;
      ++s->reads;
    }
  }
  count_bytes(done, req.bytes);
  req.client->mem_done(req.tag, done);
}

std::vector<MemStats> SimpleMemory::channel_stats() const {
  std::vector<MemStats> out;
  for (const auto& c : chans_) out.push_back(c.stats);
  return out;
}

}  // namespace dfsim

#include "models/memory/impl/bandwidth_memory.h"

#include <algorithm>
#include <cmath>

namespace dfsim {

DFSIM_REGISTER_MEMORY(BandwidthMemory, "bandwidth");

void BandwidthMemory::init(const ChipConfig& cfg, Recorder& rec) {
  const MemoryConfig& m = cfg.memory;
  t_ = m.lpddr5;
  clk_ = ClockDomain(m.clock_mhz);
  map_.init(m);
  int burst = std::max(1, static_cast<int>(std::llround(t_.burst_length * m.clock_mhz / m.data_rate_mtps)));
  double refresh_share = t_.trefi > 0 ? static_cast<double>(t_.trp + t_.trfc) / t_.trefi : 0.0;
  double column = static_cast<double>(clk_.cycles(std::max(t_.tccd_l, burst))) / (1.0 - refresh_share);
  // Column accesses of a piece: at most a block's worth, one more if unaligned, plus ECC.
  std::size_t most = map_.block_bytes() / map_.column_bytes() + 2;
  most += t_.inline_ecc > 0 ? (most + t_.inline_ecc - 1) / t_.inline_ecc : 0;
  for (std::size_t c = 0; c <= most; ++c)
    occupy_.push_back(static_cast<Tick>(std::llround(column * static_cast<double>(c))));
  occupy_block_ = occupy_of(0, map_.block_bytes());
  int drain = std::max(1, t_.write_high - t_.write_low);
  turn_per_write_ = clk_.cycles(t_.trtw + t_.twtr) / drain;
  mix_window_ = clk_.cycles(t_.trefi);
  read_latency_ = clk_.cycles(t_.trcd + t_.rl + burst + t_.frontend_cycles);
  write_latency_ = clk_.cycles(t_.trcd + t_.wl + burst + t_.frontend_cycles);
  rec_ = &rec;
  chans_.resize(m.channels);
  for (int i = 0; i < m.channels; ++i) chans_[i].track = rec.add_track("memory", "ch " + std::to_string(i), "dram");
}

Tick BandwidthMemory::book(Channel& ch, Tick arrival, Tick occupy) {
  Tick start = std::max(arrival, ch.hole_start);
  if (arrival < ch.hole_end && start + occupy <= ch.hole_end) {
    ch.hole_start = start + occupy;  // what lies before `start` stays idle
    rec_->busy_backfill(ch.track, start, start + occupy);
    return start;
  }
  start = std::max(arrival, ch.free_at);
  if (start > ch.free_at) {
    ch.hole_start = ch.free_at;
    ch.hole_end = start;
  }
  ch.free_at = start + occupy;
  rec_->busy(ch.track, start, ch.free_at);
  return start;
}

Tick BandwidthMemory::occupy_of(std::uint64_t in_block, std::uint64_t n) const {
  const std::uint32_t colb = map_.column_bytes();
  std::uint64_t cols = (in_block + n + colb - 1) / colb - in_block / colb;
  if (t_.inline_ecc > 0) cols += (cols + t_.inline_ecc - 1) / t_.inline_ecc;
  return occupy_[cols];
}

void BandwidthMemory::send(MemRequest req) {
  const std::uint64_t block = map_.block_bytes();
  const Tick latency = req.write ? write_latency_ : read_latency_;
  Tick done = req.issued;
  std::uint64_t addr = req.addr, left = req.bytes, in_block = map_.block_offset(addr);
  int chan = -1;
  while (left > 0) {
    std::uint64_t n = std::min(left, block - in_block);
    chan = chan < 0 ? map_.channel(addr) : map_.next_channel(chan, addr);
    Channel& ch = chans_[chan];
    Tick occupy = in_block == 0 && n == block ? occupy_block_ : occupy_of(in_block, n);
    if (req.write) {
      if (ch.read_seen && req.issued < ch.last_read + mix_window_) {
        occupy += turn_per_write_;
        ++ch.stats.turnarounds;
        ++total_.turnarounds;
      }
      ch.stats.bytes_written += n;
      ++ch.stats.writes;
    } else {
      ch.last_read = std::max(ch.last_read, req.issued);
      ch.read_seen = true;
      ch.stats.bytes_read += n;
      ++ch.stats.reads;
    }
    Tick end = book(ch, req.issued, occupy) + occupy + latency;
    count_bytes(end, n);
    done = std::max(done, end);
    addr += n;
    left -= n;
    in_block = 0;
  }
  (req.write ? total_.bytes_written : total_.bytes_read) += req.bytes;
  ++(req.write ? total_.writes : total_.reads);
  req.client->mem_done(req.tag, done);
}

std::vector<MemStats> BandwidthMemory::channel_stats() const {
  std::vector<MemStats> out;
  for (const auto& c : chans_) out.push_back(c.stats);
  return out;
}

}  // namespace dfsim

#pragma once
// "lpddr5": LPDDR5 channels with bank groups, banks and open-page row buffers behind
// per-channel FR-FCFS controllers (read and write queues, write drain between watermarks,
// all-bank refresh). Event-driven: each channel controller wakes only when it can issue its
// next request; a request's column accesses are timed in closed form, never cycle by cycle.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/memory/impl/lpddr5_piece_queue.h"
#include "models/memory/memory.h"

namespace dfsim {

// Where a piece of a request lands: channel, bank (flat index), row and first column.
struct DramCoord {
  int channel = 0, bank_group = 0, bank = 0;  // bank: flat index bank_group * banks_per_group + b
  std::uint64_t row = 0;
  std::uint32_t column = 0;                   // in column accesses (burst_length beats)
};

// Division and remainder by a number fixed at set-up: shifts and masks when it is a power of
// two (every shipped config), else the hardware divide. Same results either way.
class FixedDivisor {
 public:
  FixedDivisor(std::uint64_t n = 1) { set(n); }
  void set(std::uint64_t n) {
    n_ = n;
    pow2_ = n != 0 && (n & (n - 1)) == 0;
    shift_ = 0;
    while (pow2_ && (std::uint64_t(1) << shift_) < n) ++shift_;
  }
  std::uint64_t div(std::uint64_t x) const { return pow2_ ? x >> shift_ : x / n_; }
  std::uint64_t mod(std::uint64_t x) const { return pow2_ ? x & (n_ - 1) : x % n_; }
  std::uint64_t value() const { return n_; }

 private:
  std::uint64_t n_ = 1;
  bool pow2_ = true;
  int shift_ = 0;
};

// Decodes addresses with a configurable field order (e.g. "RoCoBaBgCh", MSB first): the
// channel interleave block is the unit below the mapped fields.
class Lpddr5AddressMap {
 public:
  void init(const MemoryConfig& m);
  DramCoord decode(std::uint64_t addr) const;
  // decode(addr) for the interleave block that follows the one `prev` decodes: when the
  // channel is the lowest field and no carry leaves it, only the channel moves (a request's
  // pieces); else a full decode.
  DramCoord decode_next(const DramCoord& prev, std::uint64_t addr) const;
  int channel(std::uint64_t addr) const;  // decode(addr).channel, without the other fields
  // channel(addr) for the block that follows one on channel `prev` (decode_next's fast case).
  int next_channel(int prev, std::uint64_t addr) const {
    if (!channel_lowest_ || channels_.mod(block_.div(addr)) == 0) return channel(addr);
    return static_cast<int>(channels_.mod(static_cast<std::uint64_t>(prev) + 1));
  }
  std::uint64_t block_bytes() const { return block_.value(); }
  std::uint64_t block_offset(std::uint64_t addr) const { return block_.mod(addr); }
  std::uint64_t blocks(std::uint64_t bytes) const { return block_.div(bytes); }
  bool channel_lowest() const { return channel_lowest_; }
  std::uint32_t columns_per_block() const { return cols_per_block_; }
  std::uint32_t column_bytes() const { return col_bytes_; }

 private:
  enum class Field { ro, co, ba, bg, ch };
  int channel_digit(std::uint64_t& idx) const;
  std::vector<Field> lsb_first_;
  FixedDivisor block_{512};
  std::uint32_t col_bytes_ = 128;
  std::uint32_t cols_per_block_ = 4;
  FixedDivisor channels_{8}, bgs_{4}, banks_{4}, cols_per_row_blocks_{8};
  bool xor_ = true;
  bool channel_xor_ = true;
  bool channel_lowest_ = false;  // the channel is the lowest field (decode_next's fast case)
};

class Lpddr5Memory;

// The controller's timings in ticks, converted once from memory cycles.
struct Lpddr5Ticks {
  Tick tras = 0, trp = 0, trcd = 0, trrd = 0, tfaw = 0, twr = 0, trtw = 0, twtr = 0;
  Tick tccd_s = 0, tccd_l_extra = 0;   // tCCD_S, and what tCCD_L adds in one bank group
  Tick tccd_l = 0;
  Tick read_latency = 0, write_latency = 0;  // RL, WL
  Tick burst = 0;                            // data-bus time of one column access
  Tick column_step = 0;                      // between column commands of one piece
  Tick frontend = 0;
  Tick refresh = 0;                          // tRP + tRFC
  Tick trefi = 0;
};

// One channel: its banks, queues and controller. Not a process of its own: the memory's one
// process runs every channel whose wake-up is due (Lpddr5Memory::run).
class Lpddr5Channel {
 public:
  Lpddr5Channel(Lpddr5Memory& mem, int index, Recorder& rec);
  void enqueue(const QueuedPiece& p, bool write);
  MemStats stats;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0, refreshes = 0;
  std::uint64_t max_queue = 0;
  Tick wake_at = kNever;  // the earliest wake-up asked for (kNever: none)
  // Serves every decision due by `now` + sim.memory_lookahead_ns; asks for its next wake-up.
  void run(Tick now);
  static constexpr Tick kNever = ~Tick(0);
  // Takes `o`'s state and counters (not its name, track or counters in the recorder).
  void copy_state_from(const Lpddr5Channel& o);

 private:
  struct Bank {
    bool open = false;
    std::uint64_t row = 0;
    Tick act = 0;         // last ACT
    Tick ready = 0;       // earliest next ACT (after PRE + tRP, or refresh)
    Tick last_col = 0;    // last column command to it
    Tick wr_end = 0;      // end of the last write data to it (tWR before PRE)
  };
  void wake(Tick t);
  void admit(Tick upto);
  Tick next_arrival() const;
  void refresh_until(Tick t);
  bool serve_write();
  Tick precharge_at(const Bank& b, Tick arrival) const;
  int pick(const PieceQueue& q, Tick d) const;
  void serve(const QueuedPiece& e, bool write, Tick d);

  Lpddr5Memory& mem_;
  Recorder& rec_;
  int track_ = -1, queue_counter_ = -1;
  std::vector<Bank> banks_;
  PieceQueue reads_, writes_;  // controller queues (at most queue_depth each), then pieces still arriving
  bool draining_ = false;     // the bus is serving writes
  int batch_ = 0;             // requests served since the bus last turned
  bool any_ = false, last_write_ = false;
  int last_bg_ = -1;
  Tick cmd_free_ = 0;        // next column command slot
  Tick last_read_cmd_ = 0;   // last read column command
  Tick write_data_end_ = 0;  // end of the last write data
  Tick acts_[4] = {0, 0, 0, 0};  // last four ACTs (tFAW), acts_[0] most recent
  int act_count_ = 0;
  Tick next_refresh_ = 0;
};

class Lpddr5Memory : public IMemory {
 public:
  explicit Lpddr5Memory(sc_core::sc_module_name n);
  void init(const ChipConfig& cfg, Recorder& rec) override;
  void send(MemRequest req) override;
  int channel_of(std::uint64_t addr) const override { return map_.channel(addr); }
  int channels() const override { return static_cast<int>(chans_.size()); }
  const MemStats& stats() const override { return total_; }
  std::vector<MemStats> channel_stats() const override;

  const Lpddr5Channel& channel(int i) const { return state(i); }
  const Lpddr5AddressMap& address_map() const { return map_; }
  // Totals over channels.
  std::uint64_t row_hits() const, row_misses() const, refreshes() const;
  // Whether the channels still run in lockstep (below); leave_lockstep() makes every channel
  // run on its own from now (what a request other than whole bursts does; tests compare).
  bool lockstep() const { return lockstep_; }
  void leave_lockstep();

 private:
  friend class Lpddr5Channel;
  // A request in flight: how many of its pieces are still to be served, and the latest end.
  struct Open {
    MemClient* client = nullptr;
    std::uint64_t tag = 0;
    int pieces = 0;
    Tick done = 0;
    std::uint64_t seq = 0;  // order of sending
  };
  void piece_done(std::uint64_t req, Tick t, std::uint32_t bytes, bool write, int pieces);
  // The one process of all channels: runs, in channel order, every channel due by now (and,
  // deciding ahead, by now + the look-ahead), then sleeps until the earliest wake-up asked for.
  void run();
  void wake_at(Tick t);  // a channel asks to run at t: one SystemC notification per earlier time
  void deliver_finished();
  std::uint32_t with_ecc(std::uint32_t cols) const;

  Lpddr5Config t_;
  ClockDomain clk_;
  int burst_cycles_ = 4;
  Lpddr5Ticks k_;
  std::uint32_t block_columns_ = 0;  // column accesses of a whole interleave block, ECC included
  Tick lookahead_ = 0;               // sim.memory_lookahead_ns
  Lpddr5AddressMap map_;
  std::vector<std::unique_ptr<Lpddr5Channel>> chans_;
  // Lockstep: while every request so far was whole aligned bursts (each group of `channels`
  // interleave blocks puts one piece with the same bank, row and columns on every channel),
  // all channels hold the same state and decide alike. Then channel 0 alone is simulated and
  // stands for all (its piece for the group, its bookings on every channel's track); the
  // first other request copies its state to the others, which run on their own from then on.
  bool lockstep_ = false;
  int width_ = 1;  // pieces one of channel 0's pieces stands for: the channels in lockstep, else 1
  bool whole_bursts(const MemRequest& req) const;
  const Lpddr5Channel& state(int i) const { return *chans_[lockstep_ ? 0 : i]; }
  std::vector<Open> open_;
  std::vector<std::uint64_t> free_;
  std::vector<std::uint64_t> finished_;  // requests complete in this wake-up, not yet told
  std::uint64_t seq_ = 0;
  MemStats total_;
  sc_core::sc_event wake_;
  Tick pending_ = Lpddr5Channel::kNever;  // the time wake_ is notified for (kNever: none)
};

}  // namespace dfsim

#include "models/memory/impl/lpddr5_memory.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/common/task_unit.h"
#include "sim/common/mix64.h"

namespace dfsim {

DFSIM_REGISTER_MEMORY(Lpddr5Memory, "lpddr5");

// ---- address map -------------------------------------------------------------------------

void Lpddr5AddressMap::init(const MemoryConfig& m) {
  const Lpddr5Config& t = m.lpddr5;
  const std::uint64_t block = t.interleave_bytes;
  block_.set(block);
  col_bytes_ = static_cast<std::uint32_t>(t.burst_length * m.bus_bits / 8);
  // A backstop: loading a config refuses these (check_lpddr5_geometry in config_validate.cpp).
  if (col_bytes_ == 0 || block % col_bytes_ != 0 || t.row_bytes % block != 0)
    throw std::logic_error("lpddr5: memory.lpddr5.interleave_bytes (" + std::to_string(block) +
                                ") must be a multiple of the column access (" + std::to_string(col_bytes_) +
                                " B) and divide memory.lpddr5.row_bytes (" + std::to_string(t.row_bytes) + ")");
  cols_per_block_ = static_cast<std::uint32_t>(block / col_bytes_);
  channels_.set(m.channels);
  bgs_.set(t.bank_groups);
  banks_.set(t.banks_per_group);
  cols_per_row_blocks_.set(t.row_bytes / block);
  xor_ = t.bank_xor;
  channel_xor_ = t.channel_xor;
  const std::string& s = t.address_map;
  lsb_first_.clear();
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) {
    std::string f = s.substr(i, 2);
    Field x = f == "Ro" ? Field::ro : f == "Co" ? Field::co : f == "Ba" ? Field::ba : f == "Bg" ? Field::bg : Field::ch;
    lsb_first_.insert(lsb_first_.begin(), x);
  }
  channel_lowest_ = !lsb_first_.empty() && lsb_first_[0] == Field::ch;
}

// The channel digit of an interleave-block index whose lower fields are already taken off.
// Channel hashing: add a hash of everything above the channel field (a 64-bit mix, so that
// every stride spreads: a digit sum, used before, is congruent to the index modulo channels
// - 1 and sent 245 of 256 of the 28 KiB rows of a [4096, 14336] weight to 2 of 8 channels).
// For fixed upper bits this rotates the channels, so the map stays one-to-one and the next
// block's channel is the previous one + 1 (decode_next).
int Lpddr5AddressMap::channel_digit(std::uint64_t& idx) const {
  std::uint64_t ch = channels_.mod(idx);
  idx = channels_.div(idx);
  if (channel_xor_ && idx > 0) ch += channels_.mod(mix64(idx));
  return static_cast<int>(channels_.mod(ch));
}

int Lpddr5AddressMap::channel(std::uint64_t addr) const {
  std::uint64_t idx = block_.div(addr);
  for (Field f : lsb_first_) {
    switch (f) {
      case Field::ch: return channel_digit(idx);
      case Field::bg: idx = bgs_.div(idx); break;
      case Field::ba: idx = banks_.div(idx); break;
      case Field::co: idx = cols_per_row_blocks_.div(idx); break;
      case Field::ro: idx >>= 20; break;  // as decode: 2^20 rows below other fields
    }
  }
  return 0;
}

DramCoord Lpddr5AddressMap::decode(std::uint64_t addr) const {
  DramCoord c;
  std::uint64_t idx = block_.div(addr);
  std::uint64_t co = 0;
  auto take = [&](const FixedDivisor& n) {
    std::uint64_t v = n.mod(idx);
    idx = n.div(idx);
    return v;
  };
  for (std::size_t i = 0; i < lsb_first_.size(); ++i) {
    bool last = i + 1 == lsb_first_.size();
    switch (lsb_first_[i]) {
      case Field::ch: c.channel = channel_digit(idx); break;
      case Field::bg: c.bank_group = static_cast<int>(take(bgs_)); break;
      case Field::ba: c.bank = static_cast<int>(take(banks_)); break;
      case Field::co: co = take(cols_per_row_blocks_); break;
      case Field::ro:
        if (last) c.row = idx;
        else c.row = take(FixedDivisor(std::uint64_t(1) << 20));  // rows below other fields: 2^20 per bank
        break;
    }
  }
  if (xor_) {
    c.bank_group = static_cast<int>(bgs_.mod(c.bank_group ^ c.row));
    c.bank = static_cast<int>(banks_.mod(c.bank ^ bgs_.div(c.row)));
  }
  c.bank += c.bank_group * static_cast<int>(banks_.value());
  c.column = static_cast<std::uint32_t>((co * block_.value() + block_.mod(addr)) / col_bytes_);
  return c;
}

DramCoord Lpddr5AddressMap::decode_next(const DramCoord& prev, std::uint64_t addr) const {
  // Channel digit (c + hash(upper)) mod channels with the upper digits unchanged: +1.
  if (!channel_lowest_ || channels_.mod(block_.div(addr)) == 0) return decode(addr);
  DramCoord c = prev;
  c.channel = static_cast<int>(channels_.mod(static_cast<std::uint64_t>(prev.channel) + 1));
  c.column = prev.column / cols_per_block_ * cols_per_block_;  // the block's first column
  return c;
}

// ---- channel controller ------------------------------------------------------------------

Lpddr5Channel::Lpddr5Channel(Lpddr5Memory& mem, int index, Recorder& rec) : mem_(mem), rec_(rec) {
  const Lpddr5Config& t = mem.t_;
  banks_.resize(static_cast<std::size_t>(t.bank_groups) * t.banks_per_group);
  track_ = rec.add_track("memory", "ch " + std::to_string(index), "dram");
  queue_counter_ = rec.add_counter("memory", "ch " + std::to_string(index) + " queue", "requests", TraceLevel::full);
  next_refresh_ = mem.k_.trefi;
}

void Lpddr5Channel::copy_state_from(const Lpddr5Channel& o) {
  stats = o.stats;
  row_hits = o.row_hits;
  row_misses = o.row_misses;
  row_conflicts = o.row_conflicts;
  refreshes = o.refreshes;
  max_queue = o.max_queue;
  wake_at = o.wake_at;
  banks_ = o.banks_;
  reads_ = o.reads_;
  writes_ = o.writes_;
  draining_ = o.draining_;
  batch_ = o.batch_;
  any_ = o.any_;
  last_write_ = o.last_write_;
  last_bg_ = o.last_bg_;
  cmd_free_ = o.cmd_free_;
  last_read_cmd_ = o.last_read_cmd_;
  write_data_end_ = o.write_data_end_;
  std::copy(std::begin(o.acts_), std::end(o.acts_), std::begin(acts_));
  act_count_ = o.act_count_;
  next_refresh_ = o.next_refresh_;
}

void Lpddr5Channel::wake(Tick t) {
  if (t >= wake_at) return;
  wake_at = t;
  mem_.wake_at(t);
}

void Lpddr5Channel::enqueue(const QueuedPiece& p, bool write) {
  (write ? writes_ : reads_).insert_by_time(p);
  wake(std::max({p.arrival, cmd_free_, sim_now()}));
}

// Moves requests that have reached the controller by `upto` into its queues, in arrival order,
// while there is room; the rest wait (back-pressure towards the ring).
void Lpddr5Channel::admit(Tick upto) {
  const std::size_t depth = static_cast<std::size_t>(mem_.t_.queue_depth);
  auto move = [&](PieceQueue& q) {
    while (q.arriving() && q.first_arriving().arrival <= upto && q.size() < depth) q.admit();
  };
  move(reads_);
  move(writes_);
  max_queue = std::max<std::uint64_t>(max_queue, reads_.size() + writes_.size());
}

Tick Lpddr5Channel::next_arrival() const {
  Tick t = ~Tick(0);
  if (reads_.arriving()) t = std::min(t, reads_.first_arriving().arrival);
  if (writes_.arriving()) t = std::min(t, writes_.first_arriving().arrival);
  return t;
}

// All-bank refreshes due by `t`: each starts when due (or when the last column command has
// gone), closes every bank and blocks activations for tRP + tRFC.
void Lpddr5Channel::refresh_until(Tick t) {
  if (mem_.t_.trefi <= 0) return;
  const Lpddr5Ticks& k = mem_.k_;
  while (next_refresh_ <= t) {
    Tick start = std::max(next_refresh_, cmd_free_);
    for (Bank& b : banks_) start = std::max(start, b.act + k.tras);
    if (start == next_refresh_ && next_refresh_ + k.trefi <= t) {
      // Nothing holds this refresh back, so nothing holds back the ones after it either
      // (they close closed banks): each starts when due and the last sets every bank's ready
      // time. Jump to it: a long idle stretch costs one step, not one per tREFI.
      const Tick more = (t - next_refresh_) / k.trefi;
      refreshes += more;
      next_refresh_ += more * k.trefi;
      start = next_refresh_;
    }
    Tick ready = start + k.refresh;
    for (Bank& b : banks_) {
      b.open = false;
      b.ready = std::max(b.ready, ready);
    }
    ++refreshes;
    next_refresh_ += k.trefi;
  }
}

// Earliest PRE of an open bank: tRAS after its ACT, after its last column command, tWR after
// its last write data, and not before the request that needs it has arrived.
Tick Lpddr5Channel::precharge_at(const Bank& b, Tick arrival) const {
  const Lpddr5Ticks& k = mem_.k_;
  return std::max({b.act + k.tras, b.last_col + k.tccd_l, b.wr_end + k.twr, arrival});
}

// FR-FCFS: the oldest request whose column command can go at `d` (a hit on an open row, or a
// bank opened ahead), else the one whose column command can go first; the queue is in
// arrival order, so the scan stops at the first request that is ready.
int Lpddr5Channel::pick(const PieceQueue& q, Tick d) const {
  const Tick trcd = mem_.k_.trcd, trp = mem_.k_.trp;
  int best = 0;
  Tick best_t = ~Tick(0);
  for (std::size_t i = 0; i < q.size(); ++i) {
    const QueuedPiece& e = q[i];
    const Bank& b = banks_[e.bank];
    Tick act;
    if (b.open && b.row == e.row) act = b.act;
    else if (b.open) act = precharge_at(b, e.arrival) + trp;
    else act = std::max(b.ready, e.arrival);
    Tick col = act + trcd;
    if (col <= d) return static_cast<int>(i);
    if (col < best_t) {
      best = static_cast<int>(i);
      best_t = col;
    }
  }
  return best;
}

void Lpddr5Channel::serve(const QueuedPiece& e, bool write, Tick d) {
  const Lpddr5Ticks& k = mem_.k_;
  Bank& b = banks_[e.bank];
  Tick col_ready;
  if (b.open && b.row == e.row) {
    ++row_hits;
    col_ready = b.act + k.trcd;
  } else {
    Tick act;
    if (b.open) {
      // Row conflict: precharge (not before tRAS from its ACT, its last column, tWR).
      ++row_conflicts;
      act = precharge_at(b, e.arrival) + k.trp;
    } else {
      ++row_misses;
      act = std::max(b.ready, e.arrival);
    }
    // The controller opens banks ahead for queued requests (bank-level parallelism), within
    // tRRD and tFAW of the channel's other ACTs.
    if (act_count_ > 0) act = std::max(act, acts_[0] + k.trrd);
    if (act_count_ >= 4) act = std::max(act, acts_[3] + k.tfaw);
    for (int i = 3; i > 0; --i) acts_[i] = acts_[i - 1];
    acts_[0] = act;
    ++act_count_;
    b.open = true;
    b.row = e.row;
    b.act = act;
    col_ready = act + k.trcd;
  }
  Tick c0 = std::max(d, col_ready);
  if (any_) {
    c0 = std::max(c0, cmd_free_ + (e.bank_group == last_bg_ ? k.tccd_l_extra : 0));
    if (last_write_ != write) {
      c0 = std::max(c0, write ? last_read_cmd_ + k.trtw : write_data_end_ + k.twtr);
      ++stats.turnarounds;
      mem_.total_.turnarounds += static_cast<std::uint64_t>(mem_.width_);
    }
  }
  // Columns of one request are in one row of one bank: back to back at tCCD_L (or the burst).
  Tick last_c = c0 + k.column_step * (e.columns - 1);
  Tick latency = write ? k.write_latency : k.read_latency;
  Tick data_start = c0 + latency;
  Tick data_end = last_c + latency + k.burst;
  b.last_col = last_c;
  cmd_free_ = last_c + k.tccd_s;
  if (write) {
    write_data_end_ = data_end;
    b.wr_end = data_end;
  } else {
    last_read_cmd_ = last_c;
  }
  any_ = true;
  last_write_ = write;
  last_bg_ = e.bank_group;
  if (mem_.width_ == 1) rec_.busy(track_, data_start, data_end);
  else
    for (const auto& c : mem_.chans_) rec_.busy(c->track_, data_start, data_end);
  (write ? stats.bytes_written : stats.bytes_read) += e.bytes;
  ++(write ? stats.writes : stats.reads);
  mem_.piece_done(e.req, data_end + k.frontend, e.bytes * static_cast<std::uint32_t>(mem_.width_), write, mem_.width_);
}

// Read/write arbitration: reads first; a write drain starts at write_high queued writes and
// stops at write_low. While the other direction waits, the bus turns only after min_batch
// requests (and a drain stops after min_batch writes once reads wait, so neither side starves).
// With nothing of one direction queued, the other is served.
bool Lpddr5Channel::serve_write() {
  const Lpddr5Config& c = mem_.t_;
  const std::size_t high = static_cast<std::size_t>(c.write_high), low = static_cast<std::size_t>(c.write_low);
  if (writes_.empty()) return false;
  if (reads_.empty()) return true;
  if (draining_) return !(writes_.size() <= low || batch_ >= c.min_batch);
  return writes_.size() >= high && batch_ >= c.min_batch;
}

// Serves every decision due by now + sim.memory_lookahead_ns (0, the default: only those due
// now, each at its own time; more: several per wake-up, blind to pieces sent later that
// arrive inside the window).
void Lpddr5Channel::run(Tick now) {
  wake_at = kNever;
  const Tick horizon = now + mem_.lookahead_;
  Tick cursor = now;  // the earliest time of the next decision
  for (;;) {
    Tick d = std::max(cursor, cmd_free_);
    if (d > horizon) {
      // Busy until d: sleep until then (or until the first arrival, if nothing is queued).
      if (!reads_.empty() || !writes_.empty()) wake(d);
      else if (Tick a = next_arrival(); a != ~Tick(0)) wake(std::max(d, a));
      break;
    }
    admit(d);
    if (reads_.empty() && writes_.empty()) {
      Tick a = next_arrival();  // after d: admit(d) took the rest
      if (a == ~Tick(0)) break;
      if (a > horizon) {
        wake(a);
        break;
      }
      cursor = a;
      continue;
    }
    if (next_refresh_ <= d) refresh_until(d);  // the call is 1.6 % of a decode layer's instructions when nothing is due
    bool w = serve_write();
    if (w != draining_) {
      draining_ = w;
      batch_ = 0;
    }
    ++batch_;
    PieceQueue& q = w ? writes_ : reads_;
    int i = pick(q, d);
    const QueuedPiece e = q[i];
    q.erase(static_cast<std::size_t>(i));
    const double queued = static_cast<double>(reads_.size() + writes_.size());
    if (mem_.width_ == 1) rec_.counter(queue_counter_, d, queued);
    else
      for (const auto& c : mem_.chans_) rec_.counter(c->queue_counter_, d, queued);
    serve(e, w, d);
  }
}

// ---- the memory --------------------------------------------------------------------------

Lpddr5Memory::Lpddr5Memory(sc_core::sc_module_name n) : IMemory(n) {
  SC_HAS_PROCESS(Lpddr5Memory);
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

void Lpddr5Memory::wake_at(Tick t) {
  if (t >= pending_) return;
  pending_ = t;
  wake_.notify(sc_core::sc_time::from_value(t - sim_now()));
}

void Lpddr5Memory::run() {
  ++ActivationCounter::value();
  const Tick now = sim_now();
  const Tick due = now + lookahead_;
  pending_ = Lpddr5Channel::kNever;
  for (auto& c : chans_)
    if (c->wake_at <= due) c->run(now);
  deliver_finished();
  Tick next = Lpddr5Channel::kNever;
  for (auto& c : chans_) next = std::min(next, c->wake_at);
  if (next != Lpddr5Channel::kNever) wake_at(std::max(next, now));
}

void Lpddr5Memory::init(const ChipConfig& cfg, Recorder& rec) {
  const MemoryConfig& m = cfg.memory;
  t_ = m.lpddr5;
  clk_ = ClockDomain(m.clock_mhz);
  // Data-bus cycles of one column access: burst_length beats at data_rate / clock per cycle.
  burst_cycles_ = std::max(1, static_cast<int>(std::llround(t_.burst_length * m.clock_mhz / m.data_rate_mtps)));
  const Lpddr5Config& c = t_;
  auto ticks = [&](int cycles) { return clk_.cycles(static_cast<std::uint64_t>(cycles)); };
  k_.tras = ticks(c.tras);
  k_.trp = ticks(c.trp);
  k_.trcd = ticks(c.trcd);
  k_.trrd = ticks(c.trrd);
  k_.tfaw = ticks(c.tfaw);
  k_.twr = ticks(c.twr);
  k_.trtw = ticks(c.trtw);
  k_.twtr = ticks(c.twtr);
  k_.tccd_s = ticks(c.tccd_s);
  k_.tccd_l = ticks(c.tccd_l);
  k_.tccd_l_extra = ticks(c.tccd_l - c.tccd_s);
  k_.read_latency = ticks(c.rl);
  k_.write_latency = ticks(c.wl);
  k_.burst = ticks(burst_cycles_);
  k_.column_step = ticks(std::max(c.tccd_l, burst_cycles_));
  k_.frontend = ticks(c.frontend_cycles);
  k_.refresh = ticks(c.trp + c.trfc);
  k_.trefi = ticks(c.trefi);
  map_.init(m);
  block_columns_ = with_ecc(map_.columns_per_block());
  lookahead_ = ns_to_ticks(cfg.sim.memory_lookahead_ns);
  for (int i = 0; i < m.channels; ++i) {
    chans_.push_back(std::make_unique<Lpddr5Channel>(*this, i, rec));
  }
  lockstep_ = m.channels > 1 && map_.channel_lowest();
  width_ = lockstep_ ? m.channels : 1;
}

// Column accesses of `cols` data columns with inline ECC (in the same row).
std::uint32_t Lpddr5Memory::with_ecc(std::uint32_t cols) const {
  return t_.inline_ecc > 0 ? cols + (cols + t_.inline_ecc - 1) / t_.inline_ecc : cols;
}

// Whole aligned bursts: every group of `channels` interleave blocks the request touches is
// whole, so its pieces differ only in their channel (decode_next's fast case).
bool Lpddr5Memory::whole_bursts(const MemRequest& req) const {
  const std::uint64_t n = chans_.size();
  return map_.block_offset(req.addr) == 0 && map_.blocks(req.addr) % n == 0 && req.bytes % (n * map_.block_bytes()) == 0;
}

void Lpddr5Memory::leave_lockstep() {
  for (std::size_t i = 1; i < chans_.size(); ++i) chans_[i]->copy_state_from(*chans_[0]);
  lockstep_ = false;
  width_ = 1;
}

void Lpddr5Memory::send(MemRequest req) {
  if (lockstep_ && !whole_bursts(req)) leave_lockstep();
  std::uint64_t id;
  if (free_.empty()) {
    id = open_.size();
    open_.push_back({});
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Open& o = open_[id];
  o = Open{req.client, req.tag, 0, req.issued, seq_++};
  const std::uint64_t block = map_.block_bytes();
  const std::uint32_t colb = map_.column_bytes();
  // One piece per interleave block the request touches; counted first, so no list is built.
  std::uint64_t addr = req.addr, left = req.bytes;
  o.pieces = static_cast<int>(map_.blocks(map_.block_offset(addr) + left + block - 1));
  auto enqueue = [&](int channel, const DramCoord& at, std::uint64_t bytes, std::uint32_t columns) {
    QueuedPiece e;
    e.arrival = req.issued;
    e.row = at.row;
    e.req = static_cast<std::uint32_t>(id);
    e.bytes = static_cast<std::uint32_t>(bytes);
    e.columns = columns;
    e.bank = static_cast<std::uint16_t>(at.bank);
    e.bank_group = static_cast<std::uint16_t>(at.bank_group);
    chans_[channel]->enqueue(e, req.write);
  };
  if (lockstep_) {
    // One piece per group of blocks, on channel 0, standing for the group's pieces.
    const std::uint64_t group = block * chans_.size();
    for (; left > 0; addr += group, left -= group) enqueue(0, map_.decode(addr), block, block_columns_);
    return;
  }
  DramCoord at;
  for (bool first = true; left > 0; first = false) {
    std::uint64_t in_block = map_.block_offset(addr);
    std::uint64_t n = std::min(left, block - in_block);
    at = first ? map_.decode(addr) : map_.decode_next(at, addr);
    enqueue(at.channel, at, n,
            n == block ? block_columns_
                       : with_ecc(static_cast<std::uint32_t>((in_block + n + colb - 1) / colb - in_block / colb)));
    addr += n;
    left -= n;
  }
}

void Lpddr5Memory::piece_done(std::uint64_t req, Tick t, std::uint32_t bytes, bool write, int pieces) {
  (write ? total_.bytes_written : total_.bytes_read) += bytes;
  count_bytes(t, bytes);
  Open& o = open_[req];
  o.done = std::max(o.done, t);
  if ((o.pieces -= pieces) > 0) return;
  if (write) ++total_.writes;
  else ++total_.reads;
  finished_.push_back(req);
}

// Requests whose last piece was served in this wake-up, told to their clients in order of
// completion time, then of sending: the order does not depend on which channel served last.
void Lpddr5Memory::deliver_finished() {
  if (finished_.empty()) return;
  std::sort(finished_.begin(), finished_.end(), [&](std::uint64_t a, std::uint64_t b) {
    return open_[a].done != open_[b].done ? open_[a].done < open_[b].done : open_[a].seq < open_[b].seq;
  });
  for (std::uint64_t r : finished_) {
    free_.push_back(r);
    open_[r].client->mem_done(open_[r].tag, open_[r].done);
  }
  finished_.clear();
}

std::vector<MemStats> Lpddr5Memory::channel_stats() const {
  std::vector<MemStats> out;
  for (std::size_t i = 0; i < chans_.size(); ++i) {
    const Lpddr5Channel& c = state(static_cast<int>(i));
    MemStats s = c.stats;
    s.row_hits = c.row_hits;
    s.row_misses = c.row_misses;
    s.row_conflicts = c.row_conflicts;
    s.refreshes = c.refreshes;
    s.max_queue = c.max_queue;
    out.push_back(s);
  }
  return out;
}

std::uint64_t Lpddr5Memory::row_hits() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < chans_.size(); ++i) n += state(static_cast<int>(i)).row_hits;
  return n;
}
std::uint64_t Lpddr5Memory::row_misses() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < chans_.size(); ++i) n += state(static_cast<int>(i)).row_misses + state(static_cast<int>(i)).row_conflicts;
  return n;
}
std::uint64_t Lpddr5Memory::refreshes() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < chans_.size(); ++i) n += state(static_cast<int>(i)).refreshes;
  return n;
}

}  // namespace dfsim

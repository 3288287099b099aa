// The "lpddr5" memory model driven by DMA tasks: closed-form unloaded latency, bounds
// (never above the nominal peak), row-buffer behaviour and byte conservation. One simulation
// per test case (each case runs in its own process).
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/chip/card.h"
#include "models/memory/impl/lpddr5_memory.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/runtime/simulation.h"
#include "sim/stats/analysis.h"

using namespace dfsim;

namespace {

constexpr Tick kCore = 666667;   // core clock 1500 MHz
constexpr Tick kMem = 1250000;   // memory clock 800 MHz
// Measured with the channels run one by one (the lockstep tests below check that lockstep
// gives the same): a 1 MiB load and store (13.88 us, 2 x 2048 pieces), and 1 MiB + 512 B.
constexpr Tick kLockstepEnd1MiB = 13882583344;
constexpr std::uint64_t kLockstepRowHits1MiB = 3200, kLockstepConflicts1MiB = 384, kLockstepTurnarounds1MiB = 8,
                        kLockstepRefreshes1MiB = 24;
constexpr Tick kSplitEnd = 13923250006;
constexpr std::uint64_t kSplitConflicts = 394, kSplitTurnarounds = 8;

// The default (spyre) chip without memory ports: their occupancy is tested in test_models.cpp.
ChipConfig lpddr5_cfg() {
  ChipConfig cfg;
  cfg.memory.impl = "lpddr5";
  cfg.memory.ports = 0;
  return cfg;
}

// Core 0 loads `n` bytes (HBM -> LX) and, independently, stores `n` preloaded LX bytes
// (LX -> HBM): on two DMA queues the controllers see reads and writes at the same time.
KernelGraph load_and_store(std::uint64_t n) {
  std::string b = std::to_string(n);
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "t", "cores": 1, "buffers": [
      {"name": "x", "space": "hbm", "bytes": )" + b + R"(, "preloaded": true},
      {"name": "xl", "space": "lx", "bytes": )" + b + R"(},
      {"name": "yl", "space": "lx", "bytes": )" + b + R"(, "preloaded": true},
      {"name": "y", "space": "hbm", "bytes": )" + b + R"(}],
    "kernels": [{"name": "k", "tasks": [
      {"name": "ld", "unit": "dma", "op": "load", "core": 0,
       "reads": [{"buffer": "x", "bytes": )" + b + R"(}], "writes": [{"buffer": "xl", "bytes": )" + b + R"(}]},
      {"name": "st", "unit": "dma", "op": "store", "core": 0,
       "reads": [{"buffer": "yl", "bytes": )" + b + R"(}], "writes": [{"buffer": "y", "bytes": )" + b + "}]}]}]}";
  return read_kernel_graph(Json::parse(text), "test.json");
}

// A chip whose one core pushes both DMA queues as hard as they go.
ChipConfig saturating_cfg() {
  ChipConfig cfg = lpddr5_cfg();
  cfg.cores = 1;
  cfg.core.dma.stick_issue_cycles = 0;
  cfg.core.dma.max_outstanding = 64;
  cfg.memory.lpddr5.trefi = 0;  // no refresh: turnarounds are the only bus switches counted
  return cfg;
}

// One DMA load of `rows` x `bytes` from an HBM buffer with row stride `stride` into LX.
KernelGraph strided_load(std::uint64_t rows, std::uint64_t bytes, std::uint64_t stride) {
  std::string total = std::to_string(rows * bytes), hbm = std::to_string((rows - 1) * stride + bytes);
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "t", "cores": 1, "buffers": [
      {"name": "x", "space": "hbm", "bytes": )" + hbm + R"(, "preloaded": true},
      {"name": "xl", "space": "lx", "bytes": )" + total + R"(}],
    "kernels": [{"name": "k", "tasks": [{"name": "ld", "unit": "dma", "op": "load", "core": 0,
      "reads": [{"buffer": "x", "bytes": )" + std::to_string(bytes) + R"(, "rows": )" + std::to_string(rows) +
                     R"(, "stride": )" + std::to_string(stride) + R"(}],
      "writes": [{"buffer": "xl", "bytes": )" + total + "}]}]}]}";
  return read_kernel_graph(Json::parse(text), "test.json");
}

}  // namespace

TEST_CASE("memory: lpddr5 unloaded read latency is the timing sum", "[memory][lpddr5]") {
  ChipConfig cfg = lpddr5_cfg();
  cfg.cores = 1;
  KernelGraph g = strided_load(1, 128, 128);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // One 128 B read to a closed bank at t = 0: ACT at 0, tRCD 15 -> read at 15, RL 17 -> data
  // 32..36 (1 data column + 1 inline-ECC column, 4 cycles each -> 32..40), + 8 frontend
  // = 15 + 17 + 2 x 4 + 8 = 48 memory cycles. Then LX write 128 / 256 B -> 1 core cycle
  // (ring: controller 0 at stop 0 = core 0, no hop).
  CHECK(r.end == 48 * kMem + 1 * kCore);
  auto& mem = dynamic_cast<Lpddr5Memory&>(sim.system().card().memory());
  CHECK(mem.row_misses() == 1);
  CHECK(mem.row_hits() == 0);
}

TEST_CASE("memory: lpddr5 stream never exceeds the nominal peak and conserves bytes", "[memory][lpddr5]") {
  ChipConfig cfg = lpddr5_cfg();
  cfg.cores = 1;
  cfg.core.dma.stick_issue_cycles = 0;  // let one engine push as hard as it can
  cfg.core.dma.max_outstanding = 64;
  const std::uint64_t n = 1u << 20;
  KernelGraph g = strided_load(1, n, n);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  Card& card = sim.system().card();
  CHECK(card.memory().stats().bytes_read == n);
  CHECK(card.memory().stats().bytes_written == 0);
  CHECK(card.core(0).dma_stats().hbm_to_lx == n);
  std::uint64_t sum = 0;
  for (const auto& c : card.memory().channel_stats()) sum += c.bytes_read;
  CHECK(sum == n);
  CHECK(ticks_to_ns(r.end) >= n / cfg.memory_peak_gbps());
}

TEST_CASE("memory: lpddr5 row-buffer-hostile stride pays a row cycle per access", "[memory][lpddr5]") {
  // 64 rows of 512 B, stride 1 MiB: with "RoCoBaBgCh" and bank and channel hashing off, 1 MiB
  // keeps channel, bank group and bank and changes the row, so every access is a row conflict:
  // each one waits tRAS + tRP = 34 + 15 = 49 cycles after the previous ACT of that bank. A
  // sequential 32 KiB read moves at 25.6 GB/s per channel over 8 channels: 32768 / 204.8 = 160 ns.
  ChipConfig cfg = lpddr5_cfg();
  cfg.cores = 1;
  cfg.memory.lpddr5.bank_xor = false;
  cfg.memory.lpddr5.channel_xor = false;
  KernelGraph g = strided_load(64, 512, 1u << 20);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  auto& mem = dynamic_cast<Lpddr5Memory&>(sim.system().card().memory());
  CHECK(mem.row_hits() == 0);
  CHECK(mem.row_misses() == 64);
  CHECK(r.end >= 63 * 49 * kMem);
  CHECK(r.end > 10 * ns_to_ticks(160));
  // Every access on channel 0, the other 7 idle: at every moment all the work on one of the 8
  // channels, which the summary's channel imbalance reads as 8 (kernels[].dram_channel_imbalance).
  std::vector<int> chans;
  for (std::size_t i = 0; i < sim.recorder().tracks().size(); ++i)
    if (sim.recorder().tracks()[i].kind == "dram") chans.push_back(static_cast<int>(i));
  REQUIRE(chans.size() == 8);
  CHECK(busy_imbalance(sim.recorder(), chans, 0, r.end) == Approx(8.0).epsilon(1e-12));
}

namespace {

// load_and_store(n) simulated on `cfg`: the run's result and the memory's totals, every byte
// read once and written once (conservation). (One simulation: call it once per test case.)
struct LoadStoreRun {
  RunResult result;
  MemStats stats;
};
LoadStoreRun run_load_and_store(const ChipConfig& cfg, std::uint64_t n) {
  KernelGraph g = load_and_store(n);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  const MemStats& s = sim.system().card().memory().stats();
  CHECK(s.bytes_read == n);
  CHECK(s.bytes_written == n);
  return {r, s};
}

// 256 KiB loaded and 256 KiB stored at once on the saturating config with `min_batch`; the
// memory's totals.
MemStats mixed_traffic(int min_batch) {
  ChipConfig cfg = saturating_cfg();
  cfg.memory.lpddr5.min_batch = min_batch;
  return run_load_and_store(cfg, 262144).stats;
}

}  // namespace

TEST_CASE("memory: lpddr5 turns the bus after min_batch requests when both directions wait", "[memory][lpddr5]") {
  // 256 KiB each way = 512 pieces of 512 B each way, 64 per channel per direction, arriving
  // faster than the channel serves them. Reads go first until 24 writes (write_high) wait;
  // from then on, with both sides waiting, the controller alternates batches of min_batch = 2:
  // up to 64 / 2 write batches per channel, each with a turnaround there and back. Bounds per
  // channel: at least 16 (a quarter of that), at most one per 2 requests, (64 + 64) / 2 = 64,
  // plus 2 for the ends; x 8 channels.
  MemStats m = mixed_traffic(2);
  CHECK(m.bytes_read == 262144);
  CHECK(m.bytes_written == 262144);
  CHECK(m.turnarounds >= 16 * 8);
  CHECK(m.turnarounds <= 66 * 8);
}

TEST_CASE("memory: lpddr5 with a long min_batch turns the bus rarely", "[memory][lpddr5]") {
  // The same traffic with min_batch = 64 (all the pieces of one direction of a channel):
  // a channel serves one direction until it has none queued, so only a few switches per
  // channel (reads first, then writes, plus what arrives late): at most 4 x 8 channels.
  MemStats m = mixed_traffic(64);
  CHECK(m.turnarounds >= 1);
  CHECK(m.turnarounds <= 32);
}

TEST_CASE("memory: lpddr5 read-to-write turnaround waits trtw after the last read command", "[memory][lpddr5]") {
  // Core 0 loads 128 B from x (address 0) and stores 128 B to y (address 4096: buffers are
  // aligned to memory.interleave_bytes = 4096). Without channel hashing both map to channel 0, row 0: x to bank group
  // 0 bank 0, y (interleave block 8 -> bank group 1) to bank group 1 bank 0. In memory cycles:
  //   load: reaches the controller at 0. ACT 0, tRCD 15 -> read commands at 15 (data) and 19
  //         (inline-ECC column); next column slot 19 + tCCD_S 4 = 23.
  //   store: reaches it after 1 core cycle (LX read). ACT at tRRD 4; column ready 4 + 15 = 19;
  //         the bus last read at 19, so the write waits tRTW 18: commands at 37 and 41, data
  //         41 + WL 9 .. + 4 = 54, + 8 frontend = 62.
  //   load end: 19 + RL 17 + 4 = 40, + 8 = 48 memory cycles + 1 core cycle (LX write).
  ChipConfig cfg = saturating_cfg();
  cfg.memory.lpddr5.channel_xor = false;  // channel hashing would move y to channel 1
  KernelGraph g = load_and_store(128);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(sim.system().card().memory().stats().turnarounds == 1);
  CHECK(r.end == 62 * kMem);
}

TEST_CASE("memory: lpddr5 channel hashing spreads strided accesses over every channel", "[memory][lpddr5]") {
  // 256 accesses at a stride: 4 KiB = 8 channels x 512 B interleave, so without hashing every
  // one decodes to channel 0 (the stride of a column block of a matrix whose rows are a
  // multiple of 4 KiB). With hashing a mix of the bits above the channel field rotates it, so
  // each channel gets 256 / 8 = 32, within a third and twice that, for power-of-two strides and 28 KiB
  // = 56 blocks (the rows of a [4096, 14336] fp16 weight). The digit-sum hash used before
  // sent 245 of those 256 rows to channels 6 and 7: row r's bits above the channel are 7 r,
  // whose base-8 digit sum is a multiple of 7 (8 = 1 mod 7), so 7, 14 or 21.
  ChipConfig cfg = lpddr5_cfg();
  for (std::uint64_t stride : {4096u, 8192u, 28672u, 57344u, 12288u, 1u << 20}) {
    CAPTURE(stride);
    for (bool hashing : {false, true}) {
      cfg.memory.lpddr5.channel_xor = hashing;
      Lpddr5AddressMap map;
      map.init(cfg.memory);
      std::vector<int> per_channel(8, 0);
      for (std::uint64_t i = 0; i < 256; ++i) ++per_channel[static_cast<std::size_t>(map.decode(i * stride).channel)];
      if (hashing)
        for (int n : per_channel) {
          CHECK(n >= 11);
          CHECK(n <= 64);
        }
      else if (stride % 4096 == 0)
        CHECK(per_channel[0] == 256);
    }
  }
  // The map stays one-to-one: 2^16 consecutive 128 B columns decode to distinct coordinates.
  cfg.memory.lpddr5.channel_xor = true;
  Lpddr5AddressMap map;
  map.init(cfg.memory);
  std::set<std::tuple<int, int, std::uint64_t, std::uint32_t>> seen;
  for (std::uint64_t a = 0; a < (std::uint64_t(1) << 23); a += 128) {
    DramCoord c = map.decode(a);
    seen.emplace(c.channel, c.bank, c.row, c.column);
  }
  CHECK(seen.size() == std::size_t(1) << 16);
}

TEST_CASE("memory: lpddr5 with one channel decodes every address to it and a run finishes", "[memory][lpddr5]") {
  // memory.channels = 1 with channel hashing on: the hash added the base-1 digits above the
  // channel field, and dividing by 1 never reached 0 (a run of add_2048x1024 with
  // --set memory.channels=1 spun in channel_digit, deaf to SIGTERM). Every address is channel 0,
  // and a 64 KiB load and store finish at no more than one channel's peak:
  // 32 bits x 6400 MT/s = 25.6 GB/s, 128 KiB in >= 5120 ns.
  ChipConfig cfg = saturating_cfg();
  cfg.memory.channels = 1;
  Lpddr5AddressMap map;
  map.init(cfg.memory);
  for (std::uint64_t a : {std::uint64_t(0), std::uint64_t(4096), std::uint64_t(1) << 40, ~std::uint64_t(0)}) {
    CHECK(map.decode(a).channel == 0);
    CHECK(map.channel(a) == 0);
    CHECK(map.next_channel(0, a) == 0);
  }
  const std::uint64_t n = 1u << 16;
  RunResult r = run_load_and_store(cfg, n).result;
  CHECK(cfg.memory_peak_gbps() == Approx(25.6));
  CHECK(ticks_to_ns(r.end) >= 2 * n / 25.6);
}

TEST_CASE("memory: lpddr5 decode_next of the following interleave block equals a full decode", "[memory][lpddr5]") {
  // send() decodes a request's first block in full and each next one from the previous: the
  // two must agree for every field order, with and without hashing, on a non-power-of-two
  // channel count too (then the channel digit is a remainder, not a mask). The same for
  // next_channel, which the bandwidth model's send uses.
  ChipConfig cfg = lpddr5_cfg();
  int carries = 0, steps = 0;
  for (std::string order : {"RoCoBaBgCh", "RoBaBgCoCh", "ChRoCoBaBg"})
    for (int channels : {8, 6})
      for (bool hashing : {false, true}) {
        cfg.memory.channels = channels;
        cfg.memory.lpddr5.address_map = order;
        cfg.memory.lpddr5.channel_xor = hashing;
        Lpddr5AddressMap map;
        map.init(cfg.memory);
        const std::uint64_t block = map.block_bytes();
        for (std::uint64_t start : {std::uint64_t(0), std::uint64_t(130), std::uint64_t(7) << 30 | 4000}) {
          DramCoord prev = map.decode(start);
          for (std::uint64_t a = (start / block + 1) * block; a < start + 200 * block; a += block) {
            DramCoord next = map.decode_next(prev, a), full = map.decode(a);
            CHECK(std::tie(next.channel, next.bank_group, next.bank, next.row, next.column) ==
                  std::tie(full.channel, full.bank_group, full.bank, full.row, full.column));
            CHECK(map.next_channel(prev.channel, a) == full.channel);
            CHECK(map.channel(a) == full.channel);
            carries += a / block % channels == 0;
            ++steps;
            prev = next;
          }
        }
      }
  CHECK(carries > 0);       // the carry path (a full decode) is exercised
  CHECK(carries < steps);   // and so is the incremental one
}

TEST_CASE("memory: lpddr5 with sim.memory_lookahead_ns serves several pieces per wake-up and conserves bytes",
          "[memory][lpddr5]") {
  // One core loads and stores 1 MiB each: 2 x 2048 pieces of 512 B. Exact (lookahead 0), each
  // piece is one controller wake-up; with a 500 ns window a channel serves every decision due
  // within it at once (a piece holds its channel's bus for tens of ns), so wake-ups (with the
  // DMA engines' steps) fall well below one per piece. Bytes are conserved and the roofline
  // holds.
  ChipConfig cfg = saturating_cfg();
  cfg.sim.memory_lookahead_ns = 500;
  const std::uint64_t n = 1u << 20;
  auto [r, s] = run_load_and_store(cfg, n);
  CHECK(s.reads + s.writes == 2 * n / 4096);  // one request per 4 KiB burst
  const std::uint64_t pieces = 2 * n / 512;
  CHECK(r.activations < pieces / 2);
  CHECK(ticks_to_ns(r.end) >= 2 * n / cfg.memory_peak_gbps());
}

namespace {

// Simulated end and totals of load_and_store(n) on saturating_cfg() with refresh, the
// lpddr5 channels in lockstep while the requests allow it, or each on its own from the start.
struct StreamOutcome {
  Tick end = 0;
  std::uint64_t row_hits = 0, row_conflicts = 0, turnarounds = 0, refreshes = 0;
  bool lockstep = false;
  std::vector<std::uint64_t> read_by_channel;
};
StreamOutcome run_stream(std::uint64_t n, bool lockstep) {
  ChipConfig cfg = saturating_cfg();
  cfg.memory.lpddr5.trefi = lpddr5_cfg().memory.lpddr5.trefi;
  KernelGraph g = load_and_store(n);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  auto& mem = dynamic_cast<Lpddr5Memory&>(sim.system().card().memory());
  if (!lockstep) mem.leave_lockstep();
  RunResult r = sim.run();
  REQUIRE(r.ok());
  StreamOutcome o;
  o.end = r.end;
  o.lockstep = mem.lockstep();
  for (const MemStats& c : mem.channel_stats()) {
    o.row_hits += c.row_hits;
    o.row_conflicts += c.row_conflicts;
    o.refreshes += c.refreshes;
    o.read_by_channel.push_back(c.bytes_read);
  }
  o.turnarounds = mem.stats().turnarounds;
  std::uint64_t sum = 0;
  for (std::uint64_t b : o.read_by_channel) sum += b;
  CHECK(sum == n);
  CHECK(mem.stats().bytes_written == n);
  return o;
}

// The figures of a 1 MiB load and store, run either way (each TEST_CASE is its own process,
// so both compare with these pinned values, measured with the channels run one by one).
void check_1mib(const StreamOutcome& o) {
  CHECK(o.end == kLockstepEnd1MiB);
  CHECK(o.row_hits == kLockstepRowHits1MiB);
  CHECK(o.row_conflicts == kLockstepConflicts1MiB);
  CHECK(o.turnarounds == kLockstepTurnarounds1MiB);
  CHECK(o.refreshes == kLockstepRefreshes1MiB);
  for (std::uint64_t b : o.read_by_channel) CHECK(b == (1u << 20) / 8);  // each channel one eighth
}

}  // namespace

// Every request of a 1 MiB load and store is a whole aligned 4 KiB burst: the eight channels
// hold the same state throughout, so channel 0 alone is simulated and stands for all. The
// answers equal those of the eight channels run one by one (the next case).
TEST_CASE("memory: lpddr5 in lockstep gives the answers of the channels run one by one", "[memory][lpddr5]") {
  StreamOutcome o = run_stream(1u << 20, true);
  CHECK(o.lockstep);
  check_1mib(o);
}

TEST_CASE("memory: lpddr5 channels run one by one from the start (the lockstep reference)", "[memory][lpddr5]") {
  StreamOutcome o = run_stream(1u << 20, false);
  CHECK_FALSE(o.lockstep);
  check_1mib(o);
}

// 1 MiB + 512 B: the last burst of each direction is one piece, so the memory leaves lockstep
// while whole bursts are still queued (their state copied to every channel): the same answers
// as when every channel runs on its own from the start.
TEST_CASE("memory: lpddr5 leaving lockstep mid-run gives the answers of the channels run one by one",
          "[memory][lpddr5]") {
  StreamOutcome split = run_stream((1u << 20) + 512, true);
  CHECK_FALSE(split.lockstep);
  CHECK(split.end == kSplitEnd);
  CHECK(split.row_conflicts == kSplitConflicts);
  CHECK(split.turnarounds == kSplitTurnarounds);
}

TEST_CASE("memory: lpddr5 channels one by one on 1 MiB + 512 B (the reference of leaving lockstep)",
          "[memory][lpddr5]") {
  StreamOutcome o = run_stream((1u << 20) + 512, false);
  CHECK(o.end == kSplitEnd);
  CHECK(o.row_conflicts == kSplitConflicts);
  CHECK(o.turnarounds == kSplitTurnarounds);
}

// A load, an SFP task of about 10.7 ms (2048 elements over two corelets of 64 lanes: 16
// vectors of 10^6 cycles), then a store: between them the channels are idle for over 2700
// refresh intervals. A channel catches its refreshes up at its next decision, all at
// once when nothing holds them back (one step, not one per tREFI: a long idle run cost host
// time in proportion to its simulated time). Each channel has then run every refresh due by
// its last decision d: floor(d / tREFI), the first one due at tREFI.
TEST_CASE("memory: lpddr5 refreshes over a long idle stretch are all counted, each when due", "[memory][lpddr5]") {
  ChipConfig cfg = lpddr5_cfg();
  cfg.cores = 1;
  cfg.core.sfp.cycles_per_vector["add"] = 1e6;  // neg's class: 10^6 cycles (667 us) per vector
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "t", "cores": 1, "buffers": [
      {"name": "x", "space": "hbm", "bytes": 4096, "preloaded": true}, {"name": "xl", "space": "lx", "bytes": 4096},
      {"name": "yl", "space": "lx", "bytes": 4096}, {"name": "y", "space": "hbm", "bytes": 4096}],
    "kernels": [{"name": "k", "tasks": [
      {"name": "ld", "unit": "dma", "op": "load", "core": 0, "reads": [{"buffer": "x", "bytes": 4096}], "writes": [{"buffer": "xl", "bytes": 4096}]},
      {"name": "neg", "unit": "sfp", "op": "neg", "core": 0, "elements": 2048, "reads": [{"buffer": "xl", "bytes": 4096}], "writes": [{"buffer": "yl", "bytes": 4096}]},
      {"name": "st", "unit": "dma", "op": "store", "core": 0, "reads": [{"buffer": "yl", "bytes": 4096}], "writes": [{"buffer": "y", "bytes": 4096}]}]}]})";
  KernelGraph g = read_kernel_graph(Json::parse(text), "test.json");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  const Tick trefi = 3125 * kMem;  // memory.lpddr5.trefi: 3125 cycles, 3906.25 ns
  // The store's pieces are decided within a microsecond before the end, which is not within
  // a microsecond of a refresh time: every channel's count is floor(end / tREFI).
  REQUIRE(r.end % trefi > ns_to_ticks(1000));
  const std::uint64_t due = r.end / trefi;
  CHECK(due > 2700);
  auto& mem = dynamic_cast<Lpddr5Memory&>(sim.system().card().memory());
  for (const MemStats& c : mem.channel_stats()) CHECK(c.refreshes == due);
}

// A memory model that tells completions when requests are sent (bandwidth, simple) makes the
// DMA book the ring and LX legs ahead, in the order the cores issue: those resources then serve
// a booking in the idle gap the latest one left. Without it, the 2048-token prefill through
// `bandwidth` was 4 % slower than through `lpddr5` (docs/performance.md).
TEST_CASE("memory: a resource booked out of time order serves a booking in the gap the latest left, or in any (calendar)",
          "[memory][resource]") {
  Resource in_order, gaps;
  gaps.set_backfill(true);
  for (Resource* r : {&in_order, &gaps}) {
    CHECK(r->reserve(100, 10) == 100);  // busy [100, 110)
    CHECK(r->reserve(200, 10) == 200);  // busy [200, 210): idle [110, 200)
  }
  // Arrives at 120 for 30: in the gap, [120, 150); in order, after 210.
  CHECK(gaps.reserve(120, 30) == 120);
  CHECK(in_order.reserve(120, 30) == 210);
  // What is left of the gap is [150, 200): 40 at 140 fits from 150; 60 more at 150 does not
  // (150 + 40 = 190, + 60 > 200) and goes after the latest, 210.
  CHECK(gaps.reserve(140, 40) == 150);
  CHECK(gaps.reserve(150, 60) == 210);
  CHECK(gaps.free_at() == 270);
  // Calendar mode (ring links) keeps every gap, split around what it serves.
  Resource cal;
  cal.set_calendar(true);
  CHECK(cal.reserve(0, 10) == 0);    // busy [0, 10)
  CHECK(cal.reserve(30, 10) == 30);  // busy [30, 40): idle [10, 30)
  CHECK(cal.reserve(12, 5) == 12);   // [12, 17): idle [10, 12) and [17, 30)
  CHECK(cal.reserve(5, 4) == 17);    // from 5, 4 fit first in [17, 30) ([10, 12) is 2 long)
  CHECK(cal.reserve(10, 2) == 10);   // exactly [10, 12)
  CHECK(cal.reserve(20, 20) == 40);  // fits no gap ([21, 30) is left): after the latest
  CHECK(cal.free_at() == 60);
  // Only the latest GapList::kCapacity gaps are kept: the oldest is dropped.
  Resource many;
  many.set_calendar(true);
  for (Tick i = 0; i <= GapList::kCapacity; ++i) CHECK(many.reserve(10 * i + 5, 5) == 10 * i + 5);  // idle [10i, 10i+5)
  CHECK(many.reserve(0, 5) == 10);  // [0, 5) was dropped; [10, 15) is the oldest kept
  // 63 gaps are left, [20, 25) ... [640, 645); one more, [650, 655), fills the list. Splitting
  // the oldest then drops its front part: [20, 21) goes, [23, 25) stays.
  CHECK(many.reserve(655, 5) == 655);
  CHECK(many.reserve(21, 2) == 21);
  CHECK(many.reserve(20, 1) == 23);
  CHECK(many.reserve(24, 5) == 30);  // [24, 25) is too short; [30, 35) holds it
  // The models say whether they book ahead.
  ChipConfig cfg;
  for (const auto& [impl, ahead] : {std::pair<std::string, bool>{"lpddr5", false}, {"bandwidth", true}, {"simple", true}}) {
    std::unique_ptr<IMemory> m(MemoryRegistry::create(impl, ("m_" + impl).c_str()));
    CHECK(m->tells_completion_at_send() == ahead);
  }
}

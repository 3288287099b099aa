// Closed-form timing of the hardware models: PT systolic array, SFP vector unit, the simple
// off-chip memory, the ring and the LX ports. No simulation runs here (no sc_start): the
// models are constructed and their timing functions called directly.
#include <catch2/catch.hpp>

#include <vector>

#include "models/lx/lx_scratchpad.h"
#include "models/memory/impl/simple_memory.h"
#include "models/noc/ring.h"
#include "models/pt/pt_timing.h"
#include "models/sfp/sfp_timing.h"
#include "sim/config/chip_config.h"
#include "sim/stats/recorder.h"

using namespace dfsim;

namespace {

// Default spyre figures used below: PT 8x8, simd fp16 8 / fp8 16; SFP 64 lanes, pipeline 8;
// core clock 1500 MHz (period 666667 fs); memory 800 MHz (1250000 fs), 32 B/cycle per
// channel (4 B bus x 6400/800 transfers), latency 80, turnaround 16 cycles; ring 128 B/cycle,
// 2 cycles per hop.
constexpr Tick kCore = 666667;    // round(1e9 / 1500) fs
constexpr Tick kMem = 1250000;    // 1e9 / 800 fs

// Remembers when each request completed.
struct Client : MemClient {
  std::vector<Tick> done;
  void mem_done(std::uint64_t tag, Tick t) override {
    if (done.size() <= tag) done.resize(tag + 1, 0);
    done[tag] = t;
  }
};

}  // namespace

// ---------------------------------------------------------------- PT

TEST_CASE("timing: pt matmul tiles smaller than the array", "[timing][pt]") {
  // m=3 n=5 k=7: 1 tile x ceil(7/8)=1 step + (8 + 8 - 2) fill/drain = 15 cycles
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 1) == 15);
  // 2 corelets: ceil(3/2)=2 rows each, still 1 tile: 1 + 14 = 15
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 2) == 15);
  // 1x1x1 still pays the skew: 1 + 14 = 15
  CHECK(pt_matmul_cycles(1, 1, 1, 8, 8, 8, 1) == 15);
  // empty matmul: 0
  CHECK(pt_matmul_cycles(0, 8, 8, 8, 8, 8, 1) == 0);
  CHECK(pt_matmul_cycles(8, 8, 0, 8, 8, 8, 1) == 0);
}

TEST_CASE("timing: pt matmul full tiles on one vs two corelets", "[timing][pt]") {
  // 64x64x64 fp16, 1 corelet: (64/8)*(64/8)=64 tiles x 64/8=8 steps + 14 = 526 cycles
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 8, 1) == 526);
  // 2 corelets: 32 rows each -> 4*8=32 tiles x 8 steps + 14 = 270 cycles
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 8, 2) == 270);
  // fp8 (simd 16), 1 corelet: 64 tiles x 4 steps + 14 = 270 cycles
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 16, 1) == 270);
  // simd 1 (fp32 fallback): 64 tiles x 64 steps + 14 = 4110 cycles
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 1, 1) == 4110);
}

TEST_CASE("timing: pt matmul non-multiples round up", "[timing][pt]") {
  // m=17 n=9 k=65, 1 corelet: ceil(17/8)=3 * ceil(9/8)=2 = 6 tiles x ceil(65/8)=9 steps + 14 = 68
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 1) == 68);
  // 2 corelets: ceil(17/2)=9 rows -> 2*2=4 tiles x 9 + 14 = 50
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 2) == 50);
  // a 4x16 array: m=17 -> ceil(17/4)=5 * ceil(9/16)=1 = 5 tiles x 9 + (4+16-2)=18 -> 63
  CHECK(pt_matmul_cycles(17, 9, 65, 4, 16, 8, 1) == 63);
  // More corelets never slower.
  for (std::uint64_t m : {1u, 7u, 9u, 100u, 1024u})
    CHECK(pt_matmul_cycles(m, 33, 129, 8, 8, 8, 2) <= pt_matmul_cycles(m, 33, 129, 8, 8, 8, 1));
}

// ---------------------------------------------------------------- SFP

TEST_CASE("timing: sfp function classes", "[timing][sfp]") {
  SfpConfig s;  // 64 lanes, pipeline 8
  CHECK(sfp_function_class("add") == "add");
  CHECK(sfp_function_class("neg") == "add");
  CHECK(sfp_function_class("exp") == "exp");
  CHECK(sfp_function_class("sum") == "reduce");
  CHECK(sfp_function_class("div") == "div");
  CHECK(sfp_function_class("rsqrt") == "rsqrt");
  CHECK(sfp_function_class("gelu") == "gelu");
  CHECK(sfp_function_class("no_such_op") == "add");
  // 4096 elements on 1 corelet = 64 vectors.
  // add/max/fma/reduce/convert: 64 x 1 + 8 = 72 cycles
  for (const char* op : {"add", "sub", "mul", "neg", "copy", "max", "fma", "sum", "convert"})
    CHECK(sfp_cycles(s, op, Dtype::fp16, 4096, 1) == 72);
  // exp/log/rsqrt/div: 64 x 2 + 8 = 136 cycles
  for (const char* op : {"exp", "log", "rsqrt", "div"}) CHECK(sfp_cycles(s, op, Dtype::fp16, 4096, 1) == 136);
  // gelu: 64 x 4 + 8 = 264 cycles
  CHECK(sfp_cycles(s, "gelu", Dtype::fp16, 4096, 1) == 264);
}

TEST_CASE("timing: sfp fp32 at half rate and corelets split the work", "[timing][sfp]") {
  SfpConfig s;
  // fp32: cost / fp32_rate 0.5. add: 64 x 2 + 8 = 136; exp: 64 x 4 + 8 = 264; gelu: 64 x 8 + 8 = 520
  CHECK(sfp_cycles(s, "add", Dtype::fp32, 4096, 1) == 136);
  CHECK(sfp_cycles(s, "exp", Dtype::fp32, 4096, 1) == 264);
  CHECK(sfp_cycles(s, "gelu", Dtype::fp32, 4096, 1) == 520);
  CHECK(sfp_cycles(s, "add", Dtype::int32, 4096, 1) == 136);
  // 2 corelets: 2048 each = 32 vectors: add 32 + 8 = 40; exp 64 + 8 = 72
  CHECK(sfp_cycles(s, "add", Dtype::fp16, 4096, 2) == 40);
  CHECK(sfp_cycles(s, "exp", Dtype::fp16, 4096, 2) == 72);
  // 100 elements on 2 corelets: 50 each -> 1 vector: add 1 + 8 = 9, exp 2 + 8 = 10
  CHECK(sfp_cycles(s, "add", Dtype::fp16, 100, 2) == 9);
  CHECK(sfp_cycles(s, "exp", Dtype::fp16, 100, 2) == 10);
  // 65 elements on 1 corelet: 2 vectors x 1 + 8 = 10
  CHECK(sfp_cycles(s, "add", Dtype::fp16, 65, 1) == 10);
  CHECK(sfp_cycles(s, "add", Dtype::fp16, 0, 1) == 0);
  // Fractional costs round up once over the whole op: 3 vectors x 1.5 = 4.5 -> 5 + 8 = 13
  s.cycles_per_vector["exp"] = 1.5;
  CHECK(sfp_cycles(s, "exp", Dtype::fp16, 192, 1) == 13);
}

// ---------------------------------------------------------------- memory

TEST_CASE("timing: simple memory transfer time and interleaving", "[timing][memory]") {
  ChipConfig cfg;
  Recorder rec(ns_to_ticks(1000));
  SimpleMemory mem("mem");
  mem.init(cfg, rec);
  CHECK(mem.channels() == 8);
  // 32 B per memory cycle: 4096 B = 128 cycles x 1.25 ns = 160 ns
  CHECK(mem.transfer_time(4096) == 128 * kMem);
  CHECK(mem.transfer_time(4096) == ns_to_ticks(160));
  // partial beats round up: 1 B -> 1 cycle, 33 B -> 2 cycles
  CHECK(mem.transfer_time(1) == kMem);
  CHECK(mem.transfer_time(33) == 2 * kMem);
  // 4 KiB interleave over 8 channels
  CHECK(mem.channel_of(0) == 0);
  CHECK(mem.channel_of(4095) == 0);
  CHECK(mem.channel_of(4096) == 1);
  CHECK(mem.channel_of(7 * 4096 + 5) == 7);
  CHECK(mem.channel_of(8 * 4096) == 0);
  CHECK(cfg.memory_peak_gbps() == Approx(204.8));
}

TEST_CASE("timing: simple memory queues with latency and read-write turnaround", "[timing][memory]") {
  ChipConfig cfg;
  Recorder rec(ns_to_ticks(1000));
  SimpleMemory mem("mem");
  mem.init(cfg, rec);
  Client c;
  // Read 4 KiB on channel 0 at t=0: 128 cycles on the bus + 80 latency = 208 cycles (260 ns)
  mem.send(MemRequest{0, 4096, false, 0, &c, 0});
  CHECK(c.done.at(0) == 208 * kMem);
  // A read on channel 1 at t=0 does not queue: also 208 cycles
  mem.send(MemRequest{4096, 4096, false, 0, &c, 1});
  CHECK(c.done.at(1) == 208 * kMem);
  // A write on channel 0 at t=0: bus free at 128, + 16 turnaround = 144, + 128 + 80 = 352 cycles
  mem.send(MemRequest{8 * 4096, 4096, true, 0, &c, 2});
  CHECK(c.done.at(2) == 352 * kMem);
  // Another write on channel 0: no turnaround, queues behind: 272 + 128 + 80 = 480 cycles
  mem.send(MemRequest{16 * 4096, 4096, true, 0, &c, 3});
  CHECK(c.done.at(3) == 480 * kMem);
  // A read again on channel 0, arriving late (at 1000 cycles): bus long free, but it still turns:
  // max(1000, 400 + 16) = 1000, + 128 + 80 = 1208 cycles
  mem.send(MemRequest{0, 4096, false, 1000 * kMem, &c, 4});
  CHECK(c.done.at(4) == 1208 * kMem);

  const MemStats& s = mem.stats();
  CHECK(s.bytes_read == 3 * 4096);
  CHECK(s.bytes_written == 2 * 4096);
  CHECK(s.reads == 3);
  CHECK(s.writes == 2);
  CHECK(s.turnarounds == 2);
  auto ch = mem.channel_stats();
  CHECK(ch[0].turnarounds == 2);
  CHECK(ch[1].turnarounds == 0);
  CHECK(ch[1].bytes_read == 4096);
}

// ---------------------------------------------------------------- ring

TEST_CASE("timing: ring hops and occupancy and controller stops", "[timing][ring]") {
  ChipConfig cfg;  // 32 stops
  Recorder rec(ns_to_ticks(1000));
  Ring ring("ring");
  ring.init(cfg, rec);
  CHECK(ring.stops() == 32);
  CHECK(ring.hops(0, 0) == 0);
  CHECK(ring.hops(0, 1) == 1);
  CHECK(ring.hops(0, 31) == 1);   // counter-clockwise
  CHECK(ring.hops(31, 0) == 1);
  CHECK(ring.hops(0, 16) == 16);  // the far side
  CHECK(ring.hops(3, 20) == 15);  // 17 clockwise, 15 counter-clockwise
  CHECK(ring.hops(5, 3) == 2);
  // 128 B per cycle: 4096 B = 32 cycles; 1 B = 1 cycle; 129 B = 2 cycles
  CHECK(ring.occupancy(4096) == 32 * kCore);
  CHECK(ring.occupancy(1) == kCore);
  CHECK(ring.occupancy(129) == 2 * kCore);
  // 8 controllers spread evenly: stop ch * 32 / 8
  CHECK(ring.controller_stop(0) == 0);
  CHECK(ring.controller_stop(3) == 12);
  CHECK(ring.controller_stop(7) == 28);
}

TEST_CASE("timing: ring transfer on an idle ring", "[timing][ring]") {
  ChipConfig cfg;
  Recorder rec(ns_to_ticks(1000));
  Ring ring("ring");
  ring.init(cfg, rec);
  // 0 -> 3, 4096 B at t=0: 3 hops x 2 + 32 occupancy = 38 cycles
  CHECK(ring.transfer(0, 0, 3, 4096) == 38 * kCore);
  // 10 -> 5 (counter-clockwise, 5 hops), 256 B, head leaves at 100 cycles: 100 + 5 x 2 + 2 = 112
  CHECK(ring.transfer(100 * kCore, 10, 5, 256) == 112 * kCore);
  // To itself: no time
  CHECK(ring.transfer(7 * kCore, 4, 4, 4096) == 7 * kCore);
  CHECK(ring.bytes_carried() == 4096 + 256 + 4096);
}

TEST_CASE("timing: ring transfers sharing a link queue", "[timing][ring]") {
  ChipConfig cfg;
  Recorder rec(ns_to_ticks(1000));
  Ring ring("ring");
  ring.init(cfg, rec);
  // First 0 -> 2 at t=0: 2 x 2 + 32 = 36 cycles; it holds link 1->2 over [2, 34).
  CHECK(ring.transfer(0, 0, 2, 4096) == 36 * kCore);
  // 1 -> 3 at t=0 needs link 1->2: waits until 34, + 2 hop = 36 at stop 2; link 2->3 was held
  // over [4, 36) by nobody (the first stopped at 2) -> 36 + 2 = 38, + 32 = 70 cycles
  CHECK(ring.transfer(0, 1, 3, 4096) == 70 * kCore);
  // 3 -> 4 at t=0 shares no link with either: 2 + 32 = 34 cycles
  CHECK(ring.transfer(0, 3, 4, 4096) == 34 * kCore);
}

TEST_CASE("timing: ring chooses the shortest direction", "[timing][ring]") {
  ChipConfig cfg;
  Recorder rec(ns_to_ticks(1000));
  Ring ring("ring");
  ring.init(cfg, rec);
  // 0 -> 31 goes counter-clockwise in 1 hop: 2 + 32 = 34 cycles (clockwise would be 31 hops)
  CHECK(ring.transfer(0, 0, 31, 4096) == 34 * kCore);
  // 0 -> 1 uses the clockwise link 0->1, not shared with the ccw 0->31: also 34
  CHECK(ring.transfer(0, 0, 1, 4096) == 34 * kCore);
  // A second 0 -> 31 queues behind the first on link ccw 0->31: starts at 32, 32 + 2 + 32 = 66
  CHECK(ring.transfer(0, 0, 31, 4096) == 66 * kCore);
  // A tie (16 hops either way) goes clockwise: 0 -> 16 needs cw 0->1, held [0, 32) by the
  // 0 -> 1 transfer, so its head leaves at 32: 32 + 16 x 2 + 32 = 96 cycles (links 1->2 ...
  // 15->16 are idle). Counter-clockwise it would have queued on ccw 0->31 until 64.
  CHECK(ring.transfer(0, 0, 16, 4096) == 96 * kCore);
}

// ---------------------------------------------------------------- LX

TEST_CASE("timing: lx port times and capacity", "[timing][lx]") {
  ChipConfig cfg;  // 256 B/cycle read and write, 1589376 B usable
  Recorder rec(ns_to_ticks(1000));
  LxScratchpad lx("lx", cfg, rec, 0);
  CHECK(lx.read_time(256) == kCore);
  CHECK(lx.read_time(257) == 2 * kCore);
  CHECK(lx.write_time(8192) == 32 * kCore);
  CHECK(lx.capacity() == 1589376);
  CHECK(lx.try_reserve(1000000));
  CHECK_FALSE(lx.try_reserve(600000));  // 1000000 + 600000 > 1589376: all or nothing
  CHECK(lx.used() == 1000000);
  CHECK(lx.try_reserve(589376));        // exactly full
  CHECK(lx.free() == 0);
  lx.release(1000000);
  CHECK(lx.used() == 589376);
  CHECK(lx.peak() == 1589376);
}

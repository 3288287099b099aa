// Closed-form timing of the hardware models: PT systolic array, SFP vector unit, the simple
// off-chip memory, the ring and the LX ports. No simulation runs here (no sc_start): the
// models are constructed and their timing functions called directly.
#include <catch2/catch.hpp>

#include <vector>

#include "models/lx/lx_scratchpad.h"
#include "models/memory/impl/bandwidth_memory.h"
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
// A fold maps (Sr, Sc, T) onto the array: os (m, n, ceil(k/simd)), ws (ceil(k/simd), n, m),
// is (ceil(k/simd), m, n). Alone it takes 2 Sr + Sc + T - 2; back to back every fold but the
// last costs max(T, Sr). Corelets split m (os, is) or n (ws).

namespace {
constexpr Dataflow OS = Dataflow::os, WS = Dataflow::ws, IS = Dataflow::is;
}

TEST_CASE("timing: pt matmul tiles smaller than the array", "[timing][pt]") {
  // m=3 n=5 k=7 on 8x8, simd 8: ceil(7/8) = 1 step.
  // os: Sr=3 Sc=5 T=1: 2*3 + 5 + 1 - 2 = 10
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 1, OS) == 10);
  // ws: Sr=1 Sc=5 T=3: 2*1 + 5 + 3 - 2 = 8
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 1, WS) == 8);
  // is: Sr=1 Sc=3 T=5: 2*1 + 3 + 5 - 2 = 8
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 1, IS) == 8);
  // 2 corelets: os splits m: ceil(3/2)=2 rows: 2*2 + 5 + 1 - 2 = 8; ws splits n: ceil(5/2)=3
  // cols: 2 + 3 + 3 - 2 = 6; is splits m: Sc=2: 2 + 2 + 5 - 2 = 7
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 2, OS) == 8);
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 2, WS) == 6);
  CHECK(pt_matmul_cycles(3, 5, 7, 8, 8, 8, 2, IS) == 7);
  // 1x1x1: 2*1 + 1 + 1 - 2 = 2 in every dataflow
  for (Dataflow d : {OS, WS, IS}) CHECK(pt_matmul_cycles(1, 1, 1, 8, 8, 8, 1, d) == 2);
  // A tile that fills 2 of 8 rows: ws, k=16 -> 2 steps, n=8, m=100: 2*2 + 8 + 100 - 2 = 110
  // cycles for 12800 MACs (116 MAC/cycle of 512: three quarters of the PE rows idle)
  CHECK(pt_matmul_cycles(100, 8, 16, 8, 8, 8, 1, WS) == 110);
  // empty matmul: 0
  CHECK(pt_matmul_cycles(0, 8, 8, 8, 8, 8, 1, WS) == 0);
  CHECK(pt_matmul_cycles(8, 8, 0, 8, 8, 8, 1, OS) == 0);
}

TEST_CASE("timing: pt matmul full tiles on one vs two corelets", "[timing][pt]") {
  // 64x64x64 fp16 (simd 8 -> 8 steps), 1 corelet:
  // os: 8 m folds x 8 n folds = 64, T=8: 63 x max(8, 8) + (2*8 + 8 + 8 - 2) = 504 + 30 = 534
  // ws: 1 k fold x 8 n folds, T=m=64: 7 x 64 + (16 + 8 + 64 - 2) = 448 + 86 = 534
  // is: 1 k fold x 8 m folds, T=n=64: 7 x 64 + 86 = 534
  for (Dataflow d : {OS, WS, IS}) CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 8, 1, d) == 534);
  // 2 corelets: os 4 x 8 = 32 folds: 31 x 8 + 30 = 278; ws/is 4 folds: 3 x 64 + 86 = 278
  for (Dataflow d : {OS, WS, IS}) CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 8, 2, d) == 278);
  // fp8 (simd 16 -> 4 steps), 1 corelet, ws: 1 k fold (Sr=4) x 8 n folds, T=64:
  // 7 x 64 + (2*4 + 8 + 64 - 2) = 448 + 78 = 526
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 16, 1, WS) == 526);
  // os fp8: 64 folds, T=4 < Sr=8: the result shift-out bounds each fold: 63 x 8 + (16 + 8 + 4 - 2) = 530
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 16, 1, OS) == 530);
  // simd 1 (fp32 fallback), ws: 64 steps = 8 k folds x 8 n folds, T=64: 63 x 64 + 86 = 4118
  CHECK(pt_matmul_cycles(64, 64, 64, 8, 8, 1, 1, WS) == 4118);
}

TEST_CASE("timing: pt matmul non-multiples round up", "[timing][pt]") {
  // m=17 n=9 k=65, 1 corelet, simd 8: 9 steps.
  // os: m folds 8,8,1; n folds 8,1; T=9: 2*2 x max(9,8) + 2 x max(9,1) = 36 + 18 = 54;
  //     minus the last fold's 9, plus its 2*1 + 1 + 9 - 2 = 10: 54 - 9 + 10 = 55
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 1, OS) == 55);
  // ws: k folds 8,1; n folds 8,1; T=m=17: 2 x 17 + 2 x 17 = 68; 68 - 17 + (2 + 1 + 17 - 2) = 69
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 1, WS) == 69);
  // is: k folds 8,1; m folds 8,8,1; T=n=9: 3 x 9 + 3 x 9 = 54; 54 - 9 + (2 + 1 + 9 - 2) = 55
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 1, IS) == 55);
  // ws on 2 corelets: n split ceil(9/2) = 5 -> 1 n fold of 5: 17 + (2 + 5 + 17 - 2) = 39
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 2, WS) == 39);
  // a 4x16 array, os: m folds 4,4,4,4,1; n: 1 fold of 9; T=9:
  // 4 x max(9,4) + 1 x max(9,1) = 45; 45 - 9 + (2*1 + 9 + 9 - 2) = 54
  CHECK(pt_matmul_cycles(17, 9, 65, 4, 16, 8, 1, OS) == 54);
  // More corelets never slower.
  for (Dataflow d : {OS, WS, IS})
    for (std::uint64_t m : {1u, 7u, 9u, 100u, 1024u})
      CHECK(pt_matmul_cycles(m, 33, 129, 8, 8, 8, 2, d) <= pt_matmul_cycles(m, 33, 129, 8, 8, 8, 1, d));
}

TEST_CASE("timing: pt back-to-back folds overlap down to the preload", "[timing][pt]") {
  // ws, m=4 rows streamed but 8 rows of weights to preload per fold: k=128 -> 16 steps = 2 k
  // folds, n=8 -> 1 n fold. The next fold's preload (8) outlasts the stream (4):
  // 1 x max(4, 8) + (2*8 + 8 + 4 - 2) = 8 + 26 = 34
  CHECK(pt_matmul_cycles(4, 8, 128, 8, 8, 8, 1, WS) == 34);
  // The textbook 32x32 weight-stationary array (simd 1): m=64 n=32 k=32: 2*32 + 32 + 64 - 2 = 158;
  // k=64: two k folds: 1 x max(64, 32) + 158 = 222
  CHECK(pt_matmul_cycles(64, 32, 32, 32, 32, 1, 1, WS) == 158);
  CHECK(pt_matmul_cycles(64, 32, 64, 32, 32, 1, 1, WS) == 222);
}

TEST_CASE("timing: pt folds limited to a stream of 64 rows pay their fill and drain", "[timing][pt]") {
  // core.pt.fold_stream_limit = 64 (the spyre preset's): folds do not overlap and a fold streams
  // at most 64 steps; each part costs 2 Sr + Sc - 2 + its stream.
  // ws 512x256x128 fp16 on 2 corelets (matmul_4096's task): 16 steps = 2 k folds of 8, 128
  // columns per corelet = 16 n folds of 8: 32 folds, T = 512 = 8 parts of 64:
  // 32 x 8 x (2*8 + 8 - 2) + 32 x 512 = 5632 + 16384 = 22016 cycles (16384 at peak: 74.4 %)
  CHECK(pt_matmul_cycles(512, 256, 128, 8, 8, 8, 2, WS, 64) == 22016);
  // 96 (the preset's before issue 13 refitted it): 6 parts: 32 x 6 x 22 + 16384 = 20608 (79.5 %)
  CHECK(pt_matmul_cycles(512, 256, 128, 8, 8, 8, 2, WS, 96) == 20608);
  // without the limit: 31 x 512 + (2*8 + 8 + 512 - 2) = 16406
  CHECK(pt_matmul_cycles(512, 256, 128, 8, 8, 8, 2, WS, 0) == 16406);
  // fp8 (16 ways): 8 steps = 1 k fold, 16 folds: 16 x 8 x 22 + 16 x 512 = 2816 + 8192 = 11008,
  // half of fp16: the fill and drain are per fold, and fp8 halves the folds
  CHECK(pt_matmul_cycles(512, 256, 128, 8, 8, 16, 2, WS, 64) == 11008);
  CHECK(pt_matmul_cycles(512, 256, 128, 8, 8, 8, 2, WS, 64) == 2 * 11008);
  // A stream shorter than the limit is one part: ws m=4, k=128 (2 k folds), n=8 (1 n fold),
  // 1 corelet: 2 x (2*8 + 8 - 2 + 4) = 52 (34 when folds overlap, the case above)
  CHECK(pt_matmul_cycles(4, 8, 128, 8, 8, 8, 1, WS, 64) == 52);
  // Partial folds use their own Sr, Sc: 17x9x65 ws, 1 corelet: 9 steps = folds of 8 and 1 rows,
  // 9 cols = folds of 8 and 1; T = 17 = 1 part: sum Sr = (8 + 1) x 2 = 18, sum Sc = (8 + 1) x 2
  // = 18, 4 folds: (2*18 + 18 - 2*4) + 4 x 17 = 46 + 68 = 114
  CHECK(pt_matmul_cycles(17, 9, 65, 8, 8, 8, 1, WS, 64) == 114);
  // os streams ceil(k/simd): 64x64x1024 on 1 corelet, 8 x 8 folds, T = 128 = 2 parts:
  // 64 x 2 x 22 + 64 x 128 = 2816 + 8192 = 11008
  CHECK(pt_matmul_cycles(64, 64, 1024, 8, 8, 8, 1, OS, 64) == 11008);
}

TEST_CASE("timing: pt LX feed and partial sums per dataflow", "[timing][pt][lx]") {
  // 64x64x64 fp16 on 2 corelets, 8x8, simd 8.
  // os: A once per n fold (8), B once per m fold of a corelet (4, broadcast to both):
  // (64*64*8 + 64*64*4) x 2 B = 98304 B; no partial sums (accumulators stay in the PEs)
  PtCost os = pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, OS, Dtype::fp16);
  CHECK(os.feed_bytes == 98304);
  CHECK(os.psum_bytes == 0);
  CHECK(os.folds == 32);
  // ws: B once (weights), A once per n fold of a corelet (4): (4096 + 64*64*4) x 2 = 40960 B
  PtCost ws = pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, WS, Dtype::fp16);
  CHECK(ws.feed_bytes == 40960);
  CHECK(ws.psum_bytes == 0);  // one k fold
  // is: A once, B once per m fold of a corelet (4): 40960 B
  CHECK(pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, IS, Dtype::fp16).feed_bytes == 40960);
  // ws with k=1024: 128 steps = 16 k folds: 15 x 64*64 x 4 B = 245760 B of fp32 partial sums
  // written and read back
  CHECK(pt_matmul_cost(64, 64, 1024, 8, 8, 8, 2, WS, Dtype::fp16).psum_bytes == 245760);
  // 17x9x65 ws, 1 corelet: k*n + m*k*2 n folds = 585 + 2210 = 2795 elements = 5590 B;
  // 2 k folds: 1 x 17*9 x 4 = 612 B of partial sums
  PtCost odd = pt_matmul_cost(17, 9, 65, 8, 8, 8, 1, WS, Dtype::fp16);
  CHECK(odd.feed_bytes == 5590);
  CHECK(odd.psum_bytes == 612);
  // Without the broadcast of the streamed operand each corelet reads its own copy:
  // ws: B once + A once per n fold of a corelet (4), twice: (4096 + 64*64*4 x 2) x 2 B = 73728 B;
  // os: A per n fold (8) + B per m fold (4) twice: (32768 + 16384 x 2) x 2 = 131072 B;
  // is: A once + B per m fold (4) twice: 73728 B. The cycles do not change.
  CHECK(pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, WS, Dtype::fp16, false).feed_bytes == 73728);
  CHECK(pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, OS, Dtype::fp16, false).feed_bytes == 131072);
  CHECK(pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, IS, Dtype::fp16, false).feed_bytes == 73728);
  CHECK(pt_matmul_cost(64, 64, 64, 8, 8, 8, 2, WS, Dtype::fp16, false).cycles == ws.cycles);
  // one corelet has no one to share with: 17x9x65 as above
  CHECK(pt_matmul_cost(17, 9, 65, 8, 8, 8, 1, WS, Dtype::fp16, false).feed_bytes == 5590);
  // int4 packs two per byte: (4096 + 16384) / 2 = 10240 B
  CHECK(pt_matmul_cost(64, 64, 64, 8, 8, 32, 2, WS, Dtype::int4).feed_bytes == 10240);
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
  // Row reductions through a pipelined tree (tree_level_cycles 0): 4 rows of 1024 on 1
  // corelet: 16 vectors per row x 4 = 64 vectors + 4
  // cross-lane passes + log2(64) = 6 tree depth + 8 pipeline = 82
  s.tree_level_cycles = 0;
  CHECK(sfp_cycles(s, "sum", Dtype::fp16, 4096, 1, 4) == 82);
  // 256 short rows of 16 on 2 corelets: 128 rows each, 1 vector per row: 128 + 128 + 6 + 8 = 270
  // (the same elements elementwise: 32 vectors + 8 = 40)
  CHECK(sfp_cycles(s, "sum", Dtype::fp16, 4096, 2, 256) == 270);
  // only reduce-class ops take rows into account
  CHECK(sfp_cycles(s, "add", Dtype::fp16, 4096, 2, 256) == 40);
  // An unpipelined cross-lane tree (tree_level_cycles 4, the default): every vector of a row takes the 6
  // levels x 4 = 24 cycles. 4 rows of 1024 on 1 corelet: 64 vectors x 24 = 1536 + 4 + 6 + 8 = 1554
  s.tree_level_cycles = 4;
  CHECK(sfp_cycles(s, "sum", Dtype::fp16, 4096, 1, 4) == 1554);
  // 2 corelets, 256 rows of 16: 128 vectors x 24 = 3072 + 128 + 6 + 8 = 3214
  CHECK(sfp_cycles(s, "sum", Dtype::fp16, 4096, 2, 256) == 3214);
  // Elementwise accumulates (a column sum's "add") do not pass the tree: 32 vectors + 8 = 40
  CHECK(sfp_cycles(s, "add", Dtype::fp16, 4096, 2, 256) == 40);
  // A class cost above the tree's stays: reduce at 30 cycles per vector: 64 x 30 + 4 + 6 + 8 = 1938
  s.cycles_per_vector["reduce"] = 30;
  CHECK(sfp_cycles(s, "sum", Dtype::fp16, 4096, 1, 4) == 1938);
  s.tree_level_cycles = 0;
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

// The DMA engines book all the hops of a burst at once, for times still to come, so a link is
// booked out of the order the bursts reach it; it serves them in the order they arrive
// (ring.link_order "arrival", what "auto" is under lpddr5), or, with "booking", in the order
// they were booked.
TEST_CASE("timing: a ring link serves bursts in the order they arrive, not the order they are booked",
          "[timing][ring]") {
  ChipConfig cfg;  // 2 cycles a hop, 128 B a cycle: 4096 B hold a link 32 cycles
  cfg.ring.link_order = "arrival";  // (the default, "auto", is decided by the card's memory model)
  Recorder rec(ns_to_ticks(1000));
  Ring ring("ring");
  ring.init(cfg, rec);
  // A: 0 -> 3 leaving at 100: links 0->1 [100, 132), 1->2 [102, 134), 2->3 [104, 136);
  // 104 + 2 + 32 = 138.
  CHECK(ring.transfer(100 * kCore, 0, 3, 4096) == 138 * kCore);
  // B, booked after A, reaches link 1->2 at 0: it goes through the idle [0, 102) before A:
  // 0 + 2 + 32 = 34 (in booking order it would wait for A: 134 + 2 + 32 = 168).
  CHECK(ring.transfer(0, 1, 2, 4096) == 34 * kCore);
  // C: 1 -> 3 at 40: link 1->2 in [40, 72) (left of the gap: [32, 102)), at stop 2 at 42, link
  // 2->3 in [42, 74) before A's [104, 136): 44 + 32 = 76.
  CHECK(ring.transfer(40 * kCore, 1, 3, 4096) == 76 * kCore);
  // D: 1 -> 2 at 90 does not fit in what is left before A ([72, 102)): after A, 134 + 2 + 32.
  CHECK(ring.transfer(90 * kCore, 1, 2, 4096) == 168 * kCore);

  cfg.ring.link_order = "booking";
  Ring booked("booked");
  booked.init(cfg, rec);
  CHECK(booked.transfer(100 * kCore, 0, 3, 4096) == 138 * kCore);
  CHECK(booked.transfer(0, 1, 2, 4096) == 168 * kCore);  // behind A on link 1->2, as above
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

TEST_CASE("timing: ring multicast crosses each link once per direction", "[timing][ring]") {
  ChipConfig cfg;
  Recorder rec(ns_to_ticks(1000));
  Ring ring("ring");
  ring.init(cfg, rec);
  // 0 -> {1, 2, 3, 30}, 4096 B: clockwise to the farthest, 3 (3 x 2 + 32 = 38 cycles); 30 is
  // 2 hops counter-clockwise (2 x 2 + 32 = 36). Done when the last byte reaches 3: 38.
  CHECK(ring.multicast(0, 0, {1, 2, 3, 30}, 4096) == 38 * kCore);
  CHECK(ring.bytes_carried() == 2 * 4096);  // one message each way
  // A unicast 0 -> 3 queues on every link the multicast crossed once: cw 0->1 held [0, 32),
  // 1->2 [2, 34), 2->3 [4, 36): head at 32 + 2 = 34, 34 + 2 = 36, 36 + 2 = 38; + 32 = 70.
  CHECK(ring.transfer(0, 0, 3, 4096) == 70 * kCore);
  // Destinations at the source only: nothing crosses the ring.
  CHECK(ring.multicast(5 * kCore, 7, {7}, 4096) == 5 * kCore);
  CHECK(ring.bytes_carried() == 3 * 4096);
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

TEST_CASE("timing: the bandwidth memory books column time, refresh share and drain turnarounds", "[timing][memory]") {
  ChipConfig cfg;  // lpddr5 defaults: 800 MHz (1.25 ns), BL32 on 32 bits = 128 B per column
  Recorder rec(ns_to_ticks(1000));
  BandwidthMemory mem("mem");
  mem.init(cfg, rec);
  Client c;
  // 512 B = 4 columns + 1 inline-ECC column = 5, at max(tCCD_L 4, burst 4) = 4 cycles = 5 ns
  // each, stretched by refresh: / (1 - (tRP 15 + tRFC 224) / tREFI 3125) = 5.41406791 ns per
  // column, 27.070340 ns for the piece. Read latency tRCD 15 + RL 17 + burst 4 + front end 8 =
  // 44 cycles = 55 ns: done at 82.070340 ns.
  mem.send(MemRequest{0, 512, false, 0, &c, 0});
  CHECK(c.done.at(0) == 82'070'340);
  // The same block again at t=0 queues behind it: 2 x 27.070340 + 55 ns.
  mem.send(MemRequest{0, 512, false, 0, &c, 1});
  CHECK(c.done.at(1) == 109'140'680);
  // A write there while reads mix in pays (tRTW 18 + tWTR 14) / (write_high 24 - write_low 8)
  // = 2 cycles = 2.5 ns of turnaround; write latency tRCD 15 + WL 9 + 4 + 8 = 36 cycles = 45 ns:
  // 3 x 27.070340 + 2.5 + 45 ns.
  mem.send(MemRequest{0, 512, true, 0, &c, 2});
  CHECK(c.done.at(2) == 128'711'020);
  // Booked ahead: a read arriving at 1000 ns leaves the channel idle from 3 x 27.070340 + 2.5
  // = 83.711020 ns to 1000 ns; a read booked after it but arriving at 200 ns fills that gap:
  // 200 + 27.070340 + 55 ns (instead of queueing behind the later one).
  mem.send(MemRequest{0, 512, false, 1'000'000'000, &c, 3});
  CHECK(c.done.at(3) == 1'082'070'340);
  mem.send(MemRequest{0, 512, false, 200'000'000, &c, 4});
  CHECK(c.done.at(4) == 282'070'340);
  CHECK(rec.tracks()[0].busy == 5 * 27'070'340 + 2'500'000);  // every piece, gap-filler included
  CHECK(mem.stats().bytes_read == 4 * 512);
  CHECK(mem.stats().bytes_written == 512);
  CHECK(mem.stats().turnarounds == 1);
}

// Compute fidelity end to end: PT and SFP tasks in full simulations whose times are closed
// forms (docs/models.md, "PT" and "SFP"): the textbook weight-stationary array, dataflows and
// LX feed, precisions, SFP function classes and row reductions, and the ideal-memory
// calibration of a compute-bound matmul. One simulation per test case.
#include <catch2/catch.hpp>

#include <string>

#include "models/pt/pt_timing.h"
#include "sim/app/cli.h"
#include "sim/common/json_io.h"
#include "sim/compiler/compile.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/runtime/simulation.h"
#include "sim/stats/summary.h"

using namespace dfsim;

namespace {

constexpr Tick kCore = 666667;  // core clock 1500 MHz: round(1e9 / 1500) fs per cycle

KernelGraph graph(const std::string& buffers, const std::string& tasks) {
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "t", "cores": 1, "buffers": [)" +
                     buffers + R"(], "kernels": [{"name": "k", "tasks": [)" + tasks + "]}]}";
  return read_kernel_graph(Json::parse(text), "test.json");
}

// Simulates g on cfg and returns the end time.
Tick run(const KernelGraph& g, const ChipConfig& cfg) {
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  return r.end;
}

// One PT task m x n x k on core 0 with preloaded LX operands of dtype `in`, output fp16.
KernelGraph one_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k, const std::string& in) {
  std::uint64_t bits = in == "int4" ? 4 : in == "fp16" ? 16 : 8;
  std::string a = std::to_string(m * k * bits / 8), b = std::to_string(k * n * bits / 8),
              c = std::to_string(m * n * 2);
  return graph(R"({"name": "a", "space": "lx", "bytes": )" + a + R"(, "dtype": ")" + in + R"(", "preloaded": true},
                  {"name": "b", "space": "lx", "bytes": )" + b + R"(, "dtype": ")" + in + R"(", "preloaded": true},
                  {"name": "c", "space": "lx", "bytes": )" + c + R"(, "dtype": "fp16"})",
               R"({"name": "mm", "unit": "pt", "op": "matmul", "core": 0, "m": )" + std::to_string(m) +
                   R"(, "n": )" + std::to_string(n) + R"(, "k": )" + std::to_string(k) +
                   R"(, "reads": [{"buffer": "a", "bytes": )" + a + R"(}, {"buffer": "b", "bytes": )" + b +
                   R"(}], "writes": [{"buffer": "c", "bytes": )" + c + "}]}");
}

}  // namespace

TEST_CASE("compute: one core as a plain 32x32 weight-stationary array gives the textbook count", "[compute][pt]") {
  // The issue's settings; the op graph is compiled for 1 core as `dfsim run --cores 1` does.
  ChipConfig cfg = load_chip_config("configs/spyre.json",
                                    {"card.kernel_launch_ns=0", "core.corelets=1", "core.pt.simd.fp16=1", "core.pt.rows=32",
                                     "core.pt.cols=32", "core.pt.dataflow=ws", "memory.ideal=true"});
  OpGraph ops = read_op_graph(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "mm",
      "tensors": {"a": {"shape": [64, 32], "dtype": "fp16"}, "b": {"shape": [32, 32], "dtype": "fp16"},
                  "c": {"shape": [64, 32], "dtype": "fp16"}},
      "inputs": ["a", "b"], "outputs": ["c"],
      "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]})"), "mm.json");
  KernelGraph g = compile_ops(ops, cfg, 1);
  // Loads and the store take no time (ideal memory); one PT task m=64 n=32 k=32, one fold:
  // preload 32 weight rows + skew (32 + 32 - 2) + 64 streamed rows = 2*32 + 32 + 64 - 2 = 158
  // cycles (LX: (32*32 + 64*32) x 2 B = 6144 B / 256 = 24 cycles of feed, hidden).
  CHECK(run(g, cfg) == 158 * kCore);
}

TEST_CASE("compute: an output-stationary PT stalls on the LX read port", "[compute][pt][lx]") {
  ChipConfig cfg;
  cfg.core.pt.dataflow = Dataflow::os;
  cfg.core.pt.fold_stream_limit = 0;  // folds back to back: the feed, not the folds, binds
  // 64x64x64 fp16 on 2 corelets: compute 31 x 8 + 30 = 278 cycles, but both operands stream:
  // A 64*64 x 8 n folds + B 64*64 x 4 m folds = 49152 elements = 98304 B / 256 B = 384 cycles
  // (in ws the same task streams only A, shared by both corelets, and loads B once:
  // (4096 + 16384) x 2 = 40960 B / 256 = 160 cycles < 278: compute bound; see test_models)
  CHECK(run(one_matmul(64, 64, 64, "fp16"), cfg) == 384 * kCore);
}

TEST_CASE("compute: ws with k folds writes back partial sums and stays compute bound", "[compute][pt][lx]") {
  ChipConfig cfg;  // ws, 8x8, simd fp16 8, 2 corelets, LX 256 B/cycle each way, fold limit 64
  // 256x256x1024 fp16: 128 steps = 16 k folds; n split: 128 per corelet = 16 n folds: 256 folds
  // of Sr = Sc = 8, T = m = 256 = 4 parts of at most 64, each part 2*8 + 8 - 2 = 22 cycles:
  // 256 x 4 x 22 + 256 x 256 = 22528 + 65536 = 88064 cycles (65536 at peak: 74.4 %)
  // LX read: feed (1024*256 + 256*1024*16) x 2 B = 8912896 + partial sums 15 x 256*256 x 4 = 3932160
  //   -> 12845056 / 256 = 50176 cycles; write: 3932160 + 131072 output = 15872 cycles. Both hidden.
  CHECK(run(one_matmul(256, 256, 1024, "fp16"), cfg) == 88064 * kCore);
}

// Precisions: one simulation per process, so each precision is its own case; the ratio is
// checked on the closed forms those cases pin down.
// 256x256x1024, 16 n folds per corelet, T = 256 = 4 parts, 22 cycles of fill and drain each:
//   fp16 (8 ways):  128 steps = 16 k folds: 256 folds x (4 x 22 + 256) = 88064 cycles (case above)
//   fp8/int8 (16):   64 steps =  8 k folds: 128 folds x 344 = 44032
//   int4 (32):       32 steps =  4 k folds:  64 folds x 344 = 22016
TEST_CASE("compute: fp8 matmul runs at twice the fp16 rate", "[compute][pt][precision]") {
  CHECK(run(one_matmul(256, 256, 1024, "fp8"), ChipConfig{}) == 44032 * kCore);
}

TEST_CASE("compute: int8 matmul runs at twice the fp16 rate", "[compute][pt][precision]") {
  CHECK(run(one_matmul(256, 256, 1024, "int8"), ChipConfig{}) == 44032 * kCore);
}

TEST_CASE("compute: int4 matmul runs at twice the int8 rate", "[compute][pt][precision]") {
  CHECK(run(one_matmul(256, 256, 1024, "int4"), ChipConfig{}) == 22016 * kCore);
}

TEST_CASE("compute: PT throughput doubles from fp16 to fp8/int8 and again to int4", "[compute][pt][precision]") {
  ChipConfig c;
  const PtConfig& pt = c.core.pt;
  auto cycles = [&](Dtype d) {
    return static_cast<double>(
        pt_matmul_cycles(256, 256, 1024, pt.rows, pt.cols, pt.simd.at(d), 2, pt.dataflow, pt.fold_stream_limit));
  };
  CHECK(cycles(Dtype::fp16) == 88064);
  CHECK(cycles(Dtype::fp8) == 44032);
  CHECK(cycles(Dtype::int8) == 44032);
  CHECK(cycles(Dtype::int4) == 22016);
  CHECK(cycles(Dtype::fp16) / cycles(Dtype::fp8) == Approx(2.0).epsilon(0.005));
  CHECK(cycles(Dtype::fp16) / cycles(Dtype::int8) == Approx(2.0).epsilon(0.005));
  CHECK(cycles(Dtype::int8) / cycles(Dtype::int4) == Approx(2.0).epsilon(0.005));
  // and the configured peak follows the ways
  CHECK(c.peak_macs_per_ns(Dtype::fp8) == Approx(2 * c.peak_macs_per_ns(Dtype::fp16)));
  CHECK(c.peak_macs_per_ns(Dtype::int4) == Approx(4 * c.peak_macs_per_ns(Dtype::fp16)));
}

TEST_CASE("compute: sfp elementwise op on N elements equals the closed form", "[compute][sfp]") {
  ChipConfig cfg;  // 64 lanes per corelet, 2 corelets, pipeline 8, exp 2 cycles per vector
  KernelGraph g = graph(R"({"name": "x", "space": "lx", "bytes": 200000, "preloaded": true},
                           {"name": "y", "space": "lx", "bytes": 200000})",
                        R"({"name": "g", "unit": "sfp", "op": "exp", "core": 0, "elements": 100000,
                            "reads": [{"buffer": "x", "bytes": 200000}], "writes": [{"buffer": "y", "bytes": 200000}]})");
  // 100000 fp16 / 2 corelets = 50000 = 782 vectors of 64; x 2 cycles = 1564 + 8 = 1572 cycles
  // (LX: 200000 B / 256 = 782 cycles each way, hidden)
  CHECK(run(g, cfg) == 1572 * kCore);
}

// A 64 x 1000 fp16 row sum in LX on one core (both row-reduction cases below).
static KernelGraph row_sum_graph() {
  return graph(R"({"name": "x", "space": "lx", "bytes": 128000, "preloaded": true},
                  {"name": "s", "space": "lx", "bytes": 128, "dtype": "fp16"})",
               R"({"name": "r", "unit": "sfp", "op": "sum", "core": 0, "elements": 64000,
                   "reads": [{"buffer": "x", "bytes": 128000}], "writes": [{"buffer": "s", "bytes": 128}]})");
}

TEST_CASE("compute: sfp row reduction through an unpipelined cross-lane tree", "[compute][sfp]") {
  ChipConfig cfg;  // core.sfp.tree_level_cycles = 4 (the spyre preset)
  // 64 rows of 1000: 32 rows per corelet x 16 vectors = 512 vectors, each through the 6 levels
  // of the tree one at a time: 6 x 4 = 24 cycles per vector = 12288 + 32 row passes + 6 tree
  // depth + 8 pipeline = 12334 cycles (LX read 128000 / 256 = 500 cycles, hidden)
  CHECK(run(row_sum_graph(), cfg) == 12334 * kCore);
}

TEST_CASE("compute: sfp row reduction pays one cross-lane pass per row", "[compute][sfp]") {
  ChipConfig cfg;
  cfg.core.sfp.tree_level_cycles = 0;  // a pipelined tree
  KernelGraph g = graph(R"({"name": "x", "space": "lx", "bytes": 128000, "preloaded": true},
                           {"name": "s", "space": "lx", "bytes": 128, "dtype": "fp16"})",
                        R"({"name": "r", "unit": "sfp", "op": "sum", "core": 0, "elements": 64000,
                            "reads": [{"buffer": "x", "bytes": 128000}], "writes": [{"buffer": "s", "bytes": 128}]})");
  // 64 rows of 1000: 32 rows per corelet, ceil(1000/64) = 16 vectors per row = 512 vectors x 1
  // + 32 cross-lane passes + log2(64) = 6 tree depth + 8 pipeline = 558 cycles
  // (LX read 128000 / 256 = 500 cycles, hidden)
  CHECK(run(g, cfg) == 558 * kCore);
}

TEST_CASE("compute: ideal-memory 4096^3 fp16 on 32 cores stays at 74 percent of peak", "[compute][pt][calibration]") {
  // The card sustains ~74 % of the datasheet peak on compute-bound matmuls (facts); the preset's
  // PT folds do not overlap and stream at most 64 rows (core.pt.fold_stream_limit, fitted on
  // that figure: docs/calibration.md, "Fold stream limit"), so even ideal memory stays below
  // peak. (Issue 4
  // pinned peak minus the last fold's fill and drain, 2 099 968 cycles; that figure is the
  // datasheet's, not the card's, and is kept below with the limit off.)
  ChipConfig cfg = load_chip_config("configs/spyre.json", {"card.kernel_launch_ns=0", "memory.ideal=true"});
  KernelGraph g = load_workload("workloads/matmul_4096.json", cfg, 0, nullptr);
  REQUIRE(g.cores == 32);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // 4x8 grid, block 1024 x 512 per core: 2 m x 2 n tiles x 32 k steps = 128 PT tasks of
  // 512x256x128, each 2 k folds x 16 n folds (128 columns per corelet) = 32 folds, T = m = 512
  // = 8 parts of at most 64, each part 2 x 8 + 8 - 2 = 22 cycles of fill and drain:
  // 32 x 8 x 22 + 32 x 512 = 5632 + 16384 = 22016 cycles per task; x 128 = 2818048 cycles.
  // Peak: 2^36 MACs / (1024 MAC/cycle x 32 cores) = 2097152 cycles: 74.4 %.
  const double peak_cycles = 4096.0 * 4096 * 4096 / (cfg.pt_macs_per_cycle(Dtype::fp16) * 32);
  CHECK(peak_cycles == 2097152);
  CHECK(peak_cycles / (static_cast<double>(r.end) / kCore) == Approx(512.0 / (512 + 8 * 22)).epsilon(0.01));
  CHECK(r.end == 2818048 * kCore);
}

TEST_CASE("compute: ideal-memory 4096^3 fp16 without the fold limit is peak minus fill and drain", "[compute][pt][calibration]") {
  ChipConfig cfg = load_chip_config("configs/spyre.json",
                                    {"card.kernel_launch_ns=0", "memory.ideal=true", "core.pt.fold_stream_limit=0"});
  KernelGraph g = load_workload("workloads/matmul_4096.json", cfg, 0, nullptr);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // Folds back to back: 31 x 512 + (2 x 8 + 8 + 512 - 2) = 16406 cycles per task = 16384 at
  // peak + 22; 2097152 + 128 x 22 = 2099968.
  CHECK(r.end == 2099968 * kCore);
}

TEST_CASE("compute: ideal-memory 4096^3 fp8 runs at twice the fp16 rate with the fold limit", "[compute][pt][precision][calibration]") {
  ChipConfig cfg = load_chip_config("configs/spyre.json", {"card.kernel_launch_ns=0", "memory.ideal=true"});
  Json j = load_json_file("workloads/matmul_4096.json");
  for (auto& [name, t] : j["tensors"].items()) t["dtype"] = "fp8";
  OpGraph ops = read_op_graph(j, "matmul_4096_fp8.json");
  KernelGraph g = compile_ops(ops, cfg, 32);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // fp8 (16 ways) halves the folds of every task and each fold costs the same: if the compiler
  // keeps the fp16 tiles, 128 x (16 folds x 8 x 22 + 16 x 512) = 128 x 11008 = 1409024 cycles
  // = half of 2818048. The tiles may differ (fp8 operands are half the bytes), so the check is
  // the rate, within 2 %.
  CHECK(static_cast<double>(r.end) / kCore == Approx(2818048.0 / 2).epsilon(0.02));
}

TEST_CASE("compute: sfp gelu runs in its function class", "[compute][sfp]") {
  ChipConfig cfg;  // gelu/silu/tanh class: 4 cycles per vector of 64 lanes
  KernelGraph g = graph(R"({"name": "x", "space": "lx", "bytes": 200000, "preloaded": true},
                           {"name": "y", "space": "lx", "bytes": 200000})",
                        R"({"name": "g", "unit": "sfp", "op": "gelu", "core": 0, "elements": 100000,
                            "reads": [{"buffer": "x", "bytes": 200000}], "writes": [{"buffer": "y", "bytes": 200000}]})");
  // 100000 / 2 corelets = 50000 = 782 vectors of 64; x 4 cycles = 3128 + 8 pipeline = 3136
  CHECK(run(g, cfg) == 3136 * kCore);
}

TEST_CASE("compute: real-memory 4096^3 fp16 on 32 cores lands at 60 to 74 percent of peak", "[compute][pt][calibration]") {
  // The card sustains ~1140 MAC/ns per core, 74 % of 1536, on compute-bound matmuls
  // (spyre-public-facts.md): the PT's rate with the fold stream limit of 64, which ideal memory
  // reaches (74.4 %, the test above). On 32 cores real memory comes on top: DMA not hiding
  // behind compute at tile boundaries (docs/calibration.md, "Compute"), so the share is below
  // the PT's own; the card's 32-core records run such shapes at 26-52 % (400-800 MAC/ns per core).
  ChipConfig cfg = load_chip_config("configs/spyre.json", {"card.kernel_launch_ns=0", "sim.trace=false"});
  KernelGraph g = load_workload("workloads/matmul_4096.json", cfg, 0, nullptr);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  const double macs = 4096.0 * 4096 * 4096;
  const double peak_mac_per_ns = 1536.0 * 32;
  double share = macs / ticks_to_ns(r.end) / peak_mac_per_ns;
  INFO("share of datasheet peak: " << share);
  CHECK(share >= 0.60);
  CHECK(share <= 64.0 / (64 + 22));
  // Never faster than the ideal-memory run (2 099 968 cycles, the test above).
  CHECK(r.end >= 2099968 * kCore);
}

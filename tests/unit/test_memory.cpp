// The "lpddr5" memory model driven by DMA tasks: closed-form unloaded latency, bounds
// (never above the nominal peak), row-buffer behaviour and byte conservation. One simulation
// per test case (each case runs in its own process).
#include <catch2/catch.hpp>

#include <string>

#include "models/chip/card.h"
#include "models/memory/impl/lpddr5_memory.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/runtime/simulation.h"

using namespace dfsim;

namespace {

constexpr Tick kCore = 666667;   // core clock 1500 MHz
constexpr Tick kMem = 1250000;   // memory clock 800 MHz

ChipConfig lpddr5_cfg() {
  ChipConfig cfg;
  cfg.memory.impl = "lpddr5";
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
  // 64 rows of 512 B, stride 1 MiB: with "RoCoBaBgCh" and bank XOR off, 1 MiB keeps channel,
  // bank group and bank and changes the row, so every access is a row conflict: each one
  // waits tRAS + tRP = 34 + 15 = 49 cycles after the previous ACT of that bank. A sequential
  // 32 KiB read moves at 25.6 GB/s per channel over 8 channels: 32768 / 204.8 = 160 ns.
  ChipConfig cfg = lpddr5_cfg();
  cfg.cores = 1;
  cfg.memory.lpddr5.bank_xor = false;
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
}

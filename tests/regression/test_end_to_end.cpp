// End-to-end runs of the shipped workloads, compiled on the fly exactly as `dfsim run` does:
// they finish, are never faster than their roofline, keep every utilization in [0, 1], and
// move exactly the off-chip bytes their graph says (conservation). One run per test case.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <string>

#include "sim/app/cli.h"
#include "sim/common/json_io.h"
#include "sim/compiler/compile_report.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/runtime/simulation.h"
#include "sim/stats/summary.h"

using namespace dfsim;

namespace {

// Runs `workload` on `config` and checks what must hold for every run. Returns the summary.
nlohmann::ordered_json run_checked(const std::string& workload, const std::string& config, int cores = 0) {
  ChipConfig cfg = load_chip_config(config);
  std::string format;
  CompileReport report;
  CompileOverrides over;
  over.cores = cores;
  KernelGraph g = load_workload(workload, cfg, over, &format, &report);
  CHECK(format == "dfsim.ops");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  INFO(workload << " on " << config << ": " << r.reason);
  REQUIRE(r.ok());
  auto s = make_summary(sim, r, RunInfo{workload, config, format});
  s["explain"] = nlohmann::ordered_json::parse(report.to_json().dump());
  CHECK(s["status"] == "finished");
  CHECK(s["cores_used"].get<int>() == g.cores);

  double t = s["sim_time_ns"].get<double>();
  REQUIRE(t > 0);
  const auto& off = s["offchip"];
  std::uint64_t rd = off["bytes_read"], wr = off["bytes_written"], graph_bytes = off["graph_bytes"];
  std::uint64_t macs = s["compute"]["macs"];

  // Roofline: no faster than the off-chip bytes at peak bandwidth (GB/s = B/ns) ...
  CHECK(t >= graph_bytes / cfg.memory_peak_gbps());
  CHECK(t >= (rd + wr) / cfg.memory_peak_gbps());
  // ... nor than the MACs at the PT peak of the cores used, each precision's at its own (the
  // energy model counts them by precision on its own).
  std::map<Dtype, std::uint64_t> by_precision;
  for (const auto& [d, n] : s["energy"]["counts"]["pt_macs"].items()) by_precision[*dtype_from_name(d)] = n.get<std::uint64_t>();
  CHECK(t >= cfg.compute_bound_ns(by_precision, g.cores));
  CHECK(s["roofline"]["compute_bound_ns"].get<double>() == Approx(cfg.compute_bound_ns(by_precision, g.cores)));
  CHECK(s["roofline"]["fraction_of_roofline"].get<double>() <= 1.0);
  CHECK(off["achieved_gbps"].get<double>() <= cfg.memory_peak_gbps() * (1 + 1e-9));

  // Every unit busy at most all the time.
  for (const auto& u : s["units"]["units"]) {
    INFO(u["unit"].get<std::string>());
    CHECK(u["utilization"].get<double>() >= 0.0);
    CHECK(u["utilization"].get<double>() <= 1.0);
    CHECK(u["busy_ns"].get<double>() <= t * (1 + 1e-9));
  }
  for (const auto& [kind, v] : s["units"]["by_kind"].items()) {
    INFO(kind);
    CHECK(v["mean_utilization"].get<double>() >= 0.0);
    CHECK(v["mean_utilization"].get<double>() <= 1.0);
  }

  // Conservation: what the DMA engines moved = what DRAM served = what the graph asks for.
  const auto& d = s["dma"];
  std::uint64_t dma_hbm = d["hbm_to_lx_bytes"].get<std::uint64_t>() + d["lx_to_hbm_bytes"].get<std::uint64_t>();
  CHECK(d["hbm_to_hbm_bytes"] == 0);
  CHECK(dma_hbm == rd + wr);
  CHECK(rd + wr == graph_bytes);
  CHECK(d["hbm_to_lx_bytes"].get<std::uint64_t>() == rd);
  CHECK(d["lx_to_hbm_bytes"].get<std::uint64_t>() == wr);
  // Per channel counts add up to the total.
  std::uint64_t ch_rd = 0, ch_wr = 0;
  for (const auto& c : off["channels"]) {
    ch_rd += c["bytes_read"].get<std::uint64_t>();
    ch_wr += c["bytes_written"].get<std::uint64_t>();
  }
  CHECK(ch_rd == rd);
  CHECK(ch_wr == wr);
  // How unevenly the channels share the work at a time: between 1 (even) and the channel count
  // (all on one), 0 with no traffic; the same per kernel.
  const auto channels = static_cast<double>(cfg.memory.channels);
  for (double imb : {off["channel_imbalance"].get<double>(), s["kernels"][0]["dram_channel_imbalance"].get<double>()}) {
    CHECK((imb == 0.0 || imb >= 1.0 - 1e-9));
    CHECK(imb <= channels * (1 + 1e-9));
  }
  // Kernels' bytes and MACs add up to the run's.
  std::uint64_t k_bytes = 0, k_macs = 0;
  for (const auto& k : s["kernels"]) {
    k_bytes += k["offchip_bytes"].get<std::uint64_t>();
    k_macs += k["macs"].get<std::uint64_t>();
    CHECK(k["end_ns"].get<double>() <= t);
  }
  CHECK(k_bytes == graph_bytes);
  CHECK(k_macs == macs);
  // The critical path ends the run and is no longer than it.
  CHECK(s["critical_path"]["length_ns"].get<double>() == Approx(t));
  // Each core's LX peak within its usable size.
  for (const auto& p : s["lx"]["peak_bytes_per_core"]) CHECK(p.get<std::uint64_t>() <= cfg.core.lx.usable_bytes);
  // Stalls within the run's span summed over instances cannot be negative.
  CHECK(s["stalls"]["waiting_for_lx_ns"].get<double>() >= 0);
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() >= 0);
  return s;
}

constexpr std::uint64_t kMiB = 1u << 20;

}  // namespace

TEST_CASE("e2e: every shipped workload has an end-to-end test", "[e2e]") {
  // Add a test case below when adding a workload.
  std::set<std::string> covered = {"add_2048x1024.json", "matmul_1024.json", "matmul_4096.json",
                                   "softmax_chain_512x1024.json", "sum_4x262144.json", "mlp_block_512x2048.json",
                                   "transpose_cat_2048x1024.json", "softmax_512x1024.json", "layernorm_8192x1024.json",
                                   "rmsnorm_2048x4096.json", "bmm_32x512x128.json",
                                   "swiglu_mlp_512x1024.json", "attention_512x1024.json", "matmul_ktiles_2048.json"};
  std::set<std::string> shipped;
  for (const auto& e : std::filesystem::directory_iterator("workloads"))
    if (e.path().extension() == ".json") shipped.insert(e.path().filename().string());
  CHECK(shipped == covered);
}

TEST_CASE("e2e: add_2048x1024 on spyre", "[e2e]") {
  auto s = run_checked("workloads/add_2048x1024.json", "configs/spyre.json");
  // Two 2048x1024 fp16 inputs read (4 MiB each), one written.
  CHECK(s["offchip"]["bytes_read"] == 8 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 4 * kMiB);
  CHECK(s["compute"]["macs"] == 0);
  CHECK(s["cores_used"] == 32);
  CHECK(s["roofline"]["bound_by"] == "memory");
}

TEST_CASE("e2e: transpose_cat_2048x1024 on spyre moves every byte once", "[e2e]") {
  auto s = run_checked("workloads/transpose_cat_2048x1024.json", "configs/spyre.json");
  // transpose: x (2048 x 1024 x 2 B = 4 MiB) read once, xt (4 MiB) written once; cat: xt
  // (4 MiB) and w (1024 x 512 x 2 B = 1 MiB) read once, y (1024 x 2560 x 2 B = 5 MiB) written
  // once: 9 MiB each way, no MACs.
  CHECK(s["offchip"]["bytes_read"] == 9 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 9 * kMiB);
  CHECK(s["compute"]["macs"] == 0);
  CHECK(s["cores_used"] == 32);
  REQUIRE(s["kernels"].size() == 2);
  // The transpose (4 MiB in, 4 MiB out) moves at the mixed read/write rate, as the card's are
  // flat at ~116 GB/s: each core has two blocks and loads the second while it stores the first.
  // With one block a core (and 31 others in step) it read, then wrote: 62.0 us, 135 GB/s.
  // Between 95 and 125 GB/s: 67.1 to 88.3 us for its 8 MiB (78.8 us today).
  REQUIRE(s["kernels"][0]["name"] == "transpose_xt");
  const double transpose_ns = s["kernels"][0]["duration_ns"];
  CHECK(transpose_ns >= 8.0 * kMiB / 125.0);
  CHECK(transpose_ns <= 8.0 * kMiB / 95.0);
}

TEST_CASE("e2e: matmul_1024 on spyre", "[e2e]") {
  auto s = run_checked("workloads/matmul_1024.json", "configs/spyre.json");
  // M*N*K = 1024^3 = 2^30 MACs
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 1024ull * 1024 * 1024);
  // C (2 MiB) written exactly once.
  CHECK(s["offchip"]["bytes_written"] == 2 * kMiB);
  // A and B are read at least once each.
  CHECK(s["offchip"]["bytes_read"].get<std::uint64_t>() >= 4 * kMiB);
}

TEST_CASE("e2e: matmul_ktiles_2048 on spyre runs its parts of K one after another", "[e2e]") {
  auto s = run_checked("workloads/matmul_ktiles_2048.json", "configs/spyre.json");
  // 2048^3 MACs, in 4 parts of K = 512. Each part reads its slices of A and B once (8 MiB each in
  // all: the 8 x 4 grid shares them), stores its product (8 MiB); parts 1-3 then load it and the
  // sum before (2 x 8 MiB) and store the new sum (8 MiB): read 8 + 8 + 3 x 16 = 64 MiB, written
  // 4 x 8 + 3 x 8 = 56 MiB.
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 2048ull * 2048 * 2048);
  CHECK(s["offchip"]["bytes_read"] == 64 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 56 * kMiB);
  // Never faster than its memory roofline (120 MiB at the 204.8 GB/s peak).
  CHECK(s["sim_time_ns"].get<double>() >= 120.0 * kMiB / 204.8);
}

// ~1.5 s or more: hidden from the default run; `dfsim_tests "[slow]"` runs it.
TEST_CASE("e2e: matmul_4096 on spyre", "[e2e]") {
  auto s = run_checked("workloads/matmul_4096.json", "configs/spyre.json");
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 4096ull * 4096 * 4096);
  CHECK(s["offchip"]["bytes_written"] == 32 * kMiB);
  // Shared operands on the 4x8 grid, tile 512x256x128: per core block 1024x512, A (8 MiB per
  // grid row) is read once per n tile (2) and B (4 MiB per grid column) once per m tile (2):
  // 4 x 8 x 2 + 8 x 4 x 2 = 128 MiB, each byte once per tile, not once per core.
  CHECK(s["offchip"]["bytes_read"] == 128 * kMiB);
  // Every multicast band reaches the other 7 cores of its grid row (A) or 3 of its column (B).
  CHECK(s["dma"]["multicast_extra_bytes"] == (4 * 8 * 2 * 7 + 8 * 4 * 2 * 3) * kMiB);
  // The channel hash spreads the bands' reads: the channels share the work evenly at a time,
  // within what a 1-us bucket of a few dozen bursts per channel gives (1.1 measured; 4.6 without the hash,
  // test_cli "channels uneven").
  CHECK(s["offchip"]["channel_imbalance"].get<double>() < 1.5);
}

TEST_CASE("e2e: sum_4x262144 on spyre reduces across cores over the ring", "[e2e]") {
  auto s = run_checked("workloads/sum_4x262144.json", "configs/spyre.json");
  CHECK(s["cores_used"] == 32);
  CHECK(s["offchip"]["bytes_read"] == 2 * kMiB);  // x read once
  CHECK(s["offchip"]["bytes_written"] == 8);      // 4 fp16 sums
  // 31 ring copies of a 4-element fp16 partial (8 B), one message each.
  CHECK(s["ring"]["bytes_carried"].get<std::uint64_t>() >= 31 * 8);
  CHECK(s["roofline"]["bound_by"] == "memory");
}

TEST_CASE("e2e: mlp_block_512x2048 on spyre runs a transformer MLP block", "[e2e]") {
  auto s = run_checked("workloads/mlp_block_512x2048.json", "configs/spyre.json");
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 2ull * 512 * 2048 * 8192);
  // Two kernels: the first matmul with gelu as its epilogue, the second with the residual add.
  // Reads: x (2 MiB) shared by the 32 cores of N=32, so loaded once per multicast group of 8
  // (ring.multicast_max_cores): 8 MiB, and w1 (32) once; then on M=8 N=4, g (8) once for each
  // grid row's 4 cores, w2 (32) once for each grid column's 8 (the 16 x 2 grid, which read it
  // twice, was chosen before the estimate counted side-by-side runs and fill and drain), and x
  // (2) per output tile: 82 MiB. Writes: g (8), y (2) = 10 MiB.
  CHECK(s["offchip"]["bytes_read"] == 82 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 10 * kMiB);
  CHECK(s["kernels"].size() == 2);
}

TEST_CASE("e2e: bmm_32x512x128 on spyre splits the batch and moves each byte once", "[e2e]") {
  auto s = run_checked("workloads/bmm_32x512x128.json", "configs/spyre.json");
  // 32 x [512, 128] @ [128, 512]: q and kt (32 x 64 K elements x 2 B = 4 MiB each) read once,
  // s (32 x 256 K x 2 B = 16 MiB) written once.
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 32ull * 512 * 512 * 128);
  CHECK(s["offchip"]["bytes_read"] == 8 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 16 * kMiB);
  CHECK(s["cores_used"] == 32);
  CHECK(s["explain"][0]["split"].get<std::string>().rfind("B=", 0) == 0);  // batch first
}

TEST_CASE("e2e: swiglu_mlp_512x1024 on spyre reads every weight once per multicast group", "[e2e]") {
  auto s = run_checked("workloads/swiglu_mlp_512x1024.json", "configs/spyre.json");
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 3ull * 512 * 1024 * 2816);
  // Three kernels: up = x @ wu; gate = x @ wg with silu and the product with up as its
  // epilogue; z = h @ wd with the residual add. Reads x + wu (1 + 5.5 MiB), x + wg + up (1 +
  // 5.5 + 2.75) and h + wd + x (2.75 + 5.5 + 1), all on 8 x 4 grids (no operand shared by more
  // than 8 cores, ring.multicast_max_cores: each byte once; a 16 x 2 grid for z read wd twice):
  // 25 MiB; writes up, h (2 x 2.75), y (1): 6.5 MiB. gate, act and z never reach HBM.
  CHECK(s["offchip"]["bytes_read"] == 25 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 13 * kMiB / 2);
  CHECK(s["kernels"].size() == 3);
  CHECK(s["explain"][1]["ops"].size() == 3);  // matmul -> gate, silu -> act, mul -> h
}

TEST_CASE("e2e: attention_512x1024 on spyre loads K and V once per GQA group", "[e2e]") {
  auto s = run_checked("workloads/attention_512x1024.json", "configs/spyre.json");
  // MACs: projections q (8 heads), k, v (2 each) of 512 x 128 x 1024, the output projection
  // 8 x 512 x 1024 x 128, and causal attention: 8 query heads x (q.k^T + p.v) over 8 Lq tiles
  // of 64 and Lk tiles of 256, tile i needing ceil(64 (i + 1) / 256) Lk tiles: 4 x 1 + 4 x 2
  // = 12 tiles of 64 x 256 x 128 per head.
  const std::uint64_t proj = 12ull * 512 * 128 * 1024 + 8ull * 512 * 1024 * 128;
  const std::uint64_t attn = 8ull * 2 * 12 * 64 * 256 * 128;
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == proj + attn);
  // Reads: x (1 MiB) by each projection (the same for every head: kept in LX across the heads,
  // lx_planning) once per batch group: four times by q, whose 8 heads split over four groups
  // of 8 cores (B=4 M=8: a group's 8 cores share wq's tiles in one multicast, where 16 or 32
  // would need two or four, ring.multicast_max_cores), twice by k and by v (B=2 M=8 N=2): 8;
  // wq, wk, wv (2 + 0.5 + 0.5), q (1), K and V once each (0.25 + 0.25: the 8 units of a KV
  // head run at once on 8 cores and share each tile by multicast), o and wo (1 + 2), p (8) by
  // the sum: 23.5 MiB. Writes q, k, v (1.5), o (1), p (8), y (1): 11.5 MiB.
  CHECK(s["offchip"]["bytes_read"] == 47 * kMiB / 2);
  CHECK(s["explain"][0]["split"] == "B=4 M=8 (32 of 32 cores)");
  CHECK(s["explain"][0]["offchip_bytes"]["x"] == 4 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 23 * kMiB / 2);
  const auto& sdpa = s["explain"][3];
  CHECK(sdpa["ops"][0] == "sdpa -> o");
  CHECK(sdpa["offchip_bytes"]["k"] == kMiB / 4);
}

TEST_CASE("e2e: softmax_chain_512x1024 on spyre", "[e2e]") {
  auto s = run_checked("workloads/softmax_chain_512x1024.json", "configs/spyre.json");
  CHECK(s["cores_used"] == 1);
  // x (1 MiB) is read at least once, y (1 MiB) written at least once.
  CHECK(s["offchip"]["bytes_read"].get<std::uint64_t>() >= kMiB);
  CHECK(s["offchip"]["bytes_written"].get<std::uint64_t>() >= kMiB);
  CHECK(s["compute"]["macs"] == 0);
}

TEST_CASE("e2e: softmax_chain_512x1024 with LX planning keeps the row sums in LX", "[e2e]") {
  // The same chain with compile.lx_planning = true: s (512 x 1 fp16 = 1 KiB) is neither
  // stored nor loaded. run_checked's conservation check compares with the graph's bytes.
  std::filesystem::path tmp = std::filesystem::temp_directory_path() / "dfsim_e2e_softmax_lx.json";
  {
    Json j = load_json_file("workloads/softmax_chain_512x1024.json");
    j["compile"]["lx_planning"] = true;
    std::ofstream(tmp) << j.dump();
  }
  auto s = run_checked(tmp.string(), "configs/spyre.json");
  CHECK(s["offchip"]["bytes_read"] == 2 * kMiB);  // x, by the sum and by the mul
  CHECK(s["offchip"]["bytes_written"] == kMiB);   // y only
  std::filesystem::remove(tmp);
}

TEST_CASE("e2e: a matmul with K split over four grids conserves bytes and reduces over the ring", "[e2e]") {
  // The mmwd record 4096x2048x4096 on 32 cores with WD_M=4 WD_N=2 WD_K=4.
  std::filesystem::path tmp = std::filesystem::temp_directory_path() / "dfsim_e2e_mm_ksplit.json";
  std::ofstream(tmp) << R"({"format": "dfsim.ops", "version": 1, "name": "mmwd",
    "tensors": {"a": {"shape": [4096, 2048], "dtype": "fp16"}, "b": {"shape": [2048, 4096], "dtype": "fp16"},
                "c": {"shape": [4096, 4096], "dtype": "fp16"}},
    "inputs": ["a", "b"], "outputs": ["c"],
    "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"], "attrs": {"work_division": {"m": 4, "n": 2, "k": 4}}}],
    "compile": {"cores": 32}})";
  auto s = run_checked(tmp.string(), "configs/spyre.json");
  std::filesystem::remove(tmp);
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 4096ull * 2048 * 4096);
  CHECK(s["offchip"]["bytes_written"] == 32 * kMiB);  // C once, by grid 0
  // Each output tile's 4 fp32 partials meet in 3 ring copies (a binary tree): the ring ports
  // of the sending grids were busy.
  REQUIRE(s["units"]["by_kind"].contains("ring_port"));
  CHECK(s["units"]["by_kind"]["ring_port"]["busy_ns"].get<double>() > 0);
}

TEST_CASE("e2e: softmax_chain_512x1024 on small with one core", "[e2e]") {
  auto s = run_checked("workloads/softmax_chain_512x1024.json", "configs/small.json", 1);
  CHECK(s["cores_used"] == 1);
  CHECK(s["config"]["name"] == "small");
  CHECK(s["lx"]["usable_bytes_per_core"] == 196608);
  CHECK(s["offchip"]["bytes_read"].get<std::uint64_t>() >= kMiB);
}

TEST_CASE("e2e: add_2048x1024 on small with both cores", "[e2e]") {
  auto s = run_checked("workloads/add_2048x1024.json", "configs/small.json", 2);
  CHECK(s["cores_used"] == 2);
  CHECK(s["offchip"]["bytes_read"] == 8 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 4 * kMiB);
}

TEST_CASE("e2e: micro mix_1to3 on spyre conserves bytes with loads and stores overlapping", "[e2e][micro]") {
  // Both DMA queues of every core busy at once: the bytes still add up (run_checked: DMA =
  // DRAM = graph bytes, per channel sums), and the controllers did turn the bus around.
  auto s = run_checked("workloads/micro/mix_1to3.json", "configs/spyre.json");
  // x [4096,1,2048] fp16 read once (16 MiB), z [1,3,2048] (12 KiB) once per tile; y written once.
  std::uint64_t rd = s["offchip"]["bytes_read"];
  CHECK(rd >= 16 * kMiB);
  CHECK((rd - 16 * kMiB) % (3 * 2048 * 2) == 0);
  CHECK(s["offchip"]["bytes_written"] == 48 * kMiB);
  CHECK(s["offchip"]["turnarounds"].get<std::uint64_t>() > 1000);
}

TEST_CASE("e2e: micro copy on spyre conserves bytes with loads and stores overlapping", "[e2e][micro]") {
  auto s = run_checked("workloads/micro/copy.json", "configs/spyre.json");
  CHECK(s["offchip"]["bytes_read"] == 32 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 32 * kMiB);
  CHECK(s["offchip"]["turnarounds"].get<std::uint64_t>() > 1000);
}

TEST_CASE("e2e: softmax_512x1024 is one fused kernel that reads x once and writes y once", "[e2e]") {
  auto s = run_checked("workloads/softmax_512x1024.json", "configs/spyre.json");
  CHECK(s["kernels"].size() == 1);
  CHECK(s["offchip"]["bytes_read"] == kMiB);     // x
  CHECK(s["offchip"]["bytes_written"] == kMiB);  // y
}

TEST_CASE("e2e: layernorm_8192x1024 moves x, weight and bias once and y once", "[e2e]") {
  auto s = run_checked("workloads/layernorm_8192x1024.json", "configs/spyre.json");
  CHECK(s["kernels"].size() == 1);
  CHECK(s["offchip"]["bytes_read"] == 16 * kMiB + 2 * 2048);  // x, weight, bias (multicast once)
  CHECK(s["offchip"]["bytes_written"] == 16 * kMiB);
}

TEST_CASE("e2e: rmsnorm_2048x4096 with its residual add is one kernel", "[e2e]") {
  auto s = run_checked("workloads/rmsnorm_2048x4096.json", "configs/spyre.json");
  CHECK(s["kernels"].size() == 1);
  CHECK(s["offchip"]["bytes_read"] == 32 * kMiB + 8192);  // x, r, weight
  CHECK(s["offchip"]["bytes_written"] == 16 * kMiB);      // y; the normed n stays in LX
}

TEST_CASE("e2e: layernorm_8192x1024 on small with both cores", "[e2e]") {
  auto s = run_checked("workloads/layernorm_8192x1024.json", "configs/small.json", 2);
  CHECK(s["cores_used"] == 2);
  CHECK(s["offchip"]["bytes_read"] == 16 * kMiB + 2 * 2048);
}

TEST_CASE("e2e: sum_4x262144 on small sums its 512 KiB rows in chunks with a carried partial", "[e2e]") {
  auto s = run_checked("workloads/sum_4x262144.json", "configs/small.json", 2);
  CHECK(s["offchip"]["bytes_read"] == 2 * kMiB);
  CHECK(s["offchip"]["bytes_written"] == 8);
}

TEST_CASE("e2e: transpose_cat_2048x1024 on small transposes in blocks", "[e2e]") {
  // The [2048, 1024] transpose in 64 x 384 blocks (both buffers of a block in 96 KiB), then the cat.
  auto t = run_checked("workloads/transpose_cat_2048x1024.json", "configs/small.json", 2);
  CHECK(t["offchip"]["bytes_read"] == 9 * kMiB);     // x (4), xt (4) and w (1)
  CHECK(t["offchip"]["bytes_written"] == 9 * kMiB);  // xt (4) and y (5)
}

namespace {

// A 2048^3 matmul in `dtype` on 4 cores, written to a temporary file.
std::string matmul_2048(const std::string& dtype) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("dfsim_e2e_mm_" + dtype + "_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << R"({"format": "dfsim.ops", "version": 1, "name": "mm_)" << dtype << R"(",
    "tensors": {"a": {"shape": [2048, 2048], "dtype": ")" << dtype << R"("}, "b": {"shape": [2048, 2048], "dtype": ")" << dtype
                      << R"("}, "c": {"shape": [2048, 2048], "dtype": ")" << dtype << R"("}},
    "inputs": ["a", "b"], "outputs": ["c"], "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}],
    "compile": {"cores": 4}})";
  return path;
}

}  // namespace

TEST_CASE("e2e: an fp8 matmul is never faster than the PT peak of its precision", "[e2e]") {
  // The compute roofline took every MAC at the fp16 peak: a compute-bound fp8 matmul ran "at
  // 129 % of its roofline" (int4: 239 %), "63486.5 MAC/ns of 49152.0 peak". Each precision's
  // MACs count at its own peak now: fp8 has 16 SIMD ways, 2 x 8 x 8 x 16 x 1.5 = 3072 MAC/ns a
  // core, 12288 on 4; 2048^3 MACs take 8589934592 / 12288 = 699050.666667 ns.
  const std::string w = matmul_2048("fp8");
  auto s = run_checked(w, "configs/spyre.json");
  std::filesystem::remove(w);
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 2048ull * 2048 * 2048);
  CHECK(s["compute"]["peak_macs_per_ns"].get<double>() == Approx(12288.0));
  CHECK(s["compute"]["peak_macs_per_ns_fp16"].get<double>() == Approx(6144.0));  // 2 x 8 x 8 x 8 x 1.5 x 4
  CHECK(s["roofline"]["compute_bound_ns"].get<double>() == Approx(699050.666667));
  CHECK(s["roofline"]["bound_by"] == "compute");
  CHECK(s["sim_time_ns"].get<double>() >= 699050.666667);
  // The compile report's roofline of the kernel likewise.
  CHECK(s["explain"][0]["roofline_ns"].get<double>() == Approx(699050.666667));
}

TEST_CASE("e2e: a graph without MACs on a chip whose PT lacks fp16 explains a finite roofline", "[e2e]") {
  // core.pt.simd.fp16 = 0: the compile report's compute term was 0 MACs / a 0 peak = NaN, and
  // add_2048x1024's explain.roofline_ns was null. No MACs cost 0 ns: the memory bound stays,
  // 12 MiB / 204.8 GB/s = 61440 ns.
  const std::string c =
      (std::filesystem::temp_directory_path() / ("dfsim_e2e_nofp16_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(c) << R"({"extends": ")" << std::filesystem::absolute("configs/spyre.json").string()
                   << R"(", "name": "nofp16", "core": {"pt": {"simd": {"fp16": 0}}}})";
  auto s = run_checked("workloads/add_2048x1024.json", c);
  std::filesystem::remove(c);
  REQUIRE(s["explain"][0]["roofline_ns"].is_number());
  CHECK(s["explain"][0]["roofline_ns"].get<double>() == Approx(61440.0));
  CHECK(s["roofline"]["memory_bound_ns"].get<double>() == Approx(61440.0));
}

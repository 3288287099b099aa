// Tensor parallelism end to end (issue 15): dfsim gen --tp N graphs run on the 8-card drawer;
// a TP2 decode step moves half the weights per card, is never faster than the single-card
// step / 2, conserves the bytes its collectives and host transfers need, and is deterministic.
#include <catch2/catch.hpp>

#include "cli_helpers.h"

using namespace cli_test;
using nlohmann::json;
using Catch::Contains;

namespace {

// One decoder layer of Llama-3.1-8B (decode, batch 1, context 256) at `tp`, run on the drawer.
json tp_run(const TempDir& d, int tp, const std::string& tag) {
  std::string g = (d.path / (tag + ".json")).string();
  std::string gen = "gen llama-3.1-8b --phase decode --context 256 --layers 1 --host-io --tp " + std::to_string(tp);
  Result r = dfsim(gen + " -o " + g);
  INFO(r.out);
  REQUIRE(r.code == 0);
  Result run = dfsim("run -q -w " + g + " -c configs/spyre-drawer.json --trace off -o " + (d.path / tag).string());
  INFO(run.out);
  REQUIRE(run.code == 0);
  return read_json(d.path / tag / "summary.json");
}

double ns(const json& s) { return s["sim_time_ns"].get<double>(); }

}  // namespace

TEST_CASE("tp: a TP2 decode step halves the weights per card, is never faster than TP1 / 2, conserves link bytes",
          "[tp][cli]") {
  TempDir d("tp2");
  json one = tp_run(d, 1, "tp1"), two = tp_run(d, 2, "tp2");
  CHECK(two["cards_used"] == 2);
  REQUIRE(two["cards"].size() == 2);
  // Weights: every card reads half of what the single card reads (norm weights, replicated, are
  // 2 x 4096 x 2 B per layer and the final norm: < 0.01 %).
  double w1 = one["model"]["weights"]["bytes_read"].get<double>();
  double w2_per_card = two["model"]["weights"]["bytes_read"].get<double>() / 2;
  CHECK(w2_per_card == Approx(w1 / 2).epsilon(1e-4));
  CHECK(two["cards"][0]["graph_offchip_bytes"] == two["cards"][1]["graph_offchip_bytes"]);
  // Never faster than its roofline: each card streams its own graph's off-chip bytes at most at
  // the card's 204.8 GB/s (B/ns).
  for (const json& c : two["cards"]) CHECK(ns(two) >= c["graph_offchip_bytes"].get<double>() / 204.8);
  // Never faster than perfect scaling of the single card, within 1 %: a card's DRAM efficiency
  // depends a little on the shapes of what it streams (the LM head's half-vocabulary shard
  // takes 0.4994 of the whole head's time: tiles per core, row-buffer hits), so the
  // communication (~0.1 % here) does not always cover it. Measured: TP2 0.4993 x TP1.
  CHECK(ns(two) >= 0.99 * ns(one) / 2);
  CHECK(ns(two) < ns(one));
  // Bytes on the fabric, S = 1 x 4096 x 2 B = 8192 per all-reduce (2 cards: 2(N-1) S = 16384
  // each): the embedding's and the layer's two (o_proj, down_proj) = 3 x 16384 = 49152; the
  // LM head's all-gather of 1 x 128256 x 2 B: (N-1) S = 256512; token ids in, 4 B to each
  // card: 8; logits out from card 0: 256512. 49152 + 256512 + 8 + 256512 = 562184.
  CHECK(two["pcie"]["bytes_sent"] == 562184);
  // TP1 with --host-io: ids in (4 B), logits out (256512 B).
  CHECK(one["pcie"]["bytes_sent"] == 256516);
  CHECK(two["cards"][0]["communication_share"].get<double>() > 0);
  const json& comm = two["model"]["families"]["communication"];
  CHECK(comm["time_ns"].get<double>() > 0);
  // What the PCIe ports' DMAs stream through the cards' memories: a ring all-reduce over 2
  // cards sends S/2 each way per step; its reduce-scatter step reads the sender's half, writes
  // the receiver's and reads the receiver's own for the sum (3 x S/2 per transfer, 2 transfers:
  // 3 S), its all-gather step reads and writes (2 S): 5 S = 40 960 per all-reduce, 3 of them
  // 122 880; the all-gather reads and writes S/2 per card: 2 x 256 512 = 513 024; the ids 2 x 4
  // written; the logits 256 512 read. 122 880 + 513 024 + 8 + 256 512 = 892 424, and the DRAM
  // moved exactly the DMA tasks' bytes plus these.
  const json& off = two["offchip"];
  CHECK(off["link_bytes"] == 892424);
  CHECK(off["bytes_read"].get<std::uint64_t>() + off["bytes_written"].get<std::uint64_t>() ==
        off["graph_bytes"].get<std::uint64_t>() + 892424);
  CHECK(comm["offchip_bytes"] == 892424);
  CHECK(comm["pcie_bytes"] == 562184);
  // The family's roofline has the PCIe term: its busiest link is card 0's way up, the
  // all-reduces' 3 x 8 192, the all-gather's 128 256 and the logits' 256 512 = 409 344 B at
  // the nominal 63 GB/s, 6 497.5 ns, more than its memory term (892 424 B at 409.6 GB/s).
  CHECK(comm["fraction_of_roofline"].get<double>() ==
        Approx(409344.0 / 63 / comm["time_ns"].get<double>()).epsilon(1e-5));
  CHECK(one["model"]["families"]["communication"]["pcie_bytes"] == 256516);  // TP1 --host-io: ids in, logits out
  CHECK(one["kernels"][0].contains("pcie_bytes"));  // every kernel's, in a run that crossed PCIe
  // Deterministic: the same inputs give the same summary (outside "host").
  json again = tp_run(d, 2, "tp2b");
  for (json* s : {&two, &again}) {
    s->erase("host");
    (*s)["workload"].erase("file");
  }
  CHECK(two.dump() == again.dump());
}

TEST_CASE("tp: bad --tp and a system with too few cards exit 2 with one line", "[tp][cli]") {
  TempDir d("tp_bad");
  std::string g = (d.path / "g.json").string();
  Result r = dfsim("gen llama-3.1-8b --phase decode --context 8 --tp 3 -o " + g, "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("--tp: llama-3.1-8b has 32 attention heads, not divisible by 3 cards"));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  Result e = dfsim("gen granite-embedding-278m --phase prefill --tokens 8 --tp 2 -o " + g, "2>&1 >/dev/null");
  CHECK(e.code == 2);
  CHECK_THAT(e.out, Contains("encoder"));
  REQUIRE(dfsim("gen llama-3.1-8b --phase decode --context 8 --layers 1 --tp 2 -o " + g).code == 0);
  Result one = dfsim("run -q -w " + g + " --trace off -o " + (d.path / "out").string(), "2>&1 >/dev/null");
  CHECK(one.code == 2);
  CHECK_THAT(one.out, Contains("/compile/cards: asks for 2 cards, the system has 1"));
  CHECK(std::count(one.out.begin(), one.out.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(d.path / "out" / "summary.json"));
}

TEST_CASE("tp: a graph of collectives alone is bound by its busiest PCIe link", "[tp][cli][roofline]") {
  // An all-reduce of a 4096 x 4096 fp16 tensor (S = 32 MiB) over 4 cards, ring: each card
  // sends 2(N-1) S/N = 1.5 S = 50 331 648 B up its link and receives as much. No MAC; the
  // memory streams behind the links (below, 15 S over 4 cards' 204.8 GB/s: 614 400 ns) are
  // less than the busiest link at its nominal 63 GB/s (before the 80 % efficiency):
  // 50 331 648 / 63 = 798 915.047619 ns, the roofline. The run (at 80 % of that rate, plus
  // latencies and the reductions) is slower, at 0.69 of its roofline when measured: between
  // 0.6 and 1.
  TempDir d("pcie-roof");
  fs::create_directories(d.path);
  std::string g = (d.path / "ar.json").string();
  {
    std::ofstream f(g);
    f << R"({"format": "dfsim.ops", "version": 2, "name": "ar",
      "tensors": {"x": {"shape": [4096, 4096], "dtype": "fp16"}, "y": {"shape": [4096, 4096], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["y"], "ops": [{"op": "all_reduce", "inputs": ["x"], "outputs": ["y"]}],
      "compile": {"cards": 4}})";
  }
  Result run = dfsim("run -w " + g + " -c configs/spyre-drawer.json --trace off -o " + (d.path / "o").string());
  INFO(run.out);
  REQUIRE(run.code == 0);
  CHECK_THAT(run.out, Contains("roofline  pcie-bound, run is at "));
  json s = read_json(d.path / "o" / "summary.json");
  CHECK(s["roofline"]["bound_by"] == "pcie");
  CHECK(s["roofline"]["pcie_bound_ns"].get<double>() == Approx(50331648.0 / 63).epsilon(1e-9));
  const double f = s["roofline"]["fraction_of_roofline"].get<double>();
  CHECK(f <= 1.0);
  CHECK(f > 0.6);
  // The ports' DMAs: 3 reduce-scatter steps of 4 transfers of S/4 (3 S in all), each read at
  // the sender, written at the receiver, and the receiver's own part read for the sum: 6 S
  // read, 3 S written; 3 all-gather steps (3 S) read and written: 3 S each. In all 9 S read,
  // 6 S written, and no DMA task's bytes. The same with ideal memory, where they are counted,
  // not served.
  const std::uint64_t S = 33554432;
  for (const std::string ideal : {"false", "true"}) {
    INFO("memory.ideal " << ideal);
    json o = s;
    if (ideal == "true") {
      REQUIRE(dfsim("run -q -w " + g + " -c configs/spyre-drawer.json --trace off --set memory.ideal=true -o " +
                    (d.path / "ideal").string()).code == 0);
      o = read_json(d.path / "ideal" / "summary.json");
    }
    CHECK(o["offchip"]["bytes_read"] == 9 * S);
    CHECK(o["offchip"]["bytes_written"] == 6 * S);
    CHECK(o["offchip"]["graph_bytes"] == 0);
    CHECK(o["offchip"]["link_bytes"] == 15 * S);
    CHECK(o["roofline"]["memory_bound_ns"].get<double>() == Approx(ideal == "true" ? 0.0 : 15.0 * S / (4 * 204.8)));
  }
  // The compile report gives the kernel the same bound, from the steps the engine would play.
  Result ex = dfsim("compile " + g + " -c configs/spyre-drawer.json --explain -q -o " + (d.path / "ar.kernels.json").string());
  INFO(ex.out);
  REQUIRE(ex.code == 0);
  CHECK_THAT(ex.out, Contains("roofline: 798.9 us (pcie bound)"));
  // A run that crosses no link has no PCIe bound.
  REQUIRE(dfsim("run -q -w workloads/add_2048x1024.json --trace off -o " + (d.path / "add").string()).code == 0);
  CHECK(read_json(d.path / "add" / "summary.json")["roofline"]["pcie_bound_ns"] == 0.0);
}

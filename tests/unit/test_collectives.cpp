// Several cards on the PCIe fabric: collectives (ring and tree) and host transfers against their
// closed forms where nothing else competes, the shared drawer uplink, bytes conserved on the
// links. One hand-built kernel graph and one simulation per test case.
#include <catch2/catch.hpp>

#include <string>

#include "models/chip/card.h"
#include "models/pcie/collective_schedule.h"
#include "sim/config/chip_config.h"
#include "sim/compiler/compile.h"
#include "sim/graph/expand.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/runtime/simulation.h"

using namespace dfsim;
using Catch::Contains;

namespace {

constexpr Tick kCore = 666667;  // core clock 1500 MHz: round(1e9 / 1500) fs per cycle

// 48 GB/s at efficiency 1 = 32 B per core cycle (48 B/ns / 1.5 cycles/ns); 1000 ns = 1500 cycles.
// The cards' memory with 32 LPDDR5 channels instead of 8: a reducing receiver streams three
// times the link's bytes through its DRAM (the chunk it sends, its own part it adds, the sum it
// writes: 3 x 32 B/cycle), which 8 channels (136.5 B/cycle peak; about 78 for that
// read-read-write mix, measured) cannot keep up with; here the links alone set the pace, and
// every memory stream is done before the last byte's 1500 cycles of latency have passed.
ChipConfig fabric_config(int cards) {
  ChipConfig cfg;
  cfg.memory.channels = 32;
  cfg.system.cards = cards;
  cfg.system.pcie.link_gbps = 48;
  cfg.system.pcie.uplink_gbps = 48;
  cfg.system.pcie.efficiency = 1;
  cfg.system.pcie.latency_ns = 1000;
  return cfg;
}

// One link task `op` over `cards` cards reading x (in_bytes, preloaded) and writing y (out_bytes).
KernelGraph collective(int cards, const std::string& op, std::uint64_t in_bytes, std::uint64_t out_bytes,
                       const std::string& extra = "") {
  std::string text = R"({"format": "dfsim.kernels", "version": 2, "name": "c", "cores": 1, "cards": )" +
                     std::to_string(cards) + R"(, "buffers": [
      {"name": "x", "space": "hbm", "bytes": )" + std::to_string(in_bytes) + R"(, "preloaded": true},
      {"name": "y", "space": "hbm", "bytes": )" + std::to_string(out_bytes) + R"(}],
    "kernels": [{"name": "k", "tasks": [{"name": "c", "unit": "link", "op": ")" + op + R"(", "core": 0)" + extra +
                     R"(, "reads": [{"buffer": "x", "bytes": )" + std::to_string(in_bytes) +
                     R"(}], "writes": [{"buffer": "y", "bytes": )" + std::to_string(out_bytes) + "}]}]}]}";
  return read_kernel_graph(Json::parse(text), "test.json");
}

Tick run_end(const KernelGraph& g, const ChipConfig& cfg, std::uint64_t* link_bytes = nullptr) {
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  if (link_bytes) *link_bytes = sim.system().fabric().bytes_sent();
  return r.end;
}

constexpr std::uint64_t kS = 8 << 20;  // 8 MiB

}  // namespace

TEST_CASE("collectives: ring all-reduce over 4 cards meets the closed form exactly", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(4);
  std::uint64_t sent = 0;
  Tick end = run_end(collective(4, "all_reduce", kS, kS), cfg, &sent);
  // 2(N-1)/N * S / bw + 2(N-1) * latency, N = 4, S = 8 MiB, bw = 32 B/cycle, latency 1500 cycles:
  // 6/4 * 8388608 / 32 + 6 * 1500 = 393216 + 9000 = 402216 cycles (each step: a 2 MiB chunk,
  // 65536 cycles, + 1500; the reduction of 1 Mi fp16 on core 0's SFP, 2 corelets x 64 lanes per
  // cycle: 8192 cycles + its pipeline, is booked to end with the chunk's last byte).
  CHECK(end == 402216 * kCore);
  // Bytes conserved: 2(N-1) steps x N transfers of S/N = 2(N-1) S = 6 x 8 MiB.
  CHECK(sent == 6 * kS);
}

TEST_CASE("collectives: ring all-reduce over 8 cards meets the closed form", "[collectives][pcie]") {
  {
    ChipConfig cfg = fabric_config(8);
    // N = 8: 14/8 * 8388608 / 32 + 14 * 1500 = 458752 + 21000 = 479752 cycles
    CHECK(run_end(collective(8, "all_reduce", kS, kS), cfg) == 479752 * kCore);
  }
}

TEST_CASE("collectives: ring all-reduce over 2 cards", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(2);
  // N = 2: 2/2 * 8388608 / 32 + 2 * 1500 = 262144 + 3000 = 265144 cycles
  CHECK(run_end(collective(2, "all_reduce", kS, kS), cfg) == 265144 * kCore);
}

TEST_CASE("collectives: tree all-reduce over 4 cards", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(4);
  std::uint64_t sent = 0;
  Tick end = run_end(collective(4, "all_reduce", kS, kS, R"(, "algorithm": "tree")"), cfg, &sent);
  // reduce up a binary tree then broadcast down: 2 * ceil(log2 4) = 4 steps of the whole S:
  // 4 * (8388608 / 32 + 1500) = 4 * 263644 = 1054576 cycles
  CHECK(end == 1054576 * kCore);
  // 2 + 1 transfers up, 1 + 2 down: 6 x S
  CHECK(sent == 6 * kS);
}

TEST_CASE("collectives: tree all-reduce over 8 cards", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(8);
  // 2 * 3 steps of (262144 + 1500) = 1581864 cycles
  CHECK(run_end(collective(8, "all_reduce", kS, kS, R"(, "algorithm": "tree")"), cfg) == 1581864 * kCore);
}

TEST_CASE("collectives: ring all_gather over 8 cards: (N-1) steps of S/N", "[collectives][pcie]") {
  {
    ChipConfig cfg = fabric_config(8);
    // 7 * (1 MiB / 32 + 1500) = 7 * 34268 = 239876 cycles
    CHECK(run_end(collective(8, "all_gather", kS / 8, kS), cfg) == 239876 * kCore);
  }
}

TEST_CASE("collectives: reduce_scatter over 4 cards: (N-1) steps of S/N", "[collectives][pcie]") {
  {
    ChipConfig cfg = fabric_config(4);
    // 3 * (2 MiB / 32 + 1500) = 3 * 67036 = 201108 cycles
    CHECK(run_end(collective(4, "reduce_scatter", kS, kS / 4), cfg) == 201108 * kCore);
  }
}

TEST_CASE("collectives: tree broadcast over 8 cards: ceil(log2 8) steps of S", "[collectives][pcie]") {
  {
    ChipConfig cfg = fabric_config(8);
    // 3 * (262144 + 1500) = 790932 cycles
    CHECK(run_end(collective(8, "broadcast", kS, kS, R"(, "algorithm": "tree")"), cfg) == 790932 * kCore);
  }
}

TEST_CASE("collectives: tree all_gather over 4 cards: recursive doubling, log2 N steps", "[collectives][pcie]") {
  {
    ChipConfig cfg = fabric_config(4);
    // steps of S/4 and S/2: 65536 + 1500 + 131072 + 1500 = 199608 cycles
    CHECK(run_end(collective(4, "all_gather", kS / 4, kS, R"(, "algorithm": "tree")"), cfg) == 199608 * kCore);
  }
}

TEST_CASE("collectives: the schedule moves (N-1)/N of the data per card for ring all-gather", "[collectives]") {
  auto steps = collective_steps("all_gather", "ring", 4, 4096);
  REQUIRE(steps.size() == 3);
  std::uint64_t into0 = 0;
  for (const auto& s : steps)
    for (const auto& t : s)
      if (t.dst == 0) into0 += t.bytes;
  CHECK(into0 == 3072);
  CHECK(collective_unsupported("all_gather", "tree", 3) != "");
  CHECK(collective_unsupported("all_reduce", "tree", 3) == "");
}

TEST_CASE("pcie: host transfers share the drawer's uplink", "[pcie]") {
  ChipConfig cfg = fabric_config(2);
  std::string text = R"({"format": "dfsim.kernels", "version": 2, "name": "h", "cores": 1, "cards": 2,
    "buffers": [{"name": "ids", "space": "hbm", "bytes": 4096}],
    "kernels": [{"name": "k", "tasks": [{"name": "in", "unit": "link", "op": "from_host", "core": 0,
      "writes": [{"buffer": "ids", "bytes": 4096}]}]}]})";
  KernelGraph g = read_kernel_graph(Json::parse(text), "test.json");
  // Each card receives 4096 B = 128 cycles on the uplink and its own link, + 1500 latency. Both
  // start at 0; card 1's waits for card 0's on the shared uplink: 128 + 128 + 1500 = 1756 cycles.
  CHECK(run_end(g, cfg) == 1756 * kCore);
}

TEST_CASE("collectives: bad link tasks are refused with their path", "[collectives][graph]") {
  CHECK_THROWS_WITH(collective(4, "all_gather", kS, kS), Contains("/kernels/0/tasks/0") && Contains("read x cards"));
  CHECK_THROWS_WITH(collective(3, "all_gather", 1024, 3072, R"(, "algorithm": "tree")"),
                    Contains("/algorithm") && Contains("power-of-two"));
  CHECK_THROWS_WITH(collective(2, "all_reduce", kS, kS, R"(, "cards": [0, 2])"), Contains("/cards/1"));
  CHECK_THROWS_WITH(collective(2, "all_reduce", kS, kS, R"(, "cards": [1, 1])"), Contains("/cards/1: card 1 listed twice"));
  CHECK_THROWS_WITH(collective(2, "all_reduce", kS, kS, R"(, "cards": [])"), Contains("/cards: expected at least one card"));
  ChipConfig one;
  KernelGraph g = collective(2, "all_reduce", kS, kS);
  CHECK_THROWS_WITH(expand_graph(g, one), Contains("/cards") && Contains("system.cards"));
}

namespace {

// An op graph over `cards` cards: y = x * 2 on every card, then `op` (with `attrs`) into z.
std::string card_ops(int cards, const std::string& op, const std::string& zshape, const std::string& attrs = "{}") {
  return R"({"format": "dfsim.ops", "version": 2, "name": "c",
    "tensors": {"x": {"shape": [256, 1024], "dtype": "fp16"}, "y": {"shape": [256, 1024], "dtype": "fp16"},
                "z": {"shape": )" + zshape + R"(, "dtype": "fp16"}},
    "inputs": ["x"], "outputs": ["z"],
    "ops": [{"op": "mul", "inputs": ["x"], "outputs": ["y"], "attrs": {"scalar": 2}},
            {"op": ")" + op + R"(", "inputs": ["y"], "outputs": ["z"], "attrs": )" + attrs + R"(}],
    "compile": {"cores": 4, "cards": )" + std::to_string(cards) + "}}";
}

}  // namespace

TEST_CASE("collectives: an op graph's all_gather is one link task per card, with the gathered bytes", "[collectives][compiler]") {
  ChipConfig cfg = fabric_config(4);
  OpGraph ops = read_op_graph(Json::parse(card_ops(4, "all_gather", "[256, 4096]", R"({"dim": -1})")), "ops.json");
  KernelGraph g = compile_ops(ops, cfg, 4);
  CHECK(g.cards == 4);
  int links = 0;
  for (const Task& t : g.tasks)
    if (t.unit == UnitKind::link) {
      ++links;
      CHECK(t.op == "all_gather");
      CHECK(t.reads.at(0).total_bytes() == 256 * 1024 * 2);   // this card's shard
      CHECK(t.writes.at(0).total_bytes() == 256 * 4096 * 2);  // the gathered tensor
    }
  CHECK(links == 1);
  ExpandedGraph x = expand_graph(g, cfg);
  std::size_t link_instances = 0;
  for (const TaskInstance& i : x.instances) link_instances += g.tasks[i.task].unit == UnitKind::link;
  CHECK(link_instances == 4);  // one per card
}

TEST_CASE("collectives: bad collective ops in an op graph name their path", "[collectives][compiler]") {
  auto bad = [](const std::string& text, const std::string& what) {
    CHECK_THROWS_WITH(read_op_graph(Json::parse(text), "ops.json"), Contains(what));
  };
  bad(card_ops(2, "all_gather", "[256, 1024]"), "/ops/1/outputs/0");
  bad(card_ops(2, "all_reduce", "[256, 1024]", R"({"group": [0, 2]})"), "/ops/1/attrs/group/1");
  bad(card_ops(2, "all_reduce", "[256, 1024]", R"({"group": [0, 0]})"), "/ops/1/attrs/group/1: card 0 listed twice");
  bad(card_ops(2, "all_reduce", "[256, 1024]", R"({"group": [64]})"), "/ops/1/attrs/group/0");
  bad(card_ops(2, "all_reduce", "[256, 1024]", R"({"algorithm": "star"})"), "/ops/1/attrs/algorithm");
  bad(card_ops(3, "reduce_scatter", "[85, 1024]"), "divisible by 3");
  bad(card_ops(3, "all_gather", "[768, 1024]", R"({"algorithm": "tree"})"), "power-of-two");
  ChipConfig one;
  OpGraph ops = read_op_graph(Json::parse(card_ops(2, "all_reduce", "[256, 1024]")), "ops.json");
  CHECK_THROWS_WITH(compile_ops(ops, one, 4), Contains("/compile/cards") && Contains("system.cards"));
}

TEST_CASE("collectives: each card's LX is its own: a 1-core graph on 2 cards of a 32-core chip", "[collectives][lx]") {
  ChipConfig cfg = fabric_config(2);
  std::string text = R"({"format": "dfsim.kernels", "version": 2, "name": "l", "cores": 1, "cards": 2,
    "buffers": [{"name": "x", "space": "hbm", "bytes": 8192, "preloaded": true},
                {"name": "xl", "space": "lx", "bytes": 8192}, {"name": "y", "space": "hbm", "bytes": 8192},
                {"name": "z", "space": "hbm", "bytes": 8192}],
    "kernels": [{"name": "k", "tasks": [
      {"name": "ld", "unit": "dma", "op": "load", "core": 0, "reads": [{"buffer": "x", "bytes": 8192}], "writes": [{"buffer": "xl", "bytes": 8192}]},
      {"name": "st", "unit": "dma", "op": "store", "core": 0, "reads": [{"buffer": "xl", "bytes": 8192}], "writes": [{"buffer": "y", "bytes": 8192}]},
      {"name": "ar", "unit": "link", "op": "all_reduce", "core": 0, "reads": [{"buffer": "y", "bytes": 8192}], "writes": [{"buffer": "z", "bytes": 8192}]}]}]})";
  KernelGraph g = read_kernel_graph(Json::parse(text), "test.json");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  REQUIRE(sim.run().ok());
  // Each card reserved its own core 0's LX for xl, not another core's.
  CHECK(sim.system().card(0).core(0).lx().peak() == 8192);
  CHECK(sim.system().card(1).core(0).lx().peak() == 8192);
  CHECK(sim.system().card(0).core(1).lx().peak() == 0);
  CHECK(sim.system().card(1).core(0).lx().bytes_written == 8192);
  // 2 cards: 2 steps of 4096 B each way = 16384 B on the fabric.
  CHECK(sim.system().fabric().bytes_sent() == 16384);
}

TEST_CASE("pcie: cards in two drawers exchange through the host at the uplink rate", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(2);
  cfg.system.cards_per_drawer = 1;    // card 0 in drawer 0, card 1 in drawer 1
  cfg.system.pcie.uplink_gbps = 24;   // 16 B per core cycle: the slowest link of the path
  std::uint64_t sent = 0;
  Tick end = run_end(collective(2, "all_reduce", kS, kS), cfg, &sent);
  // Ring all-reduce over 2 cards: 2 steps of S/2 = 4 MiB through card up, uplink up, uplink
  // down, card down (cut-through: the uplink sets the pace): 2 x (4194304 / 16 + 1500) =
  // 2 x 263644 = 527288 cycles.
  CHECK(end == 527288 * kCore);
  CHECK(sent == 2 * kS);  // 2(N-1) S
}

TEST_CASE("collectives: tree all-reduce over 2 cards", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(2);
  // 2 * ceil(log2 2) = 2 steps of the whole S: 2 * (8388608 / 32 + 1500) = 527288 cycles
  CHECK(run_end(collective(2, "all_reduce", kS, kS, R"(, "algorithm": "tree")"), cfg) == 527288 * kCore);
}

namespace {

// A memory-bound kernel on every core of cards 0 and 1 (each core loads `per_core` bytes of w
// into its LX) and a from_host transfer of `host_bytes` into card 0 at once: card 1 shows the
// kernel alone, in the same run.
KernelGraph loads_and_host(std::uint64_t per_core, std::uint64_t host_bytes) {
  const std::string pc = std::to_string(per_core);
  std::string text = R"({"format": "dfsim.kernels", "version": 2, "name": "l", "cores": 32, "cards": 2, "buffers": [
      {"name": "w", "space": "hbm", "bytes": )" + std::to_string(32 * per_core) + R"(, "preloaded": true},
      {"name": "wl", "space": "lx", "bytes": )" + pc + R"(}, {"name": "ids", "space": "hbm", "bytes": )" +
                     std::to_string(host_bytes) + R"(}],
    "kernels": [{"name": "k", "tasks": [
      {"name": "ld", "unit": "dma", "op": "load", "cores": {"first": 0, "count": 32},
       "reads": [{"buffer": "w", "offset": {"alpha": )" + pc + R"(}, "bytes": )" + pc + R"(}],
       "writes": [{"buffer": "wl", "bytes": )" + pc + R"(}]},
      {"name": "in", "unit": "link", "op": "from_host", "core": 0, "cards": [0], "writes": [{"buffer": "ids", "bytes": )" +
                     std::to_string(host_bytes) + "}]}]}]}";
  return read_kernel_graph(Json::parse(text), "test.json");
}

struct LoadsRun {
  Tick loads_end[2] = {0, 0}, host_end = 0;  // loads per card
  std::uint64_t dram_bytes[2] = {0, 0};      // per card
};

LoadsRun run_loads(const KernelGraph& g, const ChipConfig& cfg) {
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  REQUIRE(sim.run().ok());
  LoadsRun out;
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskInstance& t = x.instances[i];
    Tick& end = g.tasks[t.task].unit == UnitKind::link ? out.host_end : out.loads_end[t.card];
    end = std::max(end, sim.recorder().tasks()[i].end);
  }
  for (int c = 0; c < 2; ++c) {
    const MemStats& m = sim.system().card(c).memory().stats();
    out.dram_bytes[c] = m.bytes_read + m.bytes_written;
  }
  return out;
}

}  // namespace

TEST_CASE("pcie: a host transfer alone meets its closed form and books its card's DRAM", "[pcie][memory]") {
  ChipConfig cfg = fabric_config(2);
  cfg.memory.channels = ChipConfig{}.memory.channels;  // the LPDDR5 as it is: one stream keeps up
  LoadsRun r = run_loads(loads_and_host(128, kS), cfg);
  // Host -> card 0: drawer uplink down, card 0 down, cut-through at 32 B/cycle:
  // 8388608 / 32 + 1500 = 262144 + 1500 = 263644 cycles; the 2048 writes of 4 KiB into the
  // card's memory, one per 128 cycles of the link, are done before the latency has passed.
  CHECK(r.host_end == 263644 * kCore);
  // The kernel loads 32 sticks of 128 B per card; card 0's DRAM also carries the 8 MiB.
  CHECK(r.dram_bytes[0] == 32 * 128 + kS);
  CHECK(r.dram_bytes[1] == 32 * 128);
}

TEST_CASE("pcie: a host transfer and a memory-bound kernel on its card share the DRAM", "[pcie][memory]") {
  ChipConfig cfg = fabric_config(2);
  cfg.memory.channels = ChipConfig{}.memory.channels;
  constexpr std::uint64_t kPerCore = 1 << 20;  // 32 x 1 MiB of weights streamed into LX per card
  LoadsRun r = run_loads(loads_and_host(kPerCore, kS), cfg);
  // Conservation: card 0's DRAM carries the kernel's 32 MiB and the transfer's 8 MiB, card 1's
  // the kernel's alone.
  CHECK(r.dram_bytes[0] == 32 * kPerCore + kS);
  CHECK(r.dram_bytes[1] == 32 * kPerCore);
  // The kernel is memory-bound: on card 0 the transfer's writes take DRAM time from it, so it
  // ends later than the same kernel alone on card 1; the transfer is never faster than its
  // closed form (263644 cycles).
  CHECK(r.loads_end[0] > r.loads_end[1]);
  CHECK(r.host_end >= 263644 * kCore);
}

TEST_CASE("collectives: a ring all-reduce streams 5(N-1) S through the cards' DRAM and is no faster than its closed form", "[collectives][memory]") {
  ChipConfig cfg = fabric_config(4);
  cfg.memory.channels = ChipConfig{}.memory.channels;  // the LPDDR5 as it is
  KernelGraph g = collective(4, "all_reduce", kS, kS);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // Per card: N-1 reduce-scatter steps read the chunk sent, read its own part and write the sum
  // (3 S/N each); N-1 all-gather steps read the chunk sent and write the one received (2 S/N):
  // 5 (N-1) S/N per card, 5 (N-1) S = 15 x 8 MiB over the 4 cards.
  std::uint64_t dram = 0;
  for (int c = 0; c < 4; ++c) {
    const MemStats& m = sim.system().card(c).memory().stats();
    dram += m.bytes_read + m.bytes_written;
  }
  CHECK(dram == 15 * kS);
  // 3 x 32 B/cycle through a card's 8 channels in the reduce-scatter steps is more than the
  // LPDDR5 model sustains for that mix: slower than the link-bound 402216 cycles.
  CHECK(r.end > 402216 * kCore);
}

TEST_CASE("collectives: with a very fast link the reduction on the SFP sets the pace", "[collectives][sfp]") {
  ChipConfig cfg = fabric_config(2);
  cfg.system.pcie.link_gbps = 48000;    // 32000 B per core cycle: a 4 MiB chunk crosses in 132 cycles
  cfg.system.pcie.uplink_gbps = 48000;
  cfg.system.pcie.latency_ns = 0;
  cfg.memory.ideal = true;              // and the memory streams take no time
  KernelGraph g = collective(2, "all_reduce", kS, kS);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // Ring all-reduce over 2 cards: a reduce-scatter step, then an all-gather step, each of a
  // 4 MiB chunk (2 Mi fp16). The link: ceil(4194304 / 32000) = 132 cycles per step. The
  // reduction on core 0's SFP: 2 corelets x 64 lanes, 1 cycle per vector: 2097152 / 2 / 64 =
  // 16384 vectors = 16384 cycles + the SFP pipeline (core.sfp.pipeline_cycles).
  const std::uint64_t sfp = 16384 + static_cast<std::uint64_t>(cfg.core.sfp.pipeline_cycles);
  // Step 1: both cards reduce the chunk they received, each on its own SFP, from the first byte:
  // 0 + 16392 cycles (the link's 132 overlap); step 2 moves the sums: 132.
  CHECK(r.end == (sfp + 132) * kCore);
  // The SFP of core 0 of each card (both corelets) was busy for exactly the reduction.
  int booked = 0;
  for (const Track& t : sim.recorder().tracks())
    if (t.kind == "sfp" && t.group.find("core 0") != std::string::npos) {
      CHECK(t.busy == sfp * kCore);
      ++booked;
    }
  CHECK(booked == 4);  // 2 cards x 2 corelets
}

TEST_CASE("collectives: two collectives reaching two cards in opposite orders do not deadlock the ports", "[collectives][pcie]") {
  ChipConfig cfg = fabric_config(2);
  // Card 0 has xa before xb (a 4 KiB copy, then a 4 MiB one), card 1 the reverse: each port
  // fires a different all-reduce first. A port that waited for the group while holding the
  // card's link would never let the other one in.
  std::string text = R"({"format": "dfsim.kernels", "version": 2, "name": "x", "cores": 1, "cards": 2,
    "buffers": [{"name": "w", "space": "hbm", "bytes": 4194304, "preloaded": true},
                {"name": "xa", "space": "hbm", "bytes": 4194304}, {"name": "xb", "space": "hbm", "bytes": 4194304},
                {"name": "ya", "space": "hbm", "bytes": 4194304}, {"name": "yb", "space": "hbm", "bytes": 4194304}],
    "kernels": [{"name": "k", "tasks": [
      {"name": "a0", "unit": "dma", "op": "copy", "core": 0, "cards": [0], "reads": [{"buffer": "w", "bytes": 4096}], "writes": [{"buffer": "xa", "bytes": 4096}]},
      {"name": "b1", "unit": "dma", "op": "copy", "core": 0, "cards": [1], "reads": [{"buffer": "w", "bytes": 4096}], "writes": [{"buffer": "xb", "bytes": 4096}]},
      {"name": "b0", "unit": "dma", "op": "copy", "core": 0, "cards": [0], "reads": [{"buffer": "w", "bytes": 4194304}], "writes": [{"buffer": "xb", "bytes": 4194304}]},
      {"name": "a1", "unit": "dma", "op": "copy", "core": 0, "cards": [1], "reads": [{"buffer": "w", "bytes": 4194304}], "writes": [{"buffer": "xa", "bytes": 4194304}]},
      {"name": "ra", "unit": "link", "op": "all_reduce", "core": 0, "reads": [{"buffer": "xa", "bytes": 4096}], "writes": [{"buffer": "ya", "bytes": 4096}]},
      {"name": "rb", "unit": "link", "op": "all_reduce", "core": 0, "reads": [{"buffer": "xb", "bytes": 4096}], "writes": [{"buffer": "yb", "bytes": 4096}]}]}]})";
  KernelGraph g = read_kernel_graph(Json::parse(text), "test.json");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  INFO(r.reason);
  REQUIRE(r.ok());
  // Each all-reduce ends once the 4 MiB copy feeding it on the slower card has.
  Tick copies = 0, reduces = 0;
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    Tick e = sim.recorder().tasks()[i].end;
    (g.tasks[x.instances[i].task].unit == UnitKind::link ? reduces : copies) =
        std::max(e, g.tasks[x.instances[i].task].unit == UnitKind::link ? reduces : copies);
  }
  // 2 ring steps of 2 KiB: 2 x (64 + 1500) cycles at least after the last copy.
  CHECK(reduces >= copies + 2 * (64 + 1500) * kCore);
}

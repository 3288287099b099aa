// Behaviour of the SystemC models under the firing rule: one small hand-built kernel graph
// and one simulation per test case (ctest runs each case in its own process, so each gets a
// fresh SystemC kernel). End times are exact where they are closed-form.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

#include <string>
#include <vector>

#include "models/chip/card.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/runtime/simulation.h"
#include "sim/stats/summary.h"

using namespace dfsim;
using Catch::Contains;

namespace {

constexpr Tick kCore = 666667;   // core clock 1500 MHz: round(1e9 / 1500) fs per cycle

// A kernel graph from JSON text: the format header and one kernel "k" around `tasks`.
KernelGraph graph(int cores, const std::string& buffers, const std::string& tasks) {
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "t", "cores": )" +
                     std::to_string(cores) + R"(, "buffers": [)" + buffers +
                     R"(], "kernels": [{"name": "k", "tasks": [)" + tasks + "]}]}";
  return read_kernel_graph(Json::parse(text), "test.json");
}

// Preloaded 8 KiB LX input "xl" (4096 fp16) and three 8 KiB LX outputs.
const char* kLxBuffers = R"(
  {"name": "xl", "space": "lx", "bytes": 8192, "preloaded": true},
  {"name": "yl", "space": "lx", "bytes": 8192},
  {"name": "zl", "space": "lx", "bytes": 8192},
  {"name": "wl", "space": "lx", "bytes": 8192})";

std::string sfp(const std::string& name, const std::string& op, const std::string& in, const std::string& out,
                const std::string& where = R"("core": 0)") {
  return R"({"name": ")" + name + R"(", "unit": "sfp", "op": ")" + op + R"(", )" + where +
         R"(, "elements": 4096, "reads": [{"buffer": ")" + in + R"(", "bytes": 8192}], "writes": [{"buffer": ")" +
         out + R"(", "bytes": 8192}]})";
}

// 64x64x64 fp16 matmul on core 0 reading A and B from xl, writing zl.
std::string pt64(const std::string& extra = "") {
  return R"({"name": "mm", "unit": "pt", "op": "matmul", "core": 0, "m": 64, "n": 64, "k": 64)" + extra +
         R"(, "reads": [{"buffer": "xl", "bytes": 8192}, {"buffer": "xl", "bytes": 8192}],
             "writes": [{"buffer": "zl", "bytes": 8192}]})";
}

// zl takes over yl's space: e1 exp xl -> yl, a add yl -> wl, ld a DMA load x -> zl.
KernelGraph takeover_graph() {
  std::string buffers = std::string(R"({"name": "x", "space": "hbm", "bytes": 8192, "preloaded": true},)") + kLxBuffers;
  const std::string zl = R"("zl", "space": "lx", "bytes": 8192})";
  buffers.replace(buffers.find(zl), zl.size(), R"("zl", "space": "lx", "bytes": 8192, "after": "yl"})");
  const std::string load = R"({"name": "ld", "unit": "dma", "op": "load", "core": 0,
      "reads": [{"buffer": "x", "bytes": 8192}], "writes": [{"buffer": "zl", "bytes": 8192}]})";
  return graph(1, buffers, sfp("e1", "exp", "xl", "yl") + "," + sfp("a", "add", "yl", "wl") + "," + load);
}

const TaskRecord& rec_of(Simulation& sim, const KernelGraph& g, const std::string& task, int core = 0) {
  int t = g.find_task(task);
  REQUIRE(t >= 0);
  const ExpandedGraph& x = sim.expanded();
  return sim.recorder().tasks().at(x.first_instance[t] + (core - g.tasks[t].first_core));
}

}  // namespace

TEST_CASE("models: one sfp task on preloaded LX data is compute bound", "[models][sfp]") {
  ChipConfig cfg;
  KernelGraph g = graph(1, kLxBuffers, sfp("e", "exp", "xl", "yl"));
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // exp of 4096 fp16 on 2 corelets: 2048 each = 32 vectors x 2 + 8 pipeline = 72 cycles;
  // LX ports: 8192 B / 256 B per cycle = 32 cycles each way, overlapped -> 72 cycles
  CHECK(r.end == 72 * kCore);
  CHECK(rec_of(sim, g, "e").start == 0);
  CHECK(rec_of(sim, g, "e").end == 72 * kCore);
  CHECK(sim.system().card().core(0).lx().bytes_read == 8192);
  CHECK(sim.system().card().core(0).lx().bytes_written == 8192);
}

TEST_CASE("models: one sfp task limited by the LX read port", "[models][sfp][lx]") {
  ChipConfig cfg;
  cfg.core.lx.read_bytes_per_cycle = 32;
  KernelGraph g = graph(1, kLxBuffers, sfp("a", "add", "xl", "yl"));
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // add: 32 vectors x 1 + 8 = 40 cycles of compute, but reading 8192 B at 32 B/cycle takes
  // 256 cycles; the write port needs 8192 / 256 = 32. max(40, 256, 32) = 256 cycles
  CHECK(r.end == 256 * kCore);
}

TEST_CASE("models: a chain of two dependent sfp tasks takes the sum", "[models][sfp]") {
  ChipConfig cfg;
  KernelGraph g = graph(1, kLxBuffers, sfp("e", "exp", "xl", "yl") + "," + sfp("a", "add", "yl", "zl"));
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // exp 72 cycles, then add (32 vectors x 1 + 8 = 40) fires when exp completes: 72 + 40 = 112
  CHECK(r.end == 112 * kCore);
  CHECK(rec_of(sim, g, "a").ready == 72 * kCore);
  CHECK(rec_of(sim, g, "a").start == 72 * kCore);
}

TEST_CASE("models: a kernel's launch delays its tasks from the first of them being ready", "[models][launch]") {
  // card.kernel_launch_ns = 1000 ns = 1 us. Kernel k1: exp (xl -> yl) and exp (xl -> wl) on
  // core 0; kernel k2: add (yl -> zl). Both of k1's tasks are ready at 0 and wait for its
  // launch: e1 [1 us, 1 us + 72 cycles), e2 after it on the same SFP (+72). k2's add is ready
  // when e1 completes (1 us + 72 cycles) and waits for k2's own launch, 1 us later: it runs
  // [2 us + 72, 2 us + 112 cycles). One launch per kernel, not per task: e2 pays none of its own.
  ChipConfig cfg;
  cfg.kernel_launch_ns = 1000;
  const Tick launch = ns_to_ticks(1000);
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "t", "cores": 1, "buffers": [)" +
                     std::string(kLxBuffers) + R"(], "kernels": [{"name": "k1", "tasks": [)" +
                     sfp("e1", "exp", "xl", "yl") + "," + sfp("e2", "exp", "xl", "wl") +
                     R"(]}, {"name": "k2", "tasks": [)" + sfp("a", "add", "yl", "zl") + "]}]}";
  KernelGraph g = read_kernel_graph(Json::parse(text), "test.json");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(rec_of(sim, g, "e1").ready == launch);
  CHECK(rec_of(sim, g, "e1").start == launch);
  CHECK(rec_of(sim, g, "e2").start == launch + 72 * kCore);
  CHECK(rec_of(sim, g, "a").ready == 2 * launch + 72 * kCore);
  CHECK(rec_of(sim, g, "a").start == 2 * launch + 72 * kCore);
  // The SFP is free at 1 us + 144 cycles, before the add's launch ends: the end is the add's.
  CHECK(r.end == 2 * launch + 112 * kCore);
}

TEST_CASE("models: a buffer that takes over another's space waits until that one is freed", "[models][lx]") {
  // zl takes over yl's space (Buffer::after). e1: exp xl -> yl [0, 72); a: add yl -> wl, ready at
  // 72, [72, 112) (32 vectors x 1 + 8); yl is freed when a completes, at 112 cycles. The load
  // x -> zl on the core's DMA is ready at 0 but gets zl's space only then (without the
  // takeover it would start at 0).
  ChipConfig cfg;
  cfg.kernel_launch_ns = 0;
  KernelGraph g = takeover_graph();
  REQUIRE(g.buffers[3].after == 2);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(rec_of(sim, g, "a").start == 72 * kCore);
  CHECK(rec_of(sim, g, "ld").ready == 0);
  CHECK(rec_of(sim, g, "ld").start == 112 * kCore);
  CHECK(rec_of(sim, g, "ld").lx_wait == 112 * kCore);
}

TEST_CASE("models: a taken-over buffer's space comes card.loop_iteration_ns after it is freed", "[models][lx]") {
  // The graph of the case above with card.loop_iteration_ns = 500: yl is freed at 112 cycles,
  // so the load into zl starts 500 ns later (the loop relaunching its body for the next iteration).
  ChipConfig cfg;
  cfg.kernel_launch_ns = 0;
  cfg.loop_iteration_ns = 500;
  KernelGraph g = takeover_graph();
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(rec_of(sim, g, "ld").start == 112 * kCore + ns_to_ticks(500));
}

TEST_CASE("models: two independent tasks on the same unit serialize", "[models][sfp]") {
  ChipConfig cfg;
  KernelGraph g = graph(1, kLxBuffers, sfp("e1", "exp", "xl", "yl") + "," + sfp("e2", "exp", "xl", "zl"));
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // Both ready at 0; the lower instance id goes first: e1 [0, 72), e2 [72, 144)
  CHECK(r.end == 144 * kCore);
  CHECK(rec_of(sim, g, "e1").start == 0);
  CHECK(rec_of(sim, g, "e2").ready == 0);
  CHECK(rec_of(sim, g, "e2").start == 72 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  // e2 waited 72 cycles for the unit: 72 x 0.666667 ns = 48.000024 ns
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() == Approx(ticks_to_ns(72 * kCore)));
  CHECK(s["stalls"]["waiting_for_lx_ns"].get<double>() == 0.0);
}

TEST_CASE("models: tasks on different cores and different units run in parallel", "[models]") {
  ChipConfig cfg;
  KernelGraph g = graph(2, kLxBuffers,
                        sfp("e", "exp", "xl", "yl", R"("cores": {"first": 0, "count": 2})") + "," + pt64());
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // exp on cores 0 and 1 at once: 72 cycles each; the PT of core 0 alongside:
  // 64x64x64 ws on 2 corelets = 32 columns each -> 4 n folds of Sr = Sc = 8, T = 64 (one part
  // of at most core.pt.fold_stream_limit = 64), folds not overlapping: 4 x (2*8 + 8 - 2 + 64)
  // = 344 cycles (LX feed (4096 + 64*64*4) x 2 B = 40960 B / 256 = 160, 8192 B written / 256 = 32).
  // End = max(72, 344) = 344.
  CHECK(rec_of(sim, g, "e", 0).start == 0);
  CHECK(rec_of(sim, g, "e", 1).start == 0);
  CHECK(rec_of(sim, g, "e", 0).end == 72 * kCore);
  CHECK(rec_of(sim, g, "e", 1).end == 72 * kCore);
  CHECK(rec_of(sim, g, "mm").start == 0);
  CHECK(r.end == 344 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  CHECK(s["compute"]["macs"].get<std::uint64_t>() == 64u * 64 * 64);
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() == 0.0);
}

TEST_CASE("models: a pt matmul pinned to one corelet", "[models][pt]") {
  ChipConfig cfg;
  KernelGraph g = graph(1, kLxBuffers, pt64(R"(, "corelet": 1)"));
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // One corelet, ws (spyre default): 1 k fold x 8 n folds, T = m = 64, folds not overlapping:
  // 8 x (2*8 + 8 - 2 + 64) = 8 x 86 = 688 cycles
  // (LX feed (64*64 + 64*64*8) x 2 B = 73728 B / 256 = 288 cycles, hidden)
  CHECK(r.end == 688 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  // Only pt.1 of core 0 was busy, all the time
  bool found = false;
  for (const auto& u : s["units"]["units"]) {
    std::string name = u["unit"].get<std::string>();
    CHECK(name != "core 0/pt.0");
    if (name == "core 0/pt.1") {
      found = true;
      CHECK(u["utilization"].get<double>() == Approx(1.0));
    }
  }
  CHECK(found);
}

TEST_CASE("models: a full LX makes a ready task wait and it still finishes", "[models][lx]") {
  // Usable LX 16 KiB: preloaded xl (8 KiB) plus one 8 KiB output at a time.
  ChipConfig cfg = load_chip_config("configs/spyre.json", {"card.kernel_launch_ns=0", "core.lx.usable_bytes=16384"});
  REQUIRE(cfg.core.lx.usable_bytes == 16384);
  KernelGraph g = graph(1, kLxBuffers, sfp("e", "exp", "xl", "yl") + "," + pt64());
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // Both are ready at 0 on different units (SFP 72 cycles, PT 344 cycles) but only one output
  // fits; the other waits until the first completes and its output (no readers) is freed.
  // Whichever goes first, the end is 72 + 344 = 416 cycles (in parallel it would be 344).
  CHECK(r.end == 416 * kCore);
  const TaskRecord& e = rec_of(sim, g, "e");
  const TaskRecord& mm = rec_of(sim, g, "mm");
  CHECK(e.ready == 0);
  CHECK(mm.ready == 0);
  if (e.start == 0) {
    CHECK(mm.lx_wait == 72 * kCore);
    CHECK(mm.start == 72 * kCore);
  } else {
    CHECK(e.lx_wait == 344 * kCore);
    CHECK(e.start == 344 * kCore);
  }
  CHECK(e.lx_wait + mm.lx_wait > 0);
  auto s = make_summary(sim, r, RunInfo{"test.json", "configs/spyre.json", "dfsim.kernels"});
  CHECK(s["stalls"]["waiting_for_lx_ns"].get<double>() > 0);
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() == 0.0);
  CHECK(s["lx"]["peak_bytes_max"].get<std::uint64_t>() == 16384);
}

TEST_CASE("models: reading a buffer nobody writes is a deadlock naming task and buffer", "[models][deadlock]") {
  ChipConfig cfg;
  const char* buffers = R"(
    {"name": "xl", "space": "lx", "bytes": 8192, "preloaded": true},
    {"name": "ghost", "space": "lx", "bytes": 8192},
    {"name": "yl", "space": "lx", "bytes": 8192},
    {"name": "zl", "space": "lx", "bytes": 8192})";
  KernelGraph g = graph(1, buffers, sfp("ok", "exp", "xl", "yl") + "," + sfp("stuck", "add", "ghost", "zl"));
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  CHECK(r.status == RunResult::Status::deadlock);
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.reason, Contains("1 of 2"));
  REQUIRE(r.blocked.size() == 1);
  CHECK_THAT(r.blocked[0], Contains("\"stuck\""));
  CHECK_THAT(r.blocked[0], Contains("\"ghost\""));
  CHECK_THAT(r.blocked[0], Contains("not preloaded"));
  // The task that could run did: 72 cycles
  CHECK(rec_of(sim, g, "ok").end == 72 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  CHECK(s["status"] == "deadlock");
  CHECK(s["blocked"].size() == 1);
}

TEST_CASE("models: outputs that never fit the LX deadlock with the LX named", "[models][deadlock][lx]") {
  // Usable 16 KiB. "e" (exp xl -> yl, 4 KiB each) runs; then "big" reads yl and writes two
  // 8 KiB buffers: it needs 16 KiB, but yl (4 KiB) stays reserved until "big" itself has read
  // it, so at most 12 KiB are ever free: "big" is ready and can never fire.
  ChipConfig cfg = load_chip_config("configs/spyre.json", {"card.kernel_launch_ns=0", "core.lx.usable_bytes=16384"});
  const char* buffers = R"(
    {"name": "xl", "space": "lx", "bytes": 4096, "preloaded": true},
    {"name": "yl", "space": "lx", "bytes": 4096},
    {"name": "al", "space": "lx", "bytes": 8192},
    {"name": "bl", "space": "lx", "bytes": 8192})";
  const char* tasks = R"(
    {"name": "e", "unit": "sfp", "op": "exp", "core": 0, "elements": 2048,
     "reads": [{"buffer": "xl", "bytes": 4096}], "writes": [{"buffer": "yl", "bytes": 4096}]},
    {"name": "big", "unit": "sfp", "op": "copy", "core": 0, "elements": 2048,
     "reads": [{"buffer": "yl", "bytes": 4096}],
     "writes": [{"buffer": "al", "bytes": 4096}, {"buffer": "bl", "bytes": 4096}]})";
  KernelGraph g = graph(1, buffers, tasks);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.status == RunResult::Status::deadlock);
  REQUIRE(r.blocked.size() == 1);
  CHECK_THAT(r.blocked[0], Contains("\"big\""));
  CHECK_THAT(r.blocked[0], Contains("16384 B of LX on core 0"));
  // exp of 2048 on 2 corelets: 1024 each = 16 vectors x 2 + 8 = 40 cycles; then "big" is
  // ready but can never reserve its outputs.
  CHECK(rec_of(sim, g, "e").end == 40 * kCore);
  CHECK(rec_of(sim, g, "big").ready == 40 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  CHECK(s["status"] == "deadlock");
  // Stall figures stay within the run: nothing can have waited longer than it lasted.
  double t = s["sim_time_ns"].get<double>();
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() >= 0);
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() <= t);
  CHECK(s["stalls"]["waiting_for_lx_ns"].get<double>() <= t);
}

namespace {

// One HBM buffer of `n` bytes loaded into an LX buffer of core `core` by one DMA task.
KernelGraph dma_load(std::uint64_t n, int core, int cores) {
  std::string b = std::to_string(n);
  return graph(cores,
               R"({"name": "x", "space": "hbm", "bytes": )" + b + R"(, "preloaded": true},
                  {"name": "xl", "space": "lx", "bytes": )" + b + "}",
               R"({"name": "ld", "unit": "dma", "op": "load", "core": )" + std::to_string(core) +
                   R"(, "reads": [{"buffer": "x", "bytes": )" + b + R"(}], "writes": [{"buffer": "xl", "bytes": )" +
                   b + "}]}");
}

// The spyre chip with the "simple" memory model, no per-stick DMA issue cost and no memory
// ports, whose closed forms these DMA tests check (the LPDDR5 model has its own tests in
// test_memory.cpp; the ports have theirs below).
ChipConfig simple_memory_chip() {
  ChipConfig cfg;
  cfg.memory.impl = "simple";
  cfg.core.dma.stick_issue_cycles = 0;
  cfg.memory.ports = 0;
  return cfg;
}

// One HBM load of `n` bytes into LX on each of `cores_loading` (a list of core ids).
KernelGraph dma_loads(std::uint64_t n, const std::vector<int>& cores_loading, int cores) {
  std::string b = std::to_string(n), buffers, tasks;
  for (int c : cores_loading) {
    std::string s = std::to_string(c);
    if (!buffers.empty()) buffers += ",", tasks += ",";
    buffers += R"({"name": "x)" + s + R"(", "space": "hbm", "bytes": )" + b + R"(, "preloaded": true},
                 {"name": "xl)" + s + R"(", "space": "lx", "bytes": )" + b + "}";
    tasks += R"({"name": "ld)" + s + R"(", "unit": "dma", "op": "load", "core": )" + s +
             R"(, "reads": [{"buffer": "x)" + s + R"(", "bytes": )" + b + R"(}], "writes": [{"buffer": "xl)" + s +
             R"(", "bytes": )" + b + "}]}";
  }
  return graph(cores, buffers, tasks);
}

}  // namespace

TEST_CASE("models: a one-burst DMA load has a closed-form time", "[models][dma]") {
  ChipConfig cfg = simple_memory_chip();
  KernelGraph g = dma_load(128, 1, 2);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // One 128 B burst from address 0 (channel 0): 128 / 32 = 4 memory cycles + 80 latency = 84
  // x 1.25 ns = 105 ns; controller 0 sits at ring stop 0, core 1 is 1 hop away: 2 hop + 1
  // occupancy = 3 core cycles; LX write 128 / 256 -> 1 cycle. 105 ns + 4 core cycles.
  CHECK(r.end == ns_to_ticks(105) + 4 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  CHECK(s["offchip"]["bytes_read"] == 128);
  CHECK(s["dma"]["bursts"] == 1);
  CHECK(s["dma"]["sticks"] == 1);
  CHECK(s["ring"]["bytes_carried"] == 128);
  // The one burst was in flight from its issue at 0 to the end: latency = the run, and on
  // average one burst was outstanding while the queue was busy (Little's law).
  CHECK(s["dma"]["max_outstanding"] == 1);
  CHECK(s["dma"]["mean_burst_latency_ns"].get<double>() == Approx(ticks_to_ns(r.end)).epsilon(1e-9));
  CHECK(s["dma"]["mean_outstanding"].get<double>() == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("models: a DMA load moves exactly its bytes and is no faster than peak bandwidth", "[models][dma]") {
  ChipConfig cfg = simple_memory_chip();
  const std::uint64_t n = 256 * 1024;
  KernelGraph g = dma_load(n, 0, 1);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  Card& card = sim.system().card();
  CHECK(card.memory().stats().bytes_read == n);
  CHECK(card.memory().stats().bytes_written == 0);
  CHECK(card.memory().stats().reads == n / 4096);      // 64 bursts of 32 sticks
  CHECK(card.core(0).dma_stats().hbm_to_lx == n);
  CHECK(card.core(0).dma_stats().bursts == n / 4096);
  CHECK(card.core(0).dma_stats().sticks == n / 128);
  CHECK(card.core(0).lx().bytes_written == n);
  // Roofline: 262144 B / 204.8 GB/s = 1280 ns at least
  CHECK(ticks_to_ns(r.end) >= n / cfg.memory_peak_gbps());
  // and one burst's latency more than that is plenty: each channel moves 8 bursts of 160 ns
  // (1280 ns) plus the issue ramp; bound loosely from above so a gross slowdown shows.
  CHECK(ticks_to_ns(r.end) < 4 * n / cfg.memory_peak_gbps());
}

TEST_CASE("models: a DMA store writes exactly its bytes to DRAM", "[models][dma]") {
  ChipConfig cfg;
  const std::uint64_t n = 64 * 1024;
  std::string b = std::to_string(n);
  KernelGraph g = graph(1,
                        R"({"name": "yl", "space": "lx", "bytes": )" + b + R"(, "preloaded": true},
                           {"name": "y", "space": "hbm", "bytes": )" + b + "}",
                        R"({"name": "st", "unit": "dma", "op": "store", "core": 0,
                            "reads": [{"buffer": "yl", "bytes": )" + b + R"(}],
                            "writes": [{"buffer": "y", "bytes": )" + b + "}]}");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  Card& card = sim.system().card();
  CHECK(card.memory().stats().bytes_written == n);
  CHECK(card.memory().stats().bytes_read == 0);
  CHECK(card.memory().stats().turnarounds == 0);
  CHECK(card.core(0).dma_stats().lx_to_hbm == n);
  CHECK(card.core(0).lx().bytes_read == n);
  CHECK(ticks_to_ns(r.end) >= n / cfg.memory_peak_gbps());
}

TEST_CASE("models: ideal memory makes DMA tasks take no time", "[models][dma]") {
  ChipConfig cfg;
  cfg.memory.ideal = true;
  KernelGraph g = dma_load(64 * 1024, 0, 1);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(r.end == 0);
  CHECK(rec_of(sim, g, "ld").end == 0);
}

TEST_CASE("models: ideal memory leaves no stale DMA bursts behind", "[models][dma]") {
  // With ideal memory the load takes no time; the LX -> LX copy that follows on the same DMA
  // engine is not off-chip, so it is timed: 16 bursts of 4 KiB, each 16 cycles on the LX read
  // port and 16 on the write port (same core: no ring hop).
  ChipConfig cfg;
  cfg.memory.ideal = true;
  const char* buffers = R"(
    {"name": "x", "space": "hbm", "bytes": 65536, "preloaded": true},
    {"name": "xl", "space": "lx", "bytes": 65536},
    {"name": "yl", "space": "lx", "bytes": 65536})";
  const char* tasks = R"(
    {"name": "ld", "unit": "dma", "op": "load", "core": 0,
     "reads": [{"buffer": "x", "bytes": 65536}], "writes": [{"buffer": "xl", "bytes": 65536}]},
    {"name": "cp", "unit": "dma", "op": "copy", "core": 0,
     "reads": [{"buffer": "xl", "bytes": 65536}], "writes": [{"buffer": "yl", "bytes": 65536}]})";
  KernelGraph g = graph(1, buffers, tasks);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(rec_of(sim, g, "ld").end == 0);
  Card& card = sim.system().card();
  // Ideal memory is not touched: no DRAM traffic at all (and certainly not a part of it).
  CHECK(card.memory().stats().bytes_read == 0);
  CHECK(card.core(0).dma_stats().lx_to_lx == 65536);
  // The copy cannot be faster than its LX read port: 65536 / 256 = 256 cycles
  CHECK(rec_of(sim, g, "cp").end - rec_of(sim, g, "cp").start >= 256 * kCore);
}

namespace {
// `g` run through one memory port of 32 B/cycle with the given request time, applied to every
// request or (scope "stick_layout") to those of buffers in the stick layout; the end of the run.
Tick through_one_port(const KernelGraph& g, double request_ns, const std::string& scope = "all") {
  ChipConfig cfg = simple_memory_chip();
  cfg.memory.ports = 1;
  cfg.memory.port_bytes_per_cycle = 32;
  cfg.memory.port_request_ns = request_ns;
  cfg.memory.port_request_scope = scope;
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  return r.end;
}
}  // namespace

TEST_CASE("models: a memory port adds its occupancy to a one-burst load", "[models][dma][port]") {
  // As "a one-burst DMA load has a closed-form time" (105 ns + 2 hop + 1 ring + 1 LX core
  // cycles) plus the port: 128 B / 32 B per cycle = 4 core cycles. 105 ns + 8 core cycles.
  CHECK(through_one_port(dma_load(128, 1, 2), 0) == ns_to_ticks(105) + 8 * kCore);
}

TEST_CASE("models: a memory port holds each request at least memory.port_request_ns", "[models][dma][port]") {
  // As above, but the port takes max(128 B / 32 B per cycle = 4 core cycles = 2.67 ns, 20 ns)
  // = 20 ns: 105 ns + 4 core cycles (hops, ring, LX) + 20 ns.
  CHECK(through_one_port(dma_load(128, 1, 2), 20) == ns_to_ticks(105) + 4 * kCore + ns_to_ticks(20));
}

namespace {
// 64 KiB loaded by core 1 through one port of 32 B/cycle with a 40 ns request time, as 512
// single sticks (128 B runs 256 B apart) or as 16 bursts of 4 KiB. One simulation per case.
Tick port_request_load(bool sticks, const std::string& scope = "all", const std::string& layout = "row_major") {
  const char* read = sticks ? R"({"buffer": "x", "bytes": 128, "rows": 512, "stride": 256})"
                            : R"({"buffer": "x", "bytes": 65536})";
  return through_one_port(graph(2, R"({"name": "x", "space": "hbm", "bytes": 131072, "preloaded": true, "layout": ")" +
                                       layout + R"("}, {"name": "xl", "space": "lx", "bytes": 65536})",
                                std::string(R"({"name": "ld", "unit": "dma", "op": "load", "core": 1, "reads": [)") +
                                    read + R"(], "writes": [{"buffer": "xl", "bytes": 65536}]})"),
                          40, scope);
}
}  // namespace

TEST_CASE("models: single-stick requests are bound by the port's request rate", "[models][dma][port]") {
  // Each single stick holds the port max(128 / 32 = 4 cycles, 40 ns) = 40 ns: at least
  // 512 x 40 = 20480 ns, plus the first request's 105 ns of memory and the last one's hops
  // and LX write (under 100 ns).
  const Tick end = port_request_load(true);
  CHECK(end >= ns_to_ticks(512 * 40 + 105));
  CHECK(end < ns_to_ticks(512 * 40 + 105 + 100));
}

TEST_CASE("models: under port_request_scope stick_layout a stick-layout tensor's requests pay the rate", "[models][dma][port]") {
  // The 512 single sticks above, of a buffer in the stick layout: 512 x 40 ns as under "all".
  const Tick end = port_request_load(true, "stick_layout", "stick");
  CHECK(end >= ns_to_ticks(512 * 40 + 105));
  CHECK(end < ns_to_ticks(512 * 40 + 105 + 100));
}

TEST_CASE("models: under port_request_scope stick_layout a row-major tensor's requests do not", "[models][dma][port]") {
  // The same sticks of a row-major buffer hold the port for their bytes only (4 cycles each):
  // at least the port's 512 x 4 = 2048 cycles; the simple memory then binds (about 15 ns a
  // stick: 7.7 us), under half the 512 x 40 ns = 20.5 us the rate alone would take.
  const Tick end = port_request_load(true, "stick_layout", "row_major");
  CHECK(end >= 2048 * kCore);
  CHECK(end < ns_to_ticks(512 * 40 / 2));
}

TEST_CASE("models: long bursts are not bound by the port's request rate", "[models][dma][port]") {
  // Each 4 KiB burst holds the port max(4096 / 32 = 128 cycles = 85.3 ns, 40 ns) = 128
  // cycles: the port's bytes bound, 16 x 128 = 2048 cycles, plus the first burst's memory
  // time and the last one's hops (under 300 ns), far below the 20 us of single sticks.
  const Tick end = port_request_load(false);
  CHECK(end >= 2048 * kCore);
  CHECK(end < 2048 * kCore + ns_to_ticks(300));
}

TEST_CASE("models: two cores behind one memory port share its bandwidth", "[models][dma][port]") {
  // 4 cores, 2 ports: cores 0 and 1 use port 0. A port of 8 B/cycle (12 GB/s) is far below the
  // memory (204.8 GB/s), so 2 x 64 KiB through it take at least 131072 / 8 = 16384 core cycles.
  ChipConfig cfg = simple_memory_chip();
  cfg.cores = 4;
  cfg.memory.ports = 2;
  cfg.memory.port_bytes_per_cycle = 8;
  KernelGraph g = dma_loads(65536, {0, 1}, 4);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(r.end >= 16384 * kCore);
  CHECK(r.end < 16384 * kCore + ns_to_ticks(1000));  // and the port, not the memory, is the limit
}

TEST_CASE("models: two cores behind different memory ports do not share one", "[models][dma][port]") {
  // Cores 0 and 2 use ports 0 and 1: each 64 KiB takes 65536 / 8 = 8192 cycles on its own port,
  // in parallel, so well under the 16384 of a shared port.
  ChipConfig cfg = simple_memory_chip();
  cfg.cores = 4;
  cfg.memory.ports = 2;
  cfg.memory.port_bytes_per_cycle = 8;
  KernelGraph g = dma_loads(65536, {0, 2}, 4);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(r.end >= 8192 * kCore);
  CHECK(r.end < 16384 * kCore);
}

TEST_CASE("models: with two DMA queues a core's load and store run at the same time", "[models][dma]") {
  // A load (HBM -> LX, inbound queue) and an independent store (LX -> HBM, outbound queue) of
  // core 0: both fire at t = 0. With core.dma.queues = 1 the store (higher instance id) would
  // wait for the load to finish.
  ChipConfig cfg = simple_memory_chip();
  REQUIRE(cfg.core.dma.queues == 2);
  const char* buffers = R"(
    {"name": "x", "space": "hbm", "bytes": 65536, "preloaded": true},
    {"name": "xl", "space": "lx", "bytes": 65536},
    {"name": "yl", "space": "lx", "bytes": 65536, "preloaded": true},
    {"name": "y", "space": "hbm", "bytes": 65536})";
  const char* tasks = R"(
    {"name": "ld", "unit": "dma", "op": "load", "core": 0,
     "reads": [{"buffer": "x", "bytes": 65536}], "writes": [{"buffer": "xl", "bytes": 65536}]},
    {"name": "st", "unit": "dma", "op": "store", "core": 0,
     "reads": [{"buffer": "yl", "bytes": 65536}], "writes": [{"buffer": "y", "bytes": 65536}]})";
  KernelGraph g = graph(1, buffers, tasks);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  CHECK(rec_of(sim, g, "ld").start == 0);
  CHECK(rec_of(sim, g, "st").start == 0);
  CHECK(rec_of(sim, g, "st").start < rec_of(sim, g, "ld").end);
  Card& card = sim.system().card();
  CHECK(card.core(0).dma(0).stats().hbm_to_lx == 65536);
  CHECK(card.core(0).dma(0).stats().lx_to_hbm == 0);
  CHECK(card.core(0).dma(1).stats().lx_to_hbm == 65536);
  CHECK(card.core(0).dma_stats().hbm_to_lx + card.core(0).dma_stats().lx_to_hbm == 2 * 65536);
}

TEST_CASE("models: a multicast DMA load reads once and fills every destination LX", "[models][dma]") {
  ChipConfig cfg = simple_memory_chip();
  // 128 B from HBM to "xl" on cores 1 and 2; core 2 then negates its copy.
  KernelGraph g = graph(4, R"({"name": "x", "space": "hbm", "bytes": 128, "preloaded": true},
                              {"name": "xl", "space": "lx", "bytes": 128},
                              {"name": "yl", "space": "lx", "bytes": 128})",
                        R"({"name": "ld", "unit": "dma", "op": "load", "core": 0,
                            "reads": [{"buffer": "x", "bytes": 128}],
                            "writes": [{"buffer": "xl", "core": 1, "bytes": 128}, {"buffer": "xl", "core": 2, "bytes": 128}]},
                           {"name": "neg", "unit": "sfp", "op": "neg", "core": 2, "elements": 64,
                            "reads": [{"buffer": "xl", "bytes": 128}], "writes": [{"buffer": "yl", "bytes": 128}]})");
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // Memory: 105 ns (as for one burst). Controller 0 at stop 0; both destinations lie
  // clockwise, the farther 2 hops away: 2 x 2 + 1 occupancy = 5 core cycles; LX write 1.
  CHECK(rec_of(sim, g, "ld").end == ns_to_ticks(105) + 6 * kCore);
  auto s = make_summary(sim, r, RunInfo{"test.json", "", "dfsim.kernels"});
  CHECK(s["offchip"]["bytes_read"] == 128);              // read once
  CHECK(s["dma"]["hbm_to_lx_bytes"] == 128);
  CHECK(s["dma"]["multicast_extra_bytes"] == 128);       // the second copy
  CHECK(s["ring"]["bytes_carried"] == 128);              // one message, clockwise
  Card& card = sim.system().card();
  CHECK(card.core(1).lx().bytes_written == 128);
  CHECK(card.core(2).lx().bytes_written == 128 + 128);  // its copy, then neg's output
  CHECK(card.core(0).lx().bytes_written == 0);
}

namespace {

// Two tiles, each of two 600000 B operands P and Q that both cores need: core 0 loads P and
// core 1 loads Q, each multicasting to both LXs (matmul's operand sharing in miniature); then
// each core reduces its P and Q. Core 1's DMA first copies 4 MiB within HBM, so core 0 runs
// ahead. Three operands do not fit one LX (1589376 B usable).
KernelGraph shared_tiles() {
  std::string buffers = R"({"name": "x", "space": "hbm", "bytes": 1200000, "preloaded": true},
      {"name": "w", "space": "hbm", "bytes": 4194304, "preloaded": true},
      {"name": "w2", "space": "hbm", "bytes": 4194304})";
  std::string tasks = R"({"name": "warm", "unit": "dma", "op": "copy", "core": 1,
      "reads": [{"buffer": "w", "bytes": 4194304}], "writes": [{"buffer": "w2", "bytes": 4194304}]})";
  for (int t = 0; t < 2; ++t) {
    std::string p = "p" + std::to_string(t), q = "q" + std::to_string(t), o = "o" + std::to_string(t);
    for (const auto& b : {p, q}) buffers += R"(, {"name": ")" + b + R"(", "space": "lx", "bytes": 600000})";
    buffers += R"(, {"name": ")" + o + R"(", "space": "lx", "bytes": 128})";
    auto load = [&](const std::string& b, int core, int offset) {
      std::string w = R"({"buffer": ")" + b + R"(", "core": 0, "bytes": 600000}, {"buffer": ")" + b +
                      R"(", "core": 1, "bytes": 600000})";
      return R"(, {"name": "load_)" + b + R"(", "unit": "dma", "op": "load", "core": )" + std::to_string(core) +
             R"(, "reads": [{"buffer": "x", "offset": )" + std::to_string(offset) +
             R"(, "bytes": 600000}], "writes": [)" + w + "]}";
    };
    tasks += load(p, 0, 0) + load(q, 1, 600000);
    tasks += R"(, {"name": "sum)" + std::to_string(t) + R"(", "unit": "sfp", "op": "sum", "cores": {"first": 0, "count": 2},
        "elements": 600000, "reads": [{"buffer": ")" + p + R"(", "bytes": 600000}, {"buffer": ")" + q +
             R"(", "bytes": 600000}], "writes": [{"buffer": ")" + o + R"(", "bytes": 128}]})";
  }
  return graph(2, buffers, tasks);
}

}  // namespace

TEST_CASE("models: program-order LX allocation runs shared tiles without deadlock", "[models][lx]") {
  ChipConfig cfg = simple_memory_chip();
  cfg.cores = 2;
  REQUIRE(cfg.core.lx.allocation == "program_order");
  KernelGraph g = shared_tiles();
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  // p1 comes after q0 and o0 in program order: core 0 may not load it before core 1 has
  // loaded q0, and then only once sum0 has freed p0 and q0 (p0 + q0 + p1 > 1589376 B).
  CHECK(rec_of(sim, g, "load_p1").start >= rec_of(sim, g, "load_q0", 1).start);
  CHECK(rec_of(sim, g, "load_p1").start >= rec_of(sim, g, "sum0", 1).end);
  CHECK(rec_of(sim, g, "sum1", 1).end == r.end);
}

TEST_CASE("models: first-come LX allocation deadlocks on shared tiles and says why", "[models][lx][deadlock]") {
  ChipConfig cfg = simple_memory_chip();
  cfg.cores = 2;
  cfg.core.lx.allocation = "first_come";
  KernelGraph g = shared_tiles();
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  // Core 0 loads p0 and then p1 into both LXs while core 1 is still copying; q0 then needs
  // 600000 B where 1589376 - 1200000 = 389376 are free, and nothing can free p0 or p1.
  REQUIRE(r.status == RunResult::Status::deadlock);
  REQUIRE(!r.blocked.empty());
  CHECK_THAT(r.blocked[0], Contains("load_q0"));
  CHECK_THAT(r.blocked[0], Contains("600000 B of LX"));
  CHECK_THAT(r.blocked[0], Contains("389376 B free"));
}

// The terminal summary's busy line shows the ring's links apart from its memory ports: a run
// bound by one port's requests would otherwise read as a quiet ring (by_kind's mean over every
// link and port that carried traffic).
TEST_CASE("summary: the busy line shows the busiest memory port of each direction apart from the ring links",
          "[models][summary]") {
  ChipConfig cfg = load_chip_config("configs/spyre.json", {"card.kernel_launch_ns=0"});
  // Core 0 loads 64 single sticks of a stick-laid tensor (each a port request of 7.5 ns) and
  // stores nothing: its half's read port is busy, both write ports idle.
  const std::string buffers = R"(
    {"name": "x", "space": "hbm", "bytes": 1048576, "preloaded": true, "layout": "stick"},
    {"name": "xl", "space": "lx", "bytes": 8192})";
  const std::string load = R"({"name": "ld", "unit": "dma", "op": "load", "core": 0,
      "reads": [{"buffer": "x", "bytes": 128, "rows": 64, "stride": 16384}], "writes": [{"buffer": "xl", "bytes": 8192}]})";
  KernelGraph g = graph(1, buffers, load);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  auto s = make_summary(sim, r, RunInfo{"test.json", "configs/spyre.json", "dfsim.kernels"});
  // The units list holds the units that did something: the links of the loads' paths and core
  // 0's half's read port; no write port.
  double rd = 0, links = 0;
  int nlinks = 0, write_ports = 0;
  for (const auto& u : s["units"]["units"]) {
    const std::string name = u["unit"].get<std::string>();
    if (u["kind"] != "ring") continue;
    const double busy = u["utilization"].get<double>();
    if (name.find("/mem port ") == std::string::npos) {
      links += busy;
      ++nlinks;
    } else if (name.substr(name.size() - 3) == " rd") {
      rd = std::max(rd, busy);
    } else {
      ++write_ports;
    }
  }
  REQUIRE(nlinks > 0);
  CHECK(write_ports == 0);
  // 64 requests x 7.5 ns = 480 ns of the read port, most of the run; the links carry 64
  // sticks of 128 B at 128 B per cycle, 43 ns each
  CHECK(rd > 0.5);
  CHECK(links / nlinks < 0.1);
  // by_kind averages them all, ports and links: the quiet ring the text no longer shows
  CHECK(s["units"]["by_kind"]["ring"]["mean_utilization"].get<double>() < rd / 2);
  const std::string text = summary_text(s);
  CHECK_THAT(text, Contains(fmt::format("  ring {:.0f}%  port rd {:.0f}%\n", 100 * links / nlinks, 100 * rd)) ||
                       Contains(fmt::format("  ring {:.0f}%  port rd {:.0f}%  ", 100 * links / nlinks, 100 * rd)));
}

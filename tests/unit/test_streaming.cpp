// The streaming rule: a consumer whose reads of a producer's output are all streaming fires
// once the producer has fired and completes no earlier than the producer. One simulation per
// test case (each runs in its own process).
#include <catch2/catch.hpp>

#include <string>

#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/runtime/simulation.h"

using namespace dfsim;

namespace {

// A 256 KiB load HBM -> LX on core 0, then an SFP add over it (reading the loaded buffer,
// streaming or not), then nothing else.
KernelGraph load_then_add(bool streaming) {
  std::string s = streaming ? "true" : "false";
  std::string text = R"({"format": "dfsim.kernels", "version": 1, "name": "stream", "cores": 1,
    "buffers": [
      {"name": "x", "space": "hbm", "bytes": 262144, "preloaded": true},
      {"name": "xl", "space": "lx", "bytes": 262144},
      {"name": "yl", "space": "lx", "bytes": 262144}],
    "kernels": [{"name": "k", "tasks": [
      {"name": "load", "unit": "dma", "op": "load", "core": 0,
       "reads": [{"buffer": "x", "bytes": 262144}], "writes": [{"buffer": "xl", "bytes": 262144}]},
      {"name": "add", "unit": "sfp", "op": "add", "core": 0, "elements": 131072,
       "reads": [{"buffer": "xl", "bytes": 262144, "streaming": )" + s + R"(}],
       "writes": [{"buffer": "yl", "bytes": 262144}]}]}]})";
  return read_kernel_graph(Json::parse(text), "stream.json");
}

struct Times {
  Tick load_start, load_end, add_start, add_end, end;
};

Times run(bool streaming) {
  static ChipConfig cfg;  // the spyre chip
  static KernelGraph g = load_then_add(streaming);
  static ExpandedGraph x = expand_graph(g, cfg);
  static Simulation sim(g, x, cfg);
  RunResult r = sim.run();
  REQUIRE(r.ok());
  const auto& t = sim.recorder().tasks();
  return Times{t[0].start, t[0].end, t[1].start, t[1].end, r.end};
}

// The add alone: 131072 elements / (64 lanes x 2 corelets) = 1024 vectors x 1 cycle + 8
// pipeline = 1032 cycles, but the LX ports move 256 KiB at 256 B/cycle = 1024 cycles each
// way; compute wins: 1032 cycles = 688 ns. The 256 KiB load takes far longer (~1.3 us at
// one core's DMA rate), so a streaming add ends with the load.
constexpr Tick kAdd = 1032 * 666667ull;

}  // namespace

TEST_CASE("streaming: without it the consumer starts when the producer has completed") {
  Times t = run(false);
  CHECK(t.add_start == t.load_end);
  CHECK(t.add_end == t.load_end + kAdd);
  CHECK(t.end == t.add_end);
}

TEST_CASE("streaming: a streaming consumer fires with its producer and ends with it") {
  Times t = run(true);
  REQUIRE(t.load_end - t.load_start > kAdd);  // the premise: the load is the longer stream
  CHECK(t.add_start == t.load_start);
  CHECK(t.add_end == t.load_end);  // its own part (688 ns) finished earlier; it waits for the last chunk
  CHECK(t.end == t.load_end);
}

// Benchmark (not a test): runs the 32-core 4096^3 fp16 matmul (or WORKLOAD, or `stream`: a
// 32-core copy of a 16384x16384 fp16 tensor, 1 GiB through DMA and memory) and prints host
// seconds, events/s, simulated cycles per host second and off-chip bytes per host second.
// Usage: dfsim_bench [WORKLOAD | stream] [CONFIG]
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <systemc>

#include "models/chip/card.h"
#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/expand.h"
#include "sim/runtime/simulation.h"

int sc_main(int argc, char* argv[]) {
  using namespace dfsim;
  std::string src = DFSIM_SOURCE_DIR;
  std::string workload = argc > 1 ? argv[1] : src + "/workloads/matmul_4096.json";
  std::string config = argc > 2 ? argv[2] : src + "/configs/spyre.json";
  try {
    auto t0 = std::chrono::steady_clock::now();
    ChipConfig cfg = load_chip_config(config, {"sim.trace=false"});  // the benchmark writes no trace
    KernelGraph g;
    if (workload == "stream") {
      // 512 MiB read + 512 MiB written: the issue's "1 GiB through DMA and memory".
      Json ops = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "stream_1gib",
        "tensors": {"x": {"shape": [16384, 16384], "dtype": "fp16"}, "y": {"shape": [16384, 16384], "dtype": "fp16"}},
        "inputs": ["x"], "outputs": ["y"], "ops": [{"op": "copy", "inputs": ["x"], "outputs": ["y"]}]})");
      g = compile_ops(read_op_graph(ops, "stream"), cfg, cfg.cores);
    } else {
      g = load_workload(workload, cfg, 0, nullptr);
    }
    ExpandedGraph x = expand_graph(g, cfg);
    double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Simulation sim(g, x, cfg);
    RunResult r = sim.run();
    ClockDomain clk(cfg.core.clock_mhz);
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    std::cout << fmt::format("workload            {}\n", workload);
    std::cout << fmt::format("task instances      {}\n", x.instances.size());
    std::cout << fmt::format("load+compile s      {:.3f}\n", load_s);
    std::cout << fmt::format("simulate s          {:.3f}\n", r.wall_seconds);
    std::cout << fmt::format("events              {}\n", r.activations);
    std::cout << fmt::format("events/s            {:.3g}\n", r.activations / r.wall_seconds);
    std::cout << fmt::format("simulated us        {:.3f}\n", ticks_to_ns(r.end) / 1000);
    std::cout << fmt::format("sim cycles/host s   {:.3g}\n", clk.to_cycles(r.end) / r.wall_seconds);
    const MemStats& m = sim.system().card().memory().stats();
    double gib = static_cast<double>(m.bytes_read + m.bytes_written) / (1u << 30);
    std::cout << fmt::format("off-chip GiB        {:.3f}\n", gib);
    std::cout << fmt::format("off-chip GiB/host s {:.3g}\n", gib / r.wall_seconds);
    std::cout << fmt::format("peak RSS MiB        {:.1f}\n", u.ru_maxrss / 1024.0);
    return r.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

// Benchmark (not a test): host speed and footprint of dfsim on fixed cases. Without
// arguments it runs every case, each in its own process (so peak RSS is the case's own), and
// prints one row per case: host seconds of simulation, events, events/s, simulated cycles per
// host second, task instances, peak RSS and the bytes of trace.json at the default level.
// `cpu s` is the simulation's CPU time: on a shared machine it is the steadier figure.
// Usage: dfsim_bench                      all cases, a table
//        dfsim_bench CASE [CONFIG]        one case (a name below, or a workload file), in detail
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <streambuf>
#include <systemc>

#include "models/chip/card.h"
#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/gen/step_graph.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"
#include "sim/runtime/simulation.h"
#include "sim/trace/trace_writer.h"

namespace {

using namespace dfsim;

// A copy of a rows x cols fp16 tensor through DMA and memory: rows*cols*2 bytes read and as
// many written.
KernelGraph stream_graph(const ChipConfig& cfg, const std::string& name, int rows, int cols) {
  Json ops = Json::parse(fmt::format(R"({{"format": "dfsim.ops", "version": 1, "name": "{}",
    "tensors": {{"x": {{"shape": [{}, {}], "dtype": "fp16"}}, "y": {{"shape": [{}, {}], "dtype": "fp16"}}}},
    "inputs": ["x"], "outputs": ["y"], "ops": [{{"op": "copy", "inputs": ["x"], "outputs": ["y"]}}]}})",
                                     name, rows, cols, rows, cols));
  return compile_ops(read_op_graph(ops, name), cfg, cfg.cores);
}

// One step of a shipped model (dfsim gen), compiled for the whole card.
KernelGraph model_step(const ChipConfig& cfg, const std::string& src, const std::string& model, StepSpec step) {
  step.cores = cfg.cores;
  ModelSpec m = find_model_spec(model, src + "/workloads/models");
  return compile_ops(read_op_graph(Json::parse(generate_step_graph(m, step)), model), cfg, cfg.cores);
}

StepSpec llama_step(StepPhase phase, std::int64_t tokens, std::int64_t context) {
  StepSpec s;
  s.phase = phase;
  s.tokens = tokens;
  s.context = context;
  return s;
}

// Issue 11's targets for a case (0: none): the table says whether the run met them.
struct Target {
  double host_s = 0, rss_mib = 0, trace_mb = 0;
};

struct Case {
  std::string name, what;
  std::function<KernelGraph(const ChipConfig&)> graph;  // empty: not runnable yet
  std::vector<std::string> sets = {};                   // config overrides (--set)
  Target target = {};
};

std::vector<Case> cases(const std::string& src) {
  return {
      {"matmul_4096", "matmul 4096^3 fp16, 32 cores",
       [src](const ChipConfig& c) { return load_workload(src + "/workloads/matmul_4096.json", c, 0, nullptr); }, {},
       {0.1}},
      {"stream_1gib", "copy 16384x16384 fp16, 32 cores (1 GiB off-chip)",
       [](const ChipConfig& c) { return stream_graph(c, "stream_1gib", 16384, 16384); }},
      {"stream_16gib", "copy 65536x65536 fp16, 32 cores (16 GiB off-chip, lpddr5)",
       [](const ChipConfig& c) { return stream_graph(c, "stream_16gib", 65536, 65536); }, {}, {1.5}},
      {"stream_16gib_bw", "the same through the coarse memory.impl=bandwidth model",
       [](const ChipConfig& c) { return stream_graph(c, "stream_16gib", 65536, 65536); }, {"memory.impl=bandwidth"},
       {1.5}},
      {"matmul_4096_bw", "matmul 4096^3 through memory.impl=bandwidth",
       [src](const ChipConfig& c) { return load_workload(src + "/workloads/matmul_4096.json", c, 0, nullptr); },
       {"memory.impl=bandwidth"}, {0.1}},
      {"long_6task", "6-task kernel graph simulating about 7 s at a 1 MHz clock (footprint)",
       [src](const ChipConfig& c) { return load_workload(src + "/tools/bench/long_6task.kernels.json", c, 0, nullptr); },
       {"core.clock_mhz=1"}, {0, 50, 1}},
      {"llama8b_decode", "Llama-3.1-8B decode step, batch 1, context 2048 (dfsim gen)",
       [src](const ChipConfig& c) { return model_step(c, src, "llama-3.1-8b", llama_step(StepPhase::decode, 1, 2048)); },
       {}, {1, 1024, 50}},
      {"llama8b_prefill", "Llama-3.1-8B prefill of 2048 tokens (dfsim gen)",
       [src](const ChipConfig& c) { return model_step(c, src, "llama-3.1-8b", llama_step(StepPhase::prefill, 2048, 0)); },
       {}, {10, 2048}},
      {"llama8b_decode_bw", "the decode step through memory.impl=bandwidth",
       [src](const ChipConfig& c) { return model_step(c, src, "llama-3.1-8b", llama_step(StepPhase::decode, 1, 2048)); },
       {"memory.impl=bandwidth"}, {1, 1024, 50}},
      {"llama8b_prefill_bw", "the prefill through memory.impl=bandwidth",
       [src](const ChipConfig& c) { return model_step(c, src, "llama-3.1-8b", llama_step(StepPhase::prefill, 2048, 0)); },
       {"memory.impl=bandwidth"}, {10, 2048}},
  };
}

// Counts the bytes written to it.
class CountingBuf : public std::streambuf {
 public:
  std::uint64_t bytes = 0;

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) ++bytes;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::uint64_t>(n);
    return n;
  }
};

// CPU seconds of this process so far (user + system): steadier than wall time on a shared machine.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

// Runs one case in this process; `row`: one tab-separated line for the table.
int run_case(const std::string& which, const std::string& config, bool row) {
  std::string src = DFSIM_SOURCE_DIR;
  std::vector<std::string> sets;
  for (const Case& c : cases(src))
    if (c.name == which) sets = c.sets;
  ChipConfig cfg = load_chip_config(config, sets);
  KernelGraph g;
  std::string label = which;
  bool found = false;
  auto t0 = std::chrono::steady_clock::now();
  for (const Case& c : cases(src))
    if (c.name == which) {
      if (!c.graph) {
        std::cout << (row ? fmt::format("{}\t-\n", which) : fmt::format("{}: {}\n", which, c.what));
        return 0;
      }
      g = c.graph(cfg);
      label = c.what;
      found = true;
    }
  if (!found) g = load_workload(which, cfg, 0, nullptr);
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg, TraceLevel::units);
  // Everything before the first simulated event, as a user waits for it.
  double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu0 = cpu_seconds();
  RunResult r = sim.run();
  double cpu = cpu_seconds() - cpu0;
  CountingBuf counter;
  std::ostream trace(&counter);
  write_trace(trace, sim, r);
  ClockDomain clk(cfg.core.clock_mhz);
  const MemStats& m = sim.system().card().memory().stats();
  double gib = static_cast<double>(m.bytes_read + m.bytes_written) / (1u << 30);
  double cps = clk.to_cycles(r.end) / r.wall_seconds;
  if (row) {
    std::cout << fmt::format("{}\t{:.3f}\t{:.3f}\t{:.2f}\t{}\t{:.3g}\t{:.3g}\t{}\t{:.1f}\t{}\n", which, r.wall_seconds, cpu,
                             setup_s, r.activations, r.activations / r.wall_seconds, cps, x.instances.size(), peak_rss_mib(),
                             counter.bytes);
    return r.ok() ? 0 : 1;
  }
  std::cout << fmt::format("case                {} ({})\n", which, label);
  std::cout << fmt::format("task instances      {}\n", x.instances.size());
  std::cout << fmt::format("setup s             {:.3f} (build or load, compile, expand, build the models)\n", setup_s);
  std::cout << fmt::format("simulate s          {:.3f} (CPU {:.3f})\n", r.wall_seconds, cpu);
  std::cout << fmt::format("events              {}\n", r.activations);
  std::cout << fmt::format("events/s            {:.3g}\n", r.activations / r.wall_seconds);
  std::cout << fmt::format("simulated us        {:.3f}\n", ticks_to_ns(r.end) / 1000);
  std::cout << fmt::format("sim cycles/host s   {:.3g}\n", cps);
  std::cout << fmt::format("off-chip GiB        {:.3f}\n", gib);
  std::cout << fmt::format("off-chip GiB/host s {:.3g}\n", gib / r.wall_seconds);
  std::cout << fmt::format("peak RSS MiB        {:.1f}\n", peak_rss_mib());
  std::cout << fmt::format("trace bytes         {} (level units)\n", counter.bytes);
  return r.ok() ? 0 : 1;
}

// Every case in its own process, as a table (header and rows in one layout).
constexpr const char* kTableRow = "{:<18} {:>8} {:>7} {:>8} {:>11} {:>9} {:>14} {:>9} {:>9} {:>12}  {}\n";

// "< 1 s, < 1024 MiB, < 50 MB trace: met" (or "not met: host s"), from a row's host seconds,
// peak RSS (MiB) and trace bytes; "" for a case without targets.
std::string target_text(const Target& t, double host_s, double rss_mib, double trace_bytes) {
  std::vector<std::string> parts, missed;
  auto check = [&](double limit, double value, const std::string& what, const std::string& name) {
    if (limit <= 0) return;
    parts.push_back(fmt::format("< {:g} {}", limit, what));
    if (value >= limit) missed.push_back(name);
  };
  check(t.host_s, host_s, "s", "host s");
  check(t.rss_mib, rss_mib, "MiB", "RSS");
  check(t.trace_mb, trace_bytes / 1e6, "MB trace", "trace");
  if (parts.empty()) return "";
  const std::string verdict = missed.empty() ? "met" : fmt::format("not met ({})", fmt::join(missed, ", "));
  return fmt::format("{}: {}", fmt::join(parts, ", "), verdict);
}

int run_all(const char* self) {
  std::cout << fmt::format(kTableRow, "case", "host s", "cpu s", "setup s", "events", "events/s", "sim cycles/s", "tasks",
                           "RSS MiB", "trace bytes", "issue 11 target");
  int rc = 0;
  for (const Case& c : cases(DFSIM_SOURCE_DIR)) {
    std::string cmd = fmt::format("'{}' --row {}", self, c.name);
    std::FILE* p = popen(cmd.c_str(), "r");
    char buf[512] = {0};
    std::string line = p && std::fgets(buf, sizeof buf, p) ? buf : "";
    if (!p || pclose(p) != 0) rc = 1;
    std::vector<std::string> f;
    for (std::size_t a = 0, b; a <= line.size(); a = b + 1) {
      b = line.find_first_of("\t\n", a);
      if (b == std::string::npos) b = line.size();
      if (b > a) f.push_back(line.substr(a, b - a));
    }
    if (f.size() == 10)
      std::cout << fmt::format(kTableRow, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9],
                               target_text(c.target, std::stod(f[1]), std::stod(f[8]), std::stod(f[9])));
    else
      std::cout << fmt::format("{:<18} {:>8}   {}\n", c.name, "-", c.graph ? "failed" : c.what);
  }
  return rc;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  try {
    if (argc <= 1) return run_all(argv[0]);
    bool row = std::string(argv[1]) == "--row";
    int a = row ? 2 : 1;
    if (argc <= a) return 2;
    std::string config = argc > a + 1 ? argv[a + 1] : std::string(DFSIM_SOURCE_DIR) + "/configs/spyre.json";
    return run_case(argv[a], config, row);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

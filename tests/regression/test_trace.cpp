// trace.json at each level of detail, the compressed trace, flow arrows, partial runs, the
// footprint of a long run and the progress line (on a pseudo-terminal, not on a pipe).
#include <catch2/catch.hpp>
#include <pty.h>
#include <zlib.h>

#include <map>
#include <set>

#include "cli_helpers.h"

using namespace cli_test;
using nlohmann::json;
using Catch::Contains;

namespace {

// Memory bounds hold for the release build; AddressSanitizer's shadow memory and quarantine
// multiply a run's peak RSS, so under it (make asan-test) they are not checked.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
const char* kMlp = "workloads/mlp_block_512x2048.json";  // 32 cores, two fused kernels, ~1 ms

// Trace times in whole picoseconds (the writer prints microseconds with 6 decimals).
long long ps(const json& v) { return std::llround(v.get<double>() * 1e6); }

struct TraceFacts {
  std::set<std::string> processes, threads, counters;
  std::map<std::string, int> phases;
  int overlaps = 0;          // slices on one (pid, tid) that overlap the previous one
  long long last_ps = 0;     // latest slice end or counter point
};

TraceFacts facts(const json& t) {
  TraceFacts f;
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> slices;
  for (const auto& e : t.at("traceEvents")) {
    std::string ph = e.at("ph");
    ++f.phases[ph];
    if (ph == "M" && e.at("name") == "process_name") f.processes.insert(e["args"]["name"].get<std::string>());
    if (ph == "M" && e.at("name") == "thread_name") f.threads.insert(e["args"]["name"].get<std::string>());
    if (ph == "C") {
      f.counters.insert(e.at("name").get<std::string>());
      f.last_ps = std::max(f.last_ps, ps(e.at("ts")));
    }
    if (ph == "X") {
      long long s = ps(e.at("ts")), d = ps(e.at("dur"));
      CHECK(d >= 0);
      slices[{e.at("pid"), e.at("tid")}].emplace_back(s, s + d);
      f.last_ps = std::max(f.last_ps, s + d);
    }
  }
  for (auto& [track, v] : slices) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) f.overlaps += v[i].first < v[i - 1].second;
  }
  return f;
}

std::string gunzip(const fs::path& p) {
  gzFile z = gzopen(p.c_str(), "rb");
  REQUIRE(z != nullptr);
  std::string out;
  char buf[65536];
  int n;
  while ((n = gzread(z, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(z);
  return out;
}

}  // namespace

TEST_CASE("trace: each level validates, has what it promises and no overlapping slices on a track", "[trace]") {
  std::map<std::string, std::uintmax_t> bytes;
  for (std::string level : {"kernels", "units", "full"}) {
    TempDir d("level_" + level);
    REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " --trace " + level + " -o " + d.str()).code == 0);
    json t = read_json(d.path / "trace.json");
    CHECK(t["otherData"]["level"] == level);
    TraceFacts f = facts(t);
    INFO("level " << level);
    CHECK(f.overlaps == 0);
    CHECK(f.processes.count("kernels") == 1);  // the kernel track at every level
    CHECK(f.processes.count("workloads") == 0);  // a placement run's only
    CHECK(f.counters.count("off-chip GB/s") == 1);
    // Nothing after the run's end.
    long long end_ps = std::llround(read_json(d.path / "summary.json")["sim_time_ns"].get<double>() * 1000);
    CHECK(f.last_ps <= end_ps);
    bool units = level != "kernels", full = level == "full";
    CHECK(f.threads.count("pt.0") == (units ? 1u : 0u));
    CHECK(f.threads.count("dma in") == (units ? 1u : 0u));
    CHECK(f.counters.count("lx bytes") == (units ? 1u : 0u));
    CHECK(f.threads.count("ch 0") == (full ? 1u : 0u));
    CHECK(f.counters.count("ch 0 queue") == (full ? 1u : 0u));
    bytes[level] = fs::file_size(d.path / "trace.json");
  }
  CHECK(bytes["kernels"] < bytes["units"]);
  CHECK(bytes["units"] < bytes["full"]);
}

// DRAM channels and ring links: the drawn busy time (each slice's length times its busy
// share) is the track's busy time in summary.json, whether or not idle gaps were bridged;
// ring links carry sticks a few cycles apart, so theirs are bridged and say so.
TEST_CASE("trace: resource slices at level full add up to each track's busy time", "[trace]") {
  TempDir d("full_busy");
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " --trace full -o " + d.str()).code == 0);
  json t = read_json(d.path / "trace.json");
  std::map<int, std::string> process;
  std::map<std::pair<int, int>, std::string> thread;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "process_name") process[e.at("pid")] = e["args"]["name"];
    if (e.at("name") == "thread_name") thread[{e.at("pid"), e.at("tid")}] = e["args"]["name"];
  }
  std::map<std::string, double> drawn_ns;  // "ring/cw 0->1" -> busy ns drawn
  int bridged = 0;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const std::string& p = process[e.at("pid")];
    if (p != "memory" && p != "ring") continue;
    std::string name = e.at("name");
    double share = 1.0;
    if (name != "busy") {
      CHECK(name.rfind("busy ~", 0) == 0);
      share = e.at("args").at("busy_pct").get<double>() / 100;
      CHECK(share <= 1.0);  // 100.0 where idle was under 0.05 %
      ++bridged;
    }
    drawn_ns[p + "/" + thread[{e.at("pid"), e.at("tid")}]] += e.at("dur").get<double>() * 1000 * share;
  }
  int tracks = 0;
  const json summary = read_json(d.path / "summary.json");
  for (const auto& u : summary.at("units").at("units")) {
    std::string kind = u.at("kind");
    if ((kind != "dram" && kind != "ring") || u.at("busy_ns").get<double>() == 0) continue;
    std::string unit = u.at("unit");
    REQUIRE(drawn_ns.count(unit) == 1);
    INFO(unit);
    tracks += kind == "ring";
    // busy_pct has one decimal: within 0.05 % of each slice, plus the microsecond rounding.
    CHECK(drawn_ns[unit] == Approx(u.at("busy_ns").get<double>()).epsilon(0.001));
  }
  CHECK(tracks == 64 + 4);  // every link of the 32-stop ring both ways, two memory ports' rd and wr
  CHECK(bridged > 0);
}

TEST_CASE("trace: a task slice names its kernel once, in its name or else as an argument", "[trace]") {
  // Compiled graphs name every task KERNEL/...: the slice's name says the kernel, no argument
  // repeats it. A hand-written graph's tasks ("load", "neg", "store" in kernel "neg") keep it.
  auto task_slices = [](const json& t) {
    std::set<std::string> kernels;
    std::vector<json> tasks;
    for (const auto& e : t.at("traceEvents")) {
      if (e.at("ph") != "X") continue;
      if (e.at("cat") == "kernel") kernels.insert(e.at("name").get<std::string>());
      else if (e.at("args").contains("op")) tasks.push_back(e);  // a first corelet's copy
    }
    return std::make_pair(kernels, tasks);
  };
  TempDir a("named"), b("hand");
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " -o " + a.str()).code == 0);
  auto [kernels, tasks] = task_slices(read_json(a.path / "trace.json"));
  REQUIRE(tasks.size() > 100);
  for (const json& e : tasks) {
    const std::string name = e.at("name");
    INFO(name);
    CHECK(!e.at("args").contains("kernel"));
    CHECK(kernels.count(name.substr(0, name.find('/'))) == 1);
  }
  REQUIRE(dfsim("run -q -c configs/small.json -w tests/data/bad/kernels_ok.json -o " + b.str()).code == 0);
  auto [hand_kernels, hand_tasks] = task_slices(read_json(b.path / "trace.json"));
  REQUIRE(!hand_tasks.empty());
  for (const json& e : hand_tasks) CHECK(e.at("args").at("kernel") == "neg");
}

TEST_CASE("trace: --trace off writes no trace, bad levels and formats exit 2", "[trace]") {
  TempDir d("off");
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " --trace off -o " + d.str()).code == 0);
  CHECK(!fs::exists(d.path / "trace.json"));
  CHECK(fs::exists(d.path / "summary.json"));
  Result r = dfsim(std::string("run -q -w ") + kMlp + " --trace some");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("--trace must be off, kernels, units or full"));
  CHECK(dfsim(std::string("run -q -w ") + kMlp + " --trace-format zip").code == 2);
  r = dfsim(std::string("run -q -w ") + kMlp + " --trace-flows no_such_kernel");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("no kernel \"no_such_kernel\""));
}

TEST_CASE("trace: past sim.trace_auto_instances the default level is kernels, said on stderr, --trace keeps its level",
          "[trace]") {
  TempDir a("auto"), b("asked");
  Result r = dfsim(std::string("run -w ") + kMlp + " --set sim.trace_auto_instances=10 -o " + a.str());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("(more than sim.trace_auto_instances = 10): the trace is drawn at level kernels"));
  CHECK(read_json(a.path / "trace.json")["otherData"]["level"] == "kernels");
  Result q = dfsim(std::string("run -w ") + kMlp + " --set sim.trace_auto_instances=10 --trace units -o " + b.str());
  REQUIRE(q.code == 0);
  CHECK_THAT(q.out, !Contains("sim.trace_auto_instances"));
  CHECK(read_json(b.path / "trace.json")["otherData"]["level"] == "units");
}

TEST_CASE("trace: json.gz holds the same trace as json, byte for byte", "[trace]") {
  TempDir a("plain"), b("gz");
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " -o " + a.str()).code == 0);
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " --trace-format json.gz -o " + b.str()).code == 0);
  CHECK(!fs::exists(b.path / "trace.json"));
  std::string plain = slurp(a.path / "trace.json");
  CHECK(gunzip(b.path / "trace.json.gz") == plain);
  CHECK(fs::file_size(b.path / "trace.json.gz") * 5 < plain.size());
}

TEST_CASE("trace: --trace-flows draws one arrow per dependency edge of the kernel", "[trace]") {
  TempDir d("flows");
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " --trace-flows matmul_epilogue_g -o " + d.str()).code == 0);
  TraceFacts f = facts(read_json(d.path / "trace.json"));
  CHECK(f.phases["s"] > 0);
  CHECK(f.phases["s"] == f.phases["f"]);
  TempDir e("noflows");
  REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " -o " + e.str()).code == 0);
  CHECK(facts(read_json(e.path / "trace.json")).phases["s"] == 0);
}

TEST_CASE("trace: a partial run's trace ends at the stop time, without overlaps", "[trace]") {
  // At level full too: ring links and channels have bursts booked past the stop.
  for (std::string level : {"units", "full"}) {
    INFO("level " << level);
    TempDir d("partial_" + level);
    REQUIRE(dfsim(std::string("run -q -w ") + kMlp + " --max-sim-time 300000 --trace " + level + " -o " + d.str()).code ==
            1);
    json t = read_json(d.path / "trace.json");
    TraceFacts f = facts(t);
    CHECK(f.overlaps == 0);
    CHECK(f.last_ps == 300000000);  // 300 us: running tasks are drawn up to the stop
    CHECK(t["otherData"]["end_us"].get<double>() == 300.0);
  }
}

TEST_CASE("trace: a 6-task graph simulating 7.2 s stays small in memory and trace", "[trace][footprint]") {
  TempDir d("long");
  REQUIRE(dfsim("run -q -w tools/bench/long_6task.kernels.json --set core.clock_mhz=1 -o " + d.str()).code == 0);
  json s = read_json(d.path / "summary.json");
  // Two 1536^3 matmuls at 1024 MAC/cycle and 1 MHz: 2 x 3.62e9 / 1.024e9 = 7.08 s of compute.
  CHECK(s["sim_time_ns"].get<double>() > 7.0e9);
  if (!kSanitized) CHECK(s["host"]["peak_rss_mib"].get<double>() < 50);
  CHECK(fs::file_size(d.path / "trace.json") < 1000000);
  CHECK(fs::file_size(d.path / "utilization.csv") < 1000000);
}

namespace {

// Runs `args` (a dfsim command line, through sh) on a pseudo-terminal with the progress delay
// at 0 (the first line is due at once); returns the exit code and everything it printed.
std::pair<int, std::string> dfsim_on_pty(const std::string& args) {
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("DFSIM_PROGRESS_AFTER_S", "0", 1);
    std::string cmd = std::string(DFSIM_BINARY) + " " + args;
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST_CASE("progress: a line on a terminal, nothing on a pipe or with --quiet", "[progress]") {
  auto on_pty = [](const std::string& extra) {
    const std::string dir = "/tmp/dfsim_progress_" + std::to_string(getpid());
    auto [code, out] = dfsim_on_pty(std::string("run -w ") + kMlp + " --trace off -o " + dir + " " + extra);
    fs::remove_all(dir);
    CHECK(code == 0);
    return out;
  };
  std::string tty = on_pty("");
  // The steps before the simulation have their line too (drawn at once with a delay of 0),
  // erased before the simulation's own.
  CHECK_THAT(tty, Contains("\rloading  0 s"));
  CHECK(tty.find("\rloading") < tty.find("\rsimulated "));
  CHECK_THAT(tty, Contains("\rsimulated "));
  CHECK_THAT(tty, Contains(" tasks "));
  CHECK_THAT(tty, Contains("events/s"));
  CHECK_THAT(tty, Contains("finished"));  // the summary follows the erased line
  std::string quiet = on_pty("--quiet");
  CHECK(quiet.find("simulated ") == std::string::npos);
  CHECK(quiet.find("loading") == std::string::npos);
  setenv("DFSIM_PROGRESS_AFTER_S", "0", 1);
  Result piped = dfsim(std::string("run -w ") + kMlp + " --trace off -o /tmp/dfsim_progress_pipe_" +
                       std::to_string(getpid()));
  fs::remove_all("/tmp/dfsim_progress_pipe_" + std::to_string(getpid()));
  CHECK(piped.code == 0);
  CHECK(piped.out.find("simulated ") == std::string::npos);
  CHECK(piped.out.find("loading") == std::string::npos);
}

TEST_CASE("progress: compile shows its steps on a terminal and an error ends on a clean line", "[progress]") {
  const std::string tmp = "/tmp/dfsim_progress_compile_" + std::to_string(getpid()) + ".json";
  auto [code, out] = dfsim_on_pty(std::string("compile ") + kMlp + " -o " + tmp);
  fs::remove(tmp);
  CHECK(code == 0);
  CHECK_THAT(out, Contains("\rloading  0 s"));
  // Erased before the result line, which starts on a clean line.
  CHECK(out.find("\r\033[K") != std::string::npos);
  CHECK(out.find("\r\033[K") < out.find("task template"));
  // A bad input: the line is erased before the one-line error.
  auto [bad, err] = dfsim_on_pty("compile /nonexistent/ops.json -o " + tmp);
  CHECK(bad == 2);
  CHECK(err.find("\r\033[K") < err.find("/nonexistent/ops.json"));
  CHECK_FALSE(fs::exists(tmp));
}

TEST_CASE("progress: nothing on a terminal of TERM=dumb", "[progress]") {
  // An editor's shell buffer (TERM=dumb) cannot erase a line: each refresh showed as "^[[K"
  // (ninth hostile-input pass). The result is printed as on any terminal.
  setenv("TERM", "dumb", 1);
  const std::string dir = "/tmp/dfsim_progress_dumb_" + std::to_string(getpid());
  auto [code, out] = dfsim_on_pty(std::string("run -w ") + kMlp + " --trace off -o " + dir);
  fs::remove_all(dir);
  CHECK(code == 0);
  CHECK(out.find("\033[K") == std::string::npos);
  CHECK(out.find("loading") == std::string::npos);
  CHECK_THAT(out, Contains("finished"));
}

TEST_CASE("progress: serve shows its step simulations on a terminal", "[progress]") {
  const std::string dir = "/tmp/dfsim_progress_serve_" + std::to_string(getpid());
  auto [code, out] = dfsim_on_pty("serve --model llama-3.1-8b --rate 1 -n 2 --jobs 1 --step-cache " + dir +
                                  "/cache -o " + dir + "/out");
  fs::remove_all(dir);
  CHECK(code == 0);
  CHECK_THAT(out, Contains("\rsimulating step times: 0 runs done  0 s"));
  // Erased before the results, which start on a clean line.
  CHECK(out.find("\r\033[K") < out.find("Serving Benchmark Result"));
}

TEST_CASE("footprint: peak memory per task instance is bounded on a large graph", "[footprint]") {
  // matmul 4096^3 on 32 cores: 12 416 task instances, ~1.9 ms simulated, ~5 MB of trace.
  // Peak RSS 22 MiB (30 MiB when each instance held its regions and dependency vectors).
  // Bound: 16 MiB for the program, SystemC and the models, plus 1 KiB per instance (graph,
  // expansion, scheduler state, task record, trace slice text buffered by the stream).
  TempDir d("large");
  REQUIRE(dfsim("run -q -w workloads/matmul_4096.json -o " + d.str()).code == 0);
  json s = read_json(d.path / "summary.json");
  double instances = s["tasks"]["instances"].get<double>();
  CHECK(instances > 12000);
  if (!kSanitized) CHECK(s["host"]["peak_rss_mib"].get<double>() < 16 + instances * 1.0 / 1024);
}

TEST_CASE("footprint: a one-layer Llama prefill costs under 400 bytes per task instance", "[footprint]") {
  // 157 752 task instances (158 541 before ring.multicast_max_cores, 2026-12-06, which moved
  // some projections to other grids; 171 429 before k-steps were whole sticks, 2026-12-05: the
  // down projection's 14 336 is cut in steps of 448 instead of 112; docs/performance.md,
  // "Where the prefill's memory goes", was measured on the 171 429). Peak RSS
  // 82 MiB with instances of 12 bytes that compute their regions, dependencies and scheduler
  // state in flat arrays; 203 MiB (about 1.2 KB per instance) when each instance held four
  // vectors. Bound: 40 MiB for the program, SystemC, the models and the compiled templates,
  // plus 400 B per instance (expansion's writer index at the peak, dependencies, scheduler
  // state, the task record).
  TempDir d("prefill");
  const std::string graph = (d.path / "graph.json").string();
  REQUIRE(dfsim("gen llama-3.1-8b --phase prefill --tokens 2048 --layers 1 -o " + graph).code == 0);
  REQUIRE(dfsim("run -q -w " + graph + " --trace off -o " + (d.path / "out").string()).code == 0);
  json s = read_json(d.path / "out" / "summary.json");
  double instances = s["tasks"]["instances"].get<double>();
  CHECK(instances == 157752);
  if (!kSanitized) CHECK(s["host"]["peak_rss_mib"].get<double>() < 40 + instances * 400 / (1024.0 * 1024));
}

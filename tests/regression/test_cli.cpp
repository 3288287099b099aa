// The dfsim command line, run as a user runs it (the binary, via the shell): outputs are
// deterministic and well formed, help and version work, bad input exits 2 with one line
// naming the file and JSON path and writes nothing, a deadlock exits 1 and still reports.
#include <catch2/catch.hpp>

#include "cli_helpers.h"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/regression/cli_run.h"

namespace fs = std::filesystem;
using Catch::Contains;
using nlohmann::json;
using namespace cli_test;

namespace {


const char* kWorkload = "workloads/add_2048x1024.json";  // 32 cores, ~0.05 s

}  // namespace

TEST_CASE("cli: two runs give byte-identical outputs apart from host figures", "[cli]") {
  TempDir a("det_a"), b("det_b");
  Result ra = dfsim(std::string("run -q -w ") + kWorkload + " -o " + a.str());
  Result rb = dfsim(std::string("run -q -w ") + kWorkload + " -o " + b.str());
  REQUIRE(ra.code == 0);
  REQUIRE(rb.code == 0);
  CHECK(ra.out.empty());  // --quiet
  json sa = read_json(a.path / "summary.json"), sb = read_json(b.path / "summary.json");
  REQUIRE(sa.contains("host"));
  sa.erase("host");
  sb.erase("host");
  CHECK(sa.dump() == sb.dump());
  CHECK(sa["status"] == "finished");
  std::string ta = slurp(a.path / "trace.json"), tb = slurp(b.path / "trace.json");
  CHECK(!ta.empty());
  CHECK(ta == tb);
  std::string ua = slurp(a.path / "utilization.csv"), ub = slurp(b.path / "utilization.csv");
  CHECK(!ua.empty());
  CHECK(ua == ub);
  // No temporaries left behind.
  for (const auto& e : fs::directory_iterator(a.path)) CHECK(e.path().filename().string()[0] != '.');
}

// The DMA engines book all the ring links of a burst at once; the links serve the bursts in
// the order they arrive (ring.link_order "arrival"). A hop of 6 cycles instead of 2 adds at most
// 16 hops x 4 cycles = 43 ns to a burst; in booking order the waits compounded over the hops and
// this block took 35 % longer (878 -> 1181 us), in arrival order 866 -> 868 us.
TEST_CASE("cli: mlp_block_512x2048 moves by little with a longer ring hop", "[cli]") {
  TempDir h2("hop2"), h6("hop6"), booked("hop6_booked");
  const std::string run = "run -q --trace off -w workloads/mlp_block_512x2048.json";
  REQUIRE(dfsim(run + " -o " + h2.str()).code == 0);
  REQUIRE(dfsim(run + " --set ring.hop_cycles=6 -o " + h6.str()).code == 0);
  REQUIRE(dfsim(run + " --set ring.hop_cycles=6 --set ring.link_order=booking -o " + booked.str()).code == 0);
  const double t2 = read_json(h2.path / "summary.json")["sim_time_ns"];
  const double t6 = read_json(h6.path / "summary.json")["sim_time_ns"];
  const double t6_booked = read_json(booked.path / "summary.json")["sim_time_ns"];
  CHECK(t6 >= t2 * 0.99);
  CHECK(t6 <= t2 * 1.02);
  CHECK(t6_booked > t2 * 1.2);  // the compounding waits "booking" keeps for comparison
  // "auto" (the preset) is arrival order under lpddr5 and booking order under bandwidth.
  TempDir arrival("hop6_arrival"), bw("bw_auto"), bw_booked("bw_booking");
  REQUIRE(dfsim(run + " --set ring.hop_cycles=6 --set ring.link_order=arrival -o " + arrival.str()).code == 0);
  CHECK(read_json(arrival.path / "summary.json")["sim_time_ns"] == t6);
  REQUIRE(dfsim(run + " --set memory.impl=bandwidth -o " + bw.str()).code == 0);
  REQUIRE(dfsim(run + " --set memory.impl=bandwidth --set ring.link_order=booking -o " + bw_booked.str()).code == 0);
  CHECK(read_json(bw.path / "summary.json")["sim_time_ns"] == read_json(bw_booked.path / "summary.json")["sim_time_ns"]);
}

TEST_CASE("cli: channels that take turns read as uneven, with the kernel named", "[cli]") {
  // Without the channel hash the 4096^3 matmul's operand bands, read by every core at the
  // same offsets, meet one channel at a time: the busiest channel carries 4.6x their mean
  // (measured) while the run's per-channel totals are equal. With the hash (e2e: < 1.5) the
  // summary has no such line.
  TempDir d("uneven");
  Result r = dfsim("run --trace off -w workloads/matmul_4096.json --set memory.lpddr5.channel_xor=false -o " + d.str());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("channels uneven: the busiest carries "));
  CHECK_THAT(r.out, Contains("(most in matmul_c, "));
  json s = read_json(d.path / "summary.json");
  CHECK(s["offchip"]["channel_imbalance"].get<double>() > 3.0);
  CHECK(s["kernels"][0]["dram_channel_imbalance"].get<double>() > 3.0);
  std::set<std::uint64_t> totals;
  for (const json& c : s["offchip"]["channels"]) totals.insert(c["bytes_read"].get<std::uint64_t>());
  CHECK(totals.size() == 1);  // even over the run: the totals cannot show it
  Result even = dfsim("run --trace off -w workloads/add_2048x1024.json -o " + d.str());
  CHECK_THAT(even.out, !Contains("channels uneven"));
}

TEST_CASE("cli: trace.json is a Chrome trace with slices metadata and counters", "[cli]") {
  TempDir d("trace");
  REQUIRE(dfsim(std::string("run -q -w ") + kWorkload + " -o " + d.str()).code == 0);
  json t = read_json(d.path / "trace.json");
  REQUIRE(t.contains("traceEvents"));
  REQUIRE(t["traceEvents"].is_array());
  double end_us = read_json(d.path / "summary.json")["sim_time_ns"].get<double>() / 1000.0;
  int x = 0, m = 0, c = 0;
  bool process_names = false;
  for (const auto& e : t["traceEvents"]) {
    std::string ph = e.at("ph");
    if (ph == "X") {
      ++x;
      CHECK(e.contains("pid"));
      CHECK(e.contains("tid"));
      double ts = e.at("ts"), dur = e.at("dur");
      CHECK(ts >= 0);
      CHECK(dur >= 0);
      CHECK(ts + dur <= end_us + 1e-3);
    } else if (ph == "M") {
      ++m;
      if (e.at("name") == "process_name") process_names = true;
    } else if (ph == "C") {
      ++c;
      CHECK(e.at("args").is_object());
    }
  }
  CHECK(x > 0);
  CHECK(m > 0);
  CHECK(c > 0);
  CHECK(process_names);
}

TEST_CASE("cli: utilization.csv has one value in [0, 1] per unit per bucket", "[cli]") {
  TempDir d("util");
  REQUIRE(dfsim(std::string("run -q -w ") + kWorkload + " -o " + d.str()).code == 0);
  auto rows = lines(slurp(d.path / "utilization.csv"));
  REQUIRE(rows.size() >= 2);
  auto header = split(rows[0], ',');
  REQUIRE(header.size() > 2);
  CHECK(header[0] == "bucket_start_ns");
  CHECK(header[1] == "bucket_end_ns");
  double prev_end = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    auto f = split(rows[i], ',');
    INFO("row " << i << ": " << rows[i]);
    REQUIRE(f.size() == header.size());
    double start = std::stod(f[0]), end = std::stod(f[1]);
    CHECK(start == Approx(prev_end));  // buckets tile the run
    CHECK(end > start);
    prev_end = end;
    for (std::size_t k = 2; k < f.size(); ++k) {
      double v = std::stod(f[k]);
      CHECK(v >= 0.0);
      bool watts = header[k].size() > 2 && header[k].substr(header[k].size() - 2) == "_W";  // card power
      if (!watts) CHECK(v <= 1.0);
    }
  }
}

TEST_CASE("cli: help on each subcommand exits 0 with an example", "[cli]") {
  for (const char* cmd : {"run", "compile", "validate", "info", "serve"}) {
    INFO(cmd);
    Result r = dfsim(std::string(cmd) + " --help");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("example"));
    CHECK_THAT(r.out, Contains(std::string("dfsim ") + cmd));
  }
  Result top = dfsim("--help");
  CHECK(top.code == 0);
  CHECK_THAT(top.out, Contains("run"));
  // No command: a usage error, one line on stderr and nothing on stdout (the usage went to stdout).
  Result none = dfsim("", "2>&1 >/dev/null");
  CHECK(none.code == 2);
  CHECK(none.out == "dfsim: expected a command: run, compile, validate, info, calibrate, regress, diff, accuracy, sweep, "
                    "serve or gen (see 'dfsim --help')\n");
  CHECK(dfsim("", "2>/dev/null").out.empty());
  Result unknown = dfsim("frobnicate", "2>&1 >/dev/null");
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.out, Contains("frobnicate"));
}

TEST_CASE("cli: version", "[cli]") {
  Result r = dfsim("--version");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("dfsim " DFSIM_VERSION));
  CHECK(lines(r.out).size() == 1);
}

TEST_CASE("cli: bad input exits 2 with one line naming file and path and writes nothing", "[cli]") {
  struct Case {
    std::string args, expect1, expect2;
  };
  TempDir d("bad");
  const std::string out = " -o " + d.str();
  std::vector<Case> cases = {
      {"run -c tests/data/bad_lx_bytes.json -w " + std::string(kWorkload) + out, "tests/data/bad_lx_bytes.json",
       "/core/lx/bytes"},
      {"run -w tests/data/unknown_op.json" + out, "tests/data/unknown_op.json", "/ops/0/op"},
      {"run -w tests/data/no_such_file.json" + out, "tests/data/no_such_file.json", "no such file"},
      {"run -w " + std::string(kWorkload) + " --set unknown.key=1" + out, "--set", "unknown.key"},
      {"run -w " + std::string(kWorkload) + " --set core.lx.bytes=-5" + out, "--set", "core.lx.bytes"},
      {"run -w " + std::string(kWorkload) + " --cores -3" + out, "--cores", ""},
      {"run -w " + std::string(kWorkload) + " -o /proc/dfsim", "/proc/dfsim", ""},
      {"validate tests/data/bad_lx_bytes.json", "tests/data/bad_lx_bytes.json", "/core/lx/bytes"},
      {"compile tests/data/unknown_op.json -o " + (d.path / "k.json").string(), "tests/data/unknown_op.json",
       "/ops/0/op"},
  };
  for (const Case& c : cases) {
    INFO("dfsim " << c.args);
    Result r = dfsim(c.args, "2>&1 >/dev/null");  // stderr only
    CHECK(r.code == 2);
    auto l = lines(r.out);
    CHECK(l.size() == 1);
    CHECK_THAT(r.out, Contains(c.expect1));
    CHECK_THAT(r.out, Contains(c.expect2));
    CHECK_FALSE(fs::exists(d.path));  // nothing half-written, not even the directory
    CHECK_FALSE(fs::exists("/proc/dfsim"));
  }
}

TEST_CASE("cli: a deadlocking kernel graph exits 1 and still writes a valid summary", "[cli]") {
  TempDir d("deadlock");
  Result r = dfsim("run -w tests/data/deadlock.kernels.json -o " + d.str());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Contains("deadlock"));
  CHECK_THAT(r.out, Contains("\"scale\""));
  CHECK_THAT(r.out, Contains("\"ghost\""));
  CHECK_THAT(r.out, Contains("\"store_z\""));
  json s = read_json(d.path / "summary.json");
  CHECK(s["status"] == "deadlock");
  CHECK(s["blocked"].size() == 2);
  CHECK(s["tasks"]["instances"] == 5);
  // What could run did: x loaded and y stored, 4096 B each way.
  CHECK(s["offchip"]["bytes_read"] == 4096);
  CHECK(s["offchip"]["bytes_written"] == 4096);
  CHECK(s["stalls"]["waiting_for_unit_ns"].get<double>() <= s["sim_time_ns"].get<double>());
  CHECK_NOTHROW(read_json(d.path / "trace.json"));
  CHECK(fs::exists(d.path / "utilization.csv"));
}

TEST_CASE("cli: max-sim-time stops the run with exit 1 and status limit", "[cli]") {
  TempDir d("limit");
  Result r = dfsim(std::string("run -w ") + kWorkload + " --max-sim-time 1000 -o " + d.str());
  CHECK(r.code == 1);
  json s = read_json(d.path / "summary.json");
  CHECK(s["status"] == "limit");
  CHECK(s["sim_time_ns"].get<double>() <= 1000.0);
}

TEST_CASE("cli: compile then run gives the same time as running the op graph", "[cli]") {
  TempDir d("compile");
  fs::create_directories(d.path);
  std::string kernels = (d.path / "softmax.kernels.json").string();
  const std::string ops = "workloads/softmax_chain_512x1024.json";
  Result c = dfsim("compile " + ops + " -o " + kernels);
  REQUIRE(c.code == 0);
  REQUIRE(fs::exists(kernels));
  CHECK(read_json(kernels)["format"] == "dfsim.kernels");
  REQUIRE(dfsim("run -q -w " + ops + " -o " + (d.path / "a").string()).code == 0);
  REQUIRE(dfsim("run -q -w " + kernels + " -o " + (d.path / "b").string()).code == 0);
  json sa = read_json(d.path / "a" / "summary.json"), sb = read_json(d.path / "b" / "summary.json");
  CHECK(sa["workload"]["format"] == "dfsim.ops");
  CHECK(sb["workload"]["format"] == "dfsim.kernels");
  CHECK(sa["sim_time_ns"] == sb["sim_time_ns"]);
  CHECK(sa["offchip"] == sb["offchip"]);
  CHECK(sa["tasks"] == sb["tasks"]);
  CHECK(dfsim("validate " + kernels).code == 0);
  // The status line names the graph; -q prints nothing (on either stream) and writes the same graph.
  CHECK(c.out == kernels + ": 40 task templates in 2 kernels, 31 buffers, 1 core\n");
  std::string quiet = (d.path / "quiet.kernels.json").string();
  Result q = dfsim("compile -q " + ops + " -o " + quiet);
  CHECK(q.code == 0);
  CHECK(q.out.empty());
  CHECK(slurp(quiet) == slurp(kernels));
}

TEST_CASE("cli: validate accepts every shipped config and workload", "[cli]") {
  std::string files;
  int n = 0;
  for (const char* dir : {"configs", "workloads"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json") {
        files += " " + e.path().string();
        ++n;
      }
  REQUIRE(n >= 4);
  Result r = dfsim("validate" + files);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(static_cast<int>(lines(r.out).size()) == n);
  for (const auto& l : lines(r.out)) CHECK_THAT(l, Contains(": ok"));
}

TEST_CASE("cli: info prints the spyre figures", "[cli]") {
  Result r = dfsim("info -c configs/spyre.json");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("204.8"));   // 8 channels x 32 bit x 6400 MT/s
  CHECK_THAT(r.out, Contains("49152.0")); // fp16 MAC/ns per card: 32 x 2 x 8x8 x 8 x 1.5 GHz
  CHECK_THAT(r.out, Contains("81.0 GB/s per direction"));  // memory port: 54 B/cycle x 1.5 GHz
  CHECK_THAT(r.out, Contains("2 queues per core"));
  CHECK_THAT(r.out, Contains("allocated in program order"));
  CHECK_THAT(r.out, Contains("tensor layout    the card's stick layout for the tensors of batched matmuls"));
  Result s = dfsim("info -c configs/spyre.json --set memory.channels=4 --set memory.hbm_layout=row_major");
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Contains("102.4"));
  CHECK_THAT(s.out, Contains("tensor layout    row-major (hbm_layout row_major)"));
}

TEST_CASE("cli: --lx-planning overrides the op graph and is checked", "[cli]") {
  TempDir d("lxplan");
  fs::create_directories(d.path);
  const std::string ops = "workloads/softmax_chain_512x1024.json";  // compile.lx_planning false
  REQUIRE(dfsim("run -q -w " + ops + " -o " + (d.path / "none").string()).code == 0);
  REQUIRE(dfsim("run -q -w " + ops + " --lx-planning reductions -o " + (d.path / "red").string()).code == 0);
  json none = read_json(d.path / "none" / "summary.json"), red = read_json(d.path / "red" / "summary.json");
  // The row sums s (512 x 1 fp16, stick-sparse in HBM: 512 sticks of 128 B = 64 KiB) are no
  // longer stored and loaded again.
  CHECK(none["offchip"]["bytes_written"].get<std::uint64_t>() - red["offchip"]["bytes_written"].get<std::uint64_t>() == 65536);
  CHECK(none["offchip"]["bytes_read"].get<std::uint64_t>() - red["offchip"]["bytes_read"].get<std::uint64_t>() == 65536);
  // A bad policy is a usage error; a compiled kernel graph has no compile section to override.
  Result bad = dfsim("run -q -w " + ops + " --lx-planning maybe -o " + (d.path / "bad").string(), "2>&1 >/dev/null");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("--lx-planning: expected off, none, reductions, inplace, clone or all, got \"maybe\""));
  CHECK_FALSE(fs::exists(d.path / "bad"));
  std::string kernels = (d.path / "k.json").string();
  REQUIRE(dfsim("compile " + ops + " --lx-planning all -o " + kernels).code == 0);
  Result on_kernels = dfsim("run -q -w " + kernels + " --lx-planning all -o " + (d.path / "k").string(), "2>&1 >/dev/null");
  CHECK(on_kernels.code == 2);
  CHECK_THAT(on_kernels.out, Contains("--lx-planning: applies to op graphs only"));
}

TEST_CASE("cli: --no-fuse, --split and --tiles override the op graph and are checked", "[cli]") {
  TempDir d("fuseflags");
  fs::create_directories(d.path);
  const std::string ops = "workloads/rmsnorm_2048x4096.json";  // rmsnorm then a residual add: one kernel
  std::string k = (d.path / "k.json").string();
  REQUIRE(dfsim("compile " + ops + " -o " + k).code == 0);
  CHECK(read_json(k)["kernels"].size() == 1);
  REQUIRE(dfsim("compile " + ops + " --no-fuse -o " + k).code == 0);
  CHECK(read_json(k)["kernels"].size() == 2);
  // --split d0=4: both ops on 4 cores of 32.
  REQUIRE(dfsim("compile " + ops + " --split d0=4 -o " + k).code == 0);
  const json split4 = read_json(k);  // a named value: a range-for over read_json(k)["kernels"] would dangle
  for (const auto& kern : split4["kernels"])
    for (const auto& t : kern["tasks"])
      CHECK((t.contains("core") ? t["core"].get<int>() + 1 : t["cores"]["first"].get<int>() + t["cores"]["count"].get<int>()) <= 4);
  // --tiles d0=2: a coarse loop of 2 iterations (task names carry /i0 and /i1).
  REQUIRE(dfsim("compile " + ops + " --tiles d0=2 -o " + k).code == 0);
  CHECK(read_json(k).dump().find("/i1/") != std::string::npos);
  Result bad = dfsim("compile " + ops + " --split d0=four -o " + k, "2>&1 >/dev/null");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("--split: expected DIM=N[,DIM=N...] with N >= 1"));
  Result none = dfsim("compile " + ops + " --tiles M=4 -o " + k, "2>&1 >/dev/null");
  CHECK(none.code == 2);
  CHECK_THAT(none.out, Contains("--tiles: names dims no op of the graph has"));
  Result many = dfsim("compile " + ops + " --split d0=64 -o " + k, "2>&1 >/dev/null");
  CHECK(many.code == 2);
  CHECK_THAT(many.out, Contains("/ops/0/compile/split: uses 64 cores, the compile has 32"));
}

// dfsim serve (issue 16) on the shipped example step table (a roofline estimate, labelled so).
namespace {
const std::string kServeTable = "workloads/serving/llama-3.1-8b_spyre_steps.csv";
std::string serve_cmd(const std::string& extra) {
  return "serve -q --model llama-3.1-8b --step-table " + kServeTable + " " + extra;
}
}  // namespace

TEST_CASE("cli: serve one request from a trace: TTFT and E2E are the table's rows exactly", "[cli][serve]") {
  TempDir d("serve_one");
  fs::create_directories(d.path);
  {
    std::ofstream f(d.path / "one.csv");
    f << "arrival_ms,prompt_tokens,output_tokens\n5,200,5\n";
  }
  Result r = dfsim(serve_cmd("--requests " + (d.path / "one.csv").string() + " -o " + (d.path / "o").string()));
  REQUIRE(r.code == 0);
  json q = json::parse(lines(slurp(d.path / "o" / "requests.jsonl")).at(0));
  // prefill,1,512,512 = 78.748200 ms; decode,4,512,1 = 79.733800 ms (tkv 457..460 -> 8 blocks).
  CHECK(q["first_token_ms"].get<double>() - q["arrival_ms"].get<double>() == Approx(78.7482).margin(1e-6));
  CHECK(q["finish_ms"].get<double>() - q["arrival_ms"].get<double>() == Approx(78.7482 + 4 * 79.7338).margin(1e-6));
  CHECK(q["scheduled_ms"].get<double>() == 5);
  CHECK(q["preemptions"] == 0);
}

TEST_CASE("cli: serve writes its outputs byte-identically, and every step keeps the limits", "[cli][serve]") {
  TempDir a("serve_a"), b("serve_b");
  std::string args = "--rate 2 -n 120 --seed 9 --prompt-len normal:300,200 --output-len normal:200,100 --num-blocks 400";
  REQUIRE(dfsim(serve_cmd(args + " -o " + a.str())).code == 0);
  REQUIRE(dfsim(serve_cmd(args + " -o " + b.str())).code == 0);
  for (const char* f : {"summary.json", "requests.jsonl", "steps.csv", "trace.json"}) {
    INFO(f);
    std::string x = slurp(a.path / f);
    CHECK(!x.empty());
    CHECK(x == slurp(b.path / f));
  }
  json s = read_json(a.path / "summary.json");
  for (const char* k : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
    for (const char* m : {"mean", "p50", "p99"}) CHECK(s[k][m].is_number());
  CHECK(s["throughput"]["requests_per_s"].get<double>() > 0);
  CHECK(s["throughput"]["output_tokens_per_s"].get<double>() > 0);
  CHECK(s["completed"] == 120);
  CHECK(s["kv_blocks"]["total"] == 400);
  auto reqs = lines(slurp(a.path / "requests.jsonl"));
  REQUIRE(reqs.size() == 120);
  for (const auto& l : reqs) {
    json q = json::parse(l);
    for (const char* k : {"id", "arrival_ms", "scheduled_ms", "first_token_ms", "finish_ms", "prompt_tokens",
                          "output_tokens", "preemptions"})
      CHECK(q.contains(k));
    CHECK(q["arrival_ms"] <= q["scheduled_ms"]);
    CHECK(q["scheduled_ms"] < q["first_token_ms"]);
    CHECK(q["first_token_ms"] <= q["finish_ms"]);
  }
  // The step log: batch x max tkv <= 131072 in every decode step, blocks within the pool,
  // steps back to back or after idle time, never overlapping.
  auto steps = lines(slurp(a.path / "steps.csv"));
  REQUIRE(steps.size() > 1);
  auto head = split(steps[0], ',');
  auto col = [&](const char* name) { return std::find(head.begin(), head.end(), name) - head.begin(); };
  double prev_end = 0;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    auto f = split(steps[i], ',');
    CHECK(std::stod(f[col("start_ms")]) >= prev_end - 1e-9);
    prev_end = std::stod(f[col("end_ms")]);
    if (f[col("phase")] == "decode") CHECK(std::stol(f[col("batch")]) * std::stol(f[col("max_tkv")]) <= 131072);
    CHECK(std::stol(f[col("blocks_used")]) <= 400);
    CHECK(std::stol(f[col("batch")]) <= std::stol(f[col("batch_bucket")]));
  }
  // trace.json: step slices on track 0, requests on slot tracks, a KV-block counter.
  json t = read_json(a.path / "trace.json");
  int step_slices = 0, slot_slices = 0, kv = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X") (e["tid"] == 0 ? step_slices : slot_slices)++;
    if (e["ph"] == "C" && e["name"] == "KV blocks used") ++kv;
  }
  CHECK(step_slices == static_cast<int>(steps.size()) - 1);
  CHECK(slot_slices >= 120);
  CHECK(kv == step_slices);
}

TEST_CASE("cli: serve --export-step-table writes a table that reproduces the run", "[cli][serve]") {
  TempDir a("serve_exp_a"), b("serve_exp_b");
  fs::create_directories(a.path);
  std::string table = (a.path / "used.csv").string();
  REQUIRE(dfsim(serve_cmd("--rate 1 -n 40 -o " + (a.path / "o").string() + " --export-step-table " + table)).code == 0);
  auto rows = lines(slurp(table));
  CHECK(std::count_if(rows.begin(), rows.end(), [](const std::string& l) { return l.rfind("decode,", 0) == 0; }) >= 1);
  Result r = dfsim("serve -q --model llama-3.1-8b --step-table " + table + " --rate 1 -n 40 -o " + b.str());
  REQUIRE(r.code == 0);
  CHECK(slurp(a.path / "o" / "requests.jsonl") == slurp(b.path / "requests.jsonl"));
}

TEST_CASE("cli: serve --rate sweeps and finds the knee, 1000 ShareGPT-like requests run", "[cli][serve]") {
  TempDir d("serve_sweep");
  Result r = dfsim("serve --model llama-3.1-8b --step-table " + kServeTable +
                   " --rate 0.25,1,4 -n 1000 --prompt-len normal:200,100 --output-len normal:200,100 --no-trace -o " + d.str());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("knee: ~0.25 req/s"));
  auto rows = lines(slurp(d.path / "sweep.csv"));
  REQUIRE(rows.size() == 4);
  json lo = read_json(d.path / "rate-0.25" / "summary.json"), hi = read_json(d.path / "rate-4" / "summary.json");
  CHECK(lo["completed"] == 1000);
  CHECK(hi["ttft_ms"]["p50"].get<double>() > 10 * lo["ttft_ms"]["p50"].get<double>());
  CHECK(hi["throughput"]["requests_per_s"].get<double>() < 4 * 0.5);
  CHECK_FALSE(fs::exists(d.path / "rate-1" / "trace.json"));
}

TEST_CASE("cli: serve --burstiness alone means gamma arrivals, as vllm bench serve", "[cli][serve]") {
  TempDir d("serve_burst");
  auto arrivals = [&](const std::string& opts, const std::string& dir) {
    REQUIRE(dfsim(serve_cmd("--rate 1 -n 20 --no-trace " + opts + " -o " + d.str() + "/" + dir)).code == 0);
    return slurp(d.path / dir / "requests.jsonl");
  };
  const std::string poisson = arrivals("", "p"), burst = arrivals("--burstiness 0.2", "b");
  CHECK(burst != poisson);  // it was ignored without --arrival gamma
  CHECK(burst == arrivals("--arrival gamma --burstiness 0.2", "g"));
  CHECK(poisson == arrivals("--arrival poisson --burstiness 1", "p1"));
}

TEST_CASE("cli: serve obeys Little's law over a steady run", "[cli][serve]") {
  // L = lambda x W for the requests in the system and for those waiting: the time-weighted
  // counts of the step log against the arrival rate times the mean times of requests.jsonl.
  // The counts are sampled at step starts, so they agree to a step's length, not exactly.
  TempDir d("serve_little");
  REQUIRE(dfsim(serve_cmd("--rate 1 -n 400 --prompt-len normal:200,100 --output-len normal:200,100 --seed 3 -o " +
                          d.str()))
              .code == 0);
  json s = read_json(d.path / "summary.json");
  const double lambda = s["completed"].get<double>() / s["duration_s"].get<double>();  // req/s
  double wait_ms = 0, e2e_ms = 0;
  std::ifstream in(d.path / "requests.jsonl");
  int n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    json r = json::parse(line);
    wait_ms += r["scheduled_ms"].get<double>() - r["arrival_ms"].get<double>();
    e2e_ms += r["finish_ms"].get<double>() - r["arrival_ms"].get<double>();
  }
  REQUIRE(n == 400);
  CHECK(s["queue"]["mean_in_system"].get<double>() == Approx(lambda * e2e_ms / n / 1000).epsilon(0.01));
  CHECK(s["queue"]["mean_waiting"].get<double>() == Approx(lambda * wait_ms / n / 1000).epsilon(0.01));
  CHECK(s["queue"]["mean_waiting"].get<double>() > 1);  // a loaded run: the law is not 0 = 0
}

// `dfsim sweep` as users run it: the same table whatever the engine (--jobs 1, --jobs 4, a real
// Dask scheduler with two workers, a Slurm array run task by task), --resume after a kill runs
// only the missing points, points shared between sweeps are run once, failed points are rows,
// a bad sweep file exits 2 with one line, and each plot is drawn; a `gen` base sweeps the
// generated step of a model over batch and context.
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/regression/cli_helpers.h"

using namespace cli_test;
using Catch::Contains;
using nlohmann::json;

namespace {

// 2 core counts x 3 LX sizes of a softmax chain on the 2-core test card: ~0.05 s a point.
const char* kGrid = R"({"format": "dfsim.sweep", "version": 1, "name": "small_grid",
 "base": {"config": "configs/small.json", "workload": "workloads/softmax_chain_512x1024.json"},
 "axes": {"cores": [1, 2], "set": {"core.lx.usable_bytes": [65536, 131072, 196608]}},
 "combine": "grid",
 "metrics": {"time_ns": "sim_time_ns", "read_bytes": "offchip.bytes_read"}})";

std::string write_file(const TempDir& d, const std::string& name, const std::string& text) {
  fs::create_directories(d.path);
  std::ofstream(d.path / name) << text;
  return (d.path / name).string();
}

// results.csv without host_s, its last column: the one value that depends on where and when a
// point ran (docs/sweeps.md: tables are compared without it).
std::string without_host_s(const std::string& csv) {
  std::string out;
  for (const auto& l : lines(csv)) out += l.substr(0, l.rfind(',')) + "\n";
  return out;
}
std::string jsonl_without_host_s(const std::string& jsonl) {
  std::string out;
  for (const auto& l : lines(jsonl)) {
    json j = json::parse(l);
    REQUIRE(j.contains("host_s"));
    j.erase("host_s");
    out += j.dump() + "\n";
  }
  return out;
}

// The status.json files of a point store, with their modification times.
std::map<std::string, fs::file_time_type> done_points(const fs::path& store) {
  std::map<std::string, fs::file_time_type> done;
  if (!fs::exists(store)) return done;
  for (const auto& e : fs::directory_iterator(store))
    if (fs::exists(e.path() / "status.json")) done[e.path().string()] = fs::last_write_time(e.path() / "status.json");
  return done;
}

// A process started in the background by the shell; SIGTERM when the test ends.
struct Background {
  int pid = 0;
  explicit Background(const std::string& command) {
    Result r = shell(command + " >/dev/null 2>&1 & echo $!", "");
    REQUIRE(r.code == 0);
    pid = std::stoi(r.out);
  }
  ~Background() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    // Until it has gone (and stopped writing into the test's directory), at most 10 s.
    for (int i = 0; i < 2000 && kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool alive() const { return kill(pid, 0) == 0; }
};

// Each case replaces `from` in `base` by `to`: the sweep must exit 2 with one line holding
// `expected` (the file's name then `expected` when it starts with ':') and write nothing.
struct BadCase {
  std::string from, to, expected;
};
void check_bad_sweeps(const TempDir& d, const std::string& base, const std::vector<BadCase>& cases) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string text = base;
    auto at = text.find(cases[i].from);
    REQUIRE(at != std::string::npos);
    text.replace(at, cases[i].from.size(), cases[i].to);
    std::string file = write_file(d, "bad" + std::to_string(i) + ".json", text);
    Result r = dfsim("sweep " + file + " --out " + d.str() + "/out" + std::to_string(i), "2>&1 >/dev/null");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(lines(r.out).size() == 1);
    CHECK_THAT(r.out, Catch::Contains(cases[i].expected));
    if (cases[i].expected[0] == ':') CHECK(r.out.rfind(file + cases[i].expected, 0) == 0);
    CHECK_FALSE(fs::exists(d.path / ("out" + std::to_string(i))));
  }
}

// A JSON list of `n` distinct LX sizes (multiples of 4 KiB from 64 KiB).
std::string lx_values(int n) {
  std::string v = "[";
  for (int i = 0; i < n; ++i) {
    if (i) v += ", ";
    v += std::to_string(65536 + 4096 * i);
  }
  return v + "]";
}

// A "set" axis of `keys` config parameters with `values` values each.
std::string many_axes(int keys, int values) {
  const char* names[] = {"core.lx.usable_bytes", "core.clock_mhz",        "memory.clock_mhz",     "ring.bytes_per_cycle",
                         "ring.hop_cycles",      "core.dma.issue_cycles", "core.pt.rows",         "core.pt.cols",
                         "memory.channels",      "core.dma.max_outstanding", "memory.port_bytes_per_cycle", "card.kernel_launch_ns"};
  std::string s = "\"set\": {";
  for (int k = 0; k < keys; ++k) {
    if (k) s += ", ";
    s += std::string("\"") + names[k] + "\": [";
    for (int i = 0; i < values; ++i) {
      if (i) s += ", ";
      s += std::to_string(1000 + i);
    }
    s += "]";
  }
  return s + "}";
}

template <class F>
bool wait_until(F done, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE("sweep: --jobs 1 and --jobs 4 give the same table, each point a dfsim run", "[sweep]") {
  TempDir d("sweep_jobs");
  std::string file = write_file(d, "grid.json", kGrid);
  Result r1 = dfsim("sweep " + file + " --jobs 1 --out " + d.str() + "/j1");
  REQUIRE(r1.code == 0);
  CHECK_THAT(r1.out, Contains("small_grid: 6 points (6 run, 0 reused), 0 failed"));
  REQUIRE(dfsim("sweep -q " + file + " --jobs 4 --out " + d.str() + "/j4").code == 0);
  std::string csv = slurp(d.path / "j1/results.csv");
  auto rows = lines(csv);
  REQUIRE(rows.size() == 7);
  CHECK(rows[0] == "cores,core.lx.usable_bytes,time_ns,read_bytes,status,message,host_s");
  // The grid's first axis varies slowest.
  const char* lead[] = {"1,65536,", "1,131072,", "1,196608,", "2,65536,", "2,131072,", "2,196608,"};
  for (int i = 0; i < 6; ++i) {
    CHECK(rows[i + 1].rfind(lead[i], 0) == 0);
    CHECK_THAT(rows[i + 1], Contains(",ok,,"));
  }
  CHECK(without_host_s(csv) == without_host_s(slurp(d.path / "j4/results.csv")));
  CHECK(jsonl_without_host_s(slurp(d.path / "j1/results.jsonl")) ==
        jsonl_without_host_s(slurp(d.path / "j4/results.jsonl")));
  // A point's cells are what `dfsim run` says for it (point 4: 2 cores, 131072 bytes of LX).
  REQUIRE(dfsim("run -q -c configs/small.json -w workloads/softmax_chain_512x1024.json --cores 2 "
                "--set core.lx.usable_bytes=131072 --set sim.trace=false -o " + d.str() + "/direct").code == 0);
  json s = json::parse(slurp(d.path / "direct/summary.json"));
  CHECK(split(rows[5], ',')[2] == s["sim_time_ns"].dump());
  CHECK(split(rows[5], ',')[3] == s["offchip"]["bytes_read"].dump());
  // Six distinct points, each in its own directory named by 16 hex digits.
  auto points = done_points(d.path / "j1/points");
  CHECK(points.size() == 6);
  for (const auto& [dir, _] : points) CHECK(fs::path(dir).filename().string().find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("sweep: sweeps sharing a point store run a shared point once, and --only selects points", "[sweep]") {
  TempDir d("sweep_share");
  std::string grid = write_file(d, "grid.json", kGrid);
  std::string store = d.str() + "/store";
  REQUIRE(dfsim("sweep -q " + grid + " --only cores=2 --out " + d.str() + "/a --points " + store).code == 0);
  auto a = lines(slurp(d.path / "a/results.jsonl"));
  REQUIRE(a.size() == 3);  // only the cores=2 points, numbered as in the whole sweep
  CHECK(json::parse(a[0])["point"] == 3);
  CHECK(json::parse(a[2])["point"] == 5);
  // Another sweep whose one point (2 cores, 131072 B) is already in the store, and one that is not.
  std::string other = std::string(kGrid);
  other.replace(other.find("[1, 2]"), 6, "[2]");
  other.replace(other.find("[65536, 131072, 196608]"), 23, "[131072, 100000]");
  std::string file = write_file(d, "other.json", other);
  Result r = dfsim("sweep " + file + " --resume --out " + d.str() + "/b --points " + store);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("2 points (1 run, 1 reused), 0 failed"));
  auto b = lines(slurp(d.path / "b/results.jsonl"));
  CHECK(json::parse(b[0])["id"] == json::parse(a[1])["id"]);  // the same inputs, the same directory
  CHECK(json::parse(b[1])["id"] != json::parse(a[1])["id"]);
  CHECK(done_points(store).size() == 4);
  // A point listed twice is run once (concurrent runs must never share a directory).
  std::string twice = write_file(d, "twice.json", R"({"format": "dfsim.sweep", "version": 1, "name": "twice",
    "base": {"config": "configs/small.json", "workload": "workloads/softmax_chain_512x1024.json"},
    "combine": "points", "points": [{"cores": 2}, {"cores": 2}], "metrics": {"time_ns": "sim_time_ns"}})");
  Result t = dfsim("sweep " + twice + " --jobs 2 --out " + d.str() + "/t");
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, Contains("2 points (1 run, 0 reused), 0 failed"));
  auto rows = lines(slurp(d.path / "t/results.csv"));
  REQUIRE(rows.size() == 3);
  CHECK(without_host_s(rows[1]) == without_host_s(rows[2]));
  // A whole number written with a decimal point is the same point (it was a second key and run),
  // and each row keeps the value as written.
  std::string spelled = write_file(d, "spelled.json", R"({"format": "dfsim.sweep", "version": 1, "name": "spelled",
    "base": {"config": "configs/small.json", "workload": "workloads/softmax_chain_512x1024.json"},
    "axes": {"set": {"core.clock_mhz": [1000, 1000.0, 1000.5]}}, "metrics": {"time_ns": "sim_time_ns"}})");
  Result sp = dfsim("sweep " + spelled + " --out " + d.str() + "/sp");
  REQUIRE(sp.code == 0);
  CHECK_THAT(sp.out, Contains("3 points (2 run, 0 reused), 0 failed"));
  rows = lines(slurp(d.path / "sp/results.csv"));
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].rfind("1000,", 0) == 0);
  CHECK(rows[2].rfind("1000.0,", 0) == 0);
  CHECK(split(rows[1], ',')[1] == split(rows[2], ',')[1]);
  CHECK(split(rows[1], ',')[1] != split(rows[3], ',')[1]);  // 1000.5 MHz is another point
}

TEST_CASE("sweep: a real Dask scheduler and two workers give the same table", "[sweep]") {
  TempDir d("sweep_dask");
  std::string file = write_file(d, "grid.json", kGrid);
  std::string sched = d.str() + "/scheduler.json";
  // Each a separate process on localhost, as on a cluster.
  Background scheduler("dask-scheduler --scheduler-file " + sched + " --host 127.0.0.1 --port 0 --no-dashboard");
  auto worker = [&](const std::string& n) {
    return "dask-worker --scheduler-file " + sched + " --host 127.0.0.1 --nthreads 1 --no-nanny --no-dashboard " +
           "--local-directory " + d.str() + "/" + n;  // its scratch space goes with the test's directory
  };
  Background w1(worker("w1")), w2(worker("w2"));
  std::string address;
  REQUIRE(wait_until([&] {
    try {
      address = json::parse(slurp(sched)).at("address");
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }, 60));
  Result r = dfsim("sweep " + file + " --dask " + address + " --out " + d.str() + "/dask");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("6 points (6 run, 0 reused), 0 failed"));
  REQUIRE(dfsim("sweep -q " + file + " --jobs 1 --out " + d.str() + "/local").code == 0);
  CHECK(without_host_s(slurp(d.path / "dask/results.csv")) == without_host_s(slurp(d.path / "local/results.csv")));
  CHECK(jsonl_without_host_s(slurp(d.path / "dask/results.jsonl")) ==
        jsonl_without_host_s(slurp(d.path / "local/results.jsonl")));
  // A scheduler that is not there: exit 2 with one line.
  Result bad = shell("DFSIM_DASK_TIMEOUT=1 " + std::string(DFSIM_BINARY) + " sweep " + file + " --dask tcp://127.0.0.1:1 --out " + d.str() + "/none", "2>&1 >/dev/null");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("cannot reach the Dask scheduler at tcp://127.0.0.1:1"));
}

TEST_CASE("sweep: --resume after killing a sweep halfway runs only the missing points", "[sweep]") {
  TempDir d("sweep_resume");
  // matmul_1024 points take ~0.2 s each, long enough to stop the sweep between two of them.
  std::string text = kGrid;
  text.replace(text.find("softmax_chain_512x1024"), 22, "matmul_1024");
  std::string file = write_file(d, "grid.json", text);
  fs::path store = d.path / "out/points";
  {
    Background sweep(std::string(DFSIM_BINARY) + " sweep " + file + " --jobs 1 --out " + d.str() + "/out");
    REQUIRE(wait_until([&] { return done_points(store).size() >= 2; }, 60));
    kill(sweep.pid, SIGTERM);
    REQUIRE(wait_until([&] { return !sweep.alive(); }, 30));
    sweep.pid = 0;
  }
  auto before = done_points(store);
  REQUIRE(before.size() >= 2);
  REQUIRE(before.size() < 6);
  CHECK_FALSE(fs::exists(d.path / "out/results.csv"));  // an interrupted sweep writes no table
  Result r = dfsim("sweep " + file + " --jobs 1 --resume --out " + d.str() + "/out");
  REQUIRE(r.code == 0);
  std::size_t k = before.size();
  CHECK_THAT(r.out, Contains("6 points (" + std::to_string(6 - k) + " run, " + std::to_string(k) + " reused)"));
  auto after = done_points(store);
  CHECK(after.size() == 6);
  for (const auto& [dir, time] : before) CHECK(after[dir] == time);  // not run again
  CHECK(lines(slurp(d.path / "out/results.csv")).size() == 7);
}

TEST_CASE("sweep: a sweep file read from a pipe runs, and its results keep its text", "[sweep]") {
  // The file was read twice (once per parser): `dfsim sweep <(...)` failed.
  TempDir d("sweep_pipe");
  std::string file = write_file(d, "grid.json", kGrid);
  Result r = shell("bash -c '" + std::string(DFSIM_BINARY) + " sweep -q <(cat " + file + ") --only cores=1 --out " +
                   d.str() + "/out'");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(slurp(d.path / "out/sweep.json") == kGrid);
  CHECK(lines(slurp(d.path / "out/results.csv")).size() == 4);  // the header and the 3 points of cores=1
}

TEST_CASE("sweep: the Slurm array script run task by task gives the same table", "[sweep]") {
  TempDir d("sweep_slurm");
  std::string file = write_file(d, "grid.json", kGrid);
  Result r = dfsim("sweep " + file + " --slurm " + d.str() + "/slurm --out " + d.str() + "/out");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("sbatch '" + d.str() + "/slurm/sweep.sbatch'"));
  // -q prints nothing (it printed the instructions until 2026-12-07) and writes the same script.
  Result q = dfsim("sweep -q " + file + " --slurm " + d.str() + "/slurm-q --out " + d.str() + "/out-q");
  CHECK(q.code == 0);
  CHECK(q.out.empty());
  CHECK(fs::exists(d.path / "slurm-q/sweep.sbatch"));
  std::string script = slurp(d.path / "slurm/sweep.sbatch");
  CHECK_THAT(script, Contains("#SBATCH --array=0-5\n"));
  CHECK_FALSE(fs::exists(d.path / "out/results.csv"));
  // Gathering before the array ran: every point is a not_run row, exit 1.
  Result early = shell("sh " + d.str() + "/slurm/gather.sh");
  CHECK(early.code == 1);
  auto pending = lines(slurp(d.path / "out/results.csv"));
  REQUIRE(pending.size() == 7);
  CHECK_THAT(pending[6], Contains(",not_run,not run yet,"));
  CHECK_THAT(early.out, Contains("sweep small_grid: 6 points (0 run, 0 reused), 0 failed, 6 not run\n"));
  for (int i = 0; i < 6; ++i) {
    Result t = shell("SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " bash " + d.str() + "/slurm/sweep.sbatch");
    INFO("task " << i << ": " << t.out);
    CHECK(t.code == 0);
  }
  Result g = shell("sh " + d.str() + "/slurm/gather.sh");
  INFO(g.out);
  REQUIRE(g.code == 0);
  REQUIRE(dfsim("sweep -q " + file + " --jobs 2 --out " + d.str() + "/local").code == 0);
  CHECK(without_host_s(slurp(d.path / "out/results.csv")) == without_host_s(slurp(d.path / "local/results.csv")));
}

TEST_CASE("sweep: failed points are rows with status and message, and the sweep exits 1", "[sweep]") {
  TempDir d("sweep_fail");
  // The card has 2 cores: 4 cores is refused by the run; a negative LX size by the config.
  std::string file = write_file(d, "points.json", R"({"format": "dfsim.sweep", "version": 1, "name": "some_fail",
    "base": {"config": "configs/small.json", "workload": "workloads/softmax_chain_512x1024.json"},
    "combine": "points",
    "points": [{"cores": 1}, {"cores": 4}, {"set": {"core.lx.usable_bytes": -5}}],
    "metrics": {"time_ns": "sim_time_ns"}})");
  Result r = dfsim("sweep " + file + " --out " + d.str() + "/out");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Contains("3 points (2 run, 0 reused), 2 failed"));
  auto rows = lines(slurp(d.path / "out/results.csv"));
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == "cores,core.lx.usable_bytes,time_ns,status,message,host_s");
  CHECK_THAT(rows[1], Contains(",ok,,"));
  CHECK(rows[2].rfind("4,,,failed,", 0) == 0);
  CHECK_THAT(rows[2], Contains("the program asks for 4 cores"));
  CHECK(rows[3].rfind(",-5,,failed,", 0) == 0);
  CHECK_THAT(rows[3], Contains("core.lx.usable_bytes"));
  auto jl = lines(slurp(d.path / "out/results.jsonl"));
  REQUIRE(jl.size() == 3);
  CHECK(json::parse(jl[1])["exit_code"] == 2);
  CHECK(json::parse(jl[1])["time_ns"].is_null());
  CHECK(json::parse(jl[2])["id"].is_null());  // never run: its config cannot be loaded
}

TEST_CASE("sweep: a bad sweep file exits 2 with one line naming the file and JSON path", "[sweep]") {
  TempDir d("sweep_bad");
  check_bad_sweeps(d, kGrid, {
      {"\"cores\": [1, 2]", "\"coress\": [1, 2]", ": /axes/coress: unknown axis (did you mean \"cores\"?)"},
      {"\"cores\": [1, 2]", "\"cores\": [1, 0]", ": /axes/cores/1: "},
      {"\"grid\"", "\"zip\"", ": /axes/set/core.lx.usable_bytes: \"zip\" pairs the i-th values of every axis: expected 2"},
      {"\"version\": 1", "\"version\": 2", ": /version: expected 1"},
      {"\"workload\": \"workloads/softmax_chain_512x1024.json\"", "\"gen\": {\"model\": \"llama-3.1-8b\", \"contxt\": 4}",
       ": /base/gen/contxt: unknown gen option (did you mean \"context\"?)"},
      {"\"workload\": \"workloads/softmax_chain_512x1024.json\"", "\"serve\": \"serve.json\"",
       ": /base/serve: expected an object"},
      {"\"workload\": \"workloads/softmax_chain_512x1024.json\"", "\"workload\": \"workloads/none.json\"",
       "workloads/none.json: "},
      {"\"time_ns\": \"sim_time_ns\", ", "\"cores\": \"sim_time_ns\", ", ": /metrics/cores: the column name"},
      // An unknown config key is a mistake in the file; a refused value is a failed point (below).
      {"\"set\": {\"core.lx.usable_bytes\"", "\"set\": {\"core.lx.usable_byte\"",
       ": /axes/set/core.lx.usable_byte: unknown config parameter (did you mean \"core.lx.usable_bytes\"?)"},
      {"\"config\": \"configs/small.json\"", "\"config\": \"configs/small.json\", \"set\": {\"core.lx.usable_bytes\": -1}",
       ": /base/set/core.lx.usable_bytes: "},
       // A grid beyond 100 000 points (each a simulation) is refused before it is expanded.
      {"[65536, 131072, 196608]", lx_values(50001), ": /axes: the sweep has 100002 points, more than the limit of 100000"},
      {"\"set\": {\"core.lx.usable_bytes\": [65536, 131072, 196608]}", many_axes(12, 100),
       ": /axes: the sweep has more than 2^64 points, more than the limit of 100000"},
  });
  std::string good = write_file(d, "good.json", kGrid);
  Result r = dfsim("sweep " + good + " --only lx=1 --out " + d.str() + "/o", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("--only lx=1: expected COLUMN=VALUE with one of the axis columns: cores core.lx.usable_bytes"));
}

TEST_CASE("sweep: --only writes the rows of the points it keeps, the first point among them", "[sweep]") {
  TempDir d("sweep_only");
  std::string file = write_file(d, "grid.json", kGrid);
  REQUIRE(dfsim("sweep -q " + file + " --jobs 2 --out " + d.str() + "/all").code == 0);
  auto all = lines(without_host_s(slurp(d.path / "all/results.csv")));
  REQUIRE(all.size() == 7);
  // Each filter keeps point 0 (a row kept in place was once emptied: a crash writing the table).
  struct Case {
    std::string only;
    std::vector<int> points;
  };
  for (const Case& c : {Case{"--only cores=1", {0, 1, 2}}, Case{"--only core.lx.usable_bytes=65536", {0, 3}},
                        Case{"--only cores=1 --only core.lx.usable_bytes=131072", {1}}}) {
    INFO(c.only);
    std::string out = d.str() + "/only" + std::to_string(c.points.size()) + "_" + std::to_string(c.points.back());
    Result r = dfsim("sweep -q " + file + " " + c.only + " --jobs 2 --out " + out, "2>&1");
    INFO(r.out);
    REQUIRE(r.code == 0);
    auto csv = lines(without_host_s(slurp(out + "/results.csv")));
    auto jsonl = lines(slurp(out + "/results.jsonl"));
    REQUIRE(csv.size() == c.points.size() + 1);
    REQUIRE(jsonl.size() == c.points.size());
    CHECK(csv[0] == all[0]);
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      CHECK(csv[i + 1] == all[c.points[i] + 1]);  // the same cells as in the whole sweep
      CHECK(json::parse(jsonl[i])["point"] == c.points[i]);
      CHECK(json::parse(jsonl[i])["status"] == "ok");
    }
    for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string()[0] != '.');  // no temporaries
  }
}

TEST_CASE("sweep: a workload that is a directory or missing, in the base or on an axis, exits 2 before any run", "[sweep]") {
  TempDir d("sweep_input_dir");
  const std::string w = "\"workload\": \"workloads/softmax_chain_512x1024.json\"";
  check_bad_sweeps(d, kGrid, {
      {w, "\"workload\": \"workloads\"", ": /base/workload: workloads: is a directory, expected a file"},
      {w, "\"workload\": \"workloads/\"", ": /base/workload: workloads/: is a directory, expected a file"},
      {w, "\"workload\": \"workloads/none.json\"", ": /base/workload: workloads/none.json: no such file"},
      {"\"cores\": [1, 2]", "\"workload\": [\"workloads/softmax_chain_512x1024.json\", \"workloads/sweeps\"]",
       ": /axes/workload: workloads/sweeps: is a directory, expected a file"},
  });
  std::string points = write_file(d, "points.json", R"({"format": "dfsim.sweep", "version": 1, "name": "p",
    "base": {"config": "configs/small.json", "workload": "workloads/softmax_chain_512x1024.json"},
    "combine": "points", "points": [{"cores": 1}, {"workload": "tests"}], "metrics": {"time_ns": "sim_time_ns"}})");
  Result r = dfsim("sweep " + points + " --out " + d.str() + "/p", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK(r.out == points + ": /points/1/workload: tests: is a directory, expected a file\n");
  CHECK_FALSE(fs::exists(d.path / "p"));
}

TEST_CASE("sweep: an engine that cannot start exits 2 and leaves the point store as it was", "[sweep]") {
  TempDir d("sweep_engine_refused");
  std::string file = write_file(d, "grid.json", kGrid);
  std::string afile = write_file(d, "afile", "not a directory\n");
  // A --slurm path that is a file: refused before any point directory is written.
  Result s = dfsim("sweep " + file + " --slurm " + afile + " --out " + d.str() + "/fresh", "2>&1 >/dev/null");
  CHECK(s.code == 2);
  CHECK(s.out == afile + ": output path exists and is not a directory\n");
  CHECK_FALSE(fs::exists(d.path / "fresh"));
  // A store holding two done points: neither engine refused may touch them or add any.
  REQUIRE(dfsim("sweep -q " + file + " --only cores=1 --only core.lx.usable_bytes=65536 --out " + d.str() + "/out").code == 0);
  REQUIRE(dfsim("sweep -q " + file + " --only cores=2 --only core.lx.usable_bytes=65536 --out " + d.str() + "/out").code == 0);
  fs::path store = d.path / "out/points";
  auto before = done_points(store);
  REQUIRE(before.size() == 2);
  std::map<std::string, std::string> status;
  for (const auto& [dir, _] : before) status[dir] = slurp(dir + "/status.json");
  auto unchanged = [&] {
    CHECK(done_points(store) == before);
    std::size_t dirs = 0;
    for (const auto& e : fs::directory_iterator(store)) {
      ++dirs;
      CHECK(slurp(e.path() / "status.json") == status[e.path().string()]);
    }
    CHECK(dirs == 2);
  };
  s = dfsim("sweep " + file + " --slurm " + afile + " --out " + d.str() + "/out", "2>&1 >/dev/null");
  CHECK(s.code == 2);
  unchanged();
  // A directory an #SBATCH line cannot name (sbatch splits it at the space; '%' starts a pattern).
  for (const char* dir : {"/slurm dir", "/slurm%a"}) {
    s = dfsim("sweep " + file + " --slurm '" + d.str() + dir + "' --out " + d.str() + "/out", "2>&1 >/dev/null");
    CHECK(s.code == 2);
    CHECK_THAT(s.out, Contains("--slurm: " + d.str() + dir + ": an #SBATCH --output line cannot hold the directory's"));
    CHECK_FALSE(fs::exists(d.str() + dir));
    unchanged();
  }
  // An unreachable scheduler (nothing listens on port 1), found before the points are prepared.
  Result k = shell("DFSIM_DASK_TIMEOUT=0.5 " + std::string(DFSIM_BINARY) + " sweep " + file +
                   " --dask tcp://127.0.0.1:1 --out " + d.str() + "/out", "2>&1 >/dev/null");
  CHECK(k.code == 2);
  CHECK(lines(k.out).size() == 1);
  CHECK_THAT(k.out, Contains("--dask: cannot reach the Dask scheduler at tcp://127.0.0.1:1: Connection refused"));
  unchanged();
  // A driver that fails after the points were prepared (exit 2: nothing ran): they are undone.
  std::string driver = write_file(d, "driver.sh", "#!/bin/sh\necho 'no scheduler' >&2\nexit 2\n");
  fs::permissions(driver, fs::perms::owner_exec, fs::perm_options::add);
  Result f = shell("DFSIM_PYTHON=" + driver + " " + std::string(DFSIM_BINARY) + " sweep " + file +
                   " --dask inproc://nowhere --out " + d.str() + "/out", "2>&1 >/dev/null");
  CHECK(f.code == 2);
  CHECK(f.out == "no scheduler\n");
  unchanged();
  CHECK_FALSE(fs::exists(d.path / "out/results.csv.tmp"));
}

TEST_CASE("sweep: line chart, heatmap and Pareto front are drawn as PNG and SVG", "[sweep]") {
  TempDir d("sweep_plot");
  std::string file = write_file(d, "grid.json", kGrid);
  REQUIRE(dfsim("sweep -q " + file + " --out " + d.str() + "/out").code == 0);
  std::string plot = "/usr/bin/python3 tools/sweep_plot.py ";
  std::string csv = d.str() + "/out/results.csv ";
  REQUIRE(shell(plot + "line " + csv + "--x core.lx.usable_bytes --y time_ns --by cores --out " + d.str() + "/line").code == 0);
  REQUIRE(shell(plot + "heatmap " + csv + "--x cores --y core.lx.usable_bytes --value time_ns --out " + d.str() + "/heat").code == 0);
  REQUIRE(shell(plot + "pareto " + csv + "--x cores --y time_ns --label core.lx.usable_bytes --out " + d.str() + "/pareto").code == 0);
  for (const char* name : {"line", "heat", "pareto"}) {
    for (const char* ext : {".png", ".svg"}) {
      fs::path p = d.path / (std::string(name) + ext);
      INFO(p);
      REQUIRE(fs::exists(p));
      CHECK(fs::file_size(p) > 5000);
    }
    CHECK_THAT(slurp(d.path / (std::string(name) + ".svg")), Contains("small_grid"));  // titled with the sweep
  }
  Result bad = shell(plot + "line " + csv + "--x lx --y time_ns --out " + d.str() + "/x", "2>&1 >/dev/null");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("no column 'lx'"));
}

TEST_CASE("sweep: the example sweeps in workloads/sweeps are good sweep files", "[sweep]") {
  TempDir d("sweep_examples");
  int n = 0;
  for (const auto& e : fs::directory_iterator("workloads/sweeps")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    // --slurm plans every point (config overrides, inputs) and writes the array without running it.
    std::string tag = e.path().stem().string();
    Result r = dfsim("sweep " + e.path().string() + " --slurm " + d.str() + "/" + tag + " --out " + d.str() + "/o" + tag);
    INFO(e.path() << ": " << r.out);
    CHECK(r.code == 0);
    CHECK(fs::exists(d.path / tag / "sweep.sbatch"));
  }
  CHECK(n >= 2);
}

TEST_CASE("sweep: compile options reach dfsim run as its flags, written either way", "[sweep]") {
  TempDir d("sweep_flags");
  // {"M": 4, "N": 8} and "M=4,N=8" are one point; fuse false is --no-fuse, true is the default.
  std::string file = write_file(d, "flags.json", R"({"format": "dfsim.sweep", "version": 1, "name": "flags",
    "base": {"config": "configs/small.json", "workload": "workloads/matmul_1024.json", "tiles": {"M": 8}},
    "axes": {"split": [{"N": 8, "M": 4}, "M=4,N=8"], "lx_planning": ["all"], "fuse": [false]},
    "metrics": {"time_ns": "sim_time_ns"}})");
  Result r = dfsim("sweep " + file + " --slurm " + d.str() + "/s --out " + d.str() + "/o");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("1 of 2 points to run"));
  auto dirs = lines(slurp(d.path / "s/points.txt"));
  REQUIRE(dirs.size() == 1);
  json args = json::parse(slurp(fs::path(dirs[0]) / "point.json"))["args"];
  std::string joined;
  for (const auto& a : args) joined += a.get<std::string>() + " ";
  CHECK_THAT(joined, Contains("run -q --config configs/small.json --workload workloads/matmul_1024.json --set sim.trace=false "));
  CHECK_THAT(joined, Contains(" --split M=4,N=8 --tiles M=8 --lx-planning all --no-fuse "));
}

namespace {

// Llama-3.1-8B decode steps of one layer (plus embedding and head: ~3 s of host time a point).
const char* kGenGrid = R"({"format": "dfsim.sweep", "version": 1, "name": "gen_grid",
 "base": {"config": "configs/spyre.json",
          "gen": {"model": "llama-3.1-8b", "phase": "decode", "layers": 1, "dtype": "fp16"}},
 "axes": {"batch": [1, 4], "context": [256, 1024]},
 "metrics": {"time_ns": "sim_time_ns", "read_bytes": "offchip.bytes_read"}})";

}  // namespace

TEST_CASE("sweep: a gen base runs dfsim gen then dfsim run per point, the same table with --jobs 1 and 2", "[sweep]") {
  TempDir d("sweep_gen");
  std::string file = write_file(d, "gen.json", kGenGrid);
  Result r1 = dfsim("sweep " + file + " --jobs 1 --out " + d.str() + "/j1");
  REQUIRE(r1.code == 0);
  CHECK_THAT(r1.out, Contains("gen_grid: 4 points (4 run, 0 reused), 0 failed"));
  REQUIRE(dfsim("sweep -q " + file + " --jobs 2 --out " + d.str() + "/j2").code == 0);
  std::string csv = slurp(d.path / "j1/results.csv");
  CHECK(without_host_s(csv) == without_host_s(slurp(d.path / "j2/results.csv")));
  auto rows = lines(csv);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "batch,context,time_ns,read_bytes,status,message,host_s");
  const char* lead[] = {"1,256,", "1,1024,", "4,256,", "4,1024,"};
  std::vector<double> time;
  std::vector<long long> bytes;
  for (int i = 0; i < 4; ++i) {
    INFO(rows[i + 1]);
    CHECK(rows[i + 1].rfind(lead[i], 0) == 0);
    CHECK_THAT(rows[i + 1], Contains(",ok,,"));
    time.push_back(std::stod(split(rows[i + 1], ',')[2]));
    bytes.push_back(std::stoll(split(rows[i + 1], ',')[3]));
  }
  // A longer context reads more KV cache, so it takes longer, at either batch.
  CHECK(time[1] > time[0]);
  CHECK(time[3] > time[2]);
  // Conservation: 768 more cached tokens per sequence, each K and V of 8 KV heads x 128
  // (fp16, one layer): B x 768 x 2 x 8 x 128 x 2 bytes more read (3 145 728 at B = 1).
  CHECK(bytes[1] - bytes[0] == 1LL * 768 * 2 * 8 * 128 * 2);
  CHECK(bytes[3] - bytes[2] == 4LL * 768 * 2 * 8 * 128 * 2);
  // A point is `dfsim gen` then `dfsim run` of its graph: the same graph, the same cells.
  REQUIRE(dfsim("gen llama-3.1-8b --phase decode --batch 4 --context 1024 --layers 1 --dtype fp16 -o " + d.str() +
                "/direct.json").code == 0);
  std::string graph = slurp(d.path / "direct.json");
  int same_graph = 0;
  for (const auto& [dir, _] : done_points(d.path / "j1/points")) same_graph += slurp(fs::path(dir) / "graph.json") == graph;
  CHECK(same_graph == 1);
  REQUIRE(dfsim("run -q -c configs/spyre.json -w " + d.str() + "/direct.json --set sim.trace=false -o " + d.str() + "/direct").code == 0);
  json s = json::parse(slurp(d.path / "direct/summary.json"));
  CHECK(split(rows[4], ',')[2] == s["sim_time_ns"].dump());
  CHECK(split(rows[4], ',')[3] == s["offchip"]["bytes_read"].dump());
}

TEST_CASE("sweep: a bad gen base or gen axis exits 2 with one line naming the JSON path, before any run", "[sweep]") {
  TempDir d("sweep_gen_bad");
  check_bad_sweeps(d, kGenGrid, {
      {"\"layers\": 1", "\"layer\": 1", ": /base/gen/layer: unknown gen option (did you mean \"layers\"?)"},
      {"\"llama-3.1-8b\"", "\"llama-3.1\"", ": /base/gen/model: unknown model (did you mean \"llama-3.1-8b\"?)"},
      {"\"decode\"", "\"decoding\"", ": /base/gen/phase: expected \"prefill\" or \"decode\", got \"decoding\""},
      {"\"fp16\"", "\"bf16\"", ": /base/gen/dtype: expected \"fp16\" or \"fp8\""},
      {"[1, 4]", "[1, 0]", ": /axes/batch/1: expected an integer in [1, "},
      {"[256, 1024]", "[256, \"1024\"]", ": /axes/context/1: "},
      {"\"layers\": 1", "\"layers\": 33", ": /base/gen/layers: point 0 (batch=1, context=256): \"layers\": expected 1 to 32"},
      {"[256, 1024]", "[256, 131072]",
       ": /axes/context: point 1 (batch=1, context=131072): \"context\": 131073 positions exceed the 131072 of llama-3.1-8b"},
      {"\"context\": [256, 1024]", "\"tokens\": [16]", ": /base/gen: point 0 (batch=1, tokens=16): \"context\": a decode step needs \"context\""},
      {"\"config\": \"configs/spyre.json\",", "\"config\": \"configs/spyre.json\", \"batch\": 2,", ": /base/batch: a gen option: it belongs in \"gen\" (or on an axis)"},
  });
  // The command a point runs checks its step as dfsim gen does, and writes nothing when it is bad.
  Result r = dfsim("run --gen-step '{\"model\": \"llama-3.1-8b\", \"phase\": \"decode\"}' -o " + d.str() + "/run",
                   "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("--gen-step: --phase decode needs --context L"));
  CHECK_FALSE(fs::exists(d.path / "run"));
  // A step gen accepts but the run refuses (2 cards on a one-card config): the graph it wrote
  // is removed with the directory this run made.
  r = dfsim("run --gen-step '{\"model\": \"llama-3.1-8b\", \"phase\": \"decode\", \"context\": 10, \"tp\": 2, "
            "\"layers\": 1}' -o " + d.str() + "/run2", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("cards"));
  CHECK_FALSE(fs::exists(d.path / "run2"));
  // Every point is checked before any point's config is read: 99 999 good contexts and a bad
  // last one are refused at once. Until 2026-12-07 each point read the config first, 58 s of
  // CPU here; now under a second, so a 20 s CPU limit (ulimit -t, not a wall clock) tells the two
  // apart on a loaded machine or under ASan.
  std::string contexts;
  for (int c = 1; c < 100000; ++c) contexts += std::to_string(c) + ", ";
  std::string many = write_file(d, "many.json",
      R"({"format": "dfsim.sweep", "version": 1, "name": "many", "base": {"config": "configs/spyre.json",
          "gen": {"model": "llama-3.1-8b", "phase": "decode", "layers": 1}},
          "axes": {"context": [)" + contexts + R"(200000]}, "metrics": {"t": "sim_time_ns"}})");
  r = shell("ulimit -t 20; " + std::string(DFSIM_BINARY) + " sweep " + many + " --out " + d.str() + "/many",
            "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("many.json: /axes/context: point 99999 (context=200000): \"context\": 200001 positions exceed"));
  CHECK_FALSE(fs::exists(d.path / "many"));
}

TEST_CASE("sweep: a serve base runs dfsim serve per point with its options as axes", "[sweep]") {
  TempDir d("sweep_serve");
  std::string file = write_file(d, "serve.json", R"({"format": "dfsim.sweep", "version": 1, "name": "serve_grid",
    "base": {"config": "configs/spyre.json",
             "serve": {"model": "llama-3.1-8b", "step_table": "workloads/serving/llama-3.1-8b_spyre_steps.csv",
                       "num_requests": 50}},
    "axes": {"rate": [0.5, 2], "max_num_seqs": [4, 16]},
    "metrics": {"req_s": "throughput.requests_per_s", "ttft_p50": "ttft_ms.p50", "completed": "completed"}})");
  REQUIRE(dfsim("sweep -q " + file + " --jobs 1 --out " + d.str() + "/j1").code == 0);
  REQUIRE(dfsim("sweep -q " + file + " --jobs 2 --out " + d.str() + "/j2").code == 0);
  std::string csv = slurp(d.path / "j1/results.csv");
  CHECK(without_host_s(csv) == without_host_s(slurp(d.path / "j2/results.csv")));
  auto rows = lines(csv);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "rate,max_num_seqs,req_s,ttft_p50,completed,status,message,host_s");
  const char* lead[] = {"0.5,4,", "0.5,16,", "2,4,", "2,16,"};  // rates as written
  for (int i = 0; i < 4; ++i) {
    INFO(rows[i + 1]);
    CHECK(rows[i + 1].rfind(lead[i], 0) == 0);
    CHECK(split(rows[i + 1], ',')[4] == "50");  // every request completes
  }
  // A larger decode batch serves more requests per second at either rate.
  CHECK(std::stod(split(rows[2], ',')[2]) > std::stod(split(rows[1], ',')[2]));
  CHECK(std::stod(split(rows[4], ',')[2]) > std::stod(split(rows[3], ',')[2]));
  // A point's cells are what `dfsim serve` says for it.
  REQUIRE(dfsim("serve -q --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv "
                "--num-requests 50 --rate 2 --max-num-seqs 16 --no-trace -o " + d.str() + "/direct").code == 0);
  json s = json::parse(slurp(d.path / "direct/summary.json"));
  CHECK(split(rows[4], ',')[2] == s["throughput"]["requests_per_s"].dump());
  CHECK(split(rows[4], ',')[3] == s["ttft_ms"]["p50"].dump());
  // Bad serve options exit 2 naming their JSON path, before any run.
  std::string bad = write_file(d, "bad.json", R"({"format": "dfsim.sweep", "version": 1, "name": "b",
    "base": {"serve": {"model": "llama-3.1-8b", "rates": 1}}, "axes": {"max_num_seqs": [4]},
    "metrics": {"t": "ttft_ms.p50"}})");
  Result r = dfsim("sweep " + bad + " --out " + d.str() + "/bad", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK(lines(r.out).size() == 1);
  CHECK(r.out.rfind(bad + ": /base/serve/rates: unknown serve option (did you mean \"rate\"?)", 0) == 0);
  CHECK_FALSE(fs::exists(d.path / "bad"));
  // A length distribution dfsim serve refuses is refused when the sweep is read (every point
  // failed, exit 1).
  std::string len = write_file(d, "len.json", R"({"format": "dfsim.sweep", "version": 1, "name": "b",
    "base": {"serve": {"model": "llama-3.1-8b", "rate": 1}}, "axes": {"prompt_len": [100, "uniform:10,1"]},
    "metrics": {"t": "ttft_ms.p50"}})");
  r = dfsim("sweep " + len + " --out " + d.str() + "/len", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK(r.out == len + ": /axes/prompt_len/1: \"uniform:10,1\": uniform:LO,HI needs integers 1 <= LO <= HI <= 1000000\n");
  CHECK_FALSE(fs::exists(d.path / "len"));
  // A burstiness dfsim serve refuses (below 0.001 every request arrives at once), likewise.
  std::string burst = write_file(d, "burst.json", R"({"format": "dfsim.sweep", "version": 1, "name": "b",
    "base": {"serve": {"model": "llama-3.1-8b", "rate": 1}}, "axes": {"burstiness": [1, 0.0001]},
    "metrics": {"t": "ttft_ms.p50"}})");
  r = dfsim("sweep " + burst + " --out " + d.str() + "/burst", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains(burst + ": /axes/burstiness/1: "));
  CHECK_FALSE(fs::exists(d.path / "burst"));
  // A config key the step table makes inert (the table gives the step times, not the clock) is
  // refused when the sweep is read, where the sweep gives it (until 2026-12-07 each point failed).
  const char* inert[][3] = {  // the base's "set", the points, the line's start
      {"", R"("axes": {"rate": [1], "set": {"memory.capacity_bytes": [17179869184], "core.clock_mhz": [500, 1000]}})",
       ": /axes/set/core.clock_mhz: point 0: cannot change the results"},
      {R"("set": {"core.clock_mhz": 500},)", R"("axes": {"rate": [1, 2]})", ": /base/set/core.clock_mhz: cannot change the results"},
      {"", R"("combine": "points", "points": [{"rate": 1}, {"rate": 2, "set": {"core.clock_mhz": 500}}])",
       ": /points/1/set/core.clock_mhz: point 1: cannot change the results"}};
  for (const auto& [base_set, points, want] : inert) {
    std::string f = write_file(d, "inert.json", std::string(R"({"format": "dfsim.sweep", "version": 1, "name": "b",
      "base": {)") + base_set + R"("serve": {"model": "llama-3.1-8b",
               "step_table": "workloads/serving/llama-3.1-8b_spyre_steps.csv"}},
      )" + points + R"(, "metrics": {"t": "ttft_ms.p50"}})");
    INFO(points);
    r = dfsim("sweep " + f + " --out " + d.str() + "/inert", "2>&1 >/dev/null");
    CHECK(r.code == 2);
    CHECK(lines(r.out).size() == 1);
    CHECK(r.out.rfind(f + want, 0) == 0);
    CHECK_THAT(r.out, Contains("only memory.capacity_bytes, system.cards, name, sim.trace matter"));
    CHECK_FALSE(fs::exists(d.path / "inert"));
  }
  // A missing table is still named where the sweep gives it, with or without a "set".
  std::string missing = write_file(d, "missing.json", R"({"format": "dfsim.sweep", "version": 1, "name": "b",
    "base": {"serve": {"model": "llama-3.1-8b", "step_table": "no/such.csv"}},
    "axes": {"rate": [1], "set": {"core.clock_mhz": [500]}}, "metrics": {"t": "ttft_ms.p50"}})");
  r = dfsim("sweep " + missing + " --out " + d.str() + "/missing", "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK(r.out == missing + ": /base/serve/step_table: no/such.csv: no such file\n");
}

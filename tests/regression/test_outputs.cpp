// Outputs are never silently wrong (issue 14): a full disk fails the command with one line
// naming the file and the reason, leaves no temporaries and keeps the previous outputs; a
// rerun removes an earlier run's outputs it no longer writes; an exit-2 error leaves no
// directory behind; size guards refuse huge inputs before any work (exit 2, one line naming
// the file, the JSON path and the limit). Run through the binary, as a user runs it.
#include <catch2/catch.hpp>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using Catch::Contains;

namespace {

struct Result {
  int code = -1;
  std::string err;
};

fs::path scratch(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("dfsim_outputs_" + std::to_string(getpid()) + "_" + tag);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Result dfsim(const std::string& args, const std::string& env = "") {
  fs::path err = fs::temp_directory_path() / ("dfsim_outputs_err_" + std::to_string(getpid()));
  std::string cmd = env + " " + std::string(DFSIM_BINARY) + " " + args + " >/dev/null 2>" + err.string();
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
  std::ifstream f(err);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  fs::remove(err);
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Every name in `dir` (hidden temporaries included).
std::string listing(const fs::path& dir) {
  std::string out;
  for (const auto& e : fs::directory_iterator(dir)) out += e.path().filename().string() + " ";
  return out;
}

// A full disk: a 256 KiB tmpfs when this process may mount one (root, not in a restricted
// container); else DFSIM_TEST_ENOSPC injects the same failure into trace.json's writes.
struct FullDisk {
  fs::path dir;
  bool mounted = false;
  std::string env;
  FullDisk() : dir(scratch("fulldisk")) {
    mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=256k") == 0;
    if (!mounted) env = "DFSIM_TEST_ENOSPC=trace.json";
  }
  ~FullDisk() {
    if (mounted) ::umount(dir.c_str());
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

TEST_CASE("outputs: a full disk fails the run with one line, no temporaries, the previous outputs kept") {
  FullDisk disk;
  INFO((disk.mounted ? "tmpfs of 256 KiB" : "injected ENOSPC"));
  fs::path out = disk.dir / "run";
  // A small run that fits (~100 KiB without its trace), then one whose trace cannot.
  REQUIRE(dfsim("run -q workloads/softmax_chain_512x1024.json --set sim.trace=false -o " + out.string(), disk.env)
              .code == 0);
  std::string summary = slurp(out / "summary.json"), csv = slurp(out / "utilization.csv");
  Result r = dfsim("run -q workloads/matmul_1024.json -o " + out.string(), disk.env);
  CHECK(r.code == 1);
  CHECK(lines(r.err) == 1);
  CHECK_THAT(r.err, Contains(out.string() + "/") && Contains(": No space left on device"));
  CHECK(!fs::exists(out / "trace.json"));
  CHECK(slurp(out / "summary.json") == summary);  // the earlier run's outputs, byte for byte
  CHECK(slurp(out / "utilization.csv") == csv);
  for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string()[0] != '.');
}

TEST_CASE("outputs: dfsim compile -o on a full disk fails with one line and keeps the previous file") {
  FullDisk disk;
  fs::path k = disk.dir / "k.json";
  REQUIRE(dfsim("compile workloads/softmax_chain_512x1024.json -o " + k.string()).code == 0);
  std::string before = slurp(k);
  // matmul_4096 compiles to several MB: more than the tmpfs holds (or the injected failure).
  Result r = dfsim("compile workloads/matmul_4096.json -o " + k.string(), disk.mounted ? "" : "DFSIM_TEST_ENOSPC=k.json");
  CHECK(r.code == 1);
  CHECK(lines(r.err) == 1);
  CHECK_THAT(r.err, Contains(k.string() + ": No space left on device"));
  CHECK(slurp(k) == before);
  CHECK(listing(disk.dir) == "k.json ");  // no k.json.tmp or hidden temporary
}

// A single-file output (compile -o, gen -o, serve --export-step-table, --junit) whose path is
// a device was replaced by a regular file (the rename of the temporary), and /dev/full
// reported success. It is written in place now: a full device fails with exit 1, one line.
// A private /dev/full (mknod, root) so that a regression cannot replace the machine's.
TEST_CASE("outputs: a single-file output on a device is written in place, a full one fails, a directory is exit 2") {
  fs::path d = scratch("device");
  fs::path full = d / "full";
  fs::path out = d / "run";
  if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    WARN("mknod needs root: the device part is skipped");
  } else {
    const std::string st = " --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv --rate 1 -n 3 -o " + out.string();
    for (const std::string& args : {"compile tests/data/bad/ops_ok.json -c configs/small.json -o " + full.string(),
                                    "gen llama-3.1-8b --phase decode --context 8 --layers 1 -o " + full.string(),
                                    "serve --model llama-3.1-8b" + st + " --export-step-table " + full.string()}) {
      INFO(args);
      Result r = dfsim(args);
      CHECK(r.code == 1);
      CHECK(lines(r.err) == 1);
      CHECK_THAT(r.err, Contains(full.string() + ": No space left on device"));
      CHECK(fs::is_character_file(full));  // never replaced by a regular file
    }
    CHECK(!fs::exists(out));  // serve commits nothing when its export fails
    // regress --update with its JUnit file on the full device: the command fails and the suite
    // is left as it was (it was rewritten first, then the JUnit write failed).
    const fs::path suite = d / "s.json";
    const std::string text = R"({"format": "dfsim.suite", "version": 1, "name": "s", "cases": [{"name": "c", )"
                             R"("config": ")" + fs::absolute("configs/small.json").string() + R"(", "workload": ")" +
                             fs::absolute("tests/data/bad/ops_ok.json").string() +
                             R"(", "expect": {"sim_time_ns": {"value": 1000, "relative_pct": 1}}}]})";
    std::ofstream(suite) << text;
    Result up = dfsim("regress " + suite.string() + " --update -q --junit " + full.string());
    CHECK(up.code == 1);
    CHECK_THAT(up.err, Contains(full.string() + ": No space left on device"));
    CHECK(slurp(suite) == text);
  }
  // A symlink to a file keeps pointing at it; one to the command's own stdout (/dev/stdout is
  // such a link, to /proc/self/fd/1) was replaced by a regular file: written through stdout now.
  fs::path target = d / "target.json", link = d / "link.json", out_link = d / "stdout_link";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  fs::create_symlink("/proc/self/fd/1", out_link);
  REQUIRE(dfsim("compile tests/data/bad/ops_ok.json -c configs/small.json -o " + link.string()).code == 0);
  CHECK(fs::is_symlink(link));
  CHECK_THAT(slurp(target), Contains("\"dfsim.kernels\""));
  fs::path captured = d / "captured.txt", status = d / "status.txt";
  REQUIRE(std::system((std::string(DFSIM_BINARY) + " compile tests/data/bad/ops_ok.json -c configs/small.json -o " +
                       out_link.string() + " > " + captured.string() + " 2> " + status.string()).c_str()) == 0);
  CHECK(fs::is_symlink(out_link));
  // The graph alone on stdout (it can be piped into `dfsim run -w /dev/stdin`), the success line on stderr.
  CHECK(nlohmann::json::parse(slurp(captured))["format"] == "dfsim.kernels");
  CHECK_THAT(slurp(status), Contains(out_link.string() + ": "));
  // A directory as the file: exit 2 before any work, naming the path.
  for (const std::string& args : {"compile tests/data/bad/ops_ok.json -c configs/small.json -o " + d.string(),
                                  "gen llama-3.1-8b --phase decode --context 8 --layers 1 -o " + d.string() + "/",
                                  "regress tests/regression/closed-form.suite.json --junit " + d.string()}) {
    INFO(args);
    Result r = dfsim(args);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, Contains(d.string()) && Contains("is a directory, expected a file path"));
  }
  fs::remove_all(d);
}

TEST_CASE("outputs: a rerun removes the outputs of an earlier run that it no longer writes") {
  fs::path out = scratch("stale") / "run";
  REQUIRE(dfsim("run -q workloads/matmul_1024.json -o " + out.string()).code == 0);
  REQUIRE(fs::exists(out / "trace.json"));
  REQUIRE(dfsim("run -q workloads/softmax_chain_512x1024.json --set sim.trace=false -o " + out.string()).code == 0);
  CHECK(!fs::exists(out / "trace.json"));  // it described matmul_1024
  CHECK(fs::exists(out / "summary.json"));
  CHECK(fs::exists(out / "utilization.csv"));
  fs::remove_all(out.parent_path());
}

TEST_CASE("outputs: an exit-2 error after the output directory was made leaves no directory") {
  fs::path base = scratch("nodir");
  fs::path k = base / "k.json";
  REQUIRE(dfsim("compile workloads/softmax_chain_512x1024.json -o " + k.string()).code == 0);
  // The off-chip layout (made as the simulation is built, after the directory) does not fit.
  fs::path out = base / "a" / "b";
  Result r = dfsim("run -q " + k.string() + " --set memory.capacity_bytes=4096 -o " + out.string());
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK_THAT(r.err, Contains("memory.capacity_bytes"));
  CHECK(!fs::exists(base / "a"));
  fs::remove_all(base);
}

TEST_CASE("guards: huge op-graph shapes are refused before any work, naming the tensor and the capacity") {
  fs::path base = scratch("huge");
  const char* shapes[] = {"[4294967296, 4294967296, 4294967296]", "[1099511627776, 64]", "[1000000000, 1024]"};
  for (const char* shape : shapes) {
    std::string text = std::string(R"({"format": "dfsim.ops", "version": 1, "name": "huge", "tensors": {"x": {"shape": )") +
                       shape + R"(, "dtype": "fp16"}, "y": {"shape": )" + shape +
                       R"(, "dtype": "fp16"}}, "inputs": ["x"], "outputs": ["y"], "ops": [{"op": "relu", "inputs": ["x"], "outputs": ["y"]}]})";
    fs::path w = base / "huge.json";
    std::ofstream(w) << text;
    Result r = dfsim("run -q " + w.string() + " -o " + (base / "out").string());
    INFO(shape);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, Contains(w.string() + ": /tensors/x/shape: ") && Contains("memory.capacity_bytes"));
    CHECK(!fs::exists(base / "out"));
  }
  fs::remove_all(base);
}

TEST_CASE("guards: an sfp task's elements beyond its LX data and a graph beyond --max-tasks are refused") {
  fs::path base = scratch("elements");
  fs::path k = base / "k.json";
  REQUIRE(dfsim("compile workloads/softmax_chain_512x1024.json -o " + k.string()).code == 0);
  std::string text = slurp(k);
  auto at = text.find("\"elements\": ");
  REQUIRE(at != std::string::npos);
  auto end = text.find_first_of(",\n}", at + 12);
  text.replace(at, end - at, "\"elements\": 1000000000000000");
  fs::path big = base / "big.json";
  std::ofstream(big) << text;
  Result r = dfsim("run -q " + big.string() + " -o " + (base / "out").string());
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK_THAT(r.err, Contains(big.string() + ": /kernels/") && Contains("/elements: 1000000000000000 elements") &&
                        Contains("LX accesses hold"));
  // 40 task instances (docs/compiler.md: the row sum in 8 pipelined tiles) against a limit of 10.
  r = dfsim("run -q " + k.string() + " --max-tasks 10 -o " + (base / "out").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains(k.string() + ": /kernels: 40 task instances, more than --max-tasks 10"));
  r = dfsim("run -q workloads/softmax_chain_512x1024.json --max-tasks 39 -o " + (base / "out").string());
  CHECK(r.code == 2);
  CHECK(!fs::exists(base / "out"));
  CHECK(dfsim("run -q workloads/softmax_chain_512x1024.json --max-tasks 40 -o " + (base / "out").string()).code == 0);
  fs::remove_all(base);
}

TEST_CASE("cli: limits of 0 are refused rather than meaning no limit") {
  for (const char* opt : {"--timeout 0", "--max-events 0", "--max-sim-time 0", "--max-tasks 0"}) {
    Result r = dfsim(std::string("run -q workloads/softmax_chain_512x1024.json ") + opt);
    INFO(opt);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("must be > 0 (leave it out for no limit)"));
  }
}

TEST_CASE("cli: validate checks and reports every file, exit 2 if any is bad") {
  Result r = dfsim("validate tests/data/bad/no_such.json workloads/add_2048x1024.json tests/data/bad_lx_bytes.json");
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 2);  // one line per bad file
  CHECK_THAT(r.err, Contains("no_such.json") && Contains("bad_lx_bytes.json: /core/lx/bytes"));
  CHECK(dfsim("validate workloads/add_2048x1024.json configs/small.json").code == 0);
}

TEST_CASE("cli: a missing positional argument is named as the user types it") {
  Result r = dfsim("validate");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("missing argument: usage: dfsim validate FILE..."));
  CHECK_THAT(r.err, !Contains("--files"));
  r = dfsim("compile -o x.json");
  CHECK_THAT(r.err, Contains("missing argument: usage: dfsim compile OPS.json"));
}

TEST_CASE("cli: an op graph asking for more cores than the chip compiles for the chip, with a note") {
  fs::path out = scratch("cores");
  Result r = dfsim("run -q workloads/add_2048x1024.json -c configs/small.json -o " + out.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Contains("/compile/cores asks for 32 cores") && Contains("compiling for 2"));
  r = dfsim("run -q workloads/add_2048x1024.json -c configs/small.json --cores 4 -o " + out.string());
  CHECK(r.code == 2);  // an explicit --cores beyond the chip is still an error
  fs::remove_all(out);
}

TEST_CASE("outputs: DMA transfers still running when a limit stops the run count as busy") {
  fs::path out = scratch("cutoff");
  // The kernel launches at 1.5 us (card.kernel_launch_ns); at 3.5 us every core's first loads
  // of add_2048x1024 are still in flight (none has completed).
  REQUIRE(dfsim("run -q workloads/add_2048x1024.json --max-sim-time 3500 -o " + out.string()).code == 1);
  nlohmann::json s = nlohmann::json::parse(slurp(out / "summary.json"));
  REQUIRE(s["status"] == "limit");
  REQUIRE(s["units"]["by_kind"].contains("dma"));
  // 32 inbound queues busy from the launch to the stop: 32 x 2000 ns (the outbound queues have
  // not started).
  CHECK(s["units"]["by_kind"]["dma"]["busy_ns"].get<double>() == Approx(32 * 2000.0));
  for (const auto& u : s["units"]["units"])
    if (u["kind"] == "dma") CHECK(u["utilization"].get<double>() <= 1.0);
  CHECK(slurp(out / "utilization.csv").find("dma in") != std::string::npos);
  fs::remove_all(out);
}

// What a command prints must reach stdout: `dfsim info --params > file` on a full disk exited
// 0 with the file cut short. A failed stdout is one line on stderr and exit 1.
TEST_CASE("outputs: a command whose stdout cannot be written exits 1 with one line") {
  fs::path d = scratch("stdout_full");
  fs::path full = d / "full";
  if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    WARN("mknod needs root: skipped");
    fs::remove_all(d);
    return;
  }
  for (const std::string& args : {std::string("info --params"), std::string("gen --list"), std::string("--help"),
                                  std::string("validate configs/small.json")}) {
    INFO(args);
    fs::path err = d / "err.txt";
    int status = std::system((std::string(DFSIM_BINARY) + " " + args + " >" + full.string() + " 2>" + err.string()).c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(slurp(err) == "dfsim: stdout: No space left on device\n");
  }
  fs::remove_all(d);
}

// Bad-input catalogue (issue 5), run through the real binary as a user runs it. One test case
// per class of bad input across configs, op graphs, compiled kernel graphs and the command
// line. Each asserts: exit code exactly 2 (never a signal or an abort), exactly one line on
// stderr, the line names the file (or --set / --cores) and the JSON path or line:column,
// and no output was written. Inputs live in tests/data/bad/ (each file says what is wrong in
// its first line) or are generated into a temporary directory here. Also: runs that cannot
// finish (an LX deadlock, --max-events) exit 1 and still write valid partial outputs, and the
// inputs the fuzzers once crashed on (tests/data/fuzz-regressions/) are handled cleanly.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Catch::Contains;
using nlohmann::json;

namespace {

const std::string kBad = "tests/data/bad/";
const std::string kSmall = "configs/small.json";  // 2 cores, 192 KiB usable LX

// A fresh directory (created) unique to this process and `tag`; removed on exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("dfsim_bad_" + std::to_string(getpid()) + "_" + tag)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream f(path / name, std::ios::binary);
    f << text;
    return (path / name).string();
  }
};

struct Result {
  bool exited = false;   // false: killed by a signal (abort, segfault, sanitizer)
  int code = -1;
  std::string err;       // stderr
};

// Runs `dfsim <args>` with stdout discarded and stderr captured; `env`: VAR=value words before it.
Result dfsim(const std::string& args, const std::string& env = "") {
  TempDir t("stderr");
  fs::path err = t.path / "stderr.txt";
  std::string cmd = env + " " + std::string(DFSIM_BINARY) + " " + args + " >/dev/null 2>" + err.string();
  int status = std::system(cmd.c_str());
  Result r;
  r.exited = WIFEXITED(status);
  r.code = r.exited ? WEXITSTATUS(status) : -1;
  std::ifstream f(err, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

std::string slurp_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

// The checks every bad input must pass. `args` is a dfsim command line without --out; for
// `run` a fresh --out directory is added and must stay without outputs. Each of `expect` must
// appear in the one line printed. `env`: VAR=value words to run it with.
void expect_bad(const std::string& args, const std::vector<std::string>& expect, const std::string& env = "") {
  TempDir out("out");
  fs::path dir = out.path / "o";
  bool run = args.rfind("run ", 0) == 0 || args.rfind("serve ", 0) == 0;
  std::string full = args + (run && args.find(" -o ") == std::string::npos ? " -o " + dir.string() : "");
  INFO(env << " dfsim " << full);
  Result r = dfsim(full, env);
  INFO("stderr: " << r.err);
  REQUIRE(r.exited);                  // never a signal, an abort or a sanitizer kill
  CHECK(r.code == 2);
  auto l = lines(r.err);
  REQUIRE(l.size() == 1);             // exactly one line
  CHECK_THAT(l[0], !Contains("internal error"));
  CHECK_THAT(l[0], !Contains("json.exception"));
  for (const auto& e : expect) CHECK_THAT(l[0], Contains(e));
  CHECK_FALSE(fs::exists(dir / "summary.json"));  // nothing written
  CHECK_FALSE(fs::exists(dir / "trace.json"));
}

// A config with `path: value` on top of configs/small.json (written into `t`).
std::string config_with(const TempDir& t, const std::string& body) {
  return t.file("c.json", "{\"extends\": \"" + fs::absolute(kSmall).string() + "\", \"name\": \"t\", " + body + "}");
}

const std::string kOps = kBad + "ops_ok.json";
const std::string kKernels = kBad + "kernels_ok.json";
std::string run_ops(const std::string& extra = "") { return "run -c " + kSmall + " -w " + kOps + " " + extra; }

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

}  // namespace

// The inputs the catalogue varies are themselves valid.
TEST_CASE("bad input: the reference inputs run", "[bad]") {
  TempDir t("ok");
  for (const std::string& w : {kOps, kKernels}) {
    Result r = dfsim("run -q -c " + kSmall + " -w " + w + " -o " + (t.path / fs::path(w).stem()).string());
    INFO(w << ": " << r.err);
    CHECK(r.code == 0);
  }
}

// ---------------------------------------------------------------- JSON syntax (any file)

TEST_CASE("bad input: malformed JSON names line:column", "[bad]") {
  TempDir t("malformed");
  std::string f = t.file("m.json", "{\n  \"format\": \"dfsim.ops\",\n  \"name\": }\n");
  expect_bad("run -c " + kSmall + " -w " + f, {f, ": 3:11: ", "malformed JSON"});
  expect_bad("run -c " + f + " -w " + kOps, {f, ": 3:11: "});
}

TEST_CASE("bad input: truncated and empty files", "[bad]") {
  TempDir t("truncated");
  std::string f = t.file("t.json", "{\"format\": \"dfsim.ops\", \"tensors\": {");
  expect_bad("run -c " + kSmall + " -w " + f, {f, "1:", "malformed JSON"});
  std::string e = t.file("e.json", "");
  expect_bad("run -c " + kSmall + " -w " + e, {e, "1:1", "malformed JSON"});
}

TEST_CASE("bad input: non-UTF-8 JSON", "[bad]") {
  TempDir t("utf8");
  std::string f = t.file("u.json", "{\"extends\": \"x\",\n \"name\": \"caf\xe9\xff\"}");
  expect_bad("run -c " + f + " -w " + kOps, {f, "2:", "UTF-8"});
  // The bytes the parser last read are quoted escaped, not raw (a terminal shows garbage).
  Result r = dfsim("run -c " + f + " -w " + kOps);
  CHECK(r.err.find('\xff') == std::string::npos);
  CHECK_THAT(r.err, Contains("\\xe9\\xff"));
}

TEST_CASE("bad input: deeply nested JSON (100000 open brackets)", "[bad]") {
  TempDir t("deep");
  std::string f = t.file("d.json", "{\"a\":\n" + std::string(100000, '['));
  expect_bad("run -c " + kSmall + " -w " + f, {f, "2:200", "nested deeper than 200"});
}

TEST_CASE("bad input: a key twice in one object", "[bad]") {
  expect_bad("run -c " + kBad + "config_duplicate_key.json -w " + kOps,
             {kBad + "config_duplicate_key.json", "/card/cores", "duplicate key"});
}

TEST_CASE("bad input: a number beyond a double (1e400)", "[bad]") {
  expect_bad("run -c " + kBad + "config_overflow_float.json -w " + kOps,
             {kBad + "config_overflow_float.json", "3:", "1e400", "out of range"});
}

TEST_CASE("bad input: a huge file (50 MB array) is rejected quickly", "[bad]") {
  TempDir t("huge");
  std::string text = "[0";
  text.reserve(50u << 20);
  while (text.size() < (50u << 20)) text += ",123456789";
  text += "]";
  std::string f = t.file("h.json", text);
  auto t0 = std::chrono::steady_clock::now();
  expect_bad("run -c " + kSmall + " -w " + f, {f, "/format"});
  expect_bad("run -c " + f + " -w " + kOps, {f, "object"});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("two 50 MB rejections took " << s << " s");
  CHECK(s < 120);  // a generous bound for sanitizer builds; a release build takes a few seconds
}

// ---------------------------------------------------------------- configs

TEST_CASE("bad input: config unknown key with a hint", "[bad]") {
  expect_bad("run -c " + kBad + "config_unknown_key.json -w " + kOps,
             {kBad + "config_unknown_key.json", "/core/lxx", "did you mean \"lx\""});
}

TEST_CASE("bad input: config wrong type", "[bad]") {
  expect_bad("run -c " + kBad + "config_wrong_type.json -w " + kOps,
             {kBad + "config_wrong_type.json", "/card/cores", "expected an integer"});
}

TEST_CASE("bad input: config zero rate", "[bad]") {
  expect_bad("run -c " + kBad + "config_zero_clock.json -w " + kOps,
             {kBad + "config_zero_clock.json", "/core/clock_mhz", "got 0"});
}

TEST_CASE("bad input: config negative size", "[bad]") {
  expect_bad("run -c " + kBad + "config_negative_channels.json -w " + kOps,
             {kBad + "config_negative_channels.json", "/memory/channels", "-4"});
  expect_bad("run -c tests/data/bad_lx_bytes.json -w " + kOps, {"tests/data/bad_lx_bytes.json", "/core/lx/bytes"});
}

TEST_CASE("bad input: config integer overflow (2^70)", "[bad]") {
  expect_bad("run -c " + kBad + "config_overflow_int.json -w " + kOps,
             {kBad + "config_overflow_int.json", "/core/lx/bytes", "expected an integer"});
}

// Rates only had to be > 0: core.clock_mhz 1e-300 overflowed the clock period and the run
// "finished" faster than at 1.5 GHz; 1e-9 MHz, memory.clock_mhz 1e-300 never finished; PCIe
// rates and fp32_rate of 1e-300 gave wrong times. Each has a physical floor now.
TEST_CASE("bad input: config rates too small to simulate (1e-300 MHz, GB/s)", "[bad]") {
  expect_bad(run_ops("--set core.clock_mhz=1e-300"), {"--set", "core.clock_mhz", "expected a number in [1, 100000]"});
  expect_bad(run_ops("--set memory.clock_mhz=1e-9"), {"--set", "memory.clock_mhz", "[1, 100000]"});
  expect_bad(run_ops("--set core.sfp.fp32_rate=1e-300"), {"--set", "core.sfp.fp32_rate", "[0.01, 1]"});
  TempDir t("tiny_rates");
  std::string f = config_with(t, "\"system\": {\"pcie\": {\"link_gbps\": 1e-300}}");
  expect_bad("run -c " + f + " -w " + kOps, {f, "/system/pcie/link_gbps", "[0.01, 1000000]"});
  f = config_with(t, "\"system\": {\"pcie\": {\"efficiency\": 1e-300}}");
  expect_bad("run -c " + f + " -w " + kOps, {f, "/system/pcie/efficiency", "[0.01, 1]"});
}

TEST_CASE("bad input: config relation (usable LX above LX)", "[bad]") {
  expect_bad("run -c " + kBad + "config_usable_above_lx.json -w " + kOps,
             {kBad + "config_usable_above_lx.json", "/core/lx/usable_bytes"});
}

// 0 ways is "not supported" (core.pt.simd): a matmul in that precision ran at one way while the
// summary said "285.4 MAC/ns of 0.0 peak", exit 0.
TEST_CASE("bad input: a matmul in a precision the config's PT does not support", "[bad]") {
  TempDir t("simd0");
  const std::string c = config_with(t, R"("core": {"pt": {"simd": {"fp16": 0}}})");
  expect_bad("run -c " + c + " -w workloads/matmul_1024.json -o " + t.str() + "/o",
             {c + ": /core/pt/simd/fp16: 0 ways: the PT does not multiply in fp16, which workloads/matmul_1024.json does",
              "matmul_c/m0/n0/k0/matmul"});
  CHECK(dfsim("run -q --trace off -c " + c + " -w workloads/add_2048x1024.json -o " + t.str() + "/o").code == 0);  // no matmul
}

TEST_CASE("bad input: config unknown choice (memory model)", "[bad]") {
  expect_bad("run -c " + kBad + "config_unknown_choice.json -w " + kOps,
             {kBad + "config_unknown_choice.json", "/memory/impl", "ddr9"});
}

TEST_CASE("bad input: config extends loop", "[bad]") {
  expect_bad("run -c " + kBad + "config_extends_loop_a.json -w " + kOps, {"config_extends_loop", "/extends", "loop"});
  TempDir t("self");
  std::string f = t.file("self.json", "{\"extends\": \"self.json\"}");
  expect_bad("run -c " + f + " -w " + kOps, {f, "/extends", "loop"});
}

TEST_CASE("bad input: config extends a missing parent", "[bad]") {
  expect_bad("run -c " + kBad + "config_extends_missing.json -w " + kOps,
             {kBad + "config_extends_missing.json", "/extends", "no_such_parent.json"});
  // An empty path was "./ is a directory"; a loop of symbolic links "no such file".
  TempDir t("extends_odd");
  const std::string e = t.file("e.json", "{\"extends\": \"\"}");
  expect_bad("run -c " + e + " -w " + kOps, {e + ": /extends: expected the path of a config to extend, got \"\""});
  fs::create_symlink(t.path / "loop_b", t.path / "loop_a");
  fs::create_symlink(t.path / "loop_a", t.path / "loop_b");
  const std::string l = t.file("l.json", "{\"extends\": \"loop_a\"}");
  expect_bad("run -c " + l + " -w " + kOps, {l + ": /extends: ", "loop_a\": a loop of symbolic links"});
}

TEST_CASE("bad input: config extends a FIFO or a device (it blocked forever on a FIFO)", "[bad]") {
  TempDir t("extends_fifo");
  const std::string fifo = (t.path / "parent").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::string f = t.file("c.json", "{\"extends\": \"parent\"}");
  expect_bad("validate " + f, {f, "/extends", "is not a regular file"});
  std::string z = t.file("z.json", "{\"extends\": \"/dev/zero\"}");
  expect_bad("validate " + z, {z, "/extends", "\"/dev/zero\" is not a regular file"});
}

TEST_CASE("bad input: config extends is not a string", "[bad]") {
  TempDir t("extends_type");
  std::string f = t.file("c.json", "{\"extends\": 42}");
  expect_bad("run -c " + f + " -w " + kOps, {f, "/extends"});
}

TEST_CASE("bad input: config top level is not an object", "[bad]") {
  expect_bad("run -c " + kBad + "config_top_level_array.json -w " + kOps,
             {kBad + "config_top_level_array.json", "object"});
}

TEST_CASE("bad input: config NaN-like and float where an integer is expected", "[bad]") {
  TempDir t("float");
  std::string f = config_with(t, "\"card\": {\"cores\": 2.5}");
  expect_bad("run -c " + f + " -w " + kOps, {f, "/card/cores", "integer"});
}

// ---------------------------------------------------------------- --set and --cores

TEST_CASE("bad input: --set on a path that does not exist", "[bad]") {
  expect_bad(run_ops("--set core.nope=3"), {"--set", "core.nope", "unknown"});
  expect_bad(run_ops("--set core.lx=3"), {"--set", "core.lx"});
}

TEST_CASE("bad input: --set with the wrong type", "[bad]") {
  expect_bad(run_ops("--set core.lx.bytes=abc"), {"--set", "core.lx.bytes", "integer"});
  expect_bad(run_ops("--set sim.trace=7"), {"--set", "sim.trace"});
}

TEST_CASE("bad input: --set out of range and overflowing", "[bad]") {
  expect_bad(run_ops("--set core.lx.bytes=-5"), {"--set", "core.lx.bytes"});
  expect_bad(run_ops("--set core.lx.bytes=1180591620717411303424"), {"--set", "core.lx.bytes"});
  expect_bad(run_ops("--set core.lx.bytes=1e400"), {"--set", "core.lx.bytes"});
}

TEST_CASE("bad input: --set without '='", "[bad]") {
  expect_bad(run_ops("--set core.lx.bytes"), {"--set", "key.path=value"});
}

TEST_CASE("bad input: --cores 0, negative and beyond the chip", "[bad]") {
  expect_bad(run_ops("--cores 0"), {"--cores", ">= 1"});
  expect_bad(run_ops("--cores -3"), {"--cores"});
  expect_bad(run_ops("--cores 999"), {"--cores", "999", "2"});
  expect_bad(run_ops("--cores 99999999999"), {"--cores"});
  expect_bad("run -w " + kKernels + " -c " + kSmall + " --cores 2", {"--cores", "op graphs only"});
}

// ---------------------------------------------------------------- op graphs

struct OpCase {
  const char* file;
  std::vector<std::string> expect;
};

void expect_bad_ops(const std::string& name, const std::vector<std::string>& expect) {
  std::vector<std::string> e = expect;
  e.insert(e.begin(), kBad + name);
  expect_bad("run -c " + kSmall + " -w " + kBad + name, e);
}

TEST_CASE("bad input: op graph unknown op", "[bad]") {
  expect_bad("run -c " + kSmall + " -w tests/data/unknown_op.json", {"tests/data/unknown_op.json", "/ops/0/op"});
}
TEST_CASE("bad input: op graph unknown dtype", "[bad]") {
  expect_bad_ops("ops_unknown_dtype.json", {"/tensors/a/dtype", "fp64"});
}
TEST_CASE("bad input: op graph shape mismatch", "[bad]") {
  expect_bad_ops("ops_shape_mismatch.json", {"/ops/0/outputs/0", "expected [64, 64]"});
}
TEST_CASE("bad input: op graph broadcasting that does not apply", "[bad]") {
  expect_bad_ops("ops_broadcast.json", {"/ops/0/inputs", "broadcast"});
}
TEST_CASE("bad input: op graph matmul inner dimensions", "[bad]") {
  expect_bad_ops("ops_matmul_inner.json", {"/ops/0/inputs", "inner"});
}
TEST_CASE("bad input: op graph dangling tensor reference", "[bad]") {
  expect_bad_ops("ops_dangling_tensor.json", {"/ops/0/inputs/1", "\"bb\"", "did you mean \"b\""});
}
TEST_CASE("bad input: op graph tensor produced twice", "[bad]") {
  expect_bad_ops("ops_produced_twice.json", {"/ops/1/outputs/0", "twice"});
}
TEST_CASE("bad input: op graph cycle", "[bad]") {
  expect_bad_ops("ops_cycle.json", {"/ops/", "cycle"});
}
TEST_CASE("bad input: op graph empty", "[bad]") { expect_bad_ops("ops_empty.json", {"/ops", "empty"}); }
TEST_CASE("bad input: op graph missing required field", "[bad]") {
  expect_bad_ops("ops_missing_tensors.json", {"/tensors", "missing"});
}
TEST_CASE("bad input: op graph wrong type", "[bad]") {
  expect_bad_ops("ops_wrong_type_shape.json", {"/tensors/a/shape", "array"});
}
TEST_CASE("bad input: op graph zero and negative dimensions", "[bad]") {
  expect_bad_ops("ops_zero_dim.json", {"/tensors/a/shape/0", "got 0"});
  expect_bad_ops("ops_negative_dim.json", {"/tensors/a/shape/0", "-64"});
}
TEST_CASE("bad input: op graph element count overflowing 64 bits", "[bad]") {
  expect_bad_ops("ops_elements_overflow.json", {"/tensors/a/shape", "more than 2^64 B", "memory.capacity_bytes"});
}
TEST_CASE("bad input: kv_write of more new rows than the cache holds", "[bad]") {
  // It was caught only in the compiled graph: "<input>: /kernels/0/tasks/1/writes/0: ... beyond".
  TempDir t("kv");
  std::string f = t.file("kv.json", R"({"format": "dfsim.ops", "version": 1, "name": "kv",
    "tensors": {"c": {"shape": [1, 16, 64], "dtype": "fp16"}, "n": {"shape": [1, 32, 64], "dtype": "fp16"},
                "y": {"shape": [1, 16, 64], "dtype": "fp16"}},
    "inputs": ["c", "n"], "outputs": ["y"], "ops": [{"op": "kv_write", "inputs": ["c", "n"], "outputs": ["y"]}]})");
  expect_bad("validate " + f + " -c " + kSmall, {f, "/ops/0/inputs/1", "32 new rows do not fit the cache's 16"});
}
TEST_CASE("bad input: op graph unknown key with a hint", "[bad]") {
  expect_bad_ops("ops_unknown_key.json", {"/ops/0/output", "did you mean \"outputs\""});
}
TEST_CASE("bad input: op graph input produced by an op", "[bad]") {
  expect_bad_ops("ops_input_produced.json", {"/ops/0/outputs/0", "graph input"});
}
TEST_CASE("bad input: op graph sum dim out of range", "[bad]") {
  expect_bad_ops("ops_sum_dim.json", {"/ops/0/attrs/dim"});
}
TEST_CASE("bad input: op graph compile.cores 0", "[bad]") {
  expect_bad_ops("ops_compile_cores_zero.json", {"/compile/cores"});
}
TEST_CASE("bad input: op graph wrong arity", "[bad]") { expect_bad_ops("ops_wrong_arity.json", {"/ops/0/inputs"}); }
TEST_CASE("bad input: unknown format and version", "[bad]") {
  expect_bad_ops("ops_bad_format.json", {"/format"});
  expect_bad_ops("ops_bad_version.json", {"/version"});
}

// An op graph whose ops read a tensor where it is not: each op runs on every card of
// compile.cards, a collective on its group, and a group's result is only on the group's cards
// (to_host's only on the host). These deadlocked at run time (exit 1, "reads buffer "y",
// which no task writes") after validate said ok.
TEST_CASE("bad input: an op reads a tensor on cards it is not on", "[bad]") {
  TempDir t("cards");
  auto graph = [](const std::string& first, int cards) {
    return R"({"format": "dfsim.ops", "version": 2, "name": "g", "tensors": {"x": {"shape": [64, 128], "dtype": "fp16"},
      "y": {"shape": [64, 128], "dtype": "fp16"}, "z": {"shape": [64, 128], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["z"], "ops": [)" + first + R"(, {"op": "neg", "inputs": ["y"], "outputs": ["z"]}],
      "compile": {"cards": )" + std::to_string(cards) + R"(, "cores": 1}})";
  };
  const std::string drawer = "validate --config configs/spyre-drawer.json ";
  std::string f = t.file("partial.json", graph(R"({"op": "all_reduce", "inputs": ["x"], "outputs": ["y"], "attrs": {"group": [0, 1]}})", 4));
  expect_bad(drawer + f, {f, "/ops/1/inputs/0", "tensor \"y\" is only on cards 0, 1, but neg reads it on cards 0, 1, 2, 3"});
  f = t.file("host.json", graph(R"({"op": "to_host", "inputs": ["x"], "outputs": ["y"], "attrs": {"group": [0]}})", 2));
  expect_bad(drawer + f, {f, "/ops/1/inputs/0", "tensor \"y\" is only on the host, but neg reads it on cards 0, 1"});
  // Over every card it is everywhere: runs.
  f = t.file("whole.json", graph(R"({"op": "all_reduce", "inputs": ["x"], "outputs": ["y"]})", 4));
  Result r = dfsim(drawer + f);
  CHECK(r.code == 0);
}

// kv_write updates its cache in place (its output is the cache's storage): another op reading
// the cache tensor would read the new rows (exit 0 before), a second kv_write of it both updates.
TEST_CASE("bad input: a kv_write's cache read or updated by another op", "[bad]") {
  TempDir t("kv");
  auto graph = [](const std::string& second) {
    return R"({"format": "dfsim.ops", "version": 1, "name": "g", "tensors": {"c": {"shape": [2, 64, 128], "dtype": "fp16"},
      "n": {"shape": [2, 1, 128], "dtype": "fp16"}, "y": {"shape": [2, 64, 128], "dtype": "fp16"},
      "z": {"shape": [2, 64, 128], "dtype": "fp16"}}, "inputs": ["c", "n"], "outputs": ["y", "z"],
      "ops": [{"op": "kv_write", "inputs": ["c", "n"], "outputs": ["y"]}, )" + second + "]}";
  };
  const std::string what = "tensor \"c\" is the cache op 0 (kv_write) updates in place: no other op may read or update it";
  std::string f = t.file("read.json", graph(R"({"op": "neg", "inputs": ["c"], "outputs": ["z"]})"));
  expect_bad("validate " + f, {f, "/ops/1/inputs/0", what});
  f = t.file("twice.json", graph(R"({"op": "kv_write", "inputs": ["c", "n"], "outputs": ["z"], "attrs": {"position": 1}})"));
  expect_bad("validate " + f, {f, "/ops/1/inputs/0", what});
  f = t.file("after.json", graph(R"({"op": "neg", "inputs": ["y"], "outputs": ["z"]})"));  // its output: fine
  Result r = dfsim("validate " + f);
  CHECK(r.code == 0);
}

// A file that says "version": 1 uses nothing version 2 added (a reader of version 1 would not
// know it): an op graph's compile.cards and ops between cards; a kernel graph's cards, the
// link unit, a task's cards or algorithm. The same text with "version": 2 is read.
TEST_CASE("bad input: version-2 features in a version-1 file", "[bad]") {
  TempDir t("v1");
  const std::string ops_cards = R"({"format": "dfsim.ops", "version": V, "name": "g",
    "tensors": {"x": {"shape": [64, 64], "dtype": "fp16"}, "y": {"shape": [64, 64], "dtype": "fp16"}},
    "inputs": ["x"], "outputs": ["y"], "ops": [{"op": "neg", "inputs": ["x"], "outputs": ["y"]}],
    "compile": {"cards": 2}})";
  const std::string ops_collective = R"({"format": "dfsim.ops", "version": V, "name": "g",
    "tensors": {"x": {"shape": [64, 64], "dtype": "fp16"}, "y": {"shape": [64, 64], "dtype": "fp16"}},
    "inputs": ["x"], "outputs": ["y"], "ops": [{"op": "all_reduce", "inputs": ["x"], "outputs": ["y"]}]})";
  const std::string kernels_link = R"({"format": "dfsim.kernels", "version": V, "name": "c", "cores": 1, "buffers": [
      {"name": "x", "space": "hbm", "bytes": 4096, "preloaded": true}, {"name": "y", "space": "hbm", "bytes": 4096}],
    "kernels": [{"name": "k", "tasks": [{"name": "c", "unit": "link", "op": "all_reduce", "core": 0,
      "reads": [{"buffer": "x", "bytes": 4096}], "writes": [{"buffer": "y", "bytes": 4096}]}]}]})";
  const std::string kernels_cards = R"({"format": "dfsim.kernels", "version": V, "name": "c", "cores": 1, "cards": 2,
    "buffers": [{"name": "x", "space": "lx", "bytes": 4096, "preloaded": true}, {"name": "y", "space": "lx", "bytes": 4096}],
    "kernels": [{"name": "k", "tasks": [{"name": "n", "unit": "sfp", "op": "neg", "core": 0, "elements": 2048,
      "reads": [{"buffer": "x", "bytes": 4096}], "writes": [{"buffer": "y", "bytes": 4096}]}]}]})";
  auto with = [](std::string text, char v) { text[text.find("V")] = v; return text; };
  struct Case {
    std::string name, text, path, what;
  };
  for (const Case& c : {Case{"ops_cards.json", ops_cards, "/compile/cards", "compile.cards needs \"version\": 2"},
                        Case{"ops_collective.json", ops_collective, "/ops/0/op", "\"all_reduce\" (an op between cards) needs"},
                        Case{"kernels_link.json", kernels_link, "/kernels/0/tasks/0/unit", "the link unit needs \"version\": 2"},
                        Case{"kernels_cards.json", kernels_cards, "/cards", "\"cards\" needs \"version\": 2"}}) {
    INFO(c.name);
    const std::string v1 = t.file(c.name, with(c.text, '1'));
    const std::string drawer = "validate --config configs/spyre-drawer.json ";  // 8 cards
    expect_bad(drawer + v1, {v1, c.path, c.what});
    const std::string v2 = t.file("v2_" + c.name, with(c.text, '2'));
    Result r = dfsim(drawer + v2);
    CHECK(r.exited);
    CHECK(r.code == 0);
  }
}

// ---------------------------------------------------------------- compiled kernel graphs

void expect_bad_kernels(const std::string& name, const std::vector<std::string>& expect) {
  std::vector<std::string> e = expect;
  e.insert(e.begin(), kBad + name);
  expect_bad("run -c " + kSmall + " -w " + kBad + name, e);
}

TEST_CASE("bad input: kernel graph unknown unit", "[bad]") {
  expect_bad_kernels("kernels_unknown_unit.json", {"/kernels/0/tasks/1/unit", "tpu"});
}
TEST_CASE("bad input: kernel graph op not allowed on the unit", "[bad]") {
  expect_bad_kernels("kernels_unknown_op.json", {"/kernels/0/tasks/1/op", "matmul"});
}
TEST_CASE("bad input: kernel graph unknown dtype", "[bad]") {
  expect_bad_kernels("kernels_unknown_dtype.json", {"/buffers/0/dtype", "bf17"});
}
TEST_CASE("bad input: kernel graph dangling buffer reference", "[bad]") {
  expect_bad_kernels("kernels_dangling_buffer.json", {"/kernels/0/tasks/1/reads/0/buffer", "did you mean \"xl\""});
}
TEST_CASE("bad input: kernel graph duplicate names", "[bad]") {
  expect_bad_kernels("kernels_duplicate_buffer.json", {"/buffers/4/name", "duplicate"});
  expect_bad_kernels("kernels_duplicate_task.json", {"/kernels/0/tasks/2/name", "duplicate"});
}
TEST_CASE("bad input: kernel graph access whose rows x bytes overflow 64 bits", "[bad]") {
  // 2^62 rows of 512 B (2^71 B) wrapped to 0 and was reported as "reads 0 bytes but writes 512".
  TempDir t("overflow");
  std::string f = t.file("k.json", R"({"format": "dfsim.kernels", "version": 1, "name": "ov", "cores": 1,
    "buffers": [{"name": "h", "space": "hbm", "bytes": 1024}, {"name": "l", "space": "lx", "bytes": 512}],
    "kernels": [{"name": "k", "tasks": [{"name": "t", "unit": "dma", "op": "load", "core": 0,
      "reads": [{"buffer": "h", "rows": 4611686018427387904, "stride": 4611686018427387904, "bytes": 512}],
      "writes": [{"buffer": "l", "bytes": 512}]}]}]})");
  expect_bad("validate " + f + " -c " + kSmall, {f, "/kernels/0/tasks/0/reads/0", "overflows 64 bits", "rows 4611686018427387904"});
}
TEST_CASE("bad input: kernel graph core indices out of range", "[bad]") {
  expect_bad_kernels("kernels_core_out_of_range.json", {"/kernels/0/tasks/1/cores"});
}
TEST_CASE("bad input: kernel graph LX core whose affine form wraps around 2^64", "[bad]") {
  // Checking the first and the last core suffices only without wrap-around (it exited 0).
  expect_bad_kernels("kernels_core_affine_wrap.json",
                     {"/kernels/0/tasks/1/writes/0/core", "on core 4 selects core 18446744073709551616"});
}
TEST_CASE("bad input: kernel graph more cores than the chip", "[bad]") {
  expect_bad_kernels("kernels_cores_above_chip.json", {"/cores", "64"});
}
TEST_CASE("bad input: kernel graph buffer larger than LX", "[bad]") {
  expect_bad_kernels("kernels_lx_too_big.json", {"/buffers/3/bytes", "1073741824"});
}
TEST_CASE("bad input: kernel graph zero-byte buffer", "[bad]") {
  expect_bad_kernels("kernels_zero_bytes.json", {"/buffers/1/bytes", "got 0"});
}
TEST_CASE("bad input: kernel graph access beyond its buffer", "[bad]") {
  expect_bad_kernels("kernels_beyond_buffer.json", {"/kernels/0/tasks/1/reads/0", "beyond"});
  expect_bad_kernels("kernels_rows_wrap.json", {"/kernels/0/tasks/1/reads/0", "overflows 64 bits"});
}
TEST_CASE("bad input: kernel graph negative offset", "[bad]") {
  expect_bad_kernels("kernels_negative_offset.json", {"/kernels/0/tasks/1/reads/0/offset", "negative"});
}
TEST_CASE("bad input: kernel graph integer overflow (2^70)", "[bad]") {
  expect_bad_kernels("kernels_overflow_int.json", {"/buffers/1/bytes"});
}
// `tasks` one-core loads, task k writing byte k and byte k + 65536 of one LX buffer: every
// pair's spans overlap, no byte is written twice.
std::string interleaved_writers(const TempDir& t, int tasks) {
  json g = {{"format", "dfsim.kernels"}, {"version", 1}, {"name", "interleaved"}, {"cores", 1}};
  g["buffers"] = json::array({{{"name", "x"}, {"space", "hbm"}, {"bytes", 2 * tasks}, {"dtype", "int8"}, {"preloaded", true}},
                              {{"name", "L"}, {"space", "lx"}, {"bytes", 65536 + tasks}, {"dtype", "int8"}}});
  json list = json::array();
  for (int k = 0; k < tasks; ++k)
    list.push_back({{"name", "t" + std::to_string(k)}, {"unit", "dma"}, {"op", "load"}, {"core", 0}, {"dtype", "int8"},
                    {"reads", json::array({{{"buffer", "x"}, {"bytes", 2}, {"offset", 2 * k}}})},
                    {"writes", json::array({{{"buffer", "L"}, {"bytes", 1}, {"rows", 2}, {"stride", 65536}, {"offset", k}}})}});
  g["kernels"] = json::array({{{"name", "k"}, {"tasks", list}}});
  return t.file("interleaved" + std::to_string(tasks) + ".json", g.dump());
}

TEST_CASE("bad input: kernel graph whose writers interleave too finely", "[bad]") {
  // Checking writers compares each write with every writer whose span overlaps its own: 16 000
  // such writers are 1.3 * 10^8 comparisons, past the index's budget of 10^8 + 256 per written
  // region (1.04 * 10^8 here), so the graph is refused in about 2 s; with twice as many it ran
  // for 17 s, and it grew with the square of the writers.
  TempDir t("interleave");
  std::string f = interleaved_writers(t, 16000);
  expect_bad("validate " + f + " -c " + kSmall, {f, "/kernels/0/tasks/", "/writes/0", "buffer \"L\" interleave too finely",
                                                  "16000 written regions"});
  // 2 000 such writers (2 * 10^6 comparisons) are checked as before.
  Result ok = dfsim("validate " + interleaved_writers(t, 2000) + " -c " + kSmall);
  CHECK(ok.code == 0);
}
TEST_CASE("bad input: kernel graph byte written twice", "[bad]") {
  expect_bad_kernels("kernels_written_twice.json", {"/kernels/0/tasks/1/writes/0", "twice"});
}
TEST_CASE("bad input: kernel graph writes a preloaded buffer", "[bad]") {
  expect_bad_kernels("kernels_preloaded_write.json", {"/kernels/0/tasks/1/writes/0", "preloaded"});
}
TEST_CASE("bad input: kernel graph dependency cycle", "[bad]") {
  expect_bad_kernels("kernels_cycle.json", {"/kernels/0/tasks/", "cycle", "task a", "task b"});
}
TEST_CASE("bad input: kernel graph LX takeover that can never be served", "[bad]") {
  // zl takes over yl; a reads both, so yl is freed only after the load into zl, which waits
  // for yl to be freed: refused before the run (not a deadlock at run time), by validate too.
  expect_bad_kernels("kernels_takeover_deadlock.json", {"/buffers/4/after", "\"zl\" takes over \"yl\"", "task \"a\""});
  expect_bad("validate " + kBad + "kernels_takeover_deadlock.json -c " + kSmall,
             {kBad + "kernels_takeover_deadlock.json", "/buffers/4/after"});
}
TEST_CASE("bad input: kernel graph empty", "[bad]") {
  expect_bad_kernels("kernels_empty.json", {"/kernels", "no tasks"});
}
TEST_CASE("bad input: kernel graph missing required field", "[bad]") {
  expect_bad_kernels("kernels_missing_field.json", {"/buffers/1/bytes", "missing"});
  expect_bad_kernels("kernels_sfp_no_elements.json", {"/kernels/0/tasks/1", "elements"});
}
TEST_CASE("bad input: kernel graph wrong type", "[bad]") {
  expect_bad_kernels("kernels_wrong_type.json", {"/cores", "integer"});
}
TEST_CASE("bad input: kernel graph unknown key with a hint", "[bad]") {
  expect_bad_kernels("kernels_unknown_key.json", {"/bufers", "did you mean \"buffers\""});
}

// ---------------------------------------------------------------- files and the CLI

TEST_CASE("bad input: missing input file", "[bad]") {
  expect_bad("run -c " + kSmall + " -w tests/data/bad/no_such.json", {"tests/data/bad/no_such.json", "no such file"});
  expect_bad("run -c tests/data/bad/no_such.json -w " + kOps, {"tests/data/bad/no_such.json", "no such file"});
  expect_bad("validate tests/data/bad/no_such.json", {"tests/data/bad/no_such.json", "no such file"});
}

TEST_CASE("bad input: a directory as input", "[bad]") {
  expect_bad("run -c " + kSmall + " -w tests/data", {"tests/data", "directory"});
  expect_bad("run -c configs -w " + kOps, {"configs", "directory"});
}

TEST_CASE("bad input: unreadable input file", "[bad]") {
  TempDir t("unreadable");
  std::string f = t.file("secret.json", std::string("{\"format\": \"dfsim.ops\"}"));
  fs::permissions(f, fs::perms::none);
  if (access(f.c_str(), R_OK) == 0) {
    // root reads any file: the permission cannot make it unreadable here.
    // Running as root: chmod 000 does not stop root from reading. Check instead a path that
    // goes through a file (ENOTDIR), the unreadable case root still hits.
    WARN("running as root: chmod 000 cannot make a file unreadable, checking a path through a file instead");
    expect_bad("run -c " + kSmall + " -w " + f + "/x.json", {f + "/x.json"});
    return;
  }
  expect_bad("run -c " + kSmall + " -w " + f, {f, "cannot be read"});
}

TEST_CASE("bad input: output directory that cannot be written", "[bad]") {
  expect_bad(run_ops("-o /proc/dfsim_out"), {"/proc/dfsim_out"});
  CHECK_FALSE(fs::exists("/proc/dfsim_out"));
  TempDir t("outfile");
  std::string f = t.file("plain_file", "x");
  expect_bad(run_ops("-o " + f + "/sub"), {f + "/sub"});   // parent is a file
  expect_bad(run_ops("-o " + f), {f, "not a directory"});  // the path is a file
  expect_bad("compile " + kOps + " -c " + kSmall + " -o " + f + "/k.json", {f + "/k.json"});
}

TEST_CASE("bad input: unknown CLI option and missing or malformed values", "[bad]") {
  expect_bad(run_ops("--frobnicate"), {"--frobnicate"});
  expect_bad("run -c " + kSmall, {"workload"});
  expect_bad(run_ops("--max-events -1"), {"--max-events"});
  expect_bad(run_ops("--timeout abc"), {"--timeout"});
  expect_bad(run_ops("--max-sim-time nan"), {"--max-sim-time"});
  expect_bad("info configs/small.json", {"unexpected argument", "usage: dfsim info"});
  expect_bad("calibrate configs/small.json", {"unexpected argument", "usage: dfsim calibrate"});
  expect_bad("info --params -c tests/data/bad/no_such.json", {"tests/data/bad/no_such.json", "no such file"});
  expect_bad(run_ops("--split d0=2,d0=1"), {"--split", "d0 given twice"});
  expect_bad(run_ops("--tiles d0=2,d0=4"), {"--tiles", "d0 given twice"});
  expect_bad("frobnicate", {"frobnicate"});
}

TEST_CASE("bad input: compile and validate report like run", "[bad]") {
  TempDir t("compile");
  std::string k = (t.path / "k.json").string();
  expect_bad("compile " + kBad + "ops_cycle.json -c " + kSmall + " -o " + k, {kBad + "ops_cycle.json", "cycle"});
  CHECK_FALSE(fs::exists(k));
  CHECK_FALSE(fs::exists(k + ".tmp"));
  expect_bad("compile " + kKernels + " -c " + kSmall + " -o " + k, {kKernels, "/format"});
  expect_bad("validate " + kBad + "kernels_cycle.json -c " + kSmall, {kBad + "kernels_cycle.json", "cycle"});
  expect_bad("validate " + kBad + "config_unknown_key.json", {kBad + "config_unknown_key.json", "/core/lxx"});
  // validate refuses what run refuses for size, and takes the same --max-tasks to allow it.
  expect_bad("validate " + kOps + " -c " + kSmall + " --max-tasks 3", {kOps, "more than --max-tasks 3"});
  CHECK(dfsim("validate " + kOps + " -c " + kSmall + " --max-tasks 100000").code == 0);
}

TEST_CASE("bad input: coarse tiles asking for more task instances than --max-tasks are refused before compiling", "[bad]") {
  // Six unfused negations of [1048576, 64], each asked for 1 048 576 coarse-tile iterations: an
  // 800-byte file that compiled for 35 s and 9 GB before the task count was checked. Each
  // iteration of an op is at least one task instance: 2 x 1 048 576 > 2 000 000 at the second.
  TempDir t("tiles");
  nlohmann::json g = {{"format", "dfsim.ops"}, {"version", 1}, {"name", "tiles"}, {"inputs", {"t0"}}, {"outputs", {"t6"}},
                      {"compile", {{"cores", 32}, {"fuse", false}, {"tiles", {{"d0", 1048576}}}}}};
  for (int i = 0; i <= 6; ++i) g["tensors"]["t" + std::to_string(i)] = {{"shape", {1048576, 64}}, {"dtype", "fp16"}};
  for (int i = 0; i < 6; ++i)
    g["ops"].push_back({{"op", "neg"}, {"inputs", {"t" + std::to_string(i)}}, {"outputs", {"t" + std::to_string(i + 1)}}});
  const fs::path f = t.path / "tiles.json";
  std::ofstream(f) << g.dump();
  expect_bad("validate " + f.string(), {f.string(), "/ops/1", "1048576 coarse-tile iterations", "at least 2097152 task instances",
                                        "more than --max-tasks 2000000"});
}

TEST_CASE("bad input: compile -o naming its own input", "[bad]") {
  // It replaced the op graph with the kernel graph compiled from it.
  TempDir t("compile_self");
  const std::string f = t.file("g.json", slurp_text(kOps));
  expect_bad("compile " + f + " -c " + kSmall + " -o " + f,
             {"dfsim compile: -o " + f + " would overwrite the input op graph " + f});
  CHECK(slurp_text(f) == slurp_text(kOps));
}

TEST_CASE("bad input: an output that would replace an input of the command", "[bad]") {
  // Each of these exited 0 (or 1 after the damage) with the input replaced or deleted
  // (eighth hostile-input pass); each is refused before any work, every input intact.
  TempDir t("overwrite");
  const std::string cfg = config_with(t, "\"description\": \"a copy\"");
  const std::string cfg_text = slurp_text(cfg);
  const std::string ops = t.file("g.json", slurp_text(kOps));
  expect_bad("compile " + ops + " -c " + cfg + " -o " + cfg, {"-o " + cfg + " would overwrite --config " + cfg});
  CHECK(slurp_text(cfg) == cfg_text);
  // gen: the model file
  const std::string model = t.file("m.json", slurp_text("workloads/models/llama-3.1-8b.json"));
  expect_bad("gen " + model + " --phase decode --context 16 -o " + model, {"-o " + model, "the model file " + model});
  CHECK(slurp_text(model) == slurp_text("workloads/models/llama-3.1-8b.json"));
  // run: a workload named like an output of the run's directory
  fs::create_directories(t.path / "D");
  const std::string w = t.file("D/summary.json", slurp_text(kOps));
  expect_bad("run -c " + kSmall + " -w " + w + " -o " + (t.path / "D").string(),
             {"--out " + (t.path / "D").string() + " would overwrite --workload " + w, "it writes summary.json there"});
  CHECK(slurp_text(w) == slurp_text(kOps));
  // accuracy: the records inside the runs/ directory --keep-runs replaces, or named accuracy.csv
  fs::create_directories(t.path / "E/runs");
  const std::string rec = t.file("E/runs/r.csv", slurp_text("workloads/device-records/spyre-device-records.csv"));
  expect_bad("accuracy --records " + rec + " -o " + (t.path / "E").string() + " --keep-runs",
             {"would remove --records " + rec, "it replaces " + (t.path / "E").string() + "/runs/"});
  CHECK(fs::exists(rec));
  const std::string rec2 = t.file("E/accuracy.csv", slurp_text(rec));
  expect_bad("accuracy --records " + rec2 + " -o " + (t.path / "E").string(), {"would overwrite --records " + rec2});
  // diff --junit onto a summary it compares; regress --junit onto its suite
  const std::string sum = t.file("s.json", R"({"format": "dfsim.summary", "sim_time_ns": 1})");
  expect_bad("diff " + sum + " " + sum + " --junit " + sum, {"--junit " + sum + " would overwrite A " + sum});
  CHECK(slurp_text(sum) == R"({"format": "dfsim.summary", "sim_time_ns": 1})");
  const std::string suite = t.file("x.suite.json", R"({"format": "dfsim.suite", "version": 1, "name": "x",
    "cases": [{"name": "a", "config": ")" + fs::absolute(kSmall).string() + R"(", "workload": ")" +
                                                  fs::absolute(kOps).string() + R"(", "expect": {}}]})");
  const std::string before = slurp_text(suite);
  expect_bad("regress " + suite + " --junit " + suite, {"--junit " + suite + " would overwrite the suite " + suite});
  expect_bad("regress " + suite + " --junit " + fs::absolute(kOps).string(), {"would overwrite the workload of case a"});
  CHECK(slurp_text(suite) == before);
}

TEST_CASE("bad input: a file name too long for the file system is refused before the work", "[bad]") {
  // compile, gen and --junit failed only when writing (exit 1); diff of such a path was an
  // internal error (a filesystem exception).
  TempDir t("longname");
  const std::string longname = (t.path / (std::string(300, 'z') + ".json")).string();
  expect_bad("compile " + kOps + " -c " + kSmall + " -o " + longname, {longname, "file name too long"});
  expect_bad("diff " + longname + " " + kOps, {"cannot be read", "File name too long"});
}

TEST_CASE("bad input: tensor names like the compiler's own names compile to a valid kernel graph", "[bad]") {
  // A tensor named "neg_b/g0/t0/a" (what kernel neg_b names its first LX tile) gave two buffers
  // one name: compile exited 0 writing a graph its loader refused. Two kernels of one name
  // (a linear "epilogue_X" beside a fused linear+add "X") ran, and diff compared one of them.
  TempDir t("names");
  const std::string g = t.file("g.json", R"({"format": "dfsim.ops", "version": 1, "name": "c3",
    "tensors": {"a": {"shape": [64, 128], "dtype": "fp16"}, "b": {"shape": [64, 128], "dtype": "fp16"},
                "neg_b/g0/t0/a": {"shape": [64, 128], "dtype": "fp16"}},
    "inputs": ["a"], "outputs": ["b", "neg_b/g0/t0/a"],
    "ops": [{"op": "neg", "inputs": ["a"], "outputs": ["b"]}, {"op": "exp", "inputs": ["a"], "outputs": ["neg_b/g0/t0/a"]}],
    "compile": {"cores": 1}})");
  const std::string k = (t.path / "k.json").string();
  Result c = dfsim("compile " + g + " -c " + kSmall + " -o " + k);
  REQUIRE(c.code == 0);
  Result v = dfsim("validate " + k + " -c " + kSmall);
  INFO(v.err);
  CHECK(v.code == 0);
  const json kg = read_json(k);
  std::set<std::string> kernels, buffers;
  for (const auto& x : kg["kernels"]) CHECK(kernels.insert(x["name"].get<std::string>()).second);
  for (const auto& x : kg["buffers"]) CHECK(buffers.insert(x["name"].get<std::string>()).second);
  CHECK(kernels.count("neg_b~2"));  // the kernel whose names would have clashed takes a suffix
}

TEST_CASE("bad input: --set of a setting that cannot change the run", "[bad]") {
  // Each ran with exit 0 and the same times, the summary's config_resolved showing the value.
  TempDir t("inert");
  const std::string k = (t.path / "k.json").string();
  REQUIRE(dfsim("compile " + kOps + " -c " + kSmall + " -o " + k).code == 0);
  expect_bad("run -c " + kSmall + " -w " + k + " --set memory.hbm_layout=stick",
             {"--set: memory.hbm_layout: a compile-time setting", "(" + k + ") already fixes"});
  expect_bad("run -c " + kSmall + " -w " + k + " --set ring.multicast_max_cores=1", {"--set: ring.multicast_max_cores"});
  expect_bad(run_ops("--set memory.latency_cycles=100000"),
             {"--set: memory.latency_cycles: read only by memory.impl simple", "memory.impl is lpddr5"});
  expect_bad(run_ops("--set memory.impl=simple --set memory.lpddr5.trcd=100"),
             {"--set: memory.lpddr5.trcd: read only by memory.impl lpddr5 or bandwidth"});
  expect_bad(run_ops("--set memory.impl=bandwidth --set sim.memory_lookahead_ns=100"), {"--set: sim.memory_lookahead_ns"});
  expect_bad(run_ops("--set sim.trace=false --trace full"), {"--trace full asks for a trace, but sim.trace is false"});
  expect_bad(run_ops("--trace off --trace-format json.gz"), {"--trace-format json.gz needs a trace"});
  // (allowed: the simple model's own parameter under it)
  CHECK(dfsim(run_ops("-q --set memory.impl=simple --set memory.latency_cycles=100 -o " + (t.path / "ok").string())).code == 0);
}

TEST_CASE("bad input: an op whose compilation passes --max-tasks stops there, exit 2 at the op", "[bad]") {
  // The check before compiling counts one instance per coarse-tile iteration; a matmul's parts
  // of K are kernels of many tasks each, so a 400-byte graph asking for 1 048 576 of them ran 38 s
  // and ran out of host memory. The compiler now stops at the limit.
  TempDir t("ktiles");
  const std::string f = t.file("mm.json", R"({"format": "dfsim.ops", "version": 1, "name": "mm",
    "tensors": {"a": {"shape": [64, 1048576], "dtype": "fp16"}, "b": {"shape": [1048576, 64], "dtype": "fp16"},
                "c": {"shape": [64, 64], "dtype": "fp16"}},
    "inputs": ["a", "b"], "outputs": ["c"], "compile": {"cores": 32},
    "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"], "compile": {"tiles": {"K": 1048576}}}]})");
  expect_bad("validate " + f, {f, "/ops/0", "matmul: compiling it takes the graph's task instances to more than --max-tasks 2000000"});
  // An elementwise op's iteration is a load, the op and a store: 3 x 131 072 instances pass a
  // limit of 200 000 that the count before compiling (131 072) does not.
  const std::string n = t.file("neg.json", R"({"format": "dfsim.ops", "version": 1, "name": "neg",
    "tensors": {"x": {"shape": [131072, 64], "dtype": "fp16"}, "y": {"shape": [131072, 64], "dtype": "fp16"}},
    "inputs": ["x"], "outputs": ["y"], "compile": {"cores": 32},
    "ops": [{"op": "neg", "inputs": ["x"], "outputs": ["y"], "compile": {"tiles": {"d0": 131072}}}]})");
  expect_bad("run -q --trace off -w " + n + " --max-tasks 200000 -o " + (t.path / "out").string(),
             {n, "/ops/0", "neg: compiling it takes the graph's task instances to more than --max-tasks 200000"});
  CHECK(!fs::exists(t.path / "out"));
}

// ---------------------------------------------------------------- runs that cannot finish

TEST_CASE("stuck run: LX reservations that wait on each other exit 1 naming the blocked tasks", "[bad]") {
  TempDir t("lx_deadlock");
  Result r = dfsim("run -c " + kSmall + " -w " + kBad + "deadlock_lx.kernels.json -o " + t.str());
  INFO(r.err);
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("deadlock"));
  CHECK_THAT(r.err, Contains("\"load_b\""));
  CHECK_THAT(r.err, Contains("of LX on core 0"));
  CHECK_THAT(r.err, Contains("\"use\""));
  CHECK_THAT(r.err, Contains("outputs (partial)"));
  json s = read_json(t.path / "summary.json");
  CHECK(s["status"] == "deadlock");
  CHECK(s["partial"] == true);
  CHECK(s["blocked"].size() == 3);
  json tr;
  REQUIRE_NOTHROW(tr = read_json(t.path / "trace.json"));
  CHECK(tr["traceEvents"].is_array());
}

TEST_CASE("stuck run: a run stopped before its kernel's launch says the tasks wait for it", "[bad]") {
  // card.kernel_launch_ns 1.5 us on the spyre presets: at 1 us every task of the add is held.
  TempDir t("before_launch");
  Result r = dfsim("run -w workloads/add_2048x1024.json --max-sim-time 1000 -o " + t.str());
  INFO(r.err);
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("waits for its kernel's launch, done at 1500.000000 ns"));
  json s = read_json(t.path / "summary.json");
  CHECK(s["status"] == "limit");
  CHECK(s["sim_time_ns"].get<double>() <= 1000);
}

TEST_CASE("stuck run: --max-events stops the run with exit 1 and the reason", "[bad]") {
  TempDir t("max_events");
  Result r = dfsim("run -c " + kSmall + " -w workloads/add_2048x1024.json --cores 2 --max-events 10 -o " + t.str());
  INFO(r.err);
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("10"));
  CHECK_THAT(r.err, Contains("outputs (partial)"));
  json s = read_json(t.path / "summary.json");
  CHECK(s["status"] == "limit");
  CHECK(s["partial"] == true);
  REQUIRE_NOTHROW(read_json(t.path / "trace.json"));
}

TEST_CASE("stuck run: a partial run's roofline counts the work that completed", "[bad]") {
  // matmul_4096 stopped at 10 us: the roofline took the whole graph's 160 MiB and 4096^3 MACs
  // over 10 us, "fraction_of_roofline": 139.8, and 6871947.7 MAC/ns "achieved" of a 49152
  // peak. Both bounds and the achieved rate count the instances that completed now; the
  // graph's own figures stay.
  TempDir t("partial_roofline");
  Result r = dfsim("run -w workloads/matmul_4096.json --max-sim-time 10000 --trace off -o " + t.str());
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  json s = read_json(t.path / "summary.json");
  CHECK(s["status"] == "limit");
  const double time = s["sim_time_ns"].get<double>();
  CHECK(time <= 10000);
  CHECK(s["roofline"]["fraction_of_roofline"].get<double>() <= 1.0);
  CHECK(s["roofline"]["memory_bound_ns"].get<double>() <= time);
  CHECK(s["compute"]["achieved_macs_per_ns"].get<double>() <= s["compute"]["peak_macs_per_ns"].get<double>());
  CHECK(s["offchip"]["graph_bytes"] == 160u << 20);  // A and B 128 MiB read as tiled, C 32 MiB written
  CHECK(s["compute"]["macs"] == 4096ull * 4096 * 4096);
}

// ---------------------------------------------------------------- fuzzer findings

TEST_CASE("bad input: inputs the fuzzers crashed on are handled cleanly", "[bad][fuzz]") {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator("tests/data/fuzz-regressions")) {
    if (!e.is_regular_file() || e.path().filename().string()[0] == '.') continue;
    std::string target = e.path().parent_path().filename().string();
    if (target != "config" && target != "ops" && target != "kernels") continue;
    std::string f = e.path().string();
    std::string args = target == "config" ? "run -c " + f + " -w " + kOps : "run -c " + kSmall + " -w " + f;
    ++n;
    TempDir t("fuzzreg");
    INFO(args);
    Result r = dfsim(args + " -q -o " + (t.path / "o").string());
    INFO(r.err);
    REQUIRE(r.exited);
    CHECK((r.code == 0 || r.code == 2));
    if (r.code == 2) CHECK(lines(r.err).size() == 1);
    CHECK_THAT(r.err, !Contains("internal error"));
  }
  WARN(n << " fuzz regression inputs replayed");
}

// dfsim serve: bad request files, step tables and impossible configurations (issue 16).
namespace {
const std::string kServe = "serve --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv ";
}

TEST_CASE("bad input: serve request files", "[bad][serve]") {
  TempDir t("serve_req");
  expect_bad(kServe + "--requests " + t.file("a.jsonl", "{\"arrival_ms\": 0, \"prompt_tokens\": 10}\n"),
             {"a.jsonl", "line 1", "output_tokens"});
  expect_bad(kServe + "--requests " + t.file("b.jsonl", "{\"arrival_ms\": 0, \"prompt_tokens\": 10, \"output_tokens\": 5}\n{oops\n"),
             {"b.jsonl", "line 2"});
  expect_bad(kServe + "--requests " + t.file("c.jsonl", "{\"arrival_ms\": -1, \"prompt_tokens\": 10, \"output_tokens\": 5}\n"),
             {"c.jsonl", "line 1/arrival_ms"});
  expect_bad(kServe + "--requests " + t.file("d.csv", "arrival,prompt_tokens,output_tokens\n0,1,1\n"),
             {"d.csv", "line 1", "arrival_ms"});
  expect_bad(kServe + "--requests " + t.file("e.csv", "arrival_ms,prompt_tokens,output_tokens\n0,10\n"),
             {"e.csv", "line 2", "expected 3 fields"});
  expect_bad(kServe + "--requests " + t.file("f.csv", "arrival_ms,prompt_tokens,output_tokens\n0,3000,100\n"),
             {"f.csv", "request 0", "--max-model-len 3072"});
  expect_bad(kServe + "--requests " + t.file("g.jsonl", ""), {"g.jsonl", "no requests"});
  expect_bad(kServe + "--requests " + t.file("i.csv", "id,arrival_ms,prompt_tokens,output_tokens\n3,0,10,5\n3,1,10,5\n"),
             {"i.csv", "request id 3 appears twice"});
  expect_bad(kServe + "--requests " + t.str() + "/missing.jsonl", {"missing.jsonl", "no such file"});
  // a CSV trace not named .csv (or piped through /dev/stdin) was "malformed JSON", no more said
  expect_bad(kServe + "--requests " + t.file("k.txt", "arrival_ms,prompt_tokens,output_tokens\n0,10,5\n"),
             {"k.txt: line 1", "whose name does not end in .csv is read as JSON lines"});
  expect_bad(kServe + "--rate 1 --prompt-len hist:" + t.file("h.csv", "100,-1\n"), {"h.csv", "line 1", "weight"});
  // A rate given twice wrote into one DIR/rate-1/ twice (exit 1, half a sweep); a burstiness
  // with Poisson arrivals or a trace was ignored.
  expect_bad(kServe + "--rate 1,1.0 -n 5", {"--rate", "given twice"});
  expect_bad(kServe + "--rate 1, -n 5", {"--rate", "got \"1,\""});  // a trailing comma was dropped silently
  expect_bad(kServe + "--rate 1e300", {"--rate", "(0, 1e6]"});
  expect_bad(kServe + "--rate 1 --arrival poisson --burstiness 0.2", {"--burstiness 0.2 needs --arrival gamma"});
  // a shape of 1e-300 made every gap 0: all requests at once, the rate ignored, exit 0
  expect_bad(kServe + "--rate 1 --burstiness 1e-300 -n 5", {"--burstiness must be in [0.001, 1e6]"});
  expect_bad(kServe + "--requests " + t.file("j.csv", "arrival_ms,prompt_tokens,output_tokens\n0,10,5\n") + " --burstiness 0.5",
             {"--burstiness", "--requests trace"});
}

TEST_CASE("bad input: serve step tables", "[bad][serve]") {
  TempDir t("serve_table");
  const std::string head = "phase,batch,kv_tokens,query_tokens,step_ms\n";
  std::string serve = "serve --model llama-3.1-8b --rate 1 -n 5 --step-table ";
  expect_bad(serve + t.file("a.csv", head + "decode,4,512,1,0\n"), {"a.csv", "line 2/step_ms"});
  expect_bad(serve + t.file("b.csv", head + "encode,4,512,1,1\n"), {"b.csv", "line 2/phase"});
  expect_bad(serve + t.file("c.csv", "phase,step_ms\n"), {"c.csv", "line 1", "column line"});
  expect_bad(serve + t.file("d.csv", head + "decode,4,512,1,1\ndecode,4,512,1,2\n"), {"d.csv", "line 3", "second row"});
  // A shape the run needs and the table lacks: named, no interpolation.
  expect_bad(serve + t.file("e.csv", head + "decode,4,512,1,1\n"), {"e.csv", "no row for prefill batch=1 kv_tokens=512"});
  expect_bad(kServe + "--rate 1 --max-num-seqs 32", {"llama-3.1-8b_spyre_steps.csv", "no row for", "batch=32"});
  expect_bad(kServe + "--rate 1 --tp 2 --config configs/spyre-drawer.json", {"llama-3.1-8b_spyre_steps.csv", "tp 1, not 2"});
  // --tp beyond the config's cards, with a table too: its KV blocks are the memory of tp cards.
  expect_bad(kServe + "--rate 1 --tp 2", {"configs/spyre.json", "/system/cards", "--tp 2 runs each step on 2 cards, the config has 1"});
  // Options that shape what the run does not use are refused, not ignored.
  expect_bad(kServe + "--rate 1 --jobs 3", {"--jobs is for simulated step times; --step-table gives them"});
  expect_bad(kServe + "--rate 1 --full-steps", {"--full-steps is for simulated step times"});
  expect_bad(kServe + "--rate 1 --query-quantum 1000", {"--query-quantum must be in [1, 512]"});
  expect_bad(kServe + "--rate 1 --prompt-len 0x40", {"--prompt-len: expected 200, uniform:100,300", "got \"0x40\""});
  expect_bad(kServe + "--rate 1 --prompt-len uniform:1.5,3", {"uniform:LO,HI needs integers"});
  {
    TempDir r("requests");
    const std::string trace = r.file("r.csv", "arrival_ms,prompt_tokens,output_tokens\n0,64,4\n");
    expect_bad(kServe + "--requests " + trace + " --num-requests 5", {"--num-requests shapes generated requests (--rate)"});
    const std::string extra = r.file("x.csv", "arrival_ms,prompt_tokens,output_tokens,extra\n0,64,4,1\n");
    expect_bad(kServe + "--requests " + extra, {extra, "line 1", "header: unknown column \"extra\""});
  }
  // Shapes no step has (they were accepted, and never used).
  expect_bad(serve + t.file("f.csv", head + "decode,4,512,7,1\n"), {"f.csv", "line 2/query_tokens", "1 token per sequence, got 7"});
  expect_bad(serve + t.file("g.csv", head + "prefill,2,512,512,1\n"), {"g.csv", "line 2/batch", "one sequence (1), got 2"});
  expect_bad(serve + t.file("h.csv", head + "prefill,1,256,512,1\n"), {"h.csv", "line 2/query_tokens", "more than the 256 of kv_tokens"});
  expect_bad(serve + t.file("i.csv", head + "decode,4,512,1,1\ndecode,4,63,1,1\n"),
             {"i.csv", "line 3/kv_tokens", "63 is not a whole number of 64-token KV blocks"});
  expect_bad(serve + t.file("k.csv", head + "decode,4,512,1,0x10\n"), {"k.csv", "line 2/step_ms", "got \"0x10\""});  // was 16 ms
  expect_bad(serve + t.file("j.csv", head + "decode,4,64,1,1\n") + " --block-size 128",
             {"j.csv", "line 2/kv_tokens", "64 is not a whole number of 128-token KV blocks"});
}

TEST_CASE("bad input: serve impossible configurations", "[bad][serve]") {
  // 8 GiB cards cannot hold 16 GB of weights.
  expect_bad(kServe + "--rate 1 --set memory.capacity_bytes=8589934592", {"--model llama-3.1-8b", "do not fit"});
  expect_bad(kServe + "--rate 1 --num-blocks 10", {"--num-blocks 10", "--max-model-len 3072"});
  expect_bad(kServe + "--rate 1 --max-model-len 200000", {"--max-model-len 200000", "max_position_embeddings"});
  expect_bad(kServe + "--rate 1 --max-model-len 131072", {"--volumetric-limit"});
  expect_bad(kServe + "--rate 1 --max-num-batched-tokens 32", {"--max-num-batched-tokens 32"});
  expect_bad(kServe + "--rate 1 --batch-buckets 4,8", {"--batch-buckets"});
  expect_bad(kServe + "--rate 1 --requests x.jsonl", {"either --requests FILE or --rate R"});
  expect_bad(kServe + "--rate 0", {"--rate"});
  expect_bad(kServe + "--rate 1 --prompt-len normal:2000,2000", {"--prompt-len", "--max-model-len 3072"});
  expect_bad(kServe + "--rate 1 --prompt-len zipf:1,2", {"--prompt-len", "zipf"});
  expect_bad("serve --model nosuchmodel --rate 1", {"nosuchmodel", "unknown model"});
  // Simulated step times on several cards need a config with that many cards.
  TempDir t("serve_cache");
  expect_bad("serve --model llama-3.1-8b --rate 1 -n 3 --tp 2 --step-cache " + t.str() + "/c",
             {"/system/cards", "--tp 2", "configs/spyre-drawer.json"});
}

// Every reader took the whole of its input before looking at it: /dev/zero or /dev/urandom as
// a config, graph or request trace grew the process by gigabytes until killed. Binary data
// is refused at its first NUL byte, anything beyond 1 GiB from its size (a sparse file here).
TEST_CASE("bad input: binary data, endless devices and files beyond 1 GiB", "[bad]") {
  TempDir t("binary");
  auto t0 = std::chrono::steady_clock::now();
  expect_bad("run -c " + kSmall + " -w /dev/zero", {"/dev/zero: 1:1: binary data (a NUL byte), expected a JSON file"});
  expect_bad("run -c /dev/urandom -w " + kOps, {"/dev/urandom: ", "binary data (a NUL byte)"});
  expect_bad(kServe + "--requests /dev/zero", {"/dev/zero: 1:1: binary data", "request trace"});
  std::string f = t.file("nul.json", "{\"format\": \"dfsim.ops\",\n  \"name\": \"a" + std::string(1, '\0') + "b\"}");
  expect_bad("run -c " + kSmall + " -w " + f, {f + ": 2:13: binary data (a NUL byte)"});
  std::string big = t.file("big.json", "");
  fs::resize_file(big, (std::uintmax_t{1} << 30) + 1);  // sparse: no disk space used
  expect_bad("run -c " + kSmall + " -w " + big, {big + ": larger than 1 GiB, the limit of an input file"});
  expect_bad(kServe + "--rate 1 --prompt-len hist:" + big, {big, "larger than 1 GiB"});
  // Text that cannot begin JSON is refused at its first character: a pipe of `yes` was read
  // to the 1 GiB limit first (7 s and a gigabyte of memory), a file in full.
  std::string txt = t.file("txt.json", "\n  yes");
  expect_bad("validate " + txt, {txt + ": 2:3: malformed JSON: 'y' cannot begin a JSON value, expected a JSON file"});
  std::string bom = t.file("bom.json", "\xEF\xBB\xBF#x");
  expect_bad("run -c " + kSmall + " -w " + bom, {bom + ": 1:4: malformed JSON: '#' cannot begin a JSON value"});
  const std::string err = (t.path / "pipe.err").string();
  const int status = std::system(("yes | " + std::string(DFSIM_BINARY) + " run -c " + kSmall + " -w /dev/stdin -o " +
                                  (t.path / "pipe").string() + " 2>" + err).c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  std::ifstream ef(err);
  std::string line;
  std::getline(ef, line);
  CHECK(line == "/dev/stdin: 1:1: malformed JSON: 'y' cannot begin a JSON value, expected a JSON file");
  CHECK_FALSE(fs::exists(t.path / "pipe" / "summary.json"));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s < 60);  // each is refused after one read; before, each ran until killed
}

// The CSV readers (request traces, step tables, histograms, device records) said "empty file"
// or "no requests" for a directory; they name it as the JSON readers do.
TEST_CASE("bad input: a directory as a CSV input", "[bad][serve]") {
  expect_bad(kServe + "--requests tests/data", {"tests/data: is a directory, expected a request trace"});
  expect_bad("serve --model llama-3.1-8b --rate 1 --step-table tests/data", {"tests/data: is a directory, expected a step table"});
  expect_bad(kServe + "--rate 1 --output-len hist:tests/data", {"tests/data: is a directory, expected a length histogram"});
  expect_bad("accuracy -r tests/data -o " + TempDir("acc").str() + "/o", {"tests/data: is a directory, expected a CSV of device records"});
}

// A note printed while loading ("/compile/cores asks for 32 cores ... compiling for 2") came
// before an error found later, so exit 2 printed two lines. Notes wait for the input to pass.
TEST_CASE("bad input: a note from loading never precedes the one line", "[bad]") {
  const std::string w = " -c " + kSmall + " -w workloads/add_2048x1024.json";  // compile.cores 32 on a 2-core chip
  expect_bad("run" + w + " --trace-flows nokernel", {"--trace-flows", "nokernel"});
  expect_bad("run" + w + " --set memory.capacity_bytes=4096", {"workloads/add_2048x1024.json", "/tensors/a/shape", "memory.capacity_bytes"});
  expect_bad("compile workloads/add_2048x1024.json -c " + kSmall + " --set memory.capacity_bytes=4096 -o " +
                 TempDir("note").str() + "/k.json",
             {"workloads/add_2048x1024.json", "/tensors/a/shape"});
  // A run that goes ahead still prints it.
  TempDir t("note_ok");
  Result r = dfsim("run -q" + w + " -o " + t.str() + "/o");
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Contains("note: workloads/add_2048x1024.json: /compile/cores asks for 32 cores"));
}

// An empty option value (`-c "$CONFIG"` with CONFIG unset) silently meant the default:
// configs/spyre.json, or out/<workload>-<config>/. It is a usage error now, on every command.
TEST_CASE("bad input: an empty option value or argument", "[bad]") {
  expect_bad("run -w " + kOps + " -c ''", {"dfsim run: --config: expected a value, got an empty string"});
  expect_bad("run -c " + kSmall + " -w " + kOps + " -o ''", {"dfsim run: --out: expected a value, got an empty string"});
  expect_bad("compile " + kOps + " -o ''", {"dfsim compile: --output: expected a value"});
  expect_bad("compile '' -o x.json", {"dfsim compile: an argument is an empty string"});
  expect_bad("info --set ''", {"dfsim info: --set: expected a value"});
}

// dfsim validate read a sweep or a model file as a config ("/axes: unknown key") and any
// other "format" as one too; each format is checked by its own reader now.
TEST_CASE("bad input: validate knows every format, and says so of an unknown one", "[bad]") {
  TempDir t("validate_formats");
  Result r = dfsim("validate workloads/sweeps/lx_by_cores.json workloads/models/llama-3.1-8b.json");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  std::string f = t.file("x.json", "{\"format\": \"dfsim.nope\", \"version\": 1}");
  expect_bad("validate " + f, {f + ": /format: unknown format \"dfsim.nope\", expected dfsim.ops"});
  std::string s = t.file("s.json", "{\"format\": \"dfsim.sweep\", \"version\": 1, \"name\": \"s\", \"base\": {\"workload\": "
                                   "\"workloads/add_2048x1024.json\"}, \"axes\": {\"cores\": [1, 0]}, \"metrics\": {\"t\": \"sim_time_ns\"}}");
  expect_bad("validate " + s, {s + ": /axes/cores/1: "});
}

// A device record's params value that is not a number (WD_M=abc, TO_MID beyond 64 bits, a
// layout of letters) escaped as "internal error: stoll"; it names the file, line and key.
TEST_CASE("bad input: accuracy device records with malformed params", "[bad][accuracy]") {
  TempDir t("records");
  const std::string head =
      "id,op,cores,rows,cols,N,B,M,K,tiles,lx_planning,params,hbm_bytes,lx_bytes,matmul_macs,matmul_m_split,"
      "matmul_n_split,measured_kernel_us,measured_cv_pct,analytical_model_us\n";
  auto records = [&](const std::string& name, const std::string& row) { return t.file(name, head + row + "\n"); };
  std::string a = records("a.csv", "r1,mmwd,8,4096,2048,2048,,4096,2048,0,1,BENCH_OP=mmwd WD_K=1 WD_M=abc WD_N=4,"
                                   "41943040,0,17179869184,2,4,2192.2,0.26,1883.7");
  expect_bad("accuracy -r " + a + " -o " + t.str() + "/o", {a + ": line 2, column params: WD_M=abc: expected an integer"});
  std::string b = records("b.csv", "r2,transpose_outer,32,128,1024,,,,,0,1,TO_MID=99999999999999999999,1,0,,,,10.0,1.0,9.0");
  expect_bad("accuracy -r " + b + " -o " + t.str() + "/o", {b + ": line 2, column params: TO_MID=99999999999999999999"});
  std::string c = records("c.csv", "r3,bmm_layout,32,1024,1024,1024,2,,,0,1,\"BENCH_B=2 WD_LAYOUT_A=x,y\",1,0,,,,10.0,1.0,9.0");
  expect_bad("accuracy -r " + c + " -o " + t.str() + "/o", {c + ": line 2, column params: WD_LAYOUT_A=x,y: expected dims"});
  // A column and its parameter that disagree: the record ran the column's shape and said nothing.
  std::string d = records("d.csv", "r4,add,32,2048,1024,,,,,0,1,BENCH_ROWS=1024 BENCH_COLS=1024 SENCORES=32,1,0,,,,10.0,1.0,9.0");
  expect_bad("accuracy -r " + d + " -o " + t.str() + "/o",
             {d + ": line 2, column rows: rows=2048 but params has BENCH_ROWS=1024: a record's column and its parameter must agree"});
  std::string e = records("e.csv", "r5,add,32,2048,1024,,,,,0,0,BENCH_ROWS=2048 LX_PLANNING=1,1,0,,,,10.0,1.0,9.0");
  expect_bad("accuracy -r " + e + " -o " + t.str() + "/o", {e + ": line 2, column lx_planning: lx_planning=0 but params has LX_PLANNING=1"});
  CHECK_FALSE(fs::exists(t.path / "o"));
}

// dfsim diff of a hand-edited summary.json: a kernel named by a number, or "format": 5, was
// "internal error: [json.exception.type_error.302]".
TEST_CASE("bad input: diff of a summary.json with wrong types", "[bad]") {
  TempDir t("diff");
  std::string a = t.file("a.json", "{\"format\": \"dfsim.summary\", \"sim_time_ns\": 1, \"kernels\": [{\"name\": \"k\"}]}");
  std::string b = t.file("b.json", "{\"format\": \"dfsim.summary\", \"sim_time_ns\": 1, \"kernels\": [{\"name\": 5}]}");
  expect_bad("diff " + a + " " + b, {b + ": /kernels/0/name: expected a string, got an integer"});
  std::string c = t.file("c.json", "{\"format\": 5}");
  expect_bad("diff " + a + " " + c, {c + ": /format: expected the summary.json of a dfsim run"});
  // A serve summary: its version, the completed count and the latency sections are checked.
  std::string s1 = t.file("s1.json", "{\"format\": \"dfsim.serve.summary\", \"version\": 1}");
  expect_bad("diff " + s1 + " " + s1, {s1 + ": /completed"});
  std::string s2 = t.file("s2.json", "{\"format\": \"dfsim.serve.summary\", \"version\": 1, \"completed\": 3, "
                                     "\"ttft_ms\": 5, \"tpot_ms\": {}, \"itl_ms\": {}, \"e2e_ms\": {}, \"throughput\": {}}");
  expect_bad("diff " + s2 + " " + s2, {s2 + ": /ttft_ms: expected an object"});
  std::string d = t.file("d.json", "{\"format\": \"dfsim.summary\", \"sim_time_ns\": 1, \"kernels\": [7]}");
  expect_bad("diff " + d + " " + a, {d + ": /kernels/0: expected an object"});
  // The simulated time is what every run's summary has: a bare format or a word there is not one.
  std::string e = t.file("e.json", "{\"format\": \"dfsim.summary\", \"sim_time_ns\": \"fast\"}");
  expect_bad("diff " + a + " " + e, {e + ": /sim_time_ns: expected a number"});
  std::string f = t.file("f.json", "{\"format\": \"dfsim.summary\"}");
  expect_bad("diff " + f + " " + a, {f + ": /sim_time_ns"});
  // A version that does not exist, a section of the wrong type (compared as metrics before).
  std::string v = t.file("v.json", "{\"format\": \"dfsim.summary\", \"version\": 99, \"sim_time_ns\": 1}");
  expect_bad("diff " + a + " " + v, {v + ": /version: expected an integer in [1, 1], got 99"});
  std::string o = t.file("o.json", "{\"format\": \"dfsim.summary\", \"sim_time_ns\": 1, \"offchip\": 5}");
  expect_bad("diff " + a + " " + o, {o + ": /offchip: expected an object"});
}

// A --set value is parsed as JSON, without the files' nesting limit: a suite's
// "set": ["core.pt.simd=[[[[...  (a million brackets)"] crashed regress (SIGSEGV, stack).
TEST_CASE("bad input: a --set value nested a million levels deep", "[bad]") {
  TempDir t("deep_set");
  std::string value = std::string(1000000, '[') + std::string(1000000, ']');
  std::string suite = t.file("s.json", "{\"format\": \"dfsim.suite\", \"version\": 1, \"name\": \"s\", \"cases\": [{\"name\": \"c\", "
                                       "\"config\": \"" + fs::absolute(kSmall).string() + "\", \"workload\": \"" +
                                       fs::absolute(kOps).string() + "\", \"set\": [\"core.pt.simd=" + value + "\"]}]}");
  expect_bad("regress " + suite, {suite, "/cases/0/set", "nested deeper than 200 levels"});
  expect_bad(run_ops("--set 'core.pt.simd={\"fp16\": 4, \"fp16\": 8}'"), {"--set", "duplicate key \"fp16\""});
}

// An output directory holding a directory where an output goes (DIR/trace.json/) failed only
// after the whole simulation, when writing; it is refused with the directory, before the run.
TEST_CASE("bad input: a directory in the place of an output file", "[bad]") {
  TempDir t("out_dir_in_place");
  fs::create_directories(t.path / "o" / "trace.json");
  expect_bad(run_ops("-o " + (t.path / "o").string()), {(t.path / "o" / "trace.json").string(), "is a directory, expected a file path"});
  CHECK(fs::is_directory(t.path / "o" / "trace.json"));  // left as it was
}

// accuracy --only "," named no op and so ran every record; a records file of only its header
// said '--only "" selects no record'.
TEST_CASE("bad input: accuracy --only naming no op, and records of only a header", "[bad][accuracy]") {
  TempDir t("acc_only");
  expect_bad("accuracy --only , -o " + t.str() + "/o", {"dfsim accuracy: --only: expected record ops such as add,mm"});
  std::string h = t.file("h.csv", "id,op,cores,rows,cols,N,B,M,K,tiles,lx_planning,params,hbm_bytes,lx_bytes,matmul_macs,"
                                  "matmul_m_split,matmul_n_split,measured_kernel_us,measured_cv_pct,analytical_model_us\n");
  expect_bad("accuracy -r " + h + " -o " + t.str() + "/o", {h + ": no records, only the header line"});
}

// A shipped or bad-catalogue file with one value changed (`pointer` set to `value`), written
// into `t` as `name`; comments in the original are dropped.
std::string mutated(const TempDir& t, const std::string& from, const std::string& pointer, const json& value,
                    const std::string& name) {
  std::ifstream in(from);
  json j = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  j[json::json_pointer(pointer)] = value;
  return t.file(name, j.dump(1));
}

// Names were accepted empty ("name": "" for a graph, a kernel, a config, a suite, a placement,
// a model) or with a newline, which split the one-line error quoting them in two; a config's
// or model's name names the default output directory, so "../x" wrote outside out/. Kernel
// names may not repeat (summary.json and suites find kernels by name).
TEST_CASE("bad input: empty names, control characters and a kernel name twice", "[bad]") {
  TempDir t("names");
  const std::string k = kBad + "kernels_ok.json", o = kBad + "ops_ok.json";
  // `run` on a copy of `base` with `ptr` set to `v` fails naming the copy and `e`.
  auto run_bad = [&](const std::string& base, const std::string& ptr, const json& v, const std::vector<std::string>& e) {
    std::string f = mutated(t, base, ptr, v, base == k ? "k.json" : "o.json");
    std::vector<std::string> all = e;
    all.insert(all.begin(), f);
    expect_bad("run -c " + kSmall + " -w " + f, all);
  };
  auto kern = [&](const std::string& ptr, const json& v, const std::vector<std::string>& e) { run_bad(k, ptr, v, e); };
  kern("/name", "", {": /name: expected a non-empty name, got \"\""});
  kern("/kernels/0/name", "", {": /kernels/0/name: expected a non-empty name"});
  kern("/buffers/1/name", "", {": /buffers/1/name: expected a non-empty name"});
  kern("/kernels/0/tasks/1/name", "ne\ng", {": /kernels/0/tasks/1/name: expected a name without control characters, got \"ne\\ng\""});
  kern("/kernels/1", json{{"name", "neg"}, {"tasks", json::array()}}, {": /kernels/1/name: duplicate kernel name \"neg\""});

  auto ops = [&](const std::string& ptr, const json& v, const std::vector<std::string>& e) { run_bad(o, ptr, v, e); };
  ops("/name", "", {": /name: expected a non-empty name"});
  ops("/tensors/b\tc", json{{"shape", {64}}, {"dtype", "fp16"}}, {": /tensors/b\\tc: expected a name without control characters"});
  ops("/model", json{{"name", ""}, {"phase", "decode"}, {"batch", 1}}, {": /model/name: expected a non-empty name"});

  std::string c = t.file("c.json", "{\"extends\": \"" + fs::absolute(kSmall).string() + "\", \"name\": \"../../x\"}");
  expect_bad("run -c " + c + " -w " + kOps, {c + ": /name: expected a name without '/'", "(it names a directory)"});
  expect_bad("run -c " + kSmall + " -w " + kOps + " --set name=a/b", {"--set", "name", "expected a name without '/'"});

  const std::string place = "workloads/placements/two_adds_one_card.json";
  std::string p = mutated(t, place, "/name", "", "p.json");
  fs::copy_file(fs::absolute("workloads/add_2048x1024.json"), t.path / ".." / "add_2048x1024.json",
                fs::copy_options::overwrite_existing);  // "../add_2048x1024.json" resolves beside t
  expect_bad("validate " + p, {p + ": /name: expected a non-empty name"});
  p = mutated(t, place, "/workloads/1/name", "..", "p.json");
  expect_bad("validate " + p, {p + ": /workloads/1/name: expected a name without '/' that is not \".\" or \"..\""});
  p = mutated(t, place, "/workloads/1/workload", "", "p.json");
  expect_bad("validate " + p, {p + ": /workloads/1/workload: expected a file path, got an empty string"});
  fs::remove(t.path / ".." / "add_2048x1024.json");

  std::string m = mutated(t, "workloads/models/llama-3.1-8b.json", "/name", "a/b", "m.json");
  expect_bad("validate " + m, {m + ": /name: expected a name without '/'"});
  std::string s = t.file("s.json", "{\"format\": \"dfsim.suite\", \"version\": 1, \"name\": \"\", \"cases\": []}");
  expect_bad("validate " + s, {s + ": /name: expected a non-empty name"});
  std::string w = mutated(t, "workloads/sweeps/decode_rate_by_batch.json", "/metrics/time\nns", "sim_time_ns", "w.json");
  expect_bad("validate " + w, {w + ": /metrics/time\\nns: a column name: expected a name without control characters"});
}

// A request trace naming one id twice said which id, not where: now the line of the second.
TEST_CASE("bad input: a request id twice names the line", "[bad][serve]") {
  TempDir t("req_dup");
  std::string r = t.file("r.jsonl", "{\"id\": 3, \"arrival_ms\": 0, \"prompt_tokens\": 8, \"output_tokens\": 2}\n"
                                    "{\"id\": 4, \"arrival_ms\": 1, \"prompt_tokens\": 8, \"output_tokens\": 2}\n"
                                    "{\"id\": 3, \"arrival_ms\": 2, \"prompt_tokens\": 8, \"output_tokens\": 2}\n");
  expect_bad("serve --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv --requests " + r,
             {r + ": line 3: request id 3 appears twice (also on line 1)"});
}

// --rate 1e-300 made arrival gaps of 1e300 s that overflowed into negative arrival times, and
// the run "succeeded" (exit 0, TTFT -9e12 ms). --set of a number beyond a double said "got a
// string".
TEST_CASE("bad input: a request rate so low that arrivals overflow, a --set number beyond a double", "[bad]") {
  expect_bad("serve --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv --rate 1e-300 -n 3",
             {"--rate 1e-300: request 1 would arrive after ", " s, beyond 1e9 s"});
  expect_bad(run_ops("--set core.clock_mhz=1e400"), {"--set: core.clock_mhz: 1:1: number 1e400 is out of range"});
}

// --seed was unsigned: -1 wrapped around to 2^64 - 1 and the run went on with that seed.
TEST_CASE("bad input: a negative serve --seed", "[bad]") {
  expect_bad("serve --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv --rate 1 -n 3 --seed -1",
             {"--seed must be >= 0"});
}

// Reading an op graph looked every tensor name up by a linear search (and the dataflow check
// searched the input list per op): a graph of 10^5 tensors and ops took minutes to reach its
// error. Here the last op names a tensor that does not exist.
TEST_CASE("bad input: an op graph of 100000 ops with a dangling name in its last op", "[bad]") {
  TempDir t("many_ops");
  const int n = 100000;
  json g = {{"format", "dfsim.ops"}, {"version", 1}, {"name", "chain"}, {"inputs", {"t0"}}, {"outputs", {"t" + std::to_string(n)}}};
  for (int i = 0; i <= n; ++i) g["tensors"]["t" + std::to_string(i)] = {{"shape", {64}}, {"dtype", "fp16"}};
  for (int i = 0; i < n; ++i)
    g["ops"].push_back({{"op", "neg"}, {"inputs", {i + 1 == n ? "zz" : "t" + std::to_string(i)}}, {"outputs", {"t" + std::to_string(i + 1)}}});
  std::string f = t.file("chain.json", g.dump());
  expect_bad("run -c " + kSmall + " -w " + f, {f, ": /ops/99999/inputs/0: unknown tensor \"zz\""});
}

// A key of megabytes is named, clipped, in a line a person reads (it was echoed whole: a 2 MB
// line, twice over with its "did you mean").
TEST_CASE("bad input: an unknown key of 2 MB is clipped in the one line", "[bad]") {
  TempDir t("hugekey");
  const std::string key(2 << 20, 'q');
  const std::string cfg = t.file("c.json", "{\"core\": {\"" + key + "\": 1}}");
  expect_bad("validate " + cfg, {cfg + ": /core/qqq", "bytes]...", "unknown key"});
  Result r = dfsim("validate " + cfg);
  CHECK(r.err.size() < 1000);
}

// LPDDR5 geometry (an interleave block of whole column accesses, a row of whole blocks) was
// checked only when the memory model was built: "internal error", exit 1, while validate and
// info accepted the config. It is a relation between parameters now, checked at load.
TEST_CASE("bad input: lpddr5 row, interleave block and column access that do not fit", "[bad]") {
  expect_bad(run_ops("--set memory.lpddr5.row_bytes=1000"),
             {"--set: memory.lpddr5.row_bytes: expected a multiple of memory.lpddr5.interleave_bytes (512), got 1000"});
  expect_bad(run_ops("--set memory.bus_bits=1024"),
             {"--set: memory.bus_bits: expected a column access (memory.lpddr5.burst_length 32 x memory.bus_bits 1024 / 8 = "
              "4096 B) that divides memory.lpddr5.interleave_bytes (512), got 1024"});
  expect_bad(run_ops("--set memory.lpddr5.interleave_bytes=8192"),
             {"--set: memory.lpddr5.interleave_bytes: expected a divisor of memory.lpddr5.row_bytes (4096), got 8192"});
  expect_bad(run_ops("--set memory.lpddr5.burst_length=1024"), {"--set: memory.lpddr5.burst_length: ", "got 1024"});
  expect_bad(run_ops("--set memory.impl=bandwidth --set memory.lpddr5.row_bytes=1000"), {"--set: memory.lpddr5.row_bytes"});
  TempDir t("lpddr5_geometry");
  std::string f = config_with(t, "\"memory\": {\"lpddr5\": {\"row_bytes\": 1000}}");
  expect_bad("run -c " + f + " -w " + kOps, {f + ": /memory/lpddr5/row_bytes: expected a multiple of"});
  expect_bad("validate " + f, {f + ": /memory/lpddr5/row_bytes: "});
  expect_bad("info -c " + f, {f + ": /memory/lpddr5/row_bytes: "});
  // The "simple" model reads none of them.
  f = config_with(t, "\"memory\": {\"impl\": \"simple\", \"lpddr5\": {\"row_bytes\": 1000}}");
  CHECK(dfsim("validate " + f).code == 0);
}

// `dfsim sweep --run-point DIR` (what Slurm and Dask tasks run) took point.json as it found it:
// a wrong type was "internal error: [json.exception...]" (exit 1), a missing cwd exit 127 and
// nothing said.
TEST_CASE("bad input: sweep --run-point with a malformed point.json", "[bad][sweep]") {
  TempDir t("run_point");
  auto point = [&](const std::string& name, const std::string& text) {
    fs::create_directories(t.path / name);
    t.file(name + "/point.json", text);
    return (t.path / name).string();
  };
  std::string p = point("p1", "{\"args\": [1], \"cwd\": \"/tmp\"}");
  expect_bad("sweep --run-point " + p, {p + "/point.json: /args/0: expected a string, got an integer"});
  p = point("p2", "[]");
  expect_bad("sweep --run-point " + p, {p + "/point.json: expected an object, got an array"});
  p = point("p3", "{\"cwd\": \"/tmp\"}");
  expect_bad("sweep --run-point " + p, {p + "/point.json: /args: missing required field"});
  p = point("p4", "{\"args\": [\"run\", \"--help\"], \"cwd\": \"/nonexistent\"}");
  expect_bad("sweep --run-point " + p, {p + "/point.json: /cwd: expected the directory to run in, got \"/nonexistent\": no such directory"});
  p = point("p5", "{\"args\": [], \"cwd\": \"/tmp\"}");
  expect_bad("sweep --run-point " + p, {p + "/point.json: /args: expected the subcommand and its arguments"});
  p = point("p6", "{\"args\": [\"run\"], \"cwd\": \"/tmp\", \"argz\": 1}");
  expect_bad("sweep --run-point " + p, {p + "/point.json: /argz: unknown key (did you mean \"args\"?)"});
  p = point("p7", "{\"args\": [\"run\"], \"cwd\": \"" + t.file("afile", "x") + "\"}");
  expect_bad("sweep --run-point " + p, {p + "/point.json: /cwd: ", "not a directory"});
  for (const char* d : {"p1", "p4", "p7"}) CHECK_FALSE(fs::exists(t.path / d / "status.json"));
}

// A file of another dfsim format was read as what the command expected and named by its first
// key the reader did not know ("/compile: unknown key" for an op graph as --config, "/axes:
// unknown key (did you mean \"cases\"?)" for a sweep given to regress).
TEST_CASE("bad input: a file of another dfsim format is named by its format", "[bad]") {
  const std::string sweep = "workloads/sweeps/lx_by_cores.json", suite = "tests/regression/closed-form.suite.json";
  expect_bad("run -c " + kOps + " -w " + kOps,
             {kOps + ": /format: expected a chip config (it has no \"format\"), got a dfsim.ops file"});
  expect_bad("info -c " + kOps, {kOps + ": /format: expected a chip config", "got a dfsim.ops file"});
  expect_bad("regress " + sweep, {sweep + ": /format: expected dfsim.suite, got dfsim.sweep"});
  expect_bad("sweep " + suite, {suite + ": /format: expected dfsim.sweep, got dfsim.suite"});
  expect_bad("run -c " + kSmall + " --placement " + kOps, {kOps + ": /format: expected dfsim.placement, got dfsim.ops"});
  expect_bad("run -c " + kSmall + " -w " + suite, {suite + ": /format: expected dfsim.ops or dfsim.kernels, got dfsim.suite"});
  expect_bad("gen " + kOps + " --phase decode --context 128 -o " + TempDir("gen_format").str() + "/g.json",
             {kOps + ": /format: expected dfsim.model, got dfsim.ops"});
  TempDir t("other_format");
  std::string k = t.file("k.json", "{\"format\": \"dfsim.kernels\", \"bufers\": []}");
  expect_bad("run -c " + kSmall + " --placement " + k, {k + ": /format: expected dfsim.placement, got dfsim.kernels"});
  std::string n = t.file("n.json", "{\"format\": \"no.such\", \"cases\": []}");
  expect_bad("regress " + n, {n + ": /format: expected dfsim.suite, got \"no.such\""});
}

// A sweep whose base workload the runs refuse ran every point, each failing, and exited 1 after
// writing its tables; a missing base config named only itself. Both are the sweep file's error
// now, found before any point runs; likewise a placement's missing workload.
TEST_CASE("bad input: a sweep's base workload or config, a placement's workload", "[bad][sweep]") {
  TempDir t("sweep_base");
  auto sweep = [&](const std::string& config, const std::string& workload) {
    return t.file("s.json", "{\"format\": \"dfsim.sweep\", \"version\": 1, \"name\": \"s\", \"base\": {\"config\": \"" + config +
                                "\", \"workload\": \"" + workload + "\"}, \"axes\": {\"cores\": [1, 2]}, \"metrics\": {\"t\": \"sim_time_ns\"}}");
  };
  const std::string out = " --out " + t.str() + "/o";
  std::string s = sweep(kSmall, kBad + "ops_cycle.json");
  expect_bad("sweep " + s + out, {s + ": /base/workload: " + kBad + "ops_cycle.json: /ops/", "cycle"});
  s = sweep(kSmall, "tests/regression/closed-form.suite.json");
  expect_bad("sweep " + s + out, {s + ": /base/workload: tests/regression/closed-form.suite.json: /format: expected dfsim.ops or "
                                      "dfsim.kernels, got dfsim.suite"});
  s = sweep("nope.json", kOps);
  expect_bad("sweep " + s + out, {s + ": /base/config: nope.json: no such file"});
  s = sweep("configs", kOps);
  expect_bad("sweep " + s + out, {s + ": /base/config: configs: is a directory"});
  CHECK_FALSE(fs::exists(t.path / "o"));

  auto placement = [&](const std::string& workload) {
    return t.file("p.json", "{\"format\": \"dfsim.placement\", \"version\": 1, \"name\": \"p\", \"workloads\": [{\"name\": \"a\", "
                            "\"workload\": \"" + workload + "\", \"cards\": [0]}]}");
  };
  std::string p = placement("none.json");
  expect_bad("run -c " + kSmall + " --placement " + p, {p + ": /workloads/0/workload: " + (t.path / "none.json").string() + ": no such file"});
  expect_bad("validate -c " + kSmall + " " + p, {p + ": /workloads/0/workload: ", "no such file"});
  p = placement(".");
  expect_bad("run -c " + kSmall + " --placement " + p, {p + ": /workloads/0/workload: ", "is a directory, expected a workload file"});
}

// `--prompt-len hist:` (no file) said "<input>: no such file".
TEST_CASE("bad input: serve hist: without a file", "[bad][serve]") {
  expect_bad(kServe + "--rate 1 -n 3 --prompt-len hist:",
             {"dfsim serve: --prompt-len: expected a histogram file path after \"hist:\""});
  expect_bad(kServe + "--rate 1 -n 3 --output-len hist:", {"--output-len: expected a histogram file path"});
}

// A spreadsheet's CSV starts with a UTF-8 byte order mark: the readers took it as part of the
// first header cell ("expected a column \"arrival_ms\"", "missing column \"id\"").
TEST_CASE("bad input: CSV inputs that start with a UTF-8 byte order mark are read", "[bad][serve]") {
  TempDir t("bom");
  const std::string bom = "\xEF\xBB\xBF";
  std::string req = t.file("r.csv", bom + "arrival_ms,prompt_tokens,output_tokens\n0,10,5\n1,12,4\n");
  Result r = dfsim(kServe + "--requests " + req + " -o " + t.str() + "/req");
  INFO(r.err);
  CHECK(r.code == 0);
  std::ifstream in("workloads/serving/llama-3.1-8b_spyre_steps.csv", std::ios::binary);
  std::stringstream table;
  table << in.rdbuf();
  std::string steps = t.file("steps.csv", bom + table.str());
  std::string hist = t.file("h.csv", bom + "100,1\n200,1\n");
  r = dfsim("serve --model llama-3.1-8b --rate 1 -n 3 --step-table " + steps + " --prompt-len hist:" + hist + " -o " + t.str() + "/tab");
  INFO(r.err);
  CHECK(r.code == 0);
  // A records file of a header only: its header is read (the error is the next one).
  std::string rec = t.file("rec.csv", bom + "id,op,cores,rows,cols,measured_kernel_us\n");
  expect_bad("accuracy -r " + rec + " -o " + t.str() + "/acc", {rec + ": no records, only the header line"});
}

// `--only cores` (no '=') listed the axis columns before "cores" only: here none.
TEST_CASE("bad input: sweep --only without a value lists every axis column", "[bad][sweep]") {
  expect_bad("sweep workloads/sweeps/lx_by_cores.json --only cores",
             {"--only cores: expected COLUMN=VALUE with one of the axis columns: cores core.lx.usable_bytes"});
}

// accuracy --only add,frob ran the adds and ignored frob; a measured time of 1e308 made
// accuracy.csv's error -inf (0 and negative times were refused already).
TEST_CASE("bad input: accuracy --only naming an op no record has, measured times out of range", "[bad][accuracy]") {
  TempDir t("acc_values");
  expect_bad("accuracy --only add,frob -o " + t.str() + "/o",
             {"dfsim accuracy: --only: \"frob\" is not the op of any record in ", "its ops: add,add3,"});
  const std::string head = "id,op,cores,rows,cols,measured_kernel_us,analytical_model_us\n";
  // hex was taken as 16; 1e-320 (a denormal) made the error % and the RMS inf
  for (const std::string& us : {"1e308", "0", "-5", "inf", "nan", "0x10", "0x1p3", "1e-320", "0.0009"}) {
    std::string f = t.file("m.csv", head + "r1,add,1,64,64," + us + ",1\n");
    expect_bad("accuracy -r " + f + " -o " + t.str() + "/o",
               {f + ": line 2, column measured_kernel_us: expected a number in [0.001, 1e12] (µs), got \"" + us + "\""});
  }
  std::string f = t.file("a.csv", head + "r1,add,1,64,64,10,1e308\n");
  expect_bad("accuracy -r " + f + " -o " + t.str() + "/o", {f + ": line 2, column analytical_model_us: expected a number in [0.001, 1e12]"});
  CHECK_FALSE(fs::exists(t.path / "o"));
}

// calibrate reads its microbenchmarks from ./workloads when there is one. A malformed one that
// is not the first run used to throw inside `rows.push_back({{name, ...}, run()})`, where GCC 12
// destroys the half-built row's strings twice: a double free (abort) instead of the one line.
TEST_CASE("bad input: a malformed microbenchmark after the first fails calibrate with one line", "[bad]") {
  TempDir t("calibrate");
  fs::create_directories(t.path / "workloads" / "micro");
  fs::copy_file("workloads/micro/read_sum.json", t.path / "workloads" / "micro" / "read_sum.json");  // runs first
  t.file("workloads/micro/mix_3to1.json", "{\"format\": \"dfsim.ops\", \"version\": 1,");  // the second run
  const fs::path err = t.path / "stderr.txt";
  const std::string cmd = "cd " + t.str() + " && " + DFSIM_BINARY + " calibrate --config " +
                          fs::absolute("configs/spyre.json").string() + " >/dev/null 2>" + err.string();
  INFO(cmd);
  const int status = std::system(cmd.c_str());
  std::ifstream f(err);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  INFO("stderr: " << text);
  REQUIRE(WIFEXITED(status));  // not an abort
  CHECK(WEXITSTATUS(status) == 2);
  auto l = lines(text);
  REQUIRE(l.size() == 1);
  CHECK_THAT(l[0], Contains("workloads/micro/mix_3to1.json"));
}

TEST_CASE("bad input: options that the rest of the command line makes do nothing", "[bad]") {
  // Each exited 0 having ignored the option (eighth hostile-input pass).
  TempDir t("inert_options");
  // validate: --config and --max-tasks check graphs against a chip; with no graph listed, nothing
  expect_bad("validate configs/spyre.json -c " + kSmall, {"--config " + kSmall + " applies to op graphs"});
  expect_bad("validate configs/spyre.json --max-tasks 5", {"--max-tasks applies to op graphs"});
  // sweep --run-point runs one planned point: a sweep file, -o, --only, --jobs... did nothing
  expect_bad("sweep --run-point " + t.str() + " -o " + t.str() + "/o", {"--run-point DIR", "takes no --out"});
  expect_bad("sweep workloads/sweeps/lx_by_cores.json --run-point " + t.str(), {"takes no sweep file"});
  expect_bad("sweep workloads/sweeps/lx_by_cores.json --gather --resume -o " + t.str() + "/o", {"--gather runs nothing"});
  // a matmul divided twice: compile.split silently replaced attrs.work_division
  const std::string mm = t.file("mm.json", R"({"format": "dfsim.ops", "version": 1, "name": "mm",
    "tensors": {"a": {"shape": [64, 64], "dtype": "fp16"}, "b": {"shape": [64, 64], "dtype": "fp16"},
                "y": {"shape": [64, 64], "dtype": "fp16"}},
    "inputs": ["a", "b"], "outputs": ["y"],
    "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["y"], "attrs": {"work_division": {"m": 2}},
             "compile": {"split": {"M": 4}}}]})");
  expect_bad("validate " + mm + " -c " + kSmall, {mm + ": /ops/0/compile/split: the op's attrs.work_division divides it already"});
  // --gen-step: a key twice took the last one; "output" was blamed on an option given twice
  expect_bad("run --gen-step '{\"model\": \"llama-3.1-8b\", \"model\": \"granite-3.3-8b\", \"phase\": \"decode\", \"context\": 16}' -o " +
                 t.str() + "/g",
             {"--gen-step: /model: duplicate key \"model\""});
  expect_bad("run --gen-step '{\"model\": \"llama-3.1-8b\", \"output\": \"x\"}' -o " + t.str() + "/g",
             {"--gen-step: \"output\": not a dfsim gen option here"});
  CHECK_FALSE(fs::exists(t.path / "g"));
}

TEST_CASE("bad input: status lines and logs stay off a graph written to stdout", "[bad]") {
  // gen -o /dev/stdout appended its status line to the JSON, so `gen ... | run -w /dev/stdin`
  // failed; run -v logged to stdout though --help says stderr.
  TempDir t("stdout");
  const std::string bin = DFSIM_BINARY;
  const int piped = std::system((bin + " gen llama-3.1-8b --phase decode --context 16 --layers 1 -o /dev/stdout 2>/dev/null | " +
                                 bin + " run -q --trace off -w /dev/stdin -o " + t.str() + "/r").c_str());
  CHECK(WIFEXITED(piped));
  CHECK(WEXITSTATUS(piped) == 0);
  const std::string out = (t.path / "stdout.txt").string();
  REQUIRE(std::system((bin + " run -v -c " + kSmall + " -w " + kOps + " -o " + t.str() + "/v >" + out + " 2>/dev/null").c_str()) == 0);
  CHECK(slurp_text(out).find("task instances on") == std::string::npos);  // the log line
  CHECK_THAT(dfsim("run -v -c " + kSmall + " -w " + kOps + " -o " + t.str() + "/v").err, Contains("task instances on"));
  // a placement: a command-line option that fails one of its workloads names it
  expect_bad("run --placement workloads/placements/two_kernels_two_cards.json -c configs/spyre-drawer.json --split M=2",
             {"--split: workload \"add\"", "names dims no op of the graph has"});
}

TEST_CASE("bad input: a TMPDIR that cannot hold a scratch directory is named", "[bad]") {
  // run --solo said "internal error: filesystem error: temp_directory_path"; regress, accuracy
  // and calibrate ignored TMPDIR and made their scratch in /tmp (ninth hostile-input pass).
  TempDir t("tmpdir");
  const std::string file = t.file("f", "x");
  expect_bad("run --placement workloads/placements/two_kernels_two_cards.json -c configs/spyre-drawer.json --solo",
             {"TMPDIR /nonexistent/dfsim", "cannot create a temporary directory there", "No such file or directory"},
             "TMPDIR=/nonexistent/dfsim");
  expect_bad("regress tests/regression/closed-form.suite.json", {"TMPDIR " + file, "Not a directory"}, "TMPDIR=" + file);
  // An empty TMPDIR means /tmp, as for mktemp(1)
  Result r = dfsim("run --placement workloads/placements/two_adds_one_card.json --solo -q --trace off -o " + t.str() + "/o",
                   "TMPDIR=");
  CHECK(r.code == 0);
}

TEST_CASE("bad input: a short option given its value with =", "[bad]") {
  // `-o=DIR` is the value "=DIR" to -o (Boost, as getopt): the run wrote into a directory named
  // "=DIR" and exited 0 (ninth hostile-input pass).
  TempDir t("short_equals");
  expect_bad("run -c " + kSmall + " -w " + kOps + " -o=" + t.str() + "/o", {"-o=", "-o " + t.str() + "/o or --out="});
  CHECK_FALSE(fs::exists(t.path / "=o"));
  expect_bad("compile " + kOps + " -n=2 -o " + t.str() + "/k.json", {"-n=2", "-n 2 or --cores=2"});
}

TEST_CASE("bad input: an unknown option names the one meant", "[bad]") {
  // It said only "unrecognised option '--wokload'"; serve's --no-trace given to run (whose
  // spelling is --trace off) and run's --trace given to serve said the same.
  expect_bad(run_ops("--wokload x.json"), {"unrecognised option '--wokload' (did you mean --workload?)"});
  expect_bad(run_ops("--no-trace"), {"unrecognised option '--no-trace' (did you mean --trace off?)"});
  expect_bad("serve --model llama-3.1-8b --rate 1 --trace off", {"unrecognised option '--trace' (did you mean --no-trace?)"});
  expect_bad("regress tests/regression/closed-form.suite.json --jbos=2", {"'--jbos=2' (did you mean --jobs?)"});
  // Nothing to guess from: a short option, a word far from every option.
  Result r = dfsim("run -x");
  CHECK(r.code == 2);
  CHECK(r.err == "dfsim run: unrecognised option '-x' (see 'dfsim run --help')\n");
  r = dfsim("compile --out-dir x");
  CHECK(r.err == "dfsim compile: unrecognised option '--out-dir' (see 'dfsim compile --help')\n");
}

TEST_CASE("bad input: limits beyond what the host timer and the simulated clock hold", "[bad]") {
  // --timeout 1e300 (or inf) overflowed the timer's seconds and meant no limit; --max-sim-time
  // past 2^63 fs became another limit (ninth hostile-input pass). All exited 0.
  expect_bad(run_ops("--timeout 1e300"), {"--timeout must be at most 1e9 s"});
  expect_bad(run_ops("--timeout inf"), {"--timeout must be at most 1e9 s"});
  expect_bad(run_ops("--max-sim-time 1e13"), {"--max-sim-time must be at most 9.2e12 ns"});
}

TEST_CASE("bad input: a report stays off a JUnit file or step table written to stdout", "[bad]") {
  // regress and diff printed their table and serve its report on stdout before or after the
  // JUnit XML or the step table written there: no reader parses the mix (ninth hostile-input pass).
  TempDir t("report_stdout");
  const std::string bin = DFSIM_BINARY, out = (t.path / "stdout.txt").string();
  auto stdout_of = [&](const std::string& args) {
    INFO("dfsim " << args);
    const int status = std::system((bin + " " + args + " >" + out + " 2>/dev/null").c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return slurp_text(out);
  };
  std::string x = stdout_of("regress tests/regression/closed-form.suite.json --only pt_tile --junit /dev/stdout");
  CHECK(x.rfind("<?xml", 0) == 0);
  CHECK(x.find("case(s)") == std::string::npos);
  REQUIRE(dfsim("run -q --trace off -c " + kSmall + " -w " + kOps + " -o " + t.str() + "/a").code == 0);
  x = stdout_of("diff " + t.str() + "/a " + t.str() + "/a --junit /dev/stdout");
  CHECK(x.rfind("<?xml", 0) == 0);
  CHECK(x.find("values compared") == std::string::npos);
  x = stdout_of("serve --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv --rate 1 -n 5 "
                "--no-trace -o " + t.str() + "/s --export-step-table /dev/stdout");
  CHECK(x.rfind("# dfsim step table", 0) == 0);
  CHECK(x.find("Serving Benchmark Result") == std::string::npos);
}

TEST_CASE("bad input: validate reads a config or a model file from a pipe once", "[bad]") {
  // validate read the file to learn its kind, then its loader read it again: from a pipe
  // (`<(...)`, /dev/stdin) the second read was empty, "malformed JSON ... unexpected end of
  // input" (ninth hostile-input pass).
  TempDir t("pipe");
  const std::string bin = DFSIM_BINARY, out = (t.path / "stdout.txt").string();
  for (const auto& [file, kind] : {std::pair<std::string, std::string>{"configs/spyre.json", "config"},
                                   {"workloads/models/llama-3.1-8b.json", "dfsim.model"}}) {
    const int status = std::system(("cat " + file + " | " + bin + " validate /dev/stdin >" + out + " 2>&1").c_str());
    INFO(file << ": " << slurp_text(out));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(slurp_text(out), Contains("/dev/stdin: ok (" + kind));
  }
}

TEST_CASE("bad input: an extends chain read from a working directory deeper than PATH_MAX", "[bad]") {
  // The loop check compared canonical paths, which need the working directory: from one
  // deeper than PATH_MAX every path's was "", and small.json extending spyre.json was reported
  // as "extends loop" (ninth hostile-input pass). 1600 levels of 8 characters: 14 400 bytes,
  // entered one level at a time (a shell's cd gives up at PATH_MAX).
  TempDir t("deep_cwd");
  const std::string spyre = fs::absolute("configs/spyre.json").string(), small = fs::absolute(kSmall).string();
  const std::string out = t.str() + "/out.txt";
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (chdir(t.str().c_str()) != 0) _exit(120);
    for (int i = 0; i < 1600; ++i)
      if (mkdir("dddddddd", 0755) != 0 || chdir("dddddddd") != 0) _exit(121);
    std::error_code ec;
    fs::copy_file(spyre, "spyre.json", ec);
    fs::copy_file(small, "small.json", ec);
    if (!freopen(out.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(122);
    execl(DFSIM_BINARY, DFSIM_BINARY, "validate", "small.json", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(std::system(("rm -rf " + t.str() + "/dddddddd").c_str()) == 0);  // (remove_all stops at PATH_MAX)
  INFO(slurp_text(out));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(slurp_text(out), Contains("small.json: ok (config)"));
}

TEST_CASE("bad input: off-chip buffers aligned to a huge memory.interleave_bytes never wrap past 2^64", "[bad]") {
  // Four HBM buffers (x, t, u, y: three unfused negs), each starting at a multiple of
  // memory.interleave_bytes = 2^62: they end at 4 x 2^62 = 2^64, which wrapped to 0, passed the
  // capacity check and ran with addresses far past the 128 GiB memory (exit 0). The total
  // saturates now, and the line names the alignment.
  TempDir t("interleave");
  const std::string w = t.file("four.json", R"({"format": "dfsim.ops", "version": 1, "name": "four",
    "tensors": {"x": {"shape": [64, 64], "dtype": "fp16"}, "t": {"shape": [64, 64], "dtype": "fp16"},
                "u": {"shape": [64, 64], "dtype": "fp16"}, "y": {"shape": [64, 64], "dtype": "fp16"}},
    "inputs": ["x"], "outputs": ["y"],
    "ops": [{"op": "neg", "inputs": ["x"], "outputs": ["t"]}, {"op": "neg", "inputs": ["t"], "outputs": ["u"]},
            {"op": "neg", "inputs": ["u"], "outputs": ["y"]}],
    "compile": {"fuse": false}})");
  for (const std::string impl : {"simple", "lpddr5"})
    expect_bad("run -c " + kSmall + " -w " + w + " --set memory.interleave_bytes=4611686018427387904 --set memory.impl=" + impl,
               {w, "/buffers", "more than 2^64 B", "memory.interleave_bytes, 4611686018427387904 B", "memory.capacity_bytes"});
  // 2^40-byte blocks: 4 x 2^40 B, refused at the sum, naming the alignment.
  expect_bad("run -c " + kSmall + " -w " + w + " --set memory.interleave_bytes=1099511627776",
             {w, "/buffers", "4398046511104 B (each starting at a multiple of memory.interleave_bytes"});
}

TEST_CASE("bad input: serve of a model whose step does not compile on the config names the step, exit 2", "[bad][serve]") {
  // Llama-3.1-8B on configs/small.json (2 cores): its LM head fits no division of 2 cores, so
  // the child run of the first step exits 2. serve said "simulating the prefill ... step of
  // llama-3.1-8b (1 layers) failed: /tmp/.../.<key>.<pid>/step.json: /ops/29: ..." and exited
  // 1: a scratch file deleted by then, and a failed simulation rather than an input the model
  // cannot take. Now exit 2, naming the model, the config, the step and the dfsim gen command
  // whose graph /ops/29 points into; no scratch directory stays in the cache.
  TempDir t("serve_refused");
  expect_bad("serve --model llama-3.1-8b -c " + kSmall + " --rate 1 -n 3 --step-cache " + t.str() + "/c",
             {"--model: llama-3.1-8b cannot be served on config \"small\"",
              "prefill batch=1 kv_tokens=512 query_tokens=512 step",
              "(dfsim gen llama-3.1-8b --phase prefill --batch 1 --tokens 512 --context 0 --layers 1)",
              "is refused: /ops/29: linear: no division"});
  for (const auto& e : fs::directory_iterator(t.path / "c")) CHECK(e.path().filename() == "step-cache.jsonl");
}

TEST_CASE("bad input: a tensor of 2^60 elements is named by its true size, not as more than 2^64 B", "[bad]") {
  // [2^30, 2^30] fp16 is 2^61 B, but a tensor beyond 2^58 elements was reported "more than
  // 2^64 B" (the byte count saturated there), and a memory.capacity_bytes of 2^63 - 1 B, which
  // holds it, got the same false line. Now the bytes are exact, and past the capacity the
  // element limit (offsets in bits must fit 64 bits) is named as such.
  TempDir t("elements");
  const std::string w = t.file("big.json", R"({"format": "dfsim.ops", "version": 1, "name": "big",
    "tensors": {"a": {"shape": [1073741824, 1073741824], "dtype": "fp16"},
                "y": {"shape": [1073741824, 1073741824], "dtype": "fp16"}},
    "inputs": ["a"], "outputs": ["y"], "ops": [{"op": "neg", "inputs": ["a"], "outputs": ["y"]}]})");
  expect_bad("run -c " + kSmall + " -w " + w,
             {w, "/tensors/a/shape", "fp16 is 2305843009213693952 B (2.15e+09 GiB), more than memory.capacity_bytes"});
  expect_bad("run -c " + kSmall + " -w " + w + " --set memory.capacity_bytes=9223372036854775807",
             {w, "/tensors/a/shape", "has 1152921504606846976 elements, more than 2^58, the most dfsim takes in one tensor"});
}

TEST_CASE("bad input: a row that does not fit says what took the tile budget", "[bad]") {
  // layernorm_8192x1024 with 8 KiB of LX: its tile budget, half the usable LX (4096 B), goes
  // whole to the weight and bias (2 KiB each, loaded once for every tile), and the refusal read
  // "more than the 0-byte tile budget" with no word of why.
  expect_bad("run -w workloads/layernorm_8192x1024.json --set core.lx.bytes=8192 --set core.lx.usable_bytes=8192",
             {"workloads/layernorm_8192x1024.json: /ops/0: layernorm: one row needs 10246 bytes of LX, more than the "
              "0-byte tile budget left of 4096 B by the 4096 B of operands every tile shares (loaded once and kept)"});
}

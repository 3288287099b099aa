// Property tests on generated VALID op graphs (valid_graph_gen.h), over today's op set (the
// transformer ops included), on
// configs/small.json and configs/spyre.json at random core counts and LX planning:
//   1. it compiles (no InputError, no other exception);
//   2. the compiled graph, written and read back, passes the loader's checks and expands;
//   3. `dfsim run` finishes (status "finished", no deadlock, no limit);
//   4. off-chip bytes moved >= the graph's compulsory bytes (inputs read + outputs written);
//   5. LX never exceeds its capacity (peak <= usable bytes on every core);
//   6. two runs are byte-identical (summary.json apart from its "host" section, trace.json,
//      utilization.csv).
// Fixed seed and bounded count in CI; a long exploratory run with DFSIM_PROPERTY_SEED,
// DFSIM_PROPERTY_GRAPHS (properties 1-2), DFSIM_PROPERTY_RUNS (3-6) and DFSIM_PROPERTY_BINARY
// (the dfsim to run, default this build's): docs/reliability.md.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "valid_graph_gen.h"

namespace fs = std::filesystem;
using dfsim::property::GeneratedGraph;
using dfsim::property::generate_graph;

namespace {

std::uint64_t env_or(const char* name, std::uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

const std::uint64_t kSeed = env_or("DFSIM_PROPERTY_SEED", 14);

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A compile error for a limit the compiler documents: counted, not a failure. "... is not
// supported yet" (tiling inside a slice, reached on configs/small.json's small LX), and a forced
// matmul work division with k > 1 for which no tile splits into the operand bands (its message
// names divisibility even when M, N, K divide: docs/reliability.md).
// The third: a unit of work that cannot be split (a row, a reduction slice, a rope plane with
// its cos and sin) larger than the LX left for tiles ("one row needs N bytes of LX, more than
// the M-byte tile budget"), reached on configs/small.json and when lx_planning keeps much.
// The fourth: int4 work divided so that a core's or a tile's slice would start inside a byte
// (a 1-D int4 tensor split in odd shares: "int4 work is divided at whole bytes only").
bool unsupported(const std::string& why) {
  return why.find("not supported yet") != std::string::npos ||
         why.find("int4 work is divided at whole bytes only") != std::string::npos ||
         why.find("needs M, N and K divisible by m, n and k") != std::string::npos ||
         (why.find(" needs ") != std::string::npos && why.find("bytes of LX, more than the") != std::string::npos);
}

// Properties 1 and 2, in process. Returns "" or what failed.
std::string check_compiles(const GeneratedGraph& gg) {
  static const dfsim::ChipConfig small = dfsim::load_chip_config("configs/small.json");
  static const dfsim::ChipConfig spyre = dfsim::load_chip_config("configs/spyre.json");
  const dfsim::ChipConfig& cfg = gg.config == "configs/small.json" ? small : spyre;
  try {
    dfsim::OpGraph ops = dfsim::read_op_graph(gg.graph, "gen.json");
    dfsim::KernelGraph g = dfsim::compile_ops(ops, cfg, gg.cores);
    g.file = "gen.json";
    dfsim::Json text = dfsim::Json::parse(dfsim::write_kernel_graph(g).dump());
    dfsim::KernelGraph back = dfsim::read_kernel_graph(text, "gen.kernels.json");
    dfsim::expand_graph(back, cfg);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Properties 3 to 6 through the binary. Returns "" or what failed.
std::string check_runs(const GeneratedGraph& gg, const fs::path& dir) {
  fs::create_directories(dir);
  fs::path w = dir / "graph.json";
  std::ofstream(w) << gg.graph.dump(1);
  fs::path out[2] = {dir / "a", dir / "b"};
  for (const auto& o : out) {
    const char* bin = std::getenv("DFSIM_PROPERTY_BINARY");  // a long run may use a copy
    std::string cmd = std::string(bin && *bin ? bin : DFSIM_BINARY) + " run -q -c " + gg.config + " " + w.string() + " -o " + o.string() +
                      " 2>" + (dir / "stderr").string();
    int st = std::system(cmd.c_str());
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return "dfsim run exited " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ": " + slurp(dir / "stderr");
  }
  auto s = dfsim::Json::parse(slurp(out[0] / "summary.json"));
  if (s["status"] != "finished") return "status " + s["status"].dump();
  std::uint64_t moved = s["offchip"]["bytes_read"].get<std::uint64_t>() + s["offchip"]["bytes_written"].get<std::uint64_t>();
  if (moved < gg.compulsory_bytes)
    return "off-chip bytes " + std::to_string(moved) + " < compulsory " + std::to_string(gg.compulsory_bytes);
  if (s["lx"]["peak_bytes_max"].get<std::uint64_t>() > s["lx"]["usable_bytes_per_core"].get<std::uint64_t>())
    return "LX peak " + s["lx"]["peak_bytes_max"].dump() + " over " + s["lx"]["usable_bytes_per_core"].dump();
  auto s2 = dfsim::Json::parse(slurp(out[1] / "summary.json"));
  s.erase("host");
  s2.erase("host");
  if (s != s2) return "summary.json differs between two runs";
  for (const char* f : {"trace.json", "utilization.csv"})
    if (slurp(out[0] / f) != slurp(out[1] / f)) return std::string(f) + " differs between two runs";
  return "";
}

std::string describe(std::uint64_t i, const GeneratedGraph& gg) {
  return "seed " + std::to_string(kSeed) + " graph " + std::to_string(i) + " (" + gg.config + ", " +
         std::to_string(gg.cores) + " cores): " + gg.graph.dump();
}

}  // namespace

TEST_CASE("property: generated valid op graphs compile and their compiled graphs pass the loader") {
  const std::uint64_t n = env_or("DFSIM_PROPERTY_GRAPHS", 3000);
  std::uint64_t failures = 0, skipped = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    GeneratedGraph gg = generate_graph(kSeed, i);
    std::string why = check_compiles(gg);
    if (unsupported(why)) ++skipped;
    else if (!why.empty() && ++failures <= 5) FAIL_CHECK(why << "\n  " << describe(i, gg));
  }
  WARN(n << " graphs (seed " << kSeed << "): " << failures << " failed, " << skipped
         << " hit a documented compiler limit");
  CHECK(failures == 0);
  CHECK(skipped * 5 < n);  // the generator mostly stays within what the compiler supports
}

TEST_CASE("property: generated valid op graphs run to the end within LX, move their bytes, identically twice") {
  const std::uint64_t n = env_or("DFSIM_PROPERTY_RUNS", 80);
  fs::path base = fs::temp_directory_path() / ("dfsim_property_" + std::to_string(getpid()));
  std::uint64_t failures = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    GeneratedGraph gg = generate_graph(kSeed, i);
    if (!check_compiles(gg).empty()) continue;  // the other test case reports it
    std::string why = check_runs(gg, base / std::to_string(i));
    if (!why.empty() && ++failures <= 5) FAIL_CHECK(why << "\n  " << describe(i, gg));
    if (why.empty()) fs::remove_all(base / std::to_string(i));  // keep a failing graph to rerun
  }
  std::error_code ec;
  fs::remove(base, ec);  // only if empty (no failing graph kept)
  CHECK(failures == 0);
}

TEST_CASE("property: the generator's findings stay fixed (tests/data/property-regressions/)") {
  int n = 0;
  fs::path base = fs::temp_directory_path() / ("dfsim_property_regressions_" + std::to_string(getpid()));
  for (const auto& e : fs::directory_iterator("tests/data/property-regressions")) {
    GeneratedGraph gg;
    gg.graph = dfsim::Json::parse(slurp(e.path()));
    gg.config = "configs/spyre.json";
    gg.cores = gg.graph["compile"]["cores"].get<int>();
    INFO(e.path().string());
    REQUIRE(check_compiles(gg) == "");
    // Several findings compiled and then deadlocked (a matmul epilogue's output or operand
    // kept in LX): each also runs to the end. Compulsory bytes are not known for these files.
    CHECK(check_runs(gg, base / e.path().stem()) == "");
    ++n;
  }
  std::error_code ec;
  fs::remove_all(base, ec);
  CHECK(n > 0);
}

TEST_CASE("property: the generator is deterministic and covers every op family") {
  CHECK(generate_graph(kSeed, 7).graph == generate_graph(kSeed, 7).graph);
  std::map<std::string, int> seen;
  for (std::uint64_t i = 0; i < 200; ++i) {
    GeneratedGraph gg = generate_graph(kSeed, i);
    for (const auto& op : gg.graph["ops"]) ++seen[op["op"].get<std::string>()];
  }
  for (const char* op : {"add", "relu", "sum", "mean", "amax", "matmul", "transpose", "cat", "softmax", "layernorm",
                         "rmsnorm", "linear", "rope", "sdpa", "embedding", "kv_write"}) {
    INFO(op);
    CHECK(seen[op] > 0);
  }
}

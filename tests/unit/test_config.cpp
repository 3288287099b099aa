// Config system: the shipped presets, extends, --set overrides, every rejection, and the
// docs/schema generated from the parameter registry. Runs from the repository root.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "sim/common/error.h"
#include "sim/config/chip_config.h"
#include "sim/config/params.h"

using namespace dfsim;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> n{0};
    path = fs::temp_directory_path() /
           ("dfsim_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string kSpyre = "configs/spyre.json";
const std::string kSmall = "configs/small.json";

}  // namespace

TEST_CASE("config: spyre.json holds the public Spyre figures", "[config]") {
  ChipConfig c = load_chip_config(kSpyre);
  CHECK(c.name == "spyre");
  CHECK(c.file == kSpyre);
  CHECK(c.cores == 32);
  CHECK(c.core.clock_mhz == 1500);
  CHECK(c.core.corelets == 2);
  CHECK(c.core.pt.rows == 8);
  CHECK(c.core.pt.cols == 8);
  CHECK(c.core.pt.simd == std::map<Dtype, int>{{Dtype::fp16, 8}, {Dtype::fp8, 16}, {Dtype::int8, 16}, {Dtype::int4, 32}});
  CHECK(c.core.pt.dataflow == Dataflow::ws);
  CHECK(c.core.lx.bytes == 2u * 1024 * 1024);
  CHECK(c.core.lx.usable_bytes == 1589376);
  CHECK(c.core.dma.stick_bytes == 128);
  CHECK(c.core.dma.burst_sticks == 32);
  CHECK(c.memory.impl == "lpddr5");
  CHECK(c.core.dma.stick_issue_cycles == 7);
  CHECK(c.core.sfp.tree_level_cycles == 4);
  CHECK(c.memory.channels == 8);
  CHECK(c.memory.bus_bits == 32);
  CHECK(c.memory.data_rate_mtps == 6400);
  CHECK(c.memory.capacity_bytes == 128ull << 30);
  CHECK(c.ring.bytes_per_cycle == 128);
  CHECK(c.core.sfp.cycles_per_vector.at("gelu") == 4);
  CHECK(c.core.sfp.cycles_per_vector.size() == std::size(kSfpFunctionClasses));
  // 2 corelets x 8 x 8 PEs x 8 ways = 1024 MAC/cycle; x 1.5 GHz = 1536 MAC/ns per core.
  CHECK(c.pt_macs_per_cycle(Dtype::fp16) == 1024);
  CHECK(c.peak_macs_per_ns(Dtype::fp16) == 1536);
  CHECK(c.peak_macs_per_ns(Dtype::int4) == 4 * 1536);
  CHECK(c.pt_macs_per_cycle(Dtype::fp32) == 0);  // not a PT precision
  // 8 channels x 32/8 B x 6400 MT/s = 204.8 GB/s.
  CHECK(c.memory_peak_gbps() == Approx(204.8).epsilon(1e-12));
  // 128 B/cycle x 1.5 GHz = 192 GB/s per direction per link.
  CHECK(c.ring_gbps_per_direction() == 192);
}

TEST_CASE("config: the spyre preset equals the registry defaults", "[config]") {
  // spyre.json spells out every parameter; the defaults (chip_config.h) are the same chip, but
  // for the kernel launch and the loop iteration, 0 by default so that hand-built configs time one mechanism at a time,
  // and the HBM layout, row-major by default so that they keep the lowerings' addresses.
  ChipConfig c = load_chip_config(kSpyre);
  Json defaults = param_defaults();
  Json resolved = c.resolved;
  resolved.erase("name");
  resolved.erase("description");
  defaults.erase("name");
  CHECK(resolved["card"]["kernel_launch_ns"] == 1500);
  CHECK(defaults["card"]["kernel_launch_ns"] == 0);
  resolved["card"].erase("kernel_launch_ns");
  defaults["card"].erase("kernel_launch_ns");
  CHECK(resolved["card"]["loop_iteration_ns"] == 688);
  CHECK(defaults["card"]["loop_iteration_ns"] == 0);
  resolved["card"].erase("loop_iteration_ns");
  defaults["card"].erase("loop_iteration_ns");
  CHECK(resolved["memory"]["hbm_layout"] == "batched");
  CHECK(defaults["memory"]["hbm_layout"] == "row_major");
  resolved["memory"].erase("hbm_layout");
  defaults["memory"].erase("hbm_layout");
  CHECK(resolved == defaults);
}

TEST_CASE("config: small.json inherits from spyre and overrides", "[config]") {
  ChipConfig c = load_chip_config(kSmall);
  CHECK(c.name == "small");  // not inherited from spyre
  CHECK(c.cores == 2);
  CHECK(c.core.lx.bytes == 256 * 1024);
  CHECK(c.core.lx.usable_bytes == 196608);
  // Inherited: the rest of core and core.lx.
  CHECK(c.core.lx.read_bytes_per_cycle == 256);
  CHECK(c.core.clock_mhz == 1500);
  CHECK(c.memory_peak_gbps() == Approx(204.8));
  CHECK(c.resolved.at("card").at("cores") == 2);
  CHECK_FALSE(c.resolved.contains("extends"));
  CHECK_FALSE(c.resolved.contains("$schema"));
}

TEST_CASE("config: name defaults to the file stem and is not inherited", "[config]") {
  TempDir t;
  t.write("base.json", R"({"name": "base", "card": {"cores": 4}})");
  std::string child = t.write("my_chip.json", R"({"extends": "base.json"})");
  ChipConfig c = load_chip_config(child);
  CHECK(c.name == "my_chip");
  CHECK(c.cores == 4);
  CHECK(c.resolved.at("name") == "my_chip");
}

TEST_CASE("config: extends chains merge objects and maps key-wise, arrays replace", "[config]") {
  TempDir t;
  fs::create_directories(t.path / "sub");
  t.write("root.json", R"({"core": {"pt": {"simd": {"fp8": 20}}}, "memory": {"ring_stops": [0,1,2,3,4,5,6,7]}})");
  t.write("sub/mid.json", R"(// comments are allowed
    {"extends": "../root.json", /* and this kind */ "core": {"pt": {"rows": 16}}})");
  std::string leaf = t.write("sub/leaf.json", R"({"extends": "mid.json",
    "core": {"pt": {"simd": {"int4": 0}}}, "memory": {"channels": 2, "ring_stops": [3, 5]}})");
  ChipConfig c = load_chip_config(leaf);
  CHECK(c.core.pt.rows == 16);
  CHECK(c.core.pt.cols == 8);
  CHECK(c.core.pt.simd == std::map<Dtype, int>{{Dtype::fp16, 8}, {Dtype::fp8, 20}, {Dtype::int8, 16}});
  CHECK(c.pt_macs_per_cycle(Dtype::int4) == 0);  // 0 ways: not supported
  CHECK(c.memory.ring_stops == std::vector<int>{3, 5});
}

TEST_CASE("config: the resolved config loads back to the same chip", "[config]") {
  TempDir t;
  ChipConfig a = load_chip_config(kSmall, {"core.pt.dataflow=ws", "memory.ideal=true"});
  std::string again = t.write("again.json", a.resolved.dump(2));
  ChipConfig b = load_chip_config(again);
  CHECK(b.resolved == a.resolved);
  CHECK(b.name == "small");
  CHECK(b.core.pt.dataflow == Dataflow::ws);
}

TEST_CASE("config: --set overrides each parameter type", "[config]") {
  ChipConfig c = load_chip_config(kSpyre, {
                                              "card.cores=4",                     // int
                                              "core.lx.bytes=4194304",            // uint64
                                              "core.clock_mhz=1000",              // double
                                              "core.sfp.fp32_rate=0.25",          // double, fraction
                                              "memory.ideal=true",                // bool
                                              "core.pt.dataflow=ws",              // string, unquoted
                                              "name=\"custom\"",                  // string, quoted
                                              "core.pt.simd.fp16=1",              // map entry
                                              "core.sfp.cycles_per_vector={\"exp\":3.5}",  // map merge
                                              "memory.ring_stops=[0,1,2,3,0,1,2,3]",     // list
                                          });
  CHECK(c.cores == 4);
  CHECK(c.core.lx.bytes == 4194304);
  CHECK(c.core.clock_mhz == 1000);
  CHECK(c.core.sfp.fp32_rate == 0.25);
  CHECK(c.memory.ideal);
  CHECK(c.core.pt.dataflow == Dataflow::ws);
  CHECK(c.name == "custom");
  CHECK(c.core.pt.simd.at(Dtype::fp16) == 1);
  CHECK(c.core.pt.simd.at(Dtype::fp8) == 16);  // other entries kept
  CHECK(c.core.sfp.cycles_per_vector.at("exp") == 3.5);
  CHECK(c.core.sfp.cycles_per_vector.at("gelu") == 4);
  CHECK(c.memory.ring_stops == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  // 2 x 8 x 8 x 1 = 128 MAC/cycle at 1 GHz.
  CHECK(c.peak_macs_per_ns(Dtype::fp16) == 128);
  CHECK(c.resolved.at("core").at("pt").at("simd").at("fp16") == 1);
  CHECK(c.resolved.at("name") == "custom");
}

TEST_CASE("config: later --set wins and can repair a relation", "[config]") {
  ChipConfig c = load_chip_config(kSmall, {"card.cores=3", "card.cores=5", "core.lx.bytes=100000",
                                           "core.lx.usable_bytes=90000"});
  CHECK(c.cores == 5);
  CHECK(c.core.lx.usable_bytes == 90000);
}

TEST_CASE("config: unknown keys are rejected with a hint and the right file", "[config]") {
  TempDir t;
  std::string f = t.write("x.json", R"({"core": {"pt": {"rowz": 16}}})");
  REQUIRE_THROWS_AS(load_chip_config(f), InputError);
  REQUIRE_THROWS_WITH(load_chip_config(f), Contains(f + ": /core/pt/rowz: unknown key (did you mean \"rows\"?)"));

  std::string g = t.write("g.json", R"({"cores": 4})");
  REQUIRE_THROWS_WITH(load_chip_config(g), Contains(g + ": /cores: unknown key (did you mean \"card.cores\"?)"));

  std::string m = t.write("m.json", R"({"core": {"pt": {"simd": {"fp17": 4}}}})");
  REQUIRE_THROWS_WITH(load_chip_config(m), Contains(m + ": /core/pt/simd/fp17: unknown key (did you mean \"fp16\"?)"));

  // The bad key is in the parent: the parent is named, not the child that extends it.
  std::string parent = t.write("parent.json", R"({"memory": {"chanels": 4}})");
  std::string child = t.write("child.json", R"({"extends": "parent.json", "card": {"cores": 2}})");
  REQUIRE_THROWS_WITH(load_chip_config(child), Contains(parent + ": /memory/chanels: unknown key"));
}

TEST_CASE("config: wrong types and out-of-range values are rejected", "[config]") {
  TempDir t;
  auto check = [&](const std::string& body, const std::string& expected) {
    std::string f = t.write("x.json", body);
    REQUIRE_THROWS_WITH(load_chip_config(f), Contains(f + ": " + expected));
  };
  check(R"({"core": {"lx": {"bytes": -5}}})", "/core/lx/bytes: expected an integer > 0, got -5");
  check(R"({"core": {"clock_mhz": "fast"}})", "/core/clock_mhz: expected a number, got a string");
  check(R"({"core": {"pt": {"rows": 2.5}}})", "/core/pt/rows: expected an integer, got a number 2.5");
  check(R"({"core": {"pt": {"rows": 5000}}})", "/core/pt/rows: expected an integer in [1, 4096], got 5000");
  check(R"({"card": {"cores": 0}})", "/card/cores: expected an integer in [1, 1024], got 0");
  check(R"({"memory": {"ideal": 1}})", "/memory/ideal: expected true or false, got an integer");
  check(R"({"core": {"pt": {"dataflow": "xs"}}})", "/core/pt/dataflow: expected one of \"os\", \"ws\", \"is\", got \"xs\"");
  check(R"({"memory": {"impl": "dramsim"}})", "/memory/impl: expected one of \"simple\"");
  check(R"({"core": {"sfp": {"fp32_rate": 0}}})", "/core/sfp/fp32_rate: expected a number in [0.01, 1], got 0");
  check(R"({"core": {"sfp": {"cycles_per_vector": {"exp": -1}}}})",
        "/core/sfp/cycles_per_vector/exp: expected a number in (0, 1000000], got -1");
  check(R"({"core": {"pt": 8}})", "/core/pt: expected an object, got an integer");
  check(R"({"memory": {"ring_stops": [1, "a"]}})", "/memory/ring_stops/1: expected an integer, got a string");
  check(R"({"description": 3})", "/description: expected a string, got an integer");
  check(R"([1, 2])", "expected a JSON object at the top level, got an array");
}

TEST_CASE("config: rules between parameters are checked", "[config]") {
  TempDir t;
  std::string f = t.write("x.json", R"({"core": {"lx": {"usable_bytes": 3000000}}})");
  REQUIRE_THROWS_WITH(load_chip_config(f),
                      Contains(f + ": /core/lx/usable_bytes: expected at most core.lx.bytes (2097152), got 3000000"));
  // usable is the default here; the file that shrank bytes is blamed.
  std::string g = t.write("g.json", R"({"core": {"lx": {"bytes": 1048576}}})");
  REQUIRE_THROWS_WITH(load_chip_config(g), Contains(g + ": /core/lx/bytes: expected at least core.lx.usable_bytes (1589376), got 1048576"));
  // A child that shrinks bytes below its parent's usable_bytes is blamed, not the parent.
  t.write("parent.json", R"({"core": {"lx": {"bytes": 1048576, "usable_bytes": 1000000}}})");
  std::string child = t.write("child.json", R"({"extends": "parent.json", "core": {"lx": {"bytes": 524288}}})");
  REQUIRE_THROWS_WITH(load_chip_config(child),
                      Contains(child + ": /core/lx/bytes: expected at least core.lx.usable_bytes (1000000), got 524288"));
  REQUIRE_THROWS_WITH(load_chip_config(kSmall, {"core.lx.usable_bytes=300000"}),
                      Contains("--set: core.lx.usable_bytes: expected at most core.lx.bytes (262144), got 300000"));
  std::string h = t.write("h.json", R"({"memory": {"ring_stops": [0, 1]}})");
  REQUIRE_THROWS_WITH(load_chip_config(h), Contains(h + ": /memory/ring_stops: expected one ring stop per channel (8), got 2"));
  std::string i = t.write("i.json", R"({"card": {"cores": 4}, "memory": {"channels": 2, "ring_stops": [0, 4]}})");
  REQUIRE_THROWS_WITH(load_chip_config(i), Contains(i + ": /memory/ring_stops/1: expected a ring stop < card.cores (4), got 4"));
  std::string j = t.write("j.json", R"({"memory": {"bus_bits": 12}})");
  REQUIRE_THROWS_WITH(load_chip_config(j), Contains(j + ": /memory/bus_bits: expected a multiple of 8, got 12"));
  std::string k = t.write("k.json", R"({"memory": {"interleave_bytes": 100}})");
  REQUIRE_THROWS_WITH(load_chip_config(k), Contains(k + ": /memory/interleave_bytes: expected a multiple of core.dma.stick_bytes (128), got 100"));
  // The lpddr5 address map (an "internal error" when the model was built): a block of whole
  // column accesses, a row of whole blocks; the parameter set last is blamed.
  std::string l = t.write("l.json", R"({"memory": {"lpddr5": {"row_bytes": 1000}}})");
  REQUIRE_THROWS_WITH(load_chip_config(l), Contains(l + ": /memory/lpddr5/row_bytes: expected a multiple of "
                                                        "memory.lpddr5.interleave_bytes (512), got 1000"));
  t.write("l5parent.json", R"({"memory": {"lpddr5": {"row_bytes": 2048}}})");
  std::string lc = t.write("l5child.json", R"({"extends": "l5parent.json", "memory": {"lpddr5": {"interleave_bytes": 4096}}})");
  REQUIRE_THROWS_WITH(load_chip_config(lc), Contains(lc + ": /memory/lpddr5/interleave_bytes: expected a divisor of "
                                                          "memory.lpddr5.row_bytes (2048), got 4096"));
  REQUIRE_THROWS_WITH(load_chip_config(kSpyre, {"memory.lpddr5.burst_length=64", "memory.bus_bits=128"}),
                      Contains("--set: memory.lpddr5.burst_length: expected a column access (memory.lpddr5.burst_length 64 x "
                               "memory.bus_bits 128 / 8 = 1024 B) that divides memory.lpddr5.interleave_bytes (512), got 64"));
  // Under "simple" the lpddr5 block is not read: its rules are not checked in a config file, and a
  // --set of it is refused as changing nothing.
  std::string simple = t.write("simple.json", R"({"extends": ")" + std::filesystem::absolute(kSpyre).string() +
                                                  R"(", "memory": {"impl": "simple", "lpddr5": {"row_bytes": 1000, "tras": 1}}})");
  CHECK(load_chip_config(simple).memory.lpddr5.row_bytes == 1000);
  REQUIRE_THROWS_WITH(load_chip_config(kSpyre, {"memory.impl=simple", "memory.lpddr5.row_bytes=1000"}),
                      Contains("--set: memory.lpddr5.row_bytes: read only by memory.impl lpddr5 or bandwidth"));
  // Timings and queues that contradict each other (each ran: a refresh as long as its interval
  // made an add 100x slower, a batch larger than the queue made it faster).
  REQUIRE_THROWS_WITH(load_chip_config(kSpyre, {"memory.lpddr5.trfc=3125"}),
                      Contains("--set: memory.lpddr5.trfc: expected less than memory.lpddr5.trefi (3125), got 3125"));
  REQUIRE_THROWS_WITH(load_chip_config(kSpyre, {"memory.lpddr5.min_batch=33"}),
                      Contains("--set: memory.lpddr5.min_batch: expected at most memory.lpddr5.queue_depth (32), got 33"));
  REQUIRE_THROWS_WITH(load_chip_config(kSpyre, {"memory.lpddr5.tras=14"}),
                      Contains("--set: memory.lpddr5.tras: expected at least memory.lpddr5.trcd (15), got 14"));
  CHECK(load_chip_config(kSpyre, {"memory.lpddr5.trefi=0", "memory.lpddr5.trfc=5000"}).memory.lpddr5.trfc == 5000);  // no refresh
  CHECK(load_chip_config(simple).memory.lpddr5.tras == 1);  // timings unused under "simple"
}

TEST_CASE("config: extends loops and missing parents are rejected", "[config]") {
  TempDir t;
  std::string a = t.write("a.json", R"({"extends": "b.json"})");
  std::string b = t.write("b.json", R"({"extends": "a.json"})");
  REQUIRE_THROWS_WITH(load_chip_config(a), Contains(b + ": /extends: extends loop: a.json -> b.json -> a.json"));

  std::string self = t.write("self.json", R"({"extends": "./self.json"})");
  REQUIRE_THROWS_WITH(load_chip_config(self), Contains(self + ": /extends: extends loop: self.json -> self.json"));

  std::string orphan = t.write("orphan.json", R"({"extends": "nope.json"})");
  REQUIRE_THROWS_WITH(load_chip_config(orphan), Contains(orphan + ": /extends: no such file"));
  REQUIRE_THROWS_WITH(load_chip_config(orphan), Contains("nope.json"));

  std::string bad = t.write("bad.json", R"({"extends": 3})");
  REQUIRE_THROWS_WITH(load_chip_config(bad), Contains(bad + ": /extends: expected a string, got an integer"));
}

TEST_CASE("config: malformed JSON and missing files give line:column or the file", "[config]") {
  TempDir t;
  std::string f = t.write("x.json", "{\n  \"card\": {\"cores\": 4,}\n}\n");
  REQUIRE_THROWS_WITH(load_chip_config(f), Contains(f + ": 2:23: malformed JSON"));
  // A malformed parent is named, not the child.
  std::string p = t.write("p.json", "{ \"card\": ");
  std::string c = t.write("c.json", R"({"extends": "p.json"})");
  REQUIRE_THROWS_WITH(load_chip_config(c), Contains(p + ": 1:") && Contains("malformed JSON"));
  REQUIRE_THROWS_WITH(load_chip_config((t.path / "none.json").string()), Contains("none.json: no such file"));
}

TEST_CASE("config: bad --set overrides are rejected naming --set", "[config]") {
  auto rejects = [](const std::string& set, const std::string& expected) {
    REQUIRE_THROWS_WITH(load_chip_config(kSpyre, {set}), Contains(expected));
  };
  rejects("core.pt.rowz=3", "--set: core.pt.rowz: unknown parameter (did you mean \"core.pt.rows\"?)");
  rejects("core.pt.simd.fp17=1", "--set: core.pt.simd.fp17: unknown key \"fp17\" of core.pt.simd (did you mean \"fp16\"?)");
  rejects("core.pt=3", "--set: core.pt: a group of parameters");
  rejects("core.pt.rows=abc", "--set: core.pt.rows: expected an integer, got a string");
  rejects("core.pt.rows=0", "--set: core.pt.rows: expected an integer in [1, 4096], got 0");
  rejects("memory.ideal=yes", "--set: memory.ideal: expected true or false, got a string");
  rejects("core.pt.dataflow=xs", "--set: core.pt.dataflow: expected one of \"os\", \"ws\", \"is\", got \"xs\"");
  rejects("core.pt.simd.fp16=-1", "--set: core.pt.simd.fp16: expected an integer in [0, 1024], got -1");
  rejects("core.pt.simd={\"fp9\":1}", "--set: core.pt.simd.fp9: unknown key \"fp9\" of core.pt.simd");
  rejects("core.pt.simd={\"fp8\":true}", "--set: core.pt.simd.fp8: expected an integer, got a boolean");
  rejects("card.cores", "--set: card.cores: expected key.path=value");
  rejects("core.lx.usable_bytes=3000000", "--set: core.lx.usable_bytes: expected at most core.lx.bytes");
  rejects("extends=x.json", "--set: extends: unknown parameter");
}

TEST_CASE("config: docs/config.md contains the generated parameter table", "[config]") {
  std::string doc = read_file("docs/config.md");
  REQUIRE_FALSE(doc.empty());
  std::string table = params_markdown();
  bool found = doc.find(table) != std::string::npos;
  if (!found) {
    fs::path fresh = fs::temp_directory_path() / "dfsim_params_table.md";
    std::ofstream(fresh) << table;
    INFO("docs/config.md is out of date; the current table is in " << fresh.string());
    CHECK(found);
  }
  // Every parameter is in the table, with its type.
  for (const auto& p : chip_params()) CHECK_THAT(table, Contains("| `" + p.path + "` | `" + p.type_name() + "` |"));
}

TEST_CASE("config: the shipped JSON Schema matches the registry", "[config]") {
  Json shipped = load_json_file("docs/schemas/dfsim.config.schema.json");
  Json fresh = params_json_schema();
  if (shipped != fresh) {
    fs::path out = fs::temp_directory_path() / "dfsim.config.schema.json";
    std::ofstream(out) << fresh.dump(2) << "\n";
    INFO("docs/schemas/dfsim.config.schema.json is out of date; the current one is in " << out.string());
    CHECK(shipped == fresh);
  }
  CHECK(shipped.at("properties").at("core").at("properties").at("pt").at("properties").at("rows").at("maximum") == 4096);
  CHECK(shipped.at("properties").at("core").at("additionalProperties") == false);
}

TEST_CASE("config: the parameter table lists every parameter once", "[config]") {
  auto rows = param_table();
  REQUIRE(rows.size() == chip_params().size());
  std::set<std::string> paths;
  for (const auto& r : rows) {
    CHECK(paths.insert(r.path).second);
    CHECK_FALSE(r.description.empty());
  }
  auto simd = std::find_if(rows.begin(), rows.end(), [](const ParamRow& r) { return r.path == "core.pt.simd"; });
  REQUIRE(simd != rows.end());
  CHECK(simd->default_text == R"({"fp16":8,"fp8":16,"int4":32,"int8":16})");
  CHECK(simd->type == "map<dtype,int>");
  CHECK_THAT(params_text(), Contains("core.lx.usable_bytes"));
}

// A value of megabytes a file brings in (an unknown key, echoed in its JSON path) is clipped in
// the error's one line; short words, UTF-8 characters and the rest of the line are kept.
TEST_CASE("errors: an input error clips a run of megabytes, keeping UTF-8 characters whole", "[errors]") {
  CHECK(clip_long_runs("short words stay") == "short words stay");
  const std::string key(2 << 20, 'k');
  const std::string line = InputError("c.json", "/core/" + key, "unknown key").what();
  // "c.json: /core/" + 200 bytes of the run, the cut, the last 60, then ": unknown key"
  // (the run is "/core/kkk...k:", 6 + 2 MiB + 1 bytes; 200 + 60 kept).
  const std::size_t run = 6 + key.size() + 1;
  CHECK(line == "c.json: /core/" + std::string(194, 'k') + "...[" + std::to_string(run - 260) + " bytes]..." +
                    std::string(59, 'k') + ": unknown key");
  CHECK(line.size() < 400);
  // A cut inside a 2-byte character (é = C3 A9) moves to its edge: 199 'a' then é puts byte
  // 200 inside the é, so the head keeps 199 bytes and the é goes into the cut.
  std::string wide = std::string(199, 'a') + "\xC3\xA9" + std::string(600, 'b');
  const std::string clipped = clip_long_runs(wide);
  CHECK(clipped.substr(0, 203) == std::string(199, 'a') + "...[");
  CHECK(clipped.find("\xC3") == std::string::npos);
  CHECK(clipped == std::string(199, 'a') + "...[" + std::to_string(wide.size() - 199 - 60) + " bytes]..." +
                       std::string(60, 'b'));
  // A run of exactly the limit stays whole.
  CHECK(clip_long_runs(std::string(512, 'x')) == std::string(512, 'x'));
}

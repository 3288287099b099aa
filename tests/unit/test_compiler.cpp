// Tests of the op graph format (validation) and of the compiler passes.
#include <catch2/catch.hpp>
#include <map>

#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/tiling.h"
#include "sim/compiler/work_division.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "tests/unit/coverage.h"

using namespace dfsim;
using dfsim::testing::all_equal;
using dfsim::testing::coverage;
using Catch::Contains;

namespace {

ChipConfig chip(std::uint64_t lx = 1589376) {
  ChipConfig c;
  c.cores = 32;
  c.core.corelets = 2;
  c.core.lx.usable_bytes = lx;
  return c;
}

Json add_graph(const std::string& rows = "2048", const std::string& cols = "1024") {
  return Json::parse(R"({
    "format": "dfsim.ops", "version": 1, "name": "add",
    "tensors": {
      "a": {"shape": [)" + rows + ", " + cols + R"(], "dtype": "fp16"},
      "b": {"shape": [)" + rows + ", " + cols + R"(], "dtype": "fp16"},
      "y": {"shape": [)" + rows + ", " + cols + R"(], "dtype": "fp16"}
    },
    "inputs": ["a", "b"], "outputs": ["y"],
    "ops": [ {"op": "add", "inputs": ["a", "b"], "outputs": ["y"]} ],
    "compile": {"cores": 32, "lx_planning": false}
  })");
}

OpGraph ops(const Json& j) { return read_op_graph(j, "w.json"); }

KernelGraph compile(const Json& j, int cores, std::uint64_t lx = 1589376) {
  return compile_ops(ops(j), chip(lx), cores);
}

// Bytes moved by DMA instances of `op` (load or store), over all cores.
std::uint64_t dma_bytes(const KernelGraph& g, const std::string& op) {
  std::uint64_t n = 0;
  for (const auto& t : g.tasks)
    if (t.unit == UnitKind::dma && t.op == op) n += t.reads[0].total_bytes() * t.core_count;
  return n;
}

// Every compute task's tile fits the budget (half the usable LX). A matmul step's previous
// accumulator (its third read) is the previous step's tile, counted there: with one step's A,
// B and output in each half, the next step's loads can run while this one computes.
void check_tile_budget(const KernelGraph& g, std::uint64_t budget) {
  for (const auto& t : g.tasks) {
    if (t.unit == UnitKind::dma) continue;
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < t.reads.size(); ++i)
      if (!(t.unit == UnitKind::pt && i == 2)) bytes += g.buffers[t.reads[i].buffer].bytes;
    for (const auto& a : t.writes) bytes += g.buffers[a.buffer].bytes;
    INFO(t.name);
    CHECK(bytes <= budget);
  }
}

}  // namespace

TEST_CASE("compiler: op graph rejections name the file and the JSON path") {
  Json j = add_graph();
  auto fails = [&](const std::string& what) { REQUIRE_THROWS_WITH(ops(j), Contains(what)); };
  SECTION("format, version") {
    j["format"] = "dfsim.kernel";
    fails("w.json: /format: expected dfsim.ops, got dfsim.kernel");
    j = add_graph();
    j["version"] = 3;
    fails("w.json: /version: expected an integer in [1, 2], got 3");
  }
  SECTION("unknown keys with a hint") {
    j["ops"][0]["atrs"] = Json::object();
    fails("w.json: /ops/0/atrs: unknown key (did you mean \"attrs\"?)");
    j = add_graph();
    j["compile"]["coress"] = 2;
    fails("w.json: /compile/coress: unknown key (did you mean \"cores\"?)");
  }
  SECTION("a description is free text, never another type") {
    j["ops"][0]["description"] = 7;
    fails("w.json: /ops/0/description: expected a string, got an integer");
    j = add_graph();
    j["tensors"]["a"]["description"] = Json::array();
    fails("w.json: /tensors/a/description: expected a string, got an array");
  }
  SECTION("unknown op") {
    j["ops"][0]["op"] = "addd";
    fails("w.json: /ops/0/op: unknown op \"addd\", expected one of add, sub, mul");
    fails("(did you mean \"add\"?)");
  }
  SECTION("unknown dtype") {
    j["tensors"]["a"]["dtype"] = "bf16";
    fails("w.json: /tensors/a/dtype: unknown dtype \"bf16\"");
  }
  SECTION("shape entries must be integers >= 1") {
    j["tensors"]["b"]["shape"][1] = 0;
    fails("w.json: /tensors/b/shape/1: expected an integer");
    j["tensors"]["b"]["shape"][1] = 2.5;
    fails("w.json: /tensors/b/shape/1: expected an integer");
  }
  SECTION("dangling tensor reference") {
    j["ops"][0]["inputs"][1] = "bb";
    fails("w.json: /ops/0/inputs/1: unknown tensor \"bb\" (did you mean \"b\"?)");
    j = add_graph();
    j["outputs"][0] = "z";
    fails("w.json: /outputs/0: unknown tensor \"z\"");
  }
  SECTION("duplicate names") {
    j["inputs"] = {"a", "a"};
    fails("w.json: /inputs/1: duplicate tensor \"a\"");
  }
  SECTION("wrong input and output counts") {
    j["ops"][0]["inputs"] = {"a"};
    fails("w.json: /ops/0/inputs: add takes 2 input(s), got 1");
    j = add_graph();
    j["ops"][0]["op"] = "neg";
    fails("w.json: /ops/0/inputs: neg takes 1 input(s), got 2");
  }
  SECTION("shape mismatch says expected and got") {
    j["tensors"]["y"]["shape"] = {2048, 1000};
    fails("w.json: /ops/0/outputs/0: shape mismatch for \"y\": expected [2048, 1024] from add, got [2048, 1000]");
  }
  SECTION("declared output shape differs from the broadcast one") {
    j["tensors"]["a"]["shape"] = {2048, 1};
    j["tensors"]["b"]["shape"] = {1024};
    j["tensors"]["y"]["shape"] = {1024};
    fails("w.json: /ops/0/outputs/0: shape mismatch for \"y\": expected [2048, 1024] from add, got [1024]");
  }
  SECTION("sum output shape with keepdim") {
    j["ops"][0] = Json{{"op", "sum"}, {"inputs", {"a"}}, {"outputs", {"y"}}, {"attrs", {{"dim", -1}, {"keepdim", true}}}};
    fails("w.json: /ops/0/outputs/0: shape mismatch for \"y\": expected [2048, 1] from sum, got [2048, 1024]");
  }
  SECTION("broadcasting that does not apply") {
    j["tensors"]["b"]["shape"] = {2, 1024};
    fails("w.json: /ops/0/inputs: shapes [2048, 1024] and [2, 1024] do not broadcast");
  }
  SECTION("matmul inner dims") {
    j["ops"][0]["op"] = "matmul";
    j["tensors"]["b"]["shape"] = {1000, 1024};
    fails("w.json: /ops/0/inputs: matmul inner dimensions differ: [2048, 1024] @ [1000, 1024]");
  }
  SECTION("sum dim out of range") {
    j["ops"][0] = Json{{"op", "sum"}, {"inputs", {"a"}}, {"outputs", {"y"}}, {"attrs", {{"dim", 2}}}};
    fails("w.json: /ops/0/attrs/dim: dim 2 out of range for a rank-2 input, expected in [-2, 1]");
  }
  SECTION("a tensor produced twice") {
    j["ops"].push_back(Json{{"op", "sub"}, {"inputs", {"a", "b"}}, {"outputs", {"y"}}});
    fails("w.json: /ops/1/outputs/0: tensor \"y\" is produced twice: also by op 0 (add)");
  }
  SECTION("an input produced by an op") {
    j["ops"].push_back(Json{{"op", "neg"}, {"inputs", {"y"}}, {"outputs", {"a"}}});
    fails("w.json: /ops/1/outputs/0: tensor \"a\" is a graph input and cannot be produced");
  }
  SECTION("a used tensor never produced") {
    j["inputs"] = {"a"};
    fails("w.json: /ops/0/inputs/1: tensor \"b\" is never produced by an op and is not a graph input");
  }
  SECTION("a cycle") {
    j["tensors"]["t"] = Json{{"shape", {2048, 1024}}, {"dtype", "fp16"}};
    j["inputs"] = {"a"};
    j["ops"] = Json::parse(R"([
      {"op": "add", "inputs": ["a", "t"], "outputs": ["b"]},
      {"op": "neg", "inputs": ["b"], "outputs": ["t"]},
      {"op": "copy", "inputs": ["b"], "outputs": ["y"]}])");
    fails("ops form a cycle: ");
    fails("op 0 (add) needs op 1 (neg) needs op 0 (add)");
    fails("w.json: /ops/");
  }
  SECTION("a long cycle is named in one short line") {
    // 1 000 negations, each of the previous one's output, the first of the last's: one line of
    // the first 4 ops, how many more, and the op it closes on (50 000 made a 1 MB line).
    j["inputs"] = Json::array();
    j["outputs"] = {"t0"};
    j["tensors"] = Json::object();
    j["ops"] = Json::array();
    for (int i = 0; i < 1000; ++i) {
      j["tensors"]["t" + std::to_string(i)] = Json{{"shape", {64, 64}}, {"dtype", "fp16"}};
      j["ops"].push_back({{"op", "neg"}, {"inputs", {"t" + std::to_string((i + 999) % 1000)}}, {"outputs", {"t" + std::to_string(i)}}});
    }
    fails("ops form a cycle: op 0 (neg) needs op 999 (neg) needs op 998 (neg) needs op 997 (neg) needs ... (996 more) ... "
          "needs op 0 (neg)");
  }
  SECTION("empty ops") {
    j["ops"] = Json::array();
    fails("w.json: /ops: the op list is empty");
  }
  SECTION("an output never produced") {
    j["outputs"] = {"y", "b"};
    fails("w.json: /outputs/1: graph output \"b\" is never produced by an op");
  }
  SECTION("compile options") {
    j["compile"]["cores"] = 0;
    fails("w.json: /compile/cores: expected an integer in [1, 1048576], got 0");
    j["compile"]["cores"] = 4;
    j["compile"]["lx_planning"] = "yes";
    fails("w.json: /compile/lx_planning: expected true, false or one of off, none, reductions, inplace, clone or all");
  }
}

TEST_CASE("compiler: op graph attributes and broadcasting are resolved") {
  Json j = add_graph();
  j["tensors"]["b"]["shape"] = {1, 1024};
  j["tensors"]["s"] = Json{{"shape", {2048}}, {"dtype", "fp32"}};
  j["outputs"] = {"y", "s"};
  j["ops"].push_back(Json{{"op", "sum"}, {"inputs", {"y"}}, {"outputs", {"s"}}, {"attrs", {{"dim", -1}}}});
  OpGraph g = ops(j);
  CHECK(g.ops[1].dim == 1);
  CHECK_FALSE(g.ops[1].keepdim);
  CHECK(g.order == std::vector<int>{0, 1});
  CHECK(g.compile.cores == 32);
  CHECK(g.tensors[g.find_tensor("s")].bytes() == 2048 * 4);
}

TEST_CASE("compiler: the shipped workloads load and compile") {
  for (const char* w : {"add_2048x1024", "softmax_chain_512x1024", "matmul_1024", "matmul_4096"}) {
    OpGraph g = load_op_graph(std::string(DFSIM_SOURCE_DIR) + "/workloads/" + w + ".json");
    INFO(w);
    CHECK_FALSE(g.description.empty());
    KernelGraph k = compile_ops(g, chip(), g.compile.cores);
    CHECK(k.cores == g.compile.cores);
  }
}

TEST_CASE("compiler: add 2048x1024 on 32 cores") {
  KernelGraph g = compile(add_graph(), 32);
  // 2048 rows / 32 cores = 64 rows per core; a row needs 3 x 2048 B (a, b, y) of LX, and
  // 64 x 6144 = 393216 <= 1589376 / 2 would fit one tile, but the output slices are
  // contiguous, so the share is pipelined in 4 tiles of 16 rows (16 x 6144 = 96 KiB >= 16 KiB):
  // 4 tiles x (load a, load b, add, store y) = 16 SPMD templates x 32 cores = 512 instances.
  REQUIRE(g.kernels.size() == 1);
  CHECK(g.tasks.size() == 16);
  CHECK(g.instance_count() == 512);
  CHECK(dma_bytes(g, "load") == 2u * 2048 * 1024 * 2);   // 8 MiB: a and b, each read once
  CHECK(dma_bytes(g, "store") == 1u * 2048 * 1024 * 2);  // 4 MiB: y
  CHECK(g.tasks[0].reads[0].offset.alpha == 64 * 2048);  // each core moves 64 rows on
  CHECK(g.tasks[4].reads[0].offset.beta == 16 * 2048);   // tile 1 starts 16 rows later
  check_tile_budget(g, 1589376 / 2);

  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
  CHECK(all_equal(coverage(g, eg, "a", false), 1));
  // The add on core 5 waits for the two loads on core 5; the store waits for the add.
  CHECK(eg.deps[eg.first_instance[2] + 5].to_vector() == std::vector<int>{eg.first_instance[0] + 5, eg.first_instance[1] + 5});
  CHECK(eg.deps[eg.first_instance[3] + 5].to_vector() == std::vector<int>{eg.first_instance[2] + 5});
}

TEST_CASE("compiler: small shares and column reductions are not pipelined") {
  // 64 rows of 64 fp16 per core: a tile of 16 rows would carry 16 x 3 x 128 = 6 KiB < 16 KiB.
  KernelGraph small = compile(add_graph("2048", "64"), 32);
  CHECK(small.tasks.size() == 4);
  // A column sum split over its columns (a strided slice per core; forced, as unforced its
  // 128-B runs would have the rows split instead, below) keeps one tile: cutting it would
  // shorten rows.
  KernelGraph cols = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "c",
      "tensors": {"x": {"shape": [1, 4096, 2048], "dtype": "fp16"}, "y": {"shape": [1, 2048], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["y"],
      "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": 1}, "compile": {"split": {"d1": 32}}}]})"), 32);
  CHECK(cols.tasks.size() == 3);
  // A row sum (contiguous rows per core) is pipelined, in twice the elementwise ops' tiles so
  // that only an eighth of its SFP reduction trails the last load: 2048 rows of 2 KiB on 32
  // cores = 64 rows (128 KiB) per core, cut into 8 tiles of 8 rows (16 KiB): 8 x 3 = 24
  // templates; its SFP op stays a cross-lane reduction.
  KernelGraph rows = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "r",
      "tensors": {"x": {"shape": [2048, 1024], "dtype": "fp16"}, "y": {"shape": [2048], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["y"],
      "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": -1}}]})"), 32);
  CHECK(rows.tasks.size() == 24);
  CHECK(rows.tasks[1].op == "sum");
  // A share too small for 8 such tiles gets as many as keep 16 KiB each, not one tile: 1536
  // rows on 32 cores = 48 rows per core, each 2 KiB of x plus the 128-B stick of its sum
  // (stick-sparse), 48 x 2176 = 104 448 B -> 6 tiles (floor(104448 / 16384)) of 8 rows: 18
  // templates (it was one tile, 3 templates, and a 1536-row sum read at 114 GB/s against 141
  // for 2048 rows).
  KernelGraph some = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "r",
      "tensors": {"x": {"shape": [1536, 1024], "dtype": "fp16"}, "y": {"shape": [1536], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["y"],
      "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": -1}}]})"), 32);
  CHECK(some.tasks.size() == 18);
  CHECK(some.tasks[0].reads[0].bytes == 8 * 2048);  // a tile: 8 rows of x
}

TEST_CASE("compiler: a reduction over the stick dim stores a stick per result through HBM") {
  auto graph = [](int dim, const std::string& out, bool fuse_chain) {
    Json j = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "r",
        "tensors": {"x": {"shape": [4096, 2048], "dtype": "fp16"}},
        "inputs": ["x"], "outputs": ["y"], "compile": {"lx_planning": false}})");
    j["tensors"]["y"] = {{"shape", Json::parse(out)}, {"dtype", "fp16"}};
    j["ops"] = Json::array({Json{{"op", "sum"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"dim", dim}}}}});
    if (fuse_chain) {  // y = sum(x, keepdim) feeds z = x * y, fused into one kernel
      j["ops"][0]["attrs"]["keepdim"] = true;
      j["tensors"]["z"] = {{"shape", {4096, 2048}}, {"dtype", "fp16"}};
      j["ops"].push_back(Json{{"op", "mul"}, {"inputs", {"x", "y"}}, {"outputs", {"z"}}});
      j["outputs"] = {"z"};
    }
    return j;
  };
  SECTION("row sums: 4096 results, a 128-B stick each (512 KiB, not 8 KiB)") {
    KernelGraph g = compile(graph(-1, "[4096]", false), 32);
    CHECK(g.buffers[static_cast<std::size_t>(g.find_buffer("y"))].bytes == 4096u * 128);
    CHECK(dma_bytes(g, "load") == 4096u * 2048 * 2);
    CHECK(dma_bytes(g, "store") == 4096u * 128);
    // Each SFP sum writes its tile's results one per stick: 2-byte runs 128 B apart, one row
    // per result (what the SFP counts as the rows of its cross-lane reduction).
    std::uint64_t results = 0;
    for (const Task& t : g.tasks)
      if (t.op == "sum") {
        REQUIRE(t.writes.size() == 1);
        CHECK(t.writes[0].bytes == 2);
        CHECK(t.writes[0].stride == 128);
        CHECK(t.elements == t.writes[0].rows * 2048);
        results += t.writes[0].rows * static_cast<std::uint64_t>(t.core_count);
      }
    CHECK(results == 4096);
    ExpandedGraph eg = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, eg, "y", true), 1));  // every stick stored once
    check_tile_budget(g, 1589376 / 2);
  }
  SECTION("a column sum keeps its dense bytes: its results run along the stick dim") {
    KernelGraph g = compile(graph(0, "[2048]", false), 32);
    CHECK(g.buffers[static_cast<std::size_t>(g.find_buffer("y"))].bytes == 2048u * 2);
    CHECK(dma_bytes(g, "store") == 2048u * 2);
  }
  SECTION("fused with its reader, the row sums never reach HBM") {
    KernelGraph g = compile(graph(-1, "[4096, 1]", true), 32);
    REQUIRE(g.kernels.size() == 1);
    CHECK(g.buffers[static_cast<std::size_t>(g.find_buffer("y"))].bytes == 4096u * 2);
    CHECK(dma_bytes(g, "store") == 4096u * 2048 * 2);  // z only
  }
}

TEST_CASE("compiler: a smaller LX splits each core's share into tiles") {
  // Budget 98304 B / 6144 B per row = 16 rows per tile; 64 rows per core -> 4 tiles;
  // 4 tiles x 4 templates = 16 templates, x 32 cores = 512 instances.
  KernelGraph g = compile(add_graph(), 32, 2 * 98304);
  CHECK(g.tasks.size() == 16);
  CHECK(g.instance_count() == 512);
  CHECK(dma_bytes(g, "load") == 2u * 2048 * 1024 * 2);
  check_tile_budget(g, 98304);
  ExpandedGraph eg = expand_graph(g, chip(2 * 98304));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
}

TEST_CASE("compiler: work division with a remainder") {
  auto g1 = divide_work(1000, 32);  // share ceil(1000/32) = 32: 31 full cores + 8 rows on core 31
  REQUIRE(g1.size() == 2);
  CHECK(g1[0].count == 31);
  CHECK(g1[0].share == 32);
  CHECK(g1[1].first == 31);
  CHECK(g1[1].share == 8);
  CHECK(g1[1].base == 992);
  auto g2 = divide_work(100, 32);   // share 4: 25 cores, no remainder
  REQUIRE(g2.size() == 1);
  CHECK(g2[0].count == 25);
  auto g3 = divide_work(5, 32);     // fewer rows than cores: 5 cores of 1 row
  REQUIRE(g3.size() == 1);
  CHECK(g3[0].count == 5);
}

TEST_CASE("compiler: uneven splits cover every row exactly once") {
  for (const char* rows : {"100", "1000", "7"}) {
    INFO(rows << " rows");
    KernelGraph g = compile(add_graph(rows, "64"), 32);
    ExpandedGraph eg = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, eg, "y", true), 1));
    CHECK(all_equal(coverage(g, eg, "a", false), 1));
    CHECK(all_equal(coverage(g, eg, "b", false), 1));
  }
  // 1000 rows: an SPMD template over cores 0..30 plus an explicit task on core 31 per step.
  KernelGraph g = compile(add_graph("1000", "64"), 32);
  CHECK(g.tasks.size() == 8);
  CHECK(g.tasks[0].core_count == 31);
  CHECK(g.tasks[4].core_count == 1);
  CHECK(g.tasks[4].first_core == 31);
  CHECK(g.tasks[4].reads[0].offset.beta == 992 * 64 * 2);
}

TEST_CASE("compiler: int4 elementwise ops and reductions are divided at whole bytes") {
  // Two int4 per byte. add of int4 tensors on 32 cores: every byte of a, b read once and of y
  // written once, for shapes whose split unit is half a byte (1-D: one element) as well as
  // whole rows.
  auto int4_add = [](const std::string& shape) {
    Json j = add_graph();
    for (const char* t : {"a", "b", "y"}) j["tensors"][t] = Json{{"shape", Json::parse(shape)}, {"dtype", "int4"}};
    return j;
  };
  for (const char* shape : {"[4096]", "[64, 62]", "[1000, 64]", "[4094]"}) {
    INFO(shape);
    KernelGraph g = compile(int4_add(shape), 32);
    ExpandedGraph eg = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, eg, "y", true), 1));
    CHECK(all_equal(coverage(g, eg, "a", false), 1));
    CHECK(all_equal(coverage(g, eg, "b", false), 1));
  }
  // [4096]: 128 elements per core, 128 x 4 bits = 64 B from one core's slice to the next (it
  // was 128: an element's half byte rounded up to 1 B before multiplying by the share).
  KernelGraph g = compile(int4_add("[4096]"), 32);
  CHECK(g.buffers[static_cast<std::size_t>(g.find_buffer("a"))].bytes == 2048);
  CHECK(g.tasks[0].core_count == 32);
  CHECK(g.tasks[0].reads[0].offset.alpha == 64);
  // A row sum of int4 [4096, 64] into int4 [4096]: 131 072 B read once, 2 048 B written once.
  Json sum = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "s",
    "tensors": {"x": {"shape": [4096, 64], "dtype": "int4"}, "y": {"shape": [4096], "dtype": "int4"}},
    "inputs": ["x"], "outputs": ["y"],
    "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": -1}}]})");
  KernelGraph gs = compile(sum, 32);
  ExpandedGraph es = expand_graph(gs, chip());
  CHECK(coverage(gs, es, "x", false).size() == 131072);
  CHECK(all_equal(coverage(gs, es, "x", false), 1));
  CHECK(all_equal(coverage(gs, es, "y", true), 1));
  // [4094] on 32 cores: shares of 128 elements, the last 126; on 3 cores shares of 1365
  // elements, which would end half a byte into the next core's: refused, naming the op.
  REQUIRE_THROWS_WITH(compile(int4_add("[4094]"), 3),
                      Contains("w.json: /ops/0: add on 3 cores: each core's share (1365 of the split dim, 5460 bits) "
                               "would end half a byte into the next core's; int4 work is divided at whole bytes only"));
  CHECK_NOTHROW(compile(int4_add("[4094]"), 1));  // one core: nothing to divide
  // Kept in LX (lx_planning all): a chain over int4 [64] on one core reads and writes each
  // tile's part of the kept slice at its bit offset (it was 2x: 1 B per element).
  Json chain = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "c",
    "tensors": {"x": {"shape": [64], "dtype": "int4"}, "t": {"shape": [64], "dtype": "int4"},
                "y": {"shape": [64], "dtype": "int4"}},
    "inputs": ["x"], "outputs": ["y"],
    "ops": [{"op": "neg", "inputs": ["x"], "outputs": ["t"]}, {"op": "add", "inputs": ["t", "x"], "outputs": ["y"]}],
    "compile": {"lx_planning": "all", "fuse": false}})");
  KernelGraph gk = compile(chain, 1);
  CHECK(gk.find_buffer("t@lx") >= 0);
  ExpandedGraph ek = expand_graph(gk, chip());
  CHECK(all_equal(coverage(gk, ek, "y", true), 1));
  // An int4 tensor's rows are whole bytes: an odd last dim is refused where the graph is read.
  Json odd = int4_add("[4, 63]");
  REQUIRE_THROWS_WITH(ops(odd), Contains("w.json: /tensors/a/shape/1: the last dim of an int4 tensor must make rows of "
                                         "whole bytes (2 elements a byte), got 63"));
}

TEST_CASE("compiler: a broadcast operand is loaded once and multicast to every core") {
  Json j = add_graph("2048", "1024");
  j["tensors"]["b"]["shape"] = {1024};
  KernelGraph g = compile(j, 32);
  // a: 4 MiB once; b (2 KiB, not a multiple of 32 sticks) loaded whole by core 0 and
  // delivered to all 32 cores, where every tile reads it.
  CHECK(dma_bytes(g, "load") == 2048u * 1024 * 2 + 1024u * 2);
  CHECK(dma_bytes(g, "store") == 2048u * 1024 * 2);
  const Task& b = g.tasks[0];
  CHECK(b.op == "load");
  CHECK(b.core_count == 1);
  CHECK(b.writes.size() == 32);
  int bl = b.writes[0].buffer;
  ExpandedGraph eg = expand_graph(g, chip());
  for (const auto& inst : eg.instances)
    if (g.tasks[inst.task].unit == UnitKind::sfp) {
      bool reads_b = false;
      for (const Region& r : reads_of(g, inst)) reads_b = reads_b || (r.buffer == bl && r.core == inst.core);
      CHECK(reads_b);
    }
  // 32 KiB (a multiple of 32 sticks) is loaded in 32 bands of 1 KiB, one per core.
  Json wide = add_graph("2048", "16384");
  wide["tensors"]["b"]["shape"] = {16384};
  KernelGraph w = compile(wide, 32);
  CHECK(w.tasks[0].core_count == 32);
  CHECK(w.tasks[0].reads[0].bytes == 1024);
  CHECK(w.tasks[0].reads[0].offset.alpha == 1024);
  CHECK(dma_bytes(w, "load") == 2048u * 16384 * 2 + 16384u * 2);
}

TEST_CASE("compiler: softmax chain sum then broadcast mul on 1 core") {
  OpGraph og = load_op_graph(std::string(DFSIM_SOURCE_DIR) + "/workloads/softmax_chain_512x1024.json");
  KernelGraph g = compile_ops(og, chip(), 1);
  REQUIRE(g.kernels.size() == 2);
  std::uint64_t sum_elems = 0, mul_elems = 0;
  for (const auto& t : g.tasks) {
    if (t.op == "sum") sum_elems += t.elements;
    if (t.op == "mul") mul_elems += t.elements;
  }
  CHECK(sum_elems == 512u * 1024);  // the input elements of every sum tile
  CHECK(mul_elems == 512u * 1024);
  // x read twice (sum, mul), s read once; s and y written once. s goes through HBM
  // stick-sparse: a 128-B stick per row (512 x 128 B, not 512 x 2).
  CHECK(dma_bytes(g, "load") == 2u * 512 * 1024 * 2 + 512u * 128);
  CHECK(dma_bytes(g, "store") == 512u * 128 + 512u * 1024 * 2);
  CHECK(g.buffers[static_cast<std::size_t>(g.find_buffer("s"))].bytes == 512u * 128);
  check_tile_budget(g, 1589376 / 2);
  ExpandedGraph eg = expand_graph(g, chip());
  // The mul kernel's load of s waits for every store of s (the sum kernel's stores).
  int s = g.find_buffer("s");
  for (std::size_t i = 0; i < eg.instances.size(); ++i) {
    const TaskInstance& inst = eg.instances[i];
    const Task& t = g.tasks[inst.task];
    if (t.op != "load" || reads_of(g, inst)[0].buffer != s) continue;
    REQUIRE_FALSE(eg.deps[i].empty());
    for (int d : eg.deps[i]) CHECK(g.tasks[eg.instances[d].task].op == "store");
  }
}

// sum over dim 0 of x [rows, 256] fp16 into s [256] fp32.
Json column_sum_graph(int rows) {
  Json j = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "colsum",
    "tensors": {"x": {"shape": [64, 256], "dtype": "fp16"}, "s": {"shape": [256], "dtype": "fp32"}},
    "inputs": ["x"], "outputs": ["s"],
    "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["s"], "attrs": {"dim": 0}}]})");
  j["tensors"]["x"]["shape"][0] = rows;
  return j;
}

TEST_CASE("compiler: sum over a leading dim splits a kept dim with strided loads") {
  // Forced: unforced, 64 rows would have the reduced rows split (8 a core read four times the
  // 1-KiB fp32 partial a core sends; "a column sum ... whole rows", below).
  Json j = column_sum_graph(64);
  j["ops"][0]["compile"]["split"] = {{"d0", 4}};
  KernelGraph g = compile(j, 4);
  // 256 columns / 4 cores = 64 columns each: load 64 rows of 128 B, 512 B apart.
  const Access& rd = g.tasks[0].reads[0];
  CHECK(rd.rows == 64);
  CHECK(rd.bytes == 128);
  CHECK(rd.stride == 512);
  CHECK(rd.offset.alpha == 128);
  CHECK(g.tasks[1].elements == 64u * 64);
  // Each lane keeps its own column: the SFP accumulates sticks elementwise (no cross-lane tree).
  CHECK(g.tasks[1].op == "add");
  // 256 columns on 32 cores would give 8 columns (16 B) each: the stick dim is split in whole
  // sticks, 256 / 64 = 4 cores of one 128 B stick each (4 rows: too few to split them).
  KernelGraph wide = compile(column_sum_graph(4), 32);
  CHECK(wide.cores == 32);
  CHECK(wide.tasks[0].core_count == 4);
  CHECK(wide.tasks[0].reads[0].bytes == 128);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "s", true), 1));
}

TEST_CASE("compiler: a column sum whose rows do not fit LX carries stick-wide partials over row chunks") {
  // Split over its columns (forced: unforced, a stick of each row per core is a short run and
  // the rows would be split instead, "a column sum reads whole rows").
  auto forced = [](Json j) {
    j["ops"][0]["compile"] = {{"split", {{"d0", 4}}}};
    return j;
  };
  KernelGraph g = compile(forced(column_sum_graph(8192)), 4);
  // 64 columns per core: a stick-wide column of all 8192 rows is 1 MiB, over the 794 688-byte
  // tile budget. Rows per chunk: (794 688 - 2 x 256 B of fp32 partial) / 128 B = 6 204, so two
  // chunks of 4 096 rows, each a load of 4 096 runs of one whole stick (128 B, 512 B apart; the
  // columns are not narrowed to half sticks), then an SFP add carrying the first's partial.
  std::vector<const Task*> loads, adds;
  for (const Task& t : g.tasks) {
    if (t.op == "load") loads.push_back(&t);
    if (t.op == "add") adds.push_back(&t);
  }
  REQUIRE(loads.size() == 2);
  REQUIRE(adds.size() == 2);
  for (const Task* t : loads) {
    CHECK(t->core_count == 4);
    CHECK(t->reads[0].bytes == 128);
    CHECK(t->reads[0].rows == 4096);
    CHECK(t->reads[0].stride == 512);
    CHECK(t->reads[0].offset.alpha == 128);
  }
  CHECK(loads[1]->reads[0].offset.beta == 4096 * 512);
  CHECK(adds[0]->elements == 4096u * 64);
  CHECK(adds[0]->reads.size() == 1);
  REQUIRE(adds[1]->reads.size() == 2);  // the chunk and the carried partial
  CHECK(adds[1]->reads[1].buffer == adds[0]->writes[0].buffer);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));  // every input byte read once
  CHECK(all_equal(coverage(g, eg, "s", true), 1));
  // Rows that fit keep the one-load tile (the case above).
  KernelGraph f = compile(forced(column_sum_graph(4096)), 4);
  CHECK(f.tasks[0].reads[0].rows == 4096);
  CHECK(f.tasks[0].reads[0].bytes == 128);
}

TEST_CASE("compiler: matmul MACs, tiles and coverage") {
  struct Case { std::int64_t m, k, n; int cores; std::uint64_t lx; };
  for (Case c : {Case{1024, 1024, 1024, 32, 1589376}, Case{100, 96, 80, 32, 8192}, Case{300, 200, 130, 7, 20000}}) {
    INFO(c.m << "x" << c.k << "x" << c.n << " on " << c.cores);
    Json j = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "mm",
      "tensors": {"a": {"shape": [)" + std::to_string(c.m) + "," + std::to_string(c.k) + R"(], "dtype": "fp16"},
                  "b": {"shape": [)" + std::to_string(c.k) + "," + std::to_string(c.n) + R"(], "dtype": "fp16"},
                  "c": {"shape": [)" + std::to_string(c.m) + "," + std::to_string(c.n) + R"(], "dtype": "fp16"}},
      "inputs": ["a", "b"], "outputs": ["c"],
      "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]})");
    KernelGraph g = compile(j, c.cores, c.lx);
    std::uint64_t macs = 0;
    for (const auto& t : g.tasks)
      if (t.unit == UnitKind::pt) macs += t.m * t.n * t.k * t.core_count;
    CHECK(macs == static_cast<std::uint64_t>(c.m * c.n * c.k));
    check_tile_budget(g, c.lx / 2);
    ExpandedGraph eg = expand_graph(g, chip(c.lx));
    CHECK(all_equal(coverage(g, eg, "c", true), 1));
    // Every byte a PT step reads is written by exactly its dependencies: A and B by their
    // loads (one per core when operands are shared), the previous accumulator by one PT step.
    for (std::size_t i = 0; i < eg.instances.size(); ++i) {
      const TaskInstance& inst = eg.instances[i];
      const Task& t = g.tasks[inst.task];
      if (t.unit != UnitKind::pt) continue;
      for (const Region& r : reads_of(g, inst)) {
        std::uint64_t written = 0;
        int pt_writers = 0;
        for (int d : eg.deps[i])
          for (const Region& w : writes_of(g, eg.instances[d]))
            if (w.buffer == r.buffer && w.core == r.core) {
              written += w.total_bytes();
              pt_writers += g.tasks[eg.instances[d].task].unit == UnitKind::pt;
            }
        CHECK(written == r.total_bytes());
        if (g.buffers[r.buffer].dtype == Dtype::fp32) CHECK(pt_writers == 1);
      }
    }
  }
}

TEST_CASE("compiler: matmul 1024 on a forced 4x8 grid shares operands") {
  KernelGraph g = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "mm",
      "tensors": {"a": {"shape": [1024, 1024], "dtype": "fp16"}, "b": {"shape": [1024, 1024], "dtype": "fp16"},
                  "c": {"shape": [1024, 1024], "dtype": "fp16"}},
      "inputs": ["a", "b"], "outputs": ["c"],
      "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"], "attrs": {"work_division": {"m": 4, "n": 8}}}]})"), 32);
  // Block 256 x 128; A shared by the 8 cores of a
  // grid row, B by the 4 of a grid column. Tile (budget 1589376 / 2 = 794688 B for A + B + one
  // fp32 accumulator): 256x128x512 (256 + 128 + 128 KiB) and 256x64x1024 (512 + 128 + 64 KiB)
  // both move A/8 + B/4 = 64 + 64 KiB per block with equal MACs per tile; the balanced one
  // (min(n, k) = 128 against 64: longer contiguous runs in both bands) wins: one n tile of
  // 2 k-steps. Templates: 2 k-steps x (load A per grid row (4) + load B per grid row (4) +
  // one matmul over all 32 cores) + store per grid row (4) = 22 (the per-core tasks fold into
  // these templates, spmd_merge.h). Instances: a grid-row
  // template has 8, the matmul 32: 2 x (4 x 8 + 4 x 8 + 32) + 4 x 8 = 224.
  CHECK(g.tasks.size() == 22);
  CHECK(g.instance_count() == 224);
  // Every operand byte is read off-chip once: A and B are 2 MiB each.
  CHECK(dma_bytes(g, "load") == 2u * 1024 * 1024 * 2);
  CHECK(dma_bytes(g, "store") == 1024u * 1024 * 2);
  std::size_t multicasts = 0;
  for (const auto& t : g.tasks)
    if (t.op == "load") {
      CHECK((t.writes.size() == 8 || t.writes.size() == 4));  // a grid row, or a grid column
      multicasts += t.writes.size() > 1;
    }
  CHECK(multicasts == 16);  // 2 k-steps x (4 A + 4 B)
}

TEST_CASE("compiler: matmul tiles move the least off-chip traffic that fits") {
  // A 1024 x 4096 x 512 block (matmul_4096's, on a 4x8 grid) in a 776 KiB budget for A + B +
  // one fp32 accumulator. Each core loading its own operands: 512 x 256 x 128 (128 + 64 +
  // 512 KiB) reloads A for each of 2 n tiles and B for each of 2 m tiles: 8 x 2 + 4 x 2 =
  // 24 MiB; 256 x 512 x 128 also moves 8 + 4 x 4 = 24 MiB and the taller m wins the tie.
  auto t = plan_matmul_tile(1024, 512, 4096, Dtype::fp16, 1589376 / 2);
  REQUIRE(t);
  CHECK(t->m == 512);
  CHECK(t->n == 256);
  CHECK(t->k == 128);
  CHECK(matmul_block_traffic(1024, 512, 4096, *t, Dtype::fp16) == 24u << 20);
  CHECK(matmul_tile_bytes(*t, Dtype::fp16) <= 1589376 / 2);
  // Shared over the grid (A by 8 cores, B by 4): 512 x 256 x 128 costs 16/8 + 8/4 = 4 MiB per
  // block, 256 x 512 x 128 costs 8/8 + 16/4 = 5 MiB; A tiles split into 8 bands, k into 4.
  OperandSharing sh{8, 4};
  auto s = plan_matmul_tile(1024, 512, 4096, Dtype::fp16, 1589376 / 2, sh);
  REQUIRE(s);
  CHECK(s->m == 512);
  CHECK(s->n == 256);
  CHECK(s->k == 128);
  CHECK(matmul_block_traffic(1024, 512, 4096, *s, Dtype::fp16, sh) == 4u << 20);
  // Bands need not be equal: with 24 sharers of A a tile is still chosen (A is cheap to
  // reload now, so the tallest m that fits: 1024 rows, bands of 43 rows, the last 35).
  auto odd = plan_matmul_tile(1024, 512, 4096, Dtype::fp16, 1589376 / 2, OperandSharing{24, 1});
  REQUIRE(odd);
  CHECK(odd->m == 1024);
  // `least` keeps whole sticks (64 fp16 elements) along n and k; `most` caps a dim (tiles M=8).
  auto capped = plan_matmul_tile(1024, 512, 4096, Dtype::fp16, 1589376 / 2, sh, MatmulTile{128, 0, 0}, MatmulTile{0, 64, 64});
  REQUIRE(capped);
  CHECK(capped->m <= 128);
  CHECK(capped->n >= 64);
  CHECK(capped->k >= 64);
}

TEST_CASE("compiler: matmul k-steps are whole sticks when K is not a power of two") {
  // The Llama-3.1-8B down projection's block on a 2 x 16 grid: 1024 x 128 x K 14 336. Halving
  // 14 336 gives 448, 224, 112 (1.75 sticks: A read in 224-byte runs); rounded up to whole
  // sticks the candidates are 448, 256, 128. All 1024 rows fitted 776 KiB only with k 112
  // (A 224 KiB + B 28 KiB + accumulator 512 KiB = 764 KiB; with k 128, 800 KiB), so the tile
  // is 512 rows (B read for 2 m tiles, shared by 2 cores) and the longest step that fits:
  // 512 x 256 x 2 + 256 x 128 x 2 + 512 x 128 x 4 = 256 + 64 + 256 KiB. `least` as the plan
  // passes it: whole sticks along n and k where one fits.
  auto t = plan_matmul_tile(1024, 128, 14336, Dtype::fp16, 1589376 / 2, OperandSharing{16, 2}, MatmulTile{},
                            MatmulTile{0, 64, 64});
  REQUIRE(t);
  CHECK(t->m == 512);
  CHECK(t->n == 128);
  CHECK(t->k == 256);
  // K stored as B's stick dim only (A transposed, B not): k is no stick dim, halvings stay.
  CHECK(matmul_k_stick(true, false, 64) == 0);
  CHECK(matmul_k_stick(false, false, 64) == 64);
  CHECK(matmul_k_stick(true, true, 64) == 64);
  // The emitter's cut: as many steps as split_even, whole sticks but the last.
  auto cut = split_sticks(1000, 256, 64);
  REQUIRE(cut.size() == 4);
  CHECK(cut[0].size == 256);
  CHECK(cut[2].begin == 512);
  CHECK(cut[3].size == 232);
  CHECK(split_sticks(1000, 250, 64).size() == split_even(1000, 250).size());  // 250: not whole sticks
  CHECK(split_sticks(1000, 250, 64)[0].size == 250);
  // Compiled: every PT step of a [512, 14336] @ [14336, 512] on 4 cores is whole sticks of K,
  // and the steps cover K once per output tile (MACs conserved).
  KernelGraph g = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "k",
      "tensors": {"a": {"shape": [512, 14336], "dtype": "fp16"}, "b": {"shape": [14336, 512], "dtype": "fp16"},
                  "y": {"shape": [512, 512], "dtype": "fp16"}},
      "inputs": ["a", "b"], "outputs": ["y"], "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}]})"), 4);
  std::uint64_t macs = 0;
  for (const auto& task : g.tasks)
    if (task.unit == UnitKind::pt) {
      CHECK(task.k % 64 == 0);
      macs += task.m * task.n * task.k * static_cast<std::uint64_t>(task.core_count);
    }
  CHECK(macs == 512ull * 512 * 14336);
}

TEST_CASE("compiler: a column sum reads whole rows: the reduced dim is split, the partials meet over the ring") {
  // [4096, 2048] summed over dim 0 on 32 cores: splitting the 2048 kept columns gives each core
  // a stick of every row (4096 runs of 128 B); in the card's stick layout ([32, 4096, 64]) a
  // stick column is one run, row-major the rows are: 4096 / 32 = 128 rows per core (512 KiB,
  // contiguous), then a tree of 16 + 8 + 4 + 2 + 1 = 31 ring copies and adds of the 2048-element
  // partial (4 KiB), and core 0 stores it.
  // x [rows, cols] fp16 summed over dim 0 into [cols], and the compile report of it.
  auto sum0 = [](int rows, int cols) {
    Json j = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "c",
        "tensors": {"x": {"shape": [1, 1], "dtype": "fp16"}, "y": {"shape": [1], "dtype": "fp16"}},
        "inputs": ["x"], "outputs": ["y"],
        "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": 0}}]})");
    j["tensors"]["x"]["shape"] = {rows, cols};
    j["tensors"]["y"]["shape"] = {cols};
    return j;
  };
  auto report = [&](int rows, int cols) {
    CompileReport rep;
    compile_ops(ops(sum0(rows, cols)), chip(), 32, &rep);
    REQUIRE(rep.kernels.size() == 1);
    return rep.kernels[0];
  };
  KernelGraph g = compile(sum0(4096, 2048), 32);
  std::uint64_t loaded = 0;
  int copies = 0;
  for (const Task& t : g.tasks) {
    if (t.op == "load") {
      CHECK(t.reads[0].rows == 1);  // contiguous rows
      loaded += t.reads[0].total_bytes() * static_cast<std::uint64_t>(t.core_count);
    }
    if (t.unit == UnitKind::ring) {
      ++copies;
      CHECK(t.reads[0].total_bytes() == 2048u * 2);
    }
  }
  CHECK(loaded == 4096u * 2048 * 2);
  CHECK(copies == 31);
  const KernelReport rep = report(4096, 2048);
  CHECK(rep.split == "reduced dim d0 (4096) over 32 cores, the partials combined in 5 ring steps");
  CHECK_THAT(rep.why, Contains("under 1024 B of every row"));
  CHECK(dma_bytes(g, "store") == 2048u * 2);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
  // 1024 rows still take all 32 cores: 32 rows each (at least 4 rows of 4 KiB a core: a core
  // reads four times the 4-KiB partial it sends). It took 16 (at least 64 rows a core, the rule of a
  // reduction over the stick dim) and ran a 1024 x 4096 sum in 107.6 us against 115.3 for 2048
  // rows; now 59.0.
  CHECK(report(1024, 2048).split == "reduced dim d0 (1024) over 32 cores, the partials combined in 5 ring steps");
  // Rows of 512 KiB: a core's columns are 16 KiB of every row, long runs already: the columns
  // stay split (no partials to combine).
  KernelGraph wide = compile(sum0(4096, 262144), 32);
  for (const Task& t : wide.tasks) CHECK(t.unit != UnitKind::ring);  // 16 KiB runs per core: no need
}

TEST_CASE("compiler: a reduction with few kept rows splits the reduced dim and combines over the ring") {
  KernelGraph g = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "r",
      "tensors": {"x": {"shape": [4, 262144], "dtype": "fp16"}, "y": {"shape": [4], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["y"],
      "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": -1}}]})"), 32);
  // 4 kept rows cannot occupy 32 cores: each core sums 262144 / 32 = 8192 of every row (4 rows
  // x 16 KiB, one tile), then a tree of 16 + 8 + 4 + 2 + 1 = 31 ring copies and 31 SFP adds
  // leaves the 4 sums on core 0, which stores them: 2 + 62 + 1 = 65 templates.
  CHECK(g.tasks.size() == 65);
  int copies = 0, adds = 0;
  for (const auto& t : g.tasks) {
    if (t.unit == UnitKind::ring) {
      ++copies;
      // a sender gives its partial to the core below it
      REQUIRE(t.writes[0].core);
      CHECK(t.writes[0].core->at(t.first_core) < t.first_core);
    }
    if (t.unit == UnitKind::sfp && t.op == "add") {
      ++adds;
      CHECK(t.elements == 4);
    }
  }
  CHECK(copies == 31);
  CHECK(adds == 31);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));  // every input byte read once
  CHECK(all_equal(coverage(g, eg, "y", true), 1));   // every output byte written once
  // The store depends on the whole tree: its one dependency is the last add on core 0.
  const IdLists::Span store = eg.deps[eg.instances.size() - 1];
  REQUIRE(store.size() == 1);
  CHECK(g.tasks[eg.instances[store[0]].task].name == "sum_y/tree16/add_c0");
  // With as many kept rows as cores, the kept dim is split as before (no ring).
  KernelGraph wide = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "r",
      "tensors": {"x": {"shape": [64, 4096], "dtype": "fp16"}, "y": {"shape": [64], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["y"],
      "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"dim": -1}}]})"), 32);
  for (const auto& t : wide.tasks) CHECK(t.unit != UnitKind::ring);
}

namespace {

// s = sum(x, -1, keepdim); y = x * s; z = y + x; w = z * z: a reduction feeding pointwise ops,
// and two elementwise intermediates (y, z); w is the graph output.
Json chain(const std::string& planning) {
  return Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "chain",
      "tensors": {"x": {"shape": [256, 1024], "dtype": "fp16"}, "s": {"shape": [256, 1], "dtype": "fp16"}, "y": {"shape": [256, 1024], "dtype": "fp16"},
                  "z": {"shape": [256, 1024], "dtype": "fp16"}, "w": {"shape": [256, 1024], "dtype": "fp16"}},
      "inputs": ["x"], "outputs": ["w"],
      "ops": [{"op": "sum", "inputs": ["x"], "outputs": ["s"], "attrs": {"dim": -1, "keepdim": true}},
              {"op": "mul", "inputs": ["x", "s"], "outputs": ["y"]},
              {"op": "add", "inputs": ["y", "x"], "outputs": ["z"]},
              {"op": "mul", "inputs": ["z", "z"], "outputs": ["w"]}],
      "compile": {"cores": 4, "fuse": false, "lx_planning": )" + planning + "}}");
}

// Bytes of HBM tensor `name` that DMA loads or stores, over all cores.
std::uint64_t hbm_traffic(const KernelGraph& g, const std::string& name) {
  int b = g.find_buffer(name);
  std::uint64_t n = 0;
  for (const auto& t : g.tasks)
    if (t.unit == UnitKind::dma)
      for (const auto& a : t.op == "load" ? t.reads : t.writes)
        if (a.buffer == b) n += a.total_bytes() * t.core_count;
  return n;
}

}  // namespace

TEST_CASE("compiler: LX planning keeps reduction outputs or every intermediate in LX") {
  // 256 rows over 4 cores: 64 rows each; x, y, z, w are 512 KiB, s 512 B (128 B per core);
  // through HBM s is stick-sparse, a 128-B stick per row: 32 KiB.
  const std::uint64_t big = 256 * 1024 * 2, small = 256 * 2;
  SECTION("none: every intermediate goes through HBM") {
    KernelGraph g = compile(chain("false"), 4);
    CHECK(hbm_traffic(g, "s") == 2 * 256 * 128);  // stored once, loaded once, a stick per row
    CHECK(hbm_traffic(g, "y") == 2 * big);
    CHECK(hbm_traffic(g, "z") == 2 * big);  // stored once; z * z loads z once
    CHECK(g.find_buffer("s@lx") < 0);
  }
  SECTION("reductions: the sum stays in LX, the rest goes through HBM") {
    KernelGraph g = compile(chain("true"), 4);
    CHECK(hbm_traffic(g, "s") == 0);
    REQUIRE(g.find_buffer("s@lx") >= 0);
    CHECK(g.buffers[g.find_buffer("s@lx")].space == Space::lx);
    CHECK(g.buffers[g.find_buffer("s@lx")].bytes == small / 4);  // one core's 64 rows
    CHECK(hbm_traffic(g, "y") == 2 * big);
    ExpandedGraph eg = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, eg, "w", true), 1));
  }
  SECTION("all: every intermediate stays in LX; inputs and outputs still use HBM") {
    KernelGraph g = compile(chain("\"all\""), 4);
    CHECK(hbm_traffic(g, "s") == 0);
    CHECK(hbm_traffic(g, "y") == 0);
    CHECK(hbm_traffic(g, "z") == 0);
    CHECK(hbm_traffic(g, "w") == big);      // the output is stored
    CHECK(hbm_traffic(g, "x") == 3 * big);  // read by sum, mul and add
    // The kept slices (128 B + 2 x 128 KiB per core) leave (1589376 - 262272) / 2 per tile.
    check_tile_budget(g, (1589376 - 128 - 2 * 131072) / 2);
    ExpandedGraph eg = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, eg, "w", true), 1));
  }
}

TEST_CASE("compiler: LX planning never keeps what a matmul reads or what does not fit") {
  // y = a + b feeds a matmul: the matmul divides y over a grid, not by rows, so y goes
  // through HBM even under "all".
  KernelGraph g = compile(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "mm",
      "tensors": {"a": {"shape": [256, 256], "dtype": "fp16"}, "b": {"shape": [256, 256], "dtype": "fp16"}, "y": {"shape": [256, 256], "dtype": "fp16"},
                  "w": {"shape": [256, 256], "dtype": "fp16"}, "c": {"shape": [256, 256], "dtype": "fp16"}},
      "inputs": ["a", "b", "w"], "outputs": ["c"],
      "ops": [{"op": "add", "inputs": ["a", "b"], "outputs": ["y"]},
              {"op": "matmul", "inputs": ["y", "w"], "outputs": ["c"]}],
      "compile": {"cores": 4, "lx_planning": "all", "fuse": false}})"), 4);
  CHECK(g.find_buffer("y@lx") < 0);
  // A 2 MiB intermediate on one core is more than a quarter of the LX: through HBM.
  Json big = chain("\"all\"");
  for (const char* t : {"x", "y", "z", "w"}) big["tensors"][t]["shape"] = Json::array({1024, 1024});
  big["tensors"]["s"]["shape"] = Json::array({1024, 1});
  KernelGraph h = compile(big, 1);
  CHECK(h.find_buffer("s@lx") >= 0);  // 2 KiB
  CHECK(h.find_buffer("y@lx") < 0);
  CHECK(h.find_buffer("z@lx") < 0);
}

namespace {

Json forced_matmul(const std::string& wd, int cores) {
  return Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "mm",
      "tensors": {"a": {"shape": [256, 512], "dtype": "fp16"}, "b": {"shape": [512, 256], "dtype": "fp16"},
                  "c": {"shape": [256, 256], "dtype": "fp16"}},
      "inputs": ["a", "b"], "outputs": ["c"],
      "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"], "attrs": {"work_division": )" + wd + R"(}}],
      "compile": {"cores": )" + std::to_string(cores) + "}}");
}

}  // namespace

TEST_CASE("compiler: a forced work division splits K over grids and reduces over the ring") {
  // m 2 x n 2 x k 2 = 8 cores: grid g (cores 4g .. 4g+3) multiplies K range [256 g, 256 g + 256)
  // of a 128 x 128 block per core; one 128 x 128 x 256 tile each (A 64 KiB + B 64 KiB + fp32
  // partial 64 KiB fits; 3 partials = 192 KiB too).
  KernelGraph g = compile(forced_matmul(R"({"m": 2, "n": 2, "k": 2})", 8), 8);
  std::uint64_t macs = 0;
  int sends = 0, adds = 0;
  for (const auto& t : g.tasks) {
    if (t.unit == UnitKind::pt) {
      macs += t.m * t.n * t.k * t.core_count;
      CHECK(t.dtype == Dtype::fp32);  // every PT step ends in an fp32 partial
    }
    if (t.unit == UnitKind::ring) {
      ++sends;
      CHECK(t.first_core == 4);                  // grid 1 sends ...
      CHECK(t.writes[0].core->at(4) == 0);       // ... core for core to grid 0
    }
    if (t.unit == UnitKind::sfp) {
      ++adds;
      CHECK(t.dtype == Dtype::fp16);  // the last step of the tree writes the output dtype
      CHECK(t.elements == 128u * 128);
    }
  }
  CHECK(macs == 256u * 256 * 512);
  CHECK(sends == 1);
  CHECK(adds == 1);
  CHECK(dma_bytes(g, "load") == (256u * 512 + 512u * 256) * 2);  // each operand byte once
  CHECK(dma_bytes(g, "store") == 256u * 256 * 2);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "c", true), 1));
  CHECK(all_equal(coverage(g, eg, "a", false), 1));
  // Without k the forced grid uses m x n cores and no ring.
  KernelGraph two = compile(forced_matmul(R"({"m": 2, "n": 1})", 8), 8);
  int max_core = 0;
  for (const auto& t : two.tasks) {
    CHECK(t.unit != UnitKind::ring);
    max_core = std::max(max_core, t.first_core + t.core_count);
  }
  CHECK(max_core == 2);
}

TEST_CASE("compiler: a matmul no division can hold names both limits, not only the tile budget") {
  // [24576, 24576] @ [24576, 24576] fp16: a core's column band of B spans all of B (1.125 GiB,
  // row-major), beyond the 256 MiB span per core and operand, whatever the tiles.
  Json j = forced_matmul("{}", 32);
  j["tensors"]["a"]["shape"] = {24576, 24576};
  j["tensors"]["b"]["shape"] = {24576, 24576};
  j["tensors"]["c"]["shape"] = {24576, 24576};
  j["ops"][0].erase("attrs");
  REQUIRE_THROWS_WITH(compile(j, 32), Contains("w.json: /ops/0: matmul: no division of 1 x [24576, 24576] @ [24576, 24576] "
                                               "over at most 32 cores fits: a core's part of each operand must span at "
                                               "most 256 MiB of memory"));
}

TEST_CASE("compiler: forced work divisions that cannot run are rejected with the JSON path") {
  REQUIRE_THROWS_WITH(compile(forced_matmul(R"({"m": 4, "n": 4, "k": 4})", 32), 32),
                      Contains("w.json: /ops/0/attrs/work_division: needs 64 cores (the product of the split), the program has 32"));
  // A division that does not divide evenly runs: the last parts are smaller (M 256 over 3:
  // 86 + 86 + 84 rows; K 512 over 2 K groups of 256), every output byte written once.
  KernelGraph g = compile(forced_matmul(R"({"m": 3, "n": 1, "k": 2})", 32), 32);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, eg, "c", true), 1));
  CHECK(all_equal(coverage(g, eg, "a", false), 1));
  REQUIRE_THROWS_WITH(ops(forced_matmul(R"({"m": 0})", 8)),
                      Contains("w.json: /ops/0/attrs/work_division/m: expected an integer in [1, 256], got 0"));
  REQUIRE_THROWS_WITH(ops(forced_matmul(R"({"q": 2})", 8)), Contains("w.json: /ops/0/attrs/work_division/q"));
}

TEST_CASE("compiler: rejects more cores than the chip and rows that do not fit") {
  REQUIRE_THROWS_WITH(compile(add_graph(), 64), Contains("w.json: /compile/cores: asks for 64 cores, the chip has 32"));
  REQUIRE_THROWS_WITH(compile(add_graph(), 32, 8192),
                      Contains("w.json: /ops/0: add: one slice needs 6144 bytes of LX, more than the 4096-byte"));
}

TEST_CASE("compiler: a compiled graph round-trips through the file format") {
  KernelGraph g = compile(add_graph("1000", "64"), 32);
  Json w = write_kernel_graph(g);
  KernelGraph back = read_kernel_graph(w, "c.json");
  CHECK(write_kernel_graph(back) == w);
  CHECK(back.instance_count() == g.instance_count());
}

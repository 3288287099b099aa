// Tests of the card's stick layout of HBM tensors (sim/compiler/hbm_layout.cpp).
#include <catch2/catch.hpp>

#include "sim/compiler/compile.h"
#include "sim/compiler/hbm_layout.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "tests/unit/coverage.h"

using namespace dfsim;
using dfsim::testing::all_equal;
using dfsim::testing::coverage;

namespace {

StickLayout layout(std::uint64_t row_bytes, std::uint64_t first, std::uint64_t middle) {
  StickLayout l;
  l.row_bytes = row_bytes;
  l.first = first;
  l.middle = middle;
  return l;
}

bool same(const DeviceRuns& d, std::uint64_t offset, std::uint64_t bytes, std::uint64_t rows, std::uint64_t stride) {
  return d.offset == offset && d.bytes == bytes && d.rows == rows && d.stride == stride;
}

Json graph(const std::string& shape, int cores, const std::string& layout_key) {
  return Json::parse(R"({
    "format": "dfsim.ops", "version": 1, "name": "add",
    "tensors": {"a": {"shape": )" + shape + R"(, "dtype": "fp16"}, "b": {"shape": )" + shape +
                   R"(, "dtype": "fp16"}, "y": {"shape": )" + shape + R"(, "dtype": "fp16"}},
    "inputs": ["a", "b"], "outputs": ["y"],
    "ops": [{"op": "add", "inputs": ["a", "b"], "outputs": ["y"]}],
    "compile": {"cores": )" + std::to_string(cores) + R"(, "hbm_layout": ")" + layout_key + R"("}
  })");
}

}  // namespace

TEST_CASE("hbm layout: a 2-D tensor's row band is one run per stick column", "[compiler][layout]") {
  // [256, 512] fp16: 1024 B rows of 8 sticks, device [8, 256, 64]. Rows [16, 48) (stored bytes
  // 16384 .. 49152) are, in each of the 8 stick columns, 32 sticks from row 16: runs of
  // 32 x 128 = 4096 B at 16 x 128 = 2048 + s x 256 x 128, i.e. 32768 apart.
  auto d = device_runs(layout(1024, 256, 1), 16 * 1024, 32 * 1024, 1, 0);
  REQUIRE(d.size() == 1);
  CHECK(same(d[0], 2048, 4096, 8, 32768));
}

TEST_CASE("hbm layout: one batch of a default-order 3-D tensor is single sticks", "[compiler][layout]") {
  // [4, 8, 128] fp16: device [8, 2, 4, 64] (M, K/64, B, 64). Batch 1 (stored bytes 2048 ..
  // 4096) is stick (m, s) at ((m x 2 + s) x 4 + 1) x 128: 16 sticks from 128, 512 apart.
  const StickLayout l = layout(256, 4, 8);
  auto d = device_runs(l, 2048, 2048, 1, 0);
  REQUIRE(d.size() == 1);
  CHECK(same(d[0], 128, 128, 16, 512));
  // Its second stick column (k 64..127 of every row: 128 B, 8 rows 256 apart) is stick
  // (m, 1) at ((2m + 1) x 4 + 1) x 128 = 640 + 1024 m.
  d = device_runs(l, 2048 + 128, 128, 8, 256);
  REQUIRE(d.size() == 1);
  CHECK(same(d[0], 640, 128, 8, 1024));
  // The whole tensor is one run.
  d = device_runs(l, 0, 8192, 1, 0);
  REQUIRE(d.size() == 1);
  CHECK(same(d[0], 0, 8192, 1, 0));
}

TEST_CASE("hbm layout: a two-level slice becomes one pattern per row, bytes conserved", "[compiler][layout]") {
  // [2, 4, 256] fp16: 512 B rows of 4 sticks, device [4, 4, 2, 64]. Batch 0, its 4 rows, the
  // first 2 sticks: stick (m, s) at ((4m + s) x 2) x 128 = 1024 m + 256 s. Per row 2 sticks
  // 256 apart, the rows 1024 apart: 4 patterns of 2 x 128 B, 1024 B in all.
  auto d = device_runs(layout(512, 2, 4), 0, 256, 4, 512);
  REQUIRE(d.size() == 4);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    CHECK(same(d[i], 1024 * i, 128, 2, 256));
    total += d[i].bytes * d[i].rows;
  }
  CHECK(total == 1024);
  // A run that starts and ends inside sticks keeps its partial pieces: 100 B from byte 60 of
  // row 0 are 68 B of stick 0 (device 60) and 32 B of stick 1 (device 256).
  d = device_runs(layout(512, 2, 4), 60, 100, 1, 0);
  REQUIRE(d.size() == 2);
  CHECK(same(d[0], 60, 68, 1, 0));
  CHECK(same(d[1], 256, 32, 1, 0));
}

TEST_CASE("hbm layout: dim_order [1, 0, 2] tiles along the second logical dim", "[compiler][layout]") {
  // [B=2, M=8, K=128] stored in order [1, 0, 2] as [8, 2, 128]: device [2, 2, 8, 64] (B, K/64,
  // M, 64). stick_layout reads the order from compile.layouts.
  OpGraph g = read_op_graph(Json::parse(R"({
    "format": "dfsim.ops", "version": 1, "name": "t",
    "tensors": {"a": {"shape": [2, 8, 128], "dtype": "fp16"}, "y": {"shape": [2, 8, 128], "dtype": "fp16"},
                "v": {"shape": [128], "dtype": "fp16"}, "p": {"shape": [2, 8, 100], "dtype": "fp16"}},
    "inputs": ["a", "v", "p"], "outputs": ["y"],
    "ops": [{"op": "neg", "inputs": ["a"], "outputs": ["y"]}],
    "compile": {"layouts": {"a": [1, 0, 2]}}
  })"), "w.json");
  auto l = stick_layout(g, g.find_tensor("a"), 128);
  REQUIRE(l);
  CHECK(l->first == 8);
  CHECK(l->middle == 2);
  CHECK(l->row_bytes == 256);
  // Stored [m=3, b=1, k=70]: byte (3 x 2 + 1) x 256 + 140 = 1932 -> device (b=1, s=1, m=3,
  // lane 6 x 2 = 12): ((1 x 2 + 1) x 8 + 3) x 128 + 12 = 3468.
  CHECK(l->device(1932) == 3468);
  auto y = stick_layout(g, g.find_tensor("y"), 128);
  REQUIRE(y);
  CHECK(y->first == 2);
  // Rank 1 is in the card's layout too, [128/64, 64]: its own row-major bytes (device() the
  // identity). A stick dim of 100 fp16 (200 B, not whole sticks) stays row-major.
  auto v = stick_layout(g, g.find_tensor("v"), 128);
  REQUIRE(v);
  CHECK(v->first == 1);
  CHECK(v->middle == 1);
  CHECK(v->row_bytes == 256);
  for (std::uint64_t x : {0, 1, 127, 128, 200, 255}) CHECK(v->device(x) == x);
  CHECK_FALSE(stick_layout(g, g.find_tensor("p"), 128));
}

TEST_CASE("hbm layout: a batch of 1 is laid out as its own bytes, and marked", "[compiler][layout]") {
  // bmm [1, 256, 128] @ [1, 128, 256] on 4 cores under "batched": device [M, K/64, 1, 64] is
  // the row-major [M, K] (first stored dim 1: device() the identity), so every access keeps
  // its row-major offsets, and the buffers are marked: their runs are the card's, which the
  // memory ports' request rate charges (memory.port_request_scope "stick_layout").
  auto compile = [](const std::string& mode) {
    Json j = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "bmm1",
      "tensors": {"a": {"shape": [1, 256, 128], "dtype": "fp16"}, "b": {"shape": [1, 128, 256], "dtype": "fp16"},
                  "y": {"shape": [1, 256, 256], "dtype": "fp16"}},
      "inputs": ["a", "b"], "outputs": ["y"],
      "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}], "compile": {"cores": 4}})");
    j["compile"]["hbm_layout"] = mode;
    return compile_ops(read_op_graph(j, "w.json"), ChipConfig{}, 4);
  };
  const OpGraph og = read_op_graph(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "t",
      "tensors": {"a": {"shape": [1, 256, 128], "dtype": "fp16"}, "y": {"shape": [1, 256, 128], "dtype": "fp16"}},
      "inputs": ["a"], "outputs": ["y"], "ops": [{"op": "neg", "inputs": ["a"], "outputs": ["y"]}]})"), "t.json");
  auto l = stick_layout(og, og.find_tensor("a"), 128);
  REQUIRE(l);
  CHECK(l->first == 1);
  CHECK(l->middle == 256);
  for (std::uint64_t x : {0, 130, 256, 65535}) CHECK(l->device(x) == x);
  KernelGraph row = compile("row_major"), batched = compile("batched");
  REQUIRE(row.tasks.size() == batched.tasks.size());
  for (std::size_t i = 0; i < row.tasks.size(); ++i)
    for (auto side : {&Task::reads, &Task::writes}) {
      const std::vector<Access>& r = row.tasks[i].*side;
      const std::vector<Access>& b = batched.tasks[i].*side;
      REQUIRE(r.size() == b.size());
      for (std::size_t k = 0; k < r.size(); ++k) {
        CHECK(r[k].offset.alpha == b[k].offset.alpha);
        CHECK(r[k].offset.beta == b[k].offset.beta);
        CHECK(r[k].bytes == b[k].bytes);
        CHECK(r[k].rows == b[k].rows);
      }
    }
  int marked = 0;
  for (const Buffer& b : batched.buffers) marked += b.stick_layout ? 1 : 0;
  CHECK(marked == 3);
  for (const Buffer& b : row.buffers) CHECK_FALSE(b.stick_layout);
}

TEST_CASE("hbm layout: a compiled add in the stick layout moves the same bytes, each once", "[compiler][layout]") {
  ChipConfig chip;
  for (int cores : {1, 3, 4}) {
    KernelGraph row = compile_ops(read_op_graph(graph("[2048, 512]", cores, "row_major"), "w.json"), chip, cores);
    KernelGraph stick = compile_ops(read_op_graph(graph("[2048, 512]", cores, "stick"), "w.json"), chip, cores);
    ExpandedGraph er = expand_graph(row, chip), es = expand_graph(stick, chip);
    // Conservation: a and b read once, y written once, in both layouts.
    for (const char* t : {"a", "b"}) CHECK(all_equal(coverage(stick, es, t, false), 1));
    CHECK(all_equal(coverage(stick, es, "y", true), 1));
    std::uint64_t moved_row = 0, moved_stick = 0;
    for (const auto& i : er.instances)
      for (const Region& r : reads_of(row, i)) moved_row += row.buffers[static_cast<std::size_t>(r.buffer)].space == Space::hbm ? r.total_bytes() : 0;
    for (const auto& i : es.instances)
      for (const Region& r : reads_of(stick, i)) moved_stick += stick.buffers[static_cast<std::size_t>(r.buffer)].space == Space::hbm ? r.total_bytes() : 0;
    CHECK(moved_stick == moved_row);
    // Rows split (at least 32 rows per core). Device [8, 2048, 64]: every load reads one
    // pattern of 8 runs (one per stick column) 2048 x 128 = 262144 B apart.
    for (const Task& t : stick.tasks)
      if (t.unit == UnitKind::dma && t.op == "load") {
        REQUIRE(t.reads.size() == 1);
        CHECK(t.reads[0].rows == 8);
        CHECK(t.reads[0].stride == 262144);
      }
  }
}

TEST_CASE("hbm layout: a short wide tensor splits its stick dim, in whole sticks", "[compiler][layout]") {
  // [96, 512] on 4 cores: a row split would give a core 24 rows, runs of 24 sticks (under a
  // 32-stick burst) in each of the 8 stick columns; the stick dim has 8 sticks >= 4 cores, so
  // each core takes 2 whole stick columns, contiguous in device [8, 96, 64]: its tiles are
  // whole stick columns of 96 x 128 = 12288 B, one run each.
  ChipConfig chip;
  KernelGraph k = compile_ops(read_op_graph(graph("[96, 512]", 4, "stick"), "w.json"), chip, 4);
  ExpandedGraph e = expand_graph(k, chip);
  CHECK(all_equal(coverage(k, e, "y", true), 1));
  int loads = 0;
  for (const Task& t : k.tasks)
    if (t.unit == UnitKind::dma && t.op == "load") {
      ++loads;
      REQUIRE(t.reads.size() == 1);
      CHECK(t.reads[0].rows == 1);
      CHECK(t.reads[0].bytes % 12288 == 0);
    }
  CHECK(loads > 0);
}

TEST_CASE("hbm layout: the chip's memory.hbm_layout is the default, the op graph's overrides it", "[compiler][layout]") {
  // [2048, 512] on 1 core in the stick layout: each load reads 8 runs (above); row-major: one
  // contiguous run.
  auto load_rows = [](const KernelGraph& k) {
    for (const Task& t : k.tasks)
      if (t.unit == UnitKind::dma && t.op == "load") return t.reads[0].rows;
    return std::uint64_t{0};
  };
  ChipConfig chip;
  chip.memory.hbm_layout = "stick";
  Json j = graph("[2048, 512]", 1, "stick");
  j["compile"].erase("hbm_layout");
  CHECK(load_rows(compile_ops(read_op_graph(j, "w.json"), chip, 1)) == 8);
  j["compile"]["hbm_layout"] = "row_major";
  CHECK(load_rows(compile_ops(read_op_graph(j, "w.json"), chip, 1)) == 1);
  j["compile"]["hbm_layout"] = "sticks";
  CHECK_THROWS_WITH(read_op_graph(j, "w.json"), Catch::Contains("w.json: /compile/hbm_layout: expected \"row_major\", \"batched\" or \"stick\""));
}

TEST_CASE("hbm layout: a 3-D add split along d0 or d1 writes every byte once", "[compiler][layout]") {
  // [4, 64, 128] on 4 cores, device [64, 2, 4, 64]. Split d0: each core one batch, whose
  // cores step by 64 stored rows = the middle dims' 64 rows, i.e. one stick: one template.
  // Split d1 (compile.split): a core's 16 rows are not a whole step of the first dim, so the
  // template is mapped core by core. Both write y once and read a and b once.
  ChipConfig chip;
  for (const char* split : {"d0", "d1"}) {
    Json j = graph("[4, 64, 128]", 4, "stick");
    j["ops"][0]["compile"] = Json{{"split", Json{{split, 4}}}};
    KernelGraph k = compile_ops(read_op_graph(j, "w.json"), chip, 4);
    ExpandedGraph e = expand_graph(k, chip);
    CHECK(all_equal(coverage(k, e, "y", true), 1));
    for (const char* t : {"a", "b"}) CHECK(all_equal(coverage(k, e, t, false), 1));
  }
}

TEST_CASE("hbm layout: batched lays out the tensors of batched matmuls only, bytes conserved", "[compiler][layout]") {
  // bmm [4, 256, 128] @ [4, 128, 256] -> [4, 256, 256] on 4 cores, and a 3-D add nobody
  // multiplies. Under "batched" the bmm's tensors are in the card's layout: a is device
  // [256, 2, 4, 64] (M, K/64, B, 64), so any part of one batch's rows is single sticks
  // (128 B), 4 x 128 = 512 B apart; row-major, a batch's rows are runs of at least a k-step.
  // The add's tensors stay row-major: its loads are the same as under "row_major".
  auto compile = [](const std::string& mode, CompileReport* report = nullptr) {
    Json j = Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "bmm",
      "tensors": {"a": {"shape": [4, 256, 128], "dtype": "fp16"}, "b": {"shape": [4, 128, 256], "dtype": "fp16"},
                  "y": {"shape": [4, 256, 256], "dtype": "fp16"}, "p": {"shape": [4, 64, 128], "dtype": "fp16"},
                  "q": {"shape": [4, 64, 128], "dtype": "fp16"}, "z": {"shape": [4, 64, 128], "dtype": "fp16"}},
      "inputs": ["a", "b", "p", "q"], "outputs": ["y", "z"],
      "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}, {"op": "add", "inputs": ["p", "q"], "outputs": ["z"]}],
      "compile": {"cores": 4}})");
    j["compile"]["hbm_layout"] = mode;
    return compile_ops(read_op_graph(j, "w.json"), ChipConfig{}, 4, report);
  };
  KernelGraph row = compile("row_major"), batched = compile("batched");
  auto buffer = [](const KernelGraph& k, const std::string& name) {
    for (std::size_t i = 0; i < k.buffers.size(); ++i)
      if (k.buffers[i].name == name) return static_cast<int>(i);
    return -1;
  };
  auto load_runs = [&](const KernelGraph& k, const std::string& name) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // (bytes, stride) of each load of `name`
    for (const Task& t : k.tasks)
      if (t.unit == UnitKind::dma && t.op == "load")
        for (const Access& r : t.reads)
          if (r.buffer == buffer(k, name)) runs.emplace_back(r.bytes, r.rows > 1 ? r.stride : 0);
    return runs;
  };
  const auto a_batched = load_runs(batched, "a"), a_row = load_runs(row, "a");
  REQUIRE_FALSE(a_batched.empty());
  for (const auto& [bytes, stride] : a_batched) {
    CHECK(bytes == 128);
    CHECK(stride == 512);
  }
  bool longer = false;
  for (const auto& [bytes, stride] : a_row) longer = longer || bytes > 128;
  CHECK(longer);
  CHECK(load_runs(batched, "p") == load_runs(row, "p"));
  // The buffers laid out say so (the memory port's request rate applies to them, and the
  // kernel graph file carries "layout": "stick"); row-major ones and every buffer under
  // "row_major" do not.
  for (const char* name : {"a", "b", "y"}) CHECK(batched.buffers[static_cast<std::size_t>(buffer(batched, name))].stick_layout);
  for (const char* name : {"p", "q", "z"}) CHECK_FALSE(batched.buffers[static_cast<std::size_t>(buffer(batched, name))].stick_layout);
  for (const Buffer& b : row.buffers) CHECK_FALSE(b.stick_layout);
  const Json file = write_kernel_graph(batched);
  int stick_in_file = 0;
  for (const Json& b : file["buffers"]) stick_in_file += b.value("layout", "") == "stick" ? 1 : 0;
  CHECK(stick_in_file == 3);
  CHECK(read_kernel_graph(file, "k.json").buffers[static_cast<std::size_t>(buffer(batched, "a"))].stick_layout);
  // --explain names them on the matmul's kernel, and nothing on the add's.
  CompileReport report;
  compile("batched", &report);
  REQUIRE(report.kernels.size() == 2);
  CHECK_THAT(report.kernels[0].layout, Catch::Contains("a, b, y in the card's stick layout (hbm_layout \"batched\")"));
  CHECK(report.kernels[1].layout.empty());
  // Conservation: every byte of y written once, the add's z too.
  ChipConfig chip;
  ExpandedGraph e = expand_graph(batched, chip);
  CHECK(all_equal(coverage(batched, e, "y", true), 1));
  CHECK(all_equal(coverage(batched, e, "z", true), 1));
  // A 3-D input times a 2-D weight: the 3-D tensors are the card's, the weight stays row-major.
  OpGraph l = read_op_graph(Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "l",
      "tensors": {"x": {"shape": [2, 8, 64], "dtype": "fp16"}, "w": {"shape": [64, 64], "dtype": "fp16"},
                  "y": {"shape": [2, 8, 64], "dtype": "fp16"}},
      "inputs": ["x", "w"], "outputs": ["y"], "ops": [{"op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}]})"),
                            "l.json");
  const TensorUses uses(l);
  for (std::size_t t = 0; t < l.tensors.size(); ++t)
    CHECK(batched_matmul_tensor(l, uses, static_cast<int>(t)) == (l.tensors[t].name != "w"));
}

TEST_CASE("hbm layout: a default-order batched matmul's plan says when the ports' request rate binds it", "[compiler][layout]") {
  // workloads/bmm_32x512x128.json: B=32, one batch per core; its [32, 512, 512] output in the
  // default order is single sticks, 16 MiB / 128 B = 131 072 stores, 65 536 through each of the
  // two memory ports at 7.5 ns: 491.5 us, more than its compute, bytes or DMA estimate.
  CompileReport report;
  compile_ops(read_op_graph(load_json_file("workloads/bmm_32x512x128.json"), "bmm.json"), load_chip_config("configs/spyre.json"), 32,
              &report);
  REQUIRE(report.kernels.size() == 1);
  CHECK_THAT(report.kernels[0].why, Catch::Contains("least estimate (491.5 us, memory-port request bound)"));
}

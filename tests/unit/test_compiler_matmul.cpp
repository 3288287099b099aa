// Tests of the matmul family: batched matmul, transposed operands, linear, the work-division
// plans, tile loops, epilogues, sdpa and the compile report.
#include <limits>
#include <regex>
#include <set>
#include <tuple>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/hbm_layout.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/matmul_plan.h"
#include "sim/compiler/tiling.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/runtime/simulation.h"
#include "tests/unit/coverage.h"

using namespace dfsim;
using dfsim::testing::all_equal;
using dfsim::testing::coverage;
using Catch::Contains;

namespace {

ChipConfig chip(int cores = 32, std::uint64_t lx = 1589376) {
  ChipConfig c;
  c.cores = cores;
  c.core.corelets = 2;
  c.core.lx.usable_bytes = lx;
  return c;
}

// A graph from tensors {name: shape} (fp16), inputs, outputs and ops (JSON text).
Json graph(const std::string& tensors, const std::string& inputs, const std::string& outputs, const std::string& ops,
           const std::string& compile = R"({"cores": 1})") {
  return Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "t", "tensors": )" + tensors +
                     R"(, "inputs": )" + inputs + R"(, "outputs": )" + outputs + R"(, "ops": )" + ops +
                     R"(, "compile": )" + compile + "}");
}

std::string t(const std::string& shape) { return R"({"shape": )" + shape + R"(, "dtype": "fp16"})"; }

// Off-chip bytes of `op` (load or store) touching HBM buffer `name` (all buffers when empty).
std::uint64_t hbm_bytes(const KernelGraph& g, const std::string& op, const std::string& name = "") {
  std::uint64_t n = 0;
  for (const auto& task : g.tasks) {
    if (task.unit != UnitKind::dma || task.op != op) continue;
    const Access& a = op == "load" ? task.reads[0] : task.writes[0];
    if (name.empty() || g.buffers[static_cast<std::size_t>(a.buffer)].name == name)
      n += a.total_bytes() * static_cast<std::uint64_t>(task.core_count);
  }
  return n;
}

std::uint64_t macs(const KernelGraph& g) {
  std::uint64_t n = 0;
  for (const auto& task : g.tasks)
    if (task.unit == UnitKind::pt) n += task.m * task.n * task.k * static_cast<std::uint64_t>(task.core_count);
  return n;
}

std::uint64_t sfp_elements(const KernelGraph& g, const std::string& op) {
  std::uint64_t n = 0;
  for (const auto& task : g.tasks)
    if (task.unit == UnitKind::sfp && task.op == op) n += task.elements * static_cast<std::uint64_t>(task.core_count);
  return n;
}

Json matmul_graph(const std::string& a, const std::string& b, const std::string& c, const std::string& attrs = "{}",
                  int cores = 1) {
  return graph(R"({"a": )" + t(a) + R"(, "b": )" + t(b) + R"(, "c": )" + t(c) + "}", R"(["a", "b"])", R"(["c"])",
               R"([{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"], "attrs": )" + attrs + "}]",
               R"({"cores": )" + std::to_string(cores) + "}");
}

}  // namespace

TEST_CASE("matmul family: shapes follow torch.matmul and the errors name the JSON path") {
  CHECK_NOTHROW(read_op_graph(matmul_graph("[4, 128, 256]", "[4, 256, 64]", "[4, 128, 64]"), "w.json"));
  CHECK_NOTHROW(read_op_graph(matmul_graph("[2, 4, 128, 256]", "[256, 64]", "[2, 4, 128, 64]"), "w.json"));
  CHECK_NOTHROW(read_op_graph(matmul_graph("[2, 1, 8, 16]", "[3, 16, 4]", "[2, 3, 8, 4]"), "w.json"));
  CHECK_NOTHROW(read_op_graph(matmul_graph("[128, 256]", "[64, 256]", "[128, 64]", R"({"transpose_b": true})"), "w.json"));
  CHECK_NOTHROW(read_op_graph(matmul_graph("[256, 128]", "[256, 64]", "[128, 64]", R"({"transpose_a": true})"), "w.json"));
  REQUIRE_THROWS_WITH(read_op_graph(matmul_graph("[128, 256]", "[128, 64]", "[128, 64]"), "w.json"),
                      Contains("w.json: /ops/0/inputs: matmul inner dimensions differ: [128, 256] @ [128, 64]"));
  REQUIRE_THROWS_WITH(read_op_graph(matmul_graph("[2, 8, 16]", "[3, 16, 4]", "[3, 8, 4]"), "w.json"),
                      Contains("w.json: /ops/0/inputs: matmul batch dims [2] and [3] do not broadcast"));
  REQUIRE_THROWS_WITH(read_op_graph(matmul_graph("[8, 16]", "[16, 4]", "[8, 5]"), "w.json"),
                      Contains("w.json: /ops/0/outputs/0: shape mismatch for \"c\": expected [8, 4] from matmul"));
  REQUIRE_THROWS_WITH(read_op_graph(matmul_graph("[16]", "[16, 4]", "[4]"), "w.json"),
                      Contains("w.json: /ops/0/inputs: matmul takes operands of rank 2 or more"));
  REQUIRE_THROWS_WITH(read_op_graph(matmul_graph("[8, 16]", "[16, 4]", "[8, 4]", R"({"transpose": true})"), "w.json"),
                      Contains("w.json: /ops/0/attrs"));

  auto linear = [](const std::string& w, const std::string& bias) {
    return graph(R"({"x": )" + t("[2, 10, 64]") + R"(, "w": )" + t(w) + R"(, "bias": )" + t(bias) + R"(, "y": )" +
                     t("[2, 10, 32]") + "}",
                 R"(["x", "w", "bias"])", R"(["y"])", R"([{"op": "linear", "inputs": ["x", "w", "bias"], "outputs": ["y"]}])");
  };
  CHECK_NOTHROW(read_op_graph(linear("[32, 64]", "[32]"), "w.json"));
  REQUIRE_THROWS_WITH(read_op_graph(linear("[64, 32]", "[32]"), "w.json"),
                      Contains("w.json: /ops/0/inputs: linear: x [2, 10, 64] has 64 features, weight [64, 32] expects 32"));
  REQUIRE_THROWS_WITH(read_op_graph(linear("[32, 64]", "[64]"), "w.json"),
                      Contains("w.json: /ops/0/inputs/2: linear bias is [32], got [64]"));

  auto sdpa = [](const std::string& k, const std::string& extra = "") {
    return graph(R"({"q": )" + t("[1, 8, 16, 64]") + R"(, "k": )" + t(k) + R"(, "v": )" + t(k) + R"(, "m": )" +
                     t("[16, 32]") + R"(, "o": )" + t("[1, 8, 16, 64]") + "}",
                 R"(["q", "k", "v", "m"])", R"(["o"])",
                 R"([{"op": "sdpa", "inputs": ["q", "k", "v")" + extra + R"(], "outputs": ["o"], "attrs": {"causal": true}}])");
  };
  CHECK_NOTHROW(read_op_graph(sdpa("[1, 2, 32, 64]"), "w.json"));
  CHECK_NOTHROW(read_op_graph(sdpa("[1, 2, 32, 64]", R"(, "m")"), "w.json"));
  REQUIRE_THROWS_WITH(read_op_graph(sdpa("[1, 3, 32, 64]"), "w.json"),
                      Contains("w.json: /ops/0/inputs/1: query heads 8 are not a multiple of key/value heads 3"));
  REQUIRE_THROWS_WITH(read_op_graph(sdpa("[1, 2, 16, 64]", R"(, "m")"), "w.json"),
                      Contains("w.json: /ops/0/inputs/3: mask is [Lq, Lk] = [16, 16], got [16, 32]"));
}

TEST_CASE("matmul family: a bmm splits the batch first and moves each operand byte once") {
  // [8, 128, 256] @ [8, 256, 64] on 8 cores: B=8, one batch per core; every core's block fits
  // one tile (A 64 KiB + B 32 KiB + fp32 C 32 KiB), so A, B and C each move exactly once.
  Json j = matmul_graph("[8, 128, 256]", "[8, 256, 64]", "[8, 128, 64]", "{}", 8);
  CompileReport report;
  KernelGraph g = compile_ops(read_op_graph(j, "w.json"), chip(8), 8, &report);
  CHECK(macs(g) == 8u * 128 * 64 * 256);
  CHECK(hbm_bytes(g, "load", "a") == 8u * 128 * 256 * 2);
  CHECK(hbm_bytes(g, "load", "b") == 8u * 256 * 64 * 2);
  CHECK(hbm_bytes(g, "store", "c") == 8u * 128 * 64 * 2);
  REQUIRE(report.kernels.size() == 1);
  CHECK(report.kernels[0].split == "B=8 (8 of 8 cores)");
  CHECK(report.kernels[0].offchip_bytes.at("a") == 8u * 128 * 256 * 2);
  // The per-core tasks fold into one template per step: load a, load b, matmul, store.
  CHECK(g.tasks.size() == 4);
  ExpandedGraph eg = expand_graph(g, chip(8));
  CHECK(all_equal(coverage(g, eg, "c", true), 1));
  CHECK(all_equal(coverage(g, eg, "a", false), 1));
}

TEST_CASE("matmul family: a stick narrower than one element holds one and the matmul compiles") {
  // core.dma.stick_bytes = 1 with fp16 (2 B): stick_elements was 1 / 2 = 0 and the work
  // division divided by it (SIGFPE on matmul_1024 --set core.dma.stick_bytes=1). A stick is
  // one element then: [256, 128] @ [128, 64] on 4 cores, every MAC once, every byte of c once.
  Json j = matmul_graph("[256, 128]", "[128, 64]", "[256, 64]", "{}", 4);
  ChipConfig c = chip(4);
  c.core.dma.stick_bytes = 1;
  CHECK(stick_elements(1, Dtype::fp16) == 1);
  KernelGraph g = compile_ops(read_op_graph(j, "w.json"), c, 4);
  CHECK(macs(g) == 256u * 64 * 128);
  CHECK(hbm_bytes(g, "store", "c") == 256u * 64 * 2);
  ExpandedGraph eg = expand_graph(g, c);
  CHECK(all_equal(coverage(g, eg, "c", true), 1));
}

TEST_CASE("matmul family: the plan's estimate reads operands in the card's stick layout by their device runs") {
  // [4, 256, 128] @ [4, 128, 256] on 1 core, forced unsplit: one tile per batch (A 64 KiB, B
  // 64 KiB, fp32 C 256 KiB fit half the LX). Row-major, every tile is whole rows: one run per
  // tile, 4 KiB requests. In the card's stick layout a default-order [B, M, K] is stored
  // [M, K/64, B, 64]: a batch's tile is single sticks B = 4 sticks apart.
  Json j = matmul_graph("[4, 256, 128]", "[4, 128, 256]", "[4, 256, 256]", R"({"work_division": {"m": 1}})");
  OpGraph og = read_op_graph(j, "w.json");
  MatmulConstraints con;
  con.cores = 1;
  con.budget = 1589376 / 2;
  con.split = {{"M", 1}};
  const MatmulProblem rm = matmul_problem(og, og.ops[0]);
  MatmulProblem laid = rm;
  for (StoredMatrix* m : {&laid.a, &laid.b, &laid.c}) m->layout = stick_layout(og, m->index, 128);
  REQUIRE(laid.a.layout);
  const ChipConfig c = chip();
  auto x = matmul_plan_for(rm, c, con, 1, 1, 1, 1), y = matmul_plan_for(laid, c, con, 1, 1, 1, 1);
  REQUIRE(x);
  REQUIRE(y);
  REQUIRE(x->m_tiles() * x->n_tiles() * x->k_tiles() == 1);
  CHECK(y->offchip_bytes == x->offchip_bytes);  // the same bytes move...
  // ...but in runs of one stick, each whole sticks plus 64 bytes of DRAM row: 1.5 x the memory
  // time without the ports' request rate.
  ChipConfig no_rate = c;
  no_rate.memory.port_request_ns = 0;
  auto y0 = matmul_plan_for(laid, no_rate, con, 1, 1, 1, 1);
  REQUIRE(y0);
  CHECK(y0->memory_ns == Approx(1.5 * x->memory_ns));
  // With it (7.5 ns per request, stick-layout operands): core 0's port takes A's and B's
  // 2 x 256 KiB / 128 B = 4096 single-stick requests inbound (C's 4096 go out through the
  // other direction): 4096 x 7.5 = 30 720 ns. Row-major operands pay no request rate.
  CHECK(y->memory_ns == Approx(4096 * 7.5));
  CHECK(x->memory_ns == Approx(matmul_plan_for(rm, no_rate, con, 1, 1, 1, 1)->memory_ns));
  // One core's queues keep 8 requests in flight, each ~700 ns + its bytes at 4.3 GB/s:
  // A and B in: 2 x 256 KiB / 128 B = 4096 requests, C out: 512 KiB / 128 B = 4096 requests,
  // each 4096 x (700 + 128 / 4.3) / 8 ns; row-major, in 4 KiB requests: (256 KiB / 4 KiB) x
  // (700 + 4096 / 4.3) / 8 ns per 256 KiB, C twice that.
  CHECK(y->dma_ns == Approx(4096 * (700 + 128 / 4.3) / 8));
  CHECK(x->dma_ns == Approx(128 * (700 + 4096 / 4.3) / 8));
}

TEST_CASE("matmul family: a matmul whose K is split runs on one corelet of each core") {
  // [256, 512] @ [512, 256], K split over 2 cores: each core a 256 x 256 x 256 tile. The card's
  // backend leaves an op with a cross-core reduction on one corelet (torch-spyre
  // work_division.py), so every PT task of the split is pinned to corelet 0 and the plan's
  // compute is one corelet's. Weight-stationary 8 x 8 arrays, 8 fp16 ways, folds of at most 64
  // streamed rows (each part 2 Sr + Sc - 2 = 22 cycles on top of its stream): one corelet has
  // ceil(256 / 8 / 8) = 4 row folds x 256 / 8 = 32 column folds = 128 folds of 4 parts, 128 x
  // (4 x 22 + 256) = 44 032 cycles, twice the 22 016 of two corelets (16 column folds each).
  // The partials' tree adds one ring copy of the fp32 tile, 256 x 256 x 4 B / 128 B per cycle =
  // 2 048 cycles: (44 032 + 2 048) / 1.5 GHz = 30 720 ns.
  Json j = matmul_graph("[256, 512]", "[512, 256]", "[256, 256]", R"({"work_division": {"k": 2}})", 2);
  OpGraph og = read_op_graph(j, "w.json");
  KernelGraph g = compile_ops(og, chip(2), 2);
  int pt = 0;
  for (const Task& t : g.tasks)
    if (t.unit == UnitKind::pt) {
      ++pt;
      CHECK(t.corelet == 0);
    }
  CHECK(pt > 0);
  MatmulConstraints con;
  con.cores = 2;
  con.budget = 1589376 / 2;
  con.split = {{"K", 2}};
  auto plan = matmul_plan_for(matmul_problem(og, og.ops[0]), chip(2), con, 1, 1, 1, 2);
  REQUIRE(plan);
  REQUIRE(plan->m_tiles() * plan->n_tiles() * plan->k_tiles() == 1);
  CHECK(plan->compute_ns == Approx(30720));
  // Unsplit, the PT tasks spread over both corelets.
  KernelGraph whole = compile_ops(read_op_graph(matmul_graph("[256, 512]", "[512, 256]", "[256, 256]"), "w.json"), chip(1), 1);
  for (const Task& t : whole.tasks)
    if (t.unit == UnitKind::pt) CHECK(t.corelet == -1);
}

TEST_CASE("matmul family: a forced split of an int4 stick dim keeps whole bytes per part") {
  // int4 [192, 6] @ [6, 128], K forced into 2 parts: 3 elements each would end a part in the
  // middle of a byte (its A tile 48 rows x 1.5 B, loaded as 2 B rows: the access overran the
  // tile). The parts are 4 and 2 elements: whole bytes. Found by the property generator (seed 50).
  auto i4 = [](const std::string& shape) { return R"({"shape": )" + shape + R"(, "dtype": "int4"})"; };
  Json j = graph(R"({"a": )" + i4("[192, 6]") + R"(, "b": )" + i4("[6, 128]") + R"(, "c": )" + i4("[192, 128]") + "}",
                 R"(["a", "b"])", R"(["c"])",
                 R"([{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"], "attrs": {"work_division": {"k": 2, "m": 4, "n": 2}}}])",
                 R"({"cores": 16})");
  OpGraph og = read_op_graph(j, "w.json");
  MatmulConstraints con;
  con.cores = 16;
  con.budget = 1589376 / 2;
  con.split = {{"K", 2}, {"M", 4}, {"N", 2}};
  auto plan = matmul_plan_for(matmul_problem(og, og.ops[0]), chip(16), con, 1, 4, 2, 2);
  REQUIRE(plan);
  CHECK(plan->kpart == 4);
  CHECK(plan->nshare == 64);  // 128 / 2: whole bytes already
  KernelGraph g = compile_ops(og, chip(16), 16);  // checked by the loader's rules as it is built
  CHECK(macs(g) == 192u * 6 * 128);
}

TEST_CASE("matmul family: a projection folds the batch into M and transposed operands read the stored layout") {
  // [4, 64, 256] @ [256, 128]: B is shared by every batch, so the product is [256, 256] @ [256, 128].
  Json j = matmul_graph("[4, 64, 256]", "[256, 128]", "[4, 64, 128]");
  OpGraph og = read_op_graph(j, "w.json");
  MatmulProblem p = matmul_problem(og, og.ops[0]);
  CHECK(p.folded);
  CHECK(p.batches == 1);
  CHECK(p.M == 256);
  KernelGraph g = compile_ops(og, chip(1), 1);
  CHECK(macs(g) == 256u * 128 * 256);
  CHECK(hbm_bytes(g, "load", "a") == 256u * 256 * 2);
  CHECK(hbm_bytes(g, "load", "b") == 256u * 128 * 2);
  // transpose_b: B stored [N, K]; a B tile (k x n) is stored rows n, cols k. Every byte of the
  // stored B is read exactly once and C written once, on 4 cores.
  Json tb = matmul_graph("[256, 512]", "[384, 512]", "[256, 384]", R"({"transpose_b": true})", 4);
  KernelGraph gt = compile_ops(read_op_graph(tb, "w.json"), chip(4), 4);
  CHECK(macs(gt) == 256u * 384 * 512);
  ExpandedGraph eg = expand_graph(gt, chip(4));
  CHECK(all_equal(coverage(gt, eg, "c", true), 1));
  CHECK(all_equal(coverage(gt, eg, "b", false), 1));
  // transpose_a: A stored [K, M].
  Json ta = matmul_graph("[512, 256]", "[512, 128]", "[256, 128]", R"({"transpose_a": true})", 2);
  KernelGraph ga = compile_ops(read_op_graph(ta, "w.json"), chip(2), 2);
  ExpandedGraph ea = expand_graph(ga, chip(2));
  CHECK(all_equal(coverage(ga, ea, "c", true), 1));
  CHECK(macs(ga) == 256u * 128 * 512);
  // A forced split naming the batch keeps the batches (the card's WD_B on a shared 2-D weight):
  // 4 batch groups of one core each, every group loading all of B for its own batch.
  Json jb = matmul_graph("[4, 64, 256]", "[256, 128]", "[4, 64, 128]", "{}", 4);
  jb["ops"][0]["compile"] = Json::parse(R"({"split": {"B": 4}})");
  OpGraph ob = read_op_graph(jb, "w.json");
  MatmulProblem pb = matmul_problem(ob, ob.ops[0]);
  CHECK_FALSE(pb.folded);
  CHECK(pb.batches == 4);
  KernelGraph gb = compile_ops(ob, chip(4), 4);
  CHECK(macs(gb) == 4u * 64 * 128 * 256);
  CHECK(hbm_bytes(gb, "load", "a") == 4u * 64 * 256 * 2);
  CHECK(hbm_bytes(gb, "load", "b") == 4u * 256 * 128 * 2);  // B once per batch group
  ExpandedGraph ebx = expand_graph(gb, chip(4));
  CHECK(all_equal(coverage(gb, ebx, "c", true), 1));
  // B 1 is no batch split: the batch still folds into M.
  jb["ops"][0]["compile"] = Json::parse(R"({"split": {"B": 1, "M": 4}})");
  OpGraph o1 = read_op_graph(jb, "w.json");
  CHECK(matmul_problem(o1, o1.ops[0]).folded);
}

TEST_CASE("matmul family: a tile shared by more cores than one multicast reaches loads once per group") {
  // [512, 1024] @ [1024, 2048] forced M=16 N=2 on 32 cores: B's tiles are shared by a grid
  // column's 16 cores (cores c, c + 2, ..., c + 30), A's by a grid row's 2.
  Json j = matmul_graph("[512, 1024]", "[1024, 2048]", "[512, 2048]", "{}", 32);
  j["ops"][0]["compile"] = Json::parse(R"({"split": {"M": 16, "N": 2}})");
  OpGraph og = read_op_graph(j, "w.json");
  ChipConfig unlimited = chip(32), reach8 = chip(32);
  unlimited.ring.multicast_max_cores = 0;
  reach8.ring.multicast_max_cores = 8;
  KernelGraph g0 = compile_ops(og, unlimited, 32), g8 = compile_ops(og, reach8, 32);
  // Without a limit each byte of B crosses the bus once per m tile; with a reach of 8, once per
  // group of 8 of its 16 sharers: twice. A (2 sharers) and the output do not change.
  CHECK(hbm_bytes(g8, "load", "b") == 2 * hbm_bytes(g0, "load", "b"));
  CHECK(hbm_bytes(g0, "load", "b") % (1024ull * 2048 * 2) == 0);
  CHECK(hbm_bytes(g8, "load", "a") == hbm_bytes(g0, "load", "a"));
  CHECK(hbm_bytes(g8, "store") == hbm_bytes(g0, "store"));
  // Every load of B reaches 8 cores of one column (its group), never both groups.
  for (const Task& task : g8.tasks) {
    if (task.unit != UnitKind::dma || task.op != "load" || g8.buffers[static_cast<std::size_t>(task.reads[0].buffer)].name != "b")
      continue;
    std::set<std::int64_t> dest;
    for (const Access& w : task.writes) dest.insert(w.core->at(0));
    CHECK(dest.size() == 8);
    CHECK(*dest.rbegin() - *dest.begin() == 14);  // 8 cores 2 apart
    CHECK((*dest.begin() / 16 == *dest.rbegin() / 16));  // one group: cores 0-15 or 16-31 of the column
  }
  // The estimate counts the same loads.
  MatmulConstraints con;
  con.cores = 32;
  con.budget = 1589376 / 2;
  con.split = {{"M", 16}, {"N", 2}};
  MatmulProblem p = matmul_problem(og, og.ops[0]);
  const MatmulPlan e0 = *choose_matmul_plan(p, unlimited, con), e8 = *choose_matmul_plan(p, reach8, con);
  CHECK(e8.offchip_bytes - e0.offchip_bytes == hbm_bytes(g8, "load", "b") - hbm_bytes(g0, "load", "b"));
}

TEST_CASE("matmul family: matmul_4096 on 48 cores keeps operand sharing and beats 32 cores") {
  // 4096 does not divide over any 48-core grid; the plan pads the last parts instead of
  // dropping sharing (which read 640 MiB): 16 x 3, A moves twice over (2 n tiles) and B, shared
  // by a grid column's 16 cores, twice per m tile (two multicast groups of 8,
  // ring.multicast_max_cores): 64 + 128 MiB of reads.
  Json j = matmul_graph("[4096, 4096]", "[4096, 4096]", "[4096, 4096]", "{}", 48);
  OpGraph og = read_op_graph(j, "w.json");
  ChipConfig c48 = chip(48);
  CompileReport report;
  KernelGraph g = compile_ops(og, c48, 48, &report);
  CHECK(hbm_bytes(g, "load") <= 192ull << 20);
  CHECK(macs(g) == 4096ull * 4096 * 4096);
  // The compiler's own estimate on 48 cores is no worse than on 32, nor than on any fewer.
  MatmulProblem p = matmul_problem(og, og.ops[0]);
  double prev = 1e300;
  for (int cores : {1, 2, 3, 8, 16, 24, 31, 32, 33, 40, 47, 48}) {
    MatmulConstraints con;
    con.cores = cores;
    con.budget = 1589376 / 2;
    auto plan = choose_matmul_plan(p, c48, con);
    REQUIRE(plan);
    INFO(cores << " cores: " << plan->estimate_ns);
    CHECK(plan->estimate_ns <= prev);
    CHECK(plan->cores() <= cores);
    prev = plan->estimate_ns;
  }
}

TEST_CASE("matmul family: the refined estimate sees side-by-side runs and weighs K splits, for one batch only") {
  // 256 x 4096 x 4096 on the spyre preset (docs/compiler.md, "How good the choice is"). On 1 x 32
  // each core's n share is its whole n tile (128 columns): the 32 cores read B's rows side by
  // side, 32 runs of 256 B making each 8 KiB row, so B is charged its plain bytes, not a row
  // opening per 256 B run. The memory term is then the busiest port's: A (2 MiB) in 1 KiB runs
  // of 8 KiB rows (+256 B each), loaded once per multicast group of 8, two groups per ring half:
  // 2 x 2 MiB x 1.25 = 5 MiB, and B's 1 MiB per core for 16 cores: 16 MiB, 21 MiB at 81 GB/s
  // (54 B/cycle at 1.5 GHz) = 271.9 us; with a row opening per run B counted twice: 479.0 us.
  const ChipConfig spyre = load_chip_config("configs/spyre.json");
  Json j = matmul_graph("[256, 4096]", "[4096, 4096]", "[256, 4096]", "{}", 32);
  OpGraph og = read_op_graph(j, "w.json");
  const MatmulProblem p = matmul_problem(og, og.ops[0]);
  MatmulConstraints con;
  con.cores = 32;
  con.budget = 1589376 / 2;
  auto row = matmul_plan_for(p, spyre, con, 1, 1, 32, 1);
  REQUIRE(row);
  CHECK(row->tile.n == row->nshare);
  CHECK(row->memory_ns == Approx(21.0 * 1048576 / 81.0));
  CHECK(row->fill_ns > 0);
  CHECK(row->estimate_ns == Approx(std::max({row->compute_ns, row->memory_ns, row->dma_ns}) + row->fill_ns));
  // The chosen division is a K split (M=4 N=4 K=2: 251.8 us estimated, 313.9 simulated, below
  // every 2-D grid's run), chosen because its estimate is at least 10 % below every K-free
  // division's.
  auto chosen = choose_matmul_plan(p, spyre, con);
  REQUIRE(chosen);
  double best_k_free = 1e300;
  for (int r = 1; r <= 32; ++r)
    for (int cl = 1; r * cl <= 32; ++cl)
      if (auto q = matmul_plan_for(p, spyre, con, 1, r, cl, 1)) best_k_free = std::min(best_k_free, q->estimate_ns);
  CHECK(chosen->ksplit == 2);
  CHECK(chosen->estimate_ns <= 0.9 * best_k_free);
  CHECK_THAT(chosen->why, Contains("(a K split needs 10 % less)"));
  // 512 x 4096 x 14336: M=4 N=4 K=2 is estimated below N=32 (1678.3 against 1707.4 us) but not
  // 10 % below, so N=32 stays (simulated: 2835.3 us against 1679.4).
  Json j2 = matmul_graph("[512, 4096]", "[4096, 14336]", "[512, 14336]", "{}", 32);
  OpGraph o2 = read_op_graph(j2, "w2.json");
  const MatmulProblem p2 = matmul_problem(o2, o2.ops[0]);
  auto ksplit = matmul_plan_for(p2, spyre, con, 1, 4, 4, 2), kfree = matmul_plan_for(p2, spyre, con, 1, 1, 32, 1);
  REQUIRE(ksplit);
  REQUIRE(kfree);
  CHECK(ksplit->estimate_ns < kfree->estimate_ns);
  CHECK(ksplit->estimate_ns > 0.9 * kfree->estimate_ns);
  auto chosen2 = choose_matmul_plan(p2, spyre, con);
  REQUIRE(chosen2);
  CHECK(chosen2->ksplit == 1);
  // A batched problem keeps the estimate it had: no fill and drain, no side-by-side runs.
  Json jb = matmul_graph("[2, 256, 4096]", "[2, 4096, 4096]", "[2, 256, 4096]", "{}", 32);
  OpGraph ob = read_op_graph(jb, "b.json");
  const MatmulProblem pb = matmul_problem(ob, ob.ops[0]);
  REQUIRE(pb.batches == 2);
  auto batched = matmul_plan_for(pb, spyre, con, 1, 1, 32, 1);
  REQUIRE(batched);
  CHECK(batched->fill_ns == 0);
  CHECK(batched->estimate_ns == std::max({batched->compute_ns, batched->memory_ns, batched->dma_ns}));
  auto bchosen = choose_matmul_plan(pb, spyre, con);
  REQUIRE(bchosen);
  CHECK_THAT(bchosen->why, !Contains("K split needs"));
}

TEST_CASE("matmul family: N = 1000 costs about what N = 1024 does") {
  // Whole sticks per core: 1000 columns are cut like 1024 (the last part shorter), not in
  // 125-column slices of partial sticks.
  auto plan_for = [](std::int64_t n) {
    Json j = matmul_graph("[256, 4096]", "[4096, " + std::to_string(n) + "]", "[256, " + std::to_string(n) + "]", "{}", 32);
    OpGraph og = read_op_graph(j, "w.json");
    MatmulConstraints con;
    con.cores = 32;
    con.budget = 1589376 / 2;
    return *choose_matmul_plan(matmul_problem(og, og.ops[0]), chip(), con);
  };
  MatmulPlan a = plan_for(1000), b = plan_for(1024);
  CHECK(a.estimate_ns <= 1.05 * b.estimate_ns);
  CHECK((a.cols == 1 || a.nshare % 64 == 0));  // whole sticks per core, or the whole N
}

TEST_CASE("matmul family: tiles {N: T} caps a core's n tile at its columns / T") {
  // [64, 128] @ [128, 512] on 1 core: A 16 KiB, B 128 KiB and the fp32 output 128 KiB fit one
  // tile, so the PT step is 64 x 512 x 128. With tiles {N: 4} each step has at most 512 / 4 =
  // 128 columns: 4 steps, the same MACs (64 x 512 x 128 = 4 194 304).
  Json j = matmul_graph("[64, 128]", "[128, 512]", "[64, 512]");
  OpGraph og = read_op_graph(j, "w.json");
  auto widest = [](const KernelGraph& g) {
    std::uint64_t n = 0;
    int steps = 0;
    for (const auto& task : g.tasks)
      if (task.unit == UnitKind::pt) {
        n = std::max<std::uint64_t>(n, task.n);
        ++steps;
      }
    return std::pair{n, steps};
  };
  KernelGraph free = compile_ops(og, chip(1), 1);
  CHECK(widest(free) == std::pair<std::uint64_t, int>{512, 1});
  og.ops[0].tiles = {{"N", 4}};
  KernelGraph capped = compile_ops(og, chip(1), 1);
  CHECK(widest(capped) == std::pair<std::uint64_t, int>{128, 4});
  CHECK(macs(capped) == 64u * 512 * 128);
  CHECK(hbm_bytes(capped, "load", "b") == 128u * 512 * 2);  // each column of B once
}

TEST_CASE("matmul family: a row-tiled matmul re-reads B per tile unless B stays in LX") {
  // [1024, 256] @ [256, 256] on 1 core with tiles {M: 8}: 8 sequential m tiles of 128 rows,
  // each reading the whole B (128 KiB): 8 x 128 KiB. With lx_planning B (128 KiB) stays in
  // LX: read once.
  Json j = matmul_graph("[1024, 256]", "[256, 256]", "[1024, 256]");
  OpGraph og = read_op_graph(j, "w.json");
  og.ops[0].tiles = {{"M", 8}};
  KernelGraph g = compile_ops(og, chip(1), 1);
  CHECK(hbm_bytes(g, "load", "b") == 8u * 256 * 256 * 2);
  CHECK(hbm_bytes(g, "load", "a") == 1024u * 256 * 2);
  og.compile.lx_planning = LxPlanning::reductions;
  CompileReport report;
  KernelGraph kept = compile_ops(og, chip(1), 1, &report);
  CHECK(hbm_bytes(kept, "load", "b") == 256u * 256 * 2);
  CHECK(macs(kept) == 1024u * 256 * 256);
  REQUIRE(report.kernels[0].lx_resident.size() >= 1);
  CHECK_THAT(report.kernels[0].lx_resident[0], Contains("loaded once for all 8 m tiles"));
  // tiles {K: 4}: a coarse loop of 4 parts of K, one matmul kernel each (tested below).
  og.ops[0].tiles = {{"K", 4}};
  og.compile.lx_planning = LxPlanning::none;
  KernelGraph k4 = compile_ops(og, chip(1), 1);
  int steps = 0;
  for (const auto& task : k4.tasks) steps += task.unit == UnitKind::pt && task.name.find("/m0/n0/") != std::string::npos;
  CHECK(steps == 4);
  // split {M: 2, N: 2}: forced, product = cores used.
  og.ops[0].tiles.clear();
  og.ops[0].split = {{"M", 2}, {"N", 2}};
  CompileReport forced;
  KernelGraph s = compile_ops(og, chip(8), 8, &forced);
  CHECK(forced.kernels[0].split == "M=2 N=2 (4 of 8 cores)");
  CHECK(s.cores == 8);
  og.ops[0].split = {{"M", 4}, {"N", 4}};
  REQUIRE_THROWS_WITH(compile_ops(og, chip(8), 8), Contains("w.json: /ops/0/compile/split: needs 16 cores"));
}

TEST_CASE("matmul family: epilogues run on the SFP before the output tile is stored") {
  // SwiGLU: up = x @ wu; gate = x @ wg; s = silu(gate); h = mul(s, up); y = h + r.
  Json j = graph(R"({"x": )" + t("[256, 512]") + R"(, "wu": )" + t("[512, 256]") + R"(, "wg": )" + t("[512, 256]") +
                     R"(, "up": )" + t("[256, 256]") + R"(, "gate": )" + t("[256, 256]") + R"(, "s": )" + t("[256, 256]") +
                     R"(, "h": )" + t("[256, 256]") + R"(, "r": )" + t("[256, 256]") + R"(, "y": )" + t("[256, 256]") +
                     R"(, "bias": )" + t("[256]") + R"(, "z": )" + t("[256, 256]") + R"(, "col": )" + t("[256, 1]") +
                     R"(, "w": )" + t("[256, 256]") + "}",
                 R"(["x", "wu", "wg", "r", "bias", "col"])", R"(["y", "z", "w"])",
                 R"([{"op": "matmul", "inputs": ["x", "wu"], "outputs": ["up"]},
                     {"op": "matmul", "inputs": ["x", "wg"], "outputs": ["gate"]},
                     {"op": "silu", "inputs": ["gate"], "outputs": ["s"]},
                     {"op": "mul", "inputs": ["s", "up"], "outputs": ["h"]},
                     {"op": "add", "inputs": ["h", "r"], "outputs": ["y"]},
                     {"op": "add", "inputs": ["y", "bias"], "outputs": ["z"]},
                     {"op": "mul", "inputs": ["y", "col"], "outputs": ["w"]}])");
  OpGraph og = read_op_graph(j, "w.json");
  const Op &mu = og.ops[0], &mg = og.ops[1];
  const TensorUses uses(og);
  CHECK(matmul_epilogue_ok(og, uses, mg, {}, og.ops[2]));      // silu(gate)
  CHECK(matmul_epilogue_ok(og, uses, mg, {2}, og.ops[3]));     // * up (an earlier matmul's output)
  CHECK(matmul_epilogue_ok(og, uses, mg, {2, 3}, og.ops[4]));  // + r (a graph input)
  CHECK_FALSE(matmul_epilogue_ok(og, uses, mg, {2, 3, 4}, og.ops[5]));  // y is also read by op 6 and is a graph output
  CHECK_FALSE(matmul_epilogue_ok(og, uses, mu, {}, og.ops[3]));  // up's consumer reads s, produced after matmul `up`
  CHECK_FALSE(matmul_epilogue_ok(og, uses, mg, {}, og.ops[4]));  // does not read gate

  // Lower by hand: the up matmul alone, then gate with [silu, mul, add] on 1 core.
  ChipConfig c = chip(1);
  GraphBuilder builder("t", 1);
  LowerContext ctx{builder, og, {}, 1, c.core.lx.usable_bytes / 2, {}};
  ctx.chip = &c;
  ctx.uses = &uses;
  for (const OpTensor& x : og.tensors) {
    ctx.hbm.push_back(builder.add_buffer(x.name, Space::hbm, x.bytes(), x.dtype, og.is_input(og.find_tensor(x.name))));
    ctx.lx.push_back(-1);
  }
  builder.begin_kernel("up");
  lower_matmul(ctx, mu, "up");
  builder.begin_kernel("swiglu");
  lower_matmul(ctx, mg, "swiglu", {2, 3, 4});
  KernelGraph g = builder.take();
  check_kernel_graph(g);
  const std::uint64_t tile = 256u * 256 * 2;  // one [256, 256] fp16 tensor
  CHECK(hbm_bytes(g, "store", "y") == tile);  // the fused kernel stores only the last output
  CHECK(hbm_bytes(g, "store", "gate") == 0);
  CHECK(hbm_bytes(g, "store", "s") == 0);
  CHECK(hbm_bytes(g, "store", "h") == 0);
  CHECK(hbm_bytes(g, "load", "up") == tile);  // the other operands once each
  CHECK(hbm_bytes(g, "load", "r") == tile);
  CHECK(sfp_elements(g, "silu") == 256u * 256);
  CHECK(sfp_elements(g, "mul") == 256u * 256);
  CHECK(sfp_elements(g, "add") == 256u * 256);
  ExpandedGraph eg = expand_graph(g, c);
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
}

TEST_CASE("matmul family: linear adds its bias per output tile") {
  Json j = graph(R"({"x": )" + t("[4, 64, 512]") + R"(, "w": )" + t("[256, 512]") + R"(, "bias": )" + t("[256]") +
                     R"(, "y": )" + t("[4, 64, 256]") + "}",
                 R"(["x", "w", "bias"])", R"(["y"])",
                 R"([{"op": "linear", "inputs": ["x", "w", "bias"], "outputs": ["y"]}])", R"({"cores": 4})");
  KernelGraph g = compile_ops(read_op_graph(j, "w.json"), chip(4), 4);
  CHECK(macs(g) == 256u * 256 * 512);
  CHECK(sfp_elements(g, "add") == 256u * 256);
  CHECK(hbm_bytes(g, "load", "w") == 256u * 512 * 2);
  ExpandedGraph eg = expand_graph(g, chip(4));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
  CHECK(all_equal(coverage(g, eg, "w", false), 1));
}

namespace {

Json sdpa_graph(int hq, int hkv, int lq, int lk, int d, bool causal, int cores) {
  auto s = [](int a, int b, int c, int e) {
    return "[" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ", " + std::to_string(e) + "]";
  };
  return graph(R"({"q": )" + t(s(1, hq, lq, d)) + R"(, "k": )" + t(s(1, hkv, lk, d)) + R"(, "v": )" + t(s(1, hkv, lk, d)) +
                   R"(, "o": )" + t(s(1, hq, lq, d)) + "}",
               R"(["q", "k", "v"])", R"(["o"])",
               R"([{"op": "sdpa", "inputs": ["q", "k", "v"], "outputs": ["o"], "attrs": {"causal": )" +
                   std::string(causal ? "true" : "false") + "}}]",
               R"({"cores": )" + std::to_string(cores) + "}");
}

}  // namespace

TEST_CASE("sdpa: K and V move once per GQA group, the carries stay in LX") {
  // 8 query heads over 2 KV heads (groups of 4), Lq = 128, Lk = 256, D = 64, on 2 cores: one
  // unit (KV head) per core, the whole Lq in one tile (Q 64 KiB + 4 heads' carries 2 x 32 KiB
  // fp32 + K, V, score tiles fit the 776 KiB budget), so every K and V byte is loaded once
  // (not 4 times) and Q and O move once.
  KernelGraph g = compile_ops(read_op_graph(sdpa_graph(8, 2, 128, 256, 64, false, 2), "w.json"), chip(2), 2);
  const std::uint64_t kv = 2u * 256 * 64 * 2, qo = 8u * 128 * 64 * 2;
  CHECK(hbm_bytes(g, "load", "k") == kv);
  CHECK(hbm_bytes(g, "load", "v") == kv);
  CHECK(hbm_bytes(g, "load", "q") == qo);
  CHECK(hbm_bytes(g, "store", "o") == qo);
  CHECK(macs(g) == 2u * 8 * 128 * 256 * 64);  // q.k^T and p.v per head
  ExpandedGraph eg = expand_graph(g, chip(2));
  CHECK(all_equal(coverage(g, eg, "o", true), 1));
  CHECK(all_equal(coverage(g, eg, "k", false), 1));
}

TEST_CASE("sdpa: a causal mask skips the Lk tiles past the last query, about half the MACs") {
  // Lq = Lk = 4096, D = 128, one head on 32 cores: Lq tiles of 128 (32 units); Lk tiles of
  // tk. Tile i needs ceil(128 (i + 1) / tk) of the 4096 / tk Lk tiles.
  auto run = [](bool causal) {
    return compile_ops(read_op_graph(sdpa_graph(1, 1, 4096, 4096, 128, causal, 32), "w.json"), chip(), 32);
  };
  KernelGraph full = run(false), causal = run(true);
  const std::uint64_t all = 2ull * 4096 * 4096 * 128;
  CHECK(macs(full) == all);
  const double ratio = static_cast<double>(macs(causal)) / static_cast<double>(all);
  CHECK(ratio > 0.5);
  CHECK(ratio < 0.56);
}

TEST_CASE("sdpa: a causal mask after cached keys (causal_offset) sees the cache and the chunk up to each query") {
  // One head, Lq = 256 queries after `offset` cached keys, Lk = 1024, D = 64, tiles forced to
  // {Lq: 2, Lk: 4}: Lq tiles of 128 (two units, one per core), Lk tiles of 256. A unit of
  // queries q0..q0+127 needs Lk tiles up to key offset + q0 + 127:
  //   offset 0:   (0 + 127) / 256 + 1 = 1 and (0 + 255) / 256 + 1 = 1 tile   -> 256 keys each
  //   offset 256: (256 + 127) / 256 + 1 = 2 and (256 + 255) / 256 + 1 = 2    -> 512 keys each
  //   offset 768: (768 + 127) / 256 + 1 = 4 and 4 (all of Lk)                -> 1024 keys each
  // MACs = (q.k^T + p.v) 2 x 256 queries x keys x 64; K bytes: the tiles any unit needs, once
  // (both units are on KV head 0, multicast) = keys x 64 x 2 B.
  auto run = [](int offset) {
    std::string attrs = R"({"causal": true)" + (offset ? R"(, "causal_offset": )" + std::to_string(offset) : "") + "}";
    Json j = graph(R"({"q": )" + t("[1, 1, 256, 64]") + R"(, "k": )" + t("[1, 1, 1024, 64]") + R"(, "v": )" +
                       t("[1, 1, 1024, 64]") + R"(, "o": )" + t("[1, 1, 256, 64]") + "}",
                   R"(["q", "k", "v"])", R"(["o"])",
                   R"([{"op": "sdpa", "inputs": ["q", "k", "v"], "outputs": ["o"], "attrs": )" + attrs +
                       R"(, "compile": {"tiles": {"Lq": 2, "Lk": 4}}}])",
                   R"({"cores": 2})");
    return compile_ops(read_op_graph(j, "w.json"), chip(2), 2);
  };
  for (auto [offset, keys] : {std::pair{0, 256}, {256, 512}, {768, 1024}}) {
    CAPTURE(offset);
    KernelGraph g = run(offset);
    CHECK(macs(g) == 2ull * 256 * static_cast<std::uint64_t>(keys) * 64);
    CHECK(hbm_bytes(g, "load", "k") == static_cast<std::uint64_t>(keys) * 64 * 2);
    CHECK(hbm_bytes(g, "load", "v") == static_cast<std::uint64_t>(keys) * 64 * 2);
  }
}

TEST_CASE("sdpa: causal_offset is checked: an integer in 0..Lk-1, with causal") {
  auto sdpa = [](const std::string& attrs) {
    return graph(R"({"q": )" + t("[1, 1, 16, 64]") + R"(, "k": )" + t("[1, 1, 48, 64]") + R"(, "v": )" +
                     t("[1, 1, 48, 64]") + R"(, "o": )" + t("[1, 1, 16, 64]") + "}",
                 R"(["q", "k", "v"])", R"(["o"])",
                 R"([{"op": "sdpa", "inputs": ["q", "k", "v"], "outputs": ["o"], "attrs": )" + attrs + "}]");
  };
  CHECK(read_op_graph(sdpa(R"({"causal": true, "causal_offset": 32})"), "w.json").ops[0].causal_offset == 32);
  CHECK(read_op_graph(sdpa(R"({"causal": true, "causal_offset": 47})"), "w.json").ops[0].causal_offset == 47);
  REQUIRE_THROWS_WITH(read_op_graph(sdpa(R"({"causal_offset": 32})"), "w.json"),
                      Contains("w.json: /ops/0/attrs/causal_offset: causal_offset applies to a causal mask"));
  REQUIRE_THROWS_WITH(read_op_graph(sdpa(R"({"causal": true, "causal_offset": 48})"), "w.json"),
                      Contains("w.json: /ops/0/attrs/causal_offset"));
  REQUIRE_THROWS_WITH(read_op_graph(sdpa(R"({"causal": true, "causal_offset": -1})"), "w.json"),
                      Contains("w.json: /ops/0/attrs/causal_offset"));
  REQUIRE_THROWS_WITH(read_op_graph(sdpa(R"({"causal": true, "causal_offset": 1.5})"), "w.json"),
                      Contains("w.json: /ops/0/attrs/causal_offset"));
}

TEST_CASE("matmul family: a coarse loop over K runs its parts one after another, their sums through HBM") {
  // [256, 256] @ [256, 128] on 1 core with tiles {K: 4}: four parts of K = 64, each a matmul
  // kernel of its own (the card's loop body). Part 0 stores its product as the running sum;
  // parts 1-3 store their product, then load it and the sum before it, add, and store the new
  // sum (the card's accumulate kernel), the last one into c. Conservation, with a = 128 KiB,
  // b = 64 KiB and one output (256 x 128 fp16) = 64 KiB:
  //   a and b are read once in all (each part reads its K slice): 128 + 64 KiB;
  //   products: 4 stores of 64 KiB; sums: 3 stores of 64 KiB, 3 x 2 loads of 64 KiB.
  Json j = matmul_graph("[256, 256]", "[256, 128]", "[256, 128]");
  OpGraph og = read_op_graph(j, "w.json");
  og.ops[0].tiles = {{"K", 4}};
  CompileReport report;
  KernelGraph g = compile_ops(og, chip(1), 1, &report);
  const std::uint64_t out = 256u * 128 * 2;
  CHECK(hbm_bytes(g, "load", "a") == 256u * 256 * 2);
  CHECK(hbm_bytes(g, "load", "b") == 256u * 128 * 2);
  CHECK(hbm_bytes(g, "store") == 4 * out + 3 * out);
  CHECK(hbm_bytes(g, "store", "c") == out);
  CHECK(hbm_bytes(g, "load") == 256u * 256 * 2 + 256u * 128 * 2 + 6 * out);
  CHECK(macs(g) == 256u * 256 * 128);
  // Each part's SFP adds the two 256 x 128 tiles once: 3 adds of 32 768 elements.
  std::uint64_t adds = 0;
  for (const auto& task : g.tasks) adds += task.unit == UnitKind::sfp && task.op == "add" ? task.elements : 0;
  CHECK(adds == 3u * 256 * 128);
  // Part i + 1's LX buffers take over the space of the last tile part i stored: its loads wait
  // for that store (Buffer::after), so the parts do not overlap.
  int linked = 0;
  for (const Buffer& b : g.buffers) {
    if (b.space != Space::lx || b.name.find("/i0/") != std::string::npos) continue;
    REQUIRE(b.after >= 0);
    const std::string& prev = g.buffers[static_cast<std::size_t>(b.after)].name;
    const auto part = b.name.substr(b.name.find("/i") + 2, 1);
    CHECK(prev.find("/i" + std::to_string(std::stoi(part) - 1) + "/") != std::string::npos);
    ++linked;
  }
  CHECK(linked > 0);
  REQUIRE(report.kernels.size() == 1);
  CHECK_THAT(report.kernels[0].loops[0], Contains("K in 4 parts"));
  // The report counts the parts' buffers as one: 3 products and 3 running sums, each stored once
  // and loaded once.
  CHECK(report.kernels[0].offchip_bytes.at("matmul_c/i*/product") == 6 * out);
  CHECK(report.kernels[0].offchip_bytes.at("matmul_c/i*/sum") == 6 * out);
  CHECK(report.kernels[0].offchip_bytes.at("c") == out);
  // In time: part i + 1's first task starts at least card.loop_iteration_ns after the last of
  // part i ends (its last store: the last tile's buffer is released then).
  ChipConfig cfg = chip(1);
  cfg.loop_iteration_ns = 688;
  ExpandedGraph x = expand_graph(g, cfg);
  Simulation sim(g, x, cfg);
  REQUIRE(sim.run().ok());
  std::vector<Tick> first(4, std::numeric_limits<Tick>::max()), last(4, 0);
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const std::string& name = g.tasks[static_cast<std::size_t>(x.instances[i].task)].name;
    const auto at = name.find("/i");
    REQUIRE(at != std::string::npos);
    const auto part = static_cast<std::size_t>(name[at + 2] - '0');
    const TaskRecord& r = sim.recorder().tasks()[i];
    first[part] = std::min(first[part], r.start);
    last[part] = std::max(last[part], r.end);
  }
  for (std::size_t part = 1; part < 4; ++part) CHECK(first[part] >= last[part - 1] + ns_to_ticks(cfg.loop_iteration_ns));
}

TEST_CASE("compile report: explain lists the kernel's split, loops, bytes and warnings") {
  Json j = matmul_graph("[1024, 256]", "[256, 256]", "[1024, 256]");
  OpGraph og = read_op_graph(j, "w.json");
  og.ops[0].tiles = {{"M", 8}};
  CompileReport report;
  compile_ops(og, chip(4), 4, &report);
  std::string text = report.text();
  CHECK_THAT(text, Contains("kernel matmul_c"));
  CHECK_THAT(text, Contains("ops:  matmul -> c"));
  CHECK_THAT(text, Contains("split: "));
  CHECK_THAT(text, Contains("loop: M: "));
  CHECK_THAT(text, Contains("off-chip b: "));
  CHECK_THAT(text, Contains("warning: b is re-read for each of the"));
  Json js = report.to_json();
  REQUIRE(js.size() == 1);
  CHECK(js[0]["macs"] == 1024u * 256 * 256);
  CHECK(js[0]["roofline_ns"].get<double>() > 0);
  CHECK(js[0]["offchip_bytes"]["a"] == 1024u * 256 * 2);
}

TEST_CASE("compile report: a chosen division names the next two, neither estimated faster") {
  // workloads/matmul_4096.json on the spyre preset: M=8 N=4 wins (1916.7 us: compute bound at
  // 1878.7, plus 38.0 of fill and drain) of 174 divisions (K splits included); the 4 x 8 and
  // 16 x 2 grids follow (2131.5, 2199.5 us), so a user sees how close it was.
  CompileReport report;
  compile_ops(read_op_graph(load_json_file("workloads/matmul_4096.json"), "mm.json"), load_chip_config("configs/spyre.json"), 32,
              &report);
  REQUIRE(report.kernels.size() == 1);
  const std::string why = report.kernels[0].why;
  CHECK_THAT(why, Contains("least estimate (1916.7 us, compute bound) of 174 divisions on at most 32 cores (a K split needs 10 % less); next: "));
  std::smatch m;
  REQUIRE(std::regex_search(why, m, std::regex(R"(next: (\S+ \S+) ([0-9.]+) us, (\S+ \S+) ([0-9.]+) us$)")));
  CHECK(m[1] != "M=8 N=4");
  CHECK(m[3] != "M=8 N=4");
  CHECK(m[1] != m[3]);
  CHECK(std::stod(m[2]) >= 1916.7);
  CHECK(std::stod(m[4]) >= std::stod(m[2]));
  // A forced split says so and lists nothing else.
  OpGraph forced = read_op_graph(load_json_file("workloads/matmul_4096.json"), "mm.json");
  forced.ops[0].split = {{"M", 4}, {"N", 8}};
  CompileReport fr;
  compile_ops(forced, load_chip_config("configs/spyre.json"), 32, &fr);
  CHECK(fr.kernels[0].why == "forced by split");
}

TEST_CASE("compile report: a matmul's estimate lists its terms, the largest bound plus fill and drain") {
  // workloads/matmul_4096.json on the spyre preset. Chosen 8 x 4: compute bound, 4096^3 /
  // 32 cores at 74.4 % of 1024 MAC/cycle at 1.5 GHz (tiles of the fold stream limit) =
  // 1878.7 us; memory and DMA below it. Fill and drain (tiles 256 x 512, k-steps of 128, 128
  // steps of 14.68 us): the first A band (256 x 128 x 2 B over 4 sharers = 16 KiB in 256 B
  // requests: 64 x (700 + 256 / 4.3) ns / 8 in flight = 6.08 us), B band (128 x 512 x 2 B over
  // 8 = 16 KiB in 1 KiB requests: 1.88 us), one PT step (14.68) and the last C tile (256 KiB in
  // 1 KiB requests: 30.0), less one step of the bound (14.68) = 38.0 us: 1916.7 in all. Forced
  // 4 x 8: the same compute, but B's 8 grid columns of 4 cores spread over both ring halves
  // load the ports more: memory bound at 2071.3 us, plus 60.3 = 2131.5.
  for (const auto& [split, bound, bound_us, estimate] :
       {std::tuple{std::map<std::string, std::int64_t>{}, "compute", 1878.7, 1916.7},
        std::tuple{std::map<std::string, std::int64_t>{{"M", 4}, {"N", 8}}, "memory", 2071.3, 2131.5}}) {
    OpGraph og = read_op_graph(load_json_file("workloads/matmul_4096.json"), "mm.json");
    og.ops[0].split = split;
    CompileReport report;
    compile_ops(og, load_chip_config("configs/spyre.json"), 32, &report);
    REQUIRE(report.kernels.size() == 1);
    const KernelReport& k = report.kernels[0];
    REQUIRE(k.estimate_terms_ns.size() == 4);  // no port-request term: nothing is in the card's layout
    CHECK(k.estimate_terms_ns[0].first == "compute");
    CHECK(k.estimate_terms_ns[1].first == "memory");
    CHECK(k.estimate_terms_ns[2].first == "DMA");
    CHECK(k.estimate_terms_ns[3].first == "fill and drain");
    double largest = 0;
    std::string which;
    for (std::size_t i = 0; i < 3; ++i)
      if (k.estimate_terms_ns[i].second > largest) std::tie(largest, which) = std::tie(k.estimate_terms_ns[i].second, k.estimate_terms_ns[i].first);
    CHECK(which == bound);
    CHECK(largest / 1000.0 == Approx(bound_us).margin(0.05));
    CHECK(largest + k.estimate_terms_ns[3].second == Approx(k.estimate_ns));
    CHECK(k.estimate_ns / 1000.0 == Approx(estimate).margin(0.05));
    CHECK_THAT(report.text(), Contains(fmt::format("compiler estimate {:.1f} us (compute ", estimate)));
    CHECK(report.to_json()[0]["estimate_terms_ns"][bound].get<double>() == largest);
  }
}

TEST_CASE("compile report: a row-wise kernel says how it divides its rows and tiles them") {
  // add_2048x1024 on 32 cores: y's 2048 rows, 64 a core, in 4 tiles of 16 (16 x 1024 x 2 B =
  // 32 KiB of each operand: at least 4 tiles keep 16 KiB each, so a tile's loads overlap the
  // store of the one before).
  CompileReport report;
  compile_ops(read_op_graph(load_json_file("workloads/add_2048x1024.json"), "add.json"), load_chip_config("configs/spyre.json"),
              32, &report);
  REQUIRE(report.kernels.size() == 1);
  CHECK(report.kernels[0].split == "d0 of y (2048) over 32 of 32 cores, 64 each");
  REQUIRE(report.kernels[0].loops.size() == 1);
  CHECK_THAT(report.kernels[0].loops[0], Contains("d0: 4 tiles of up to 16 a core (at least 4"));
  // A fused softmax on one core: 512 rows in 6 tiles of up to 86 (the LX budget).
  CompileReport sm;
  compile_ops(read_op_graph(load_json_file("workloads/softmax_512x1024.json"), "sm.json"), load_chip_config("configs/spyre.json"),
              1, &sm);
  REQUIRE(sm.kernels.size() == 1);
  CHECK(sm.kernels[0].split == "d0 of y (512) over 1 of 1 cores, 512 each");
  CHECK_THAT(sm.kernels[0].loops[0], Contains("d0: 6 tiles of up to 86 a core"));
}

TEST_CASE("matmul family: operand layouts give the strides a bmm reads") {
  // a [8, 128, 256] in layout [1, 0, 2] (device order M, B, K; K is the stick dim): batch b's
  // row m starts at (m * 8 + b) * 256. Every byte of a is still read once, c written once.
  Json j = matmul_graph("[8, 128, 256]", "[8, 256, 64]", "[8, 128, 64]", "{}", 8);
  OpGraph og = read_op_graph(j, "w.json");
  og.compile.layouts["a"] = {1, 0, 2};
  MatmulProblem p = matmul_problem(og, og.ops[0]);
  CHECK_FALSE(p.a.transposed);
  CHECK(p.a.row_stride == 8 * 256);
  CHECK(p.a.batch_elems[3] == 3 * 256);
  KernelGraph g = compile_ops(og, chip(8), 8);
  ExpandedGraph eg = expand_graph(g, chip(8));
  CHECK(all_equal(coverage(g, eg, "a", false), 1));
  CHECK(all_equal(coverage(g, eg, "c", true), 1));
  CHECK(macs(g) == 8u * 128 * 64 * 256);
  // Layout [0, 2, 1]: M is the stick dim, A is read as stored [K, M] (transposed).
  og.compile.layouts["a"] = {0, 2, 1};
  CHECK(matmul_problem(og, og.ops[0]).a.transposed);
  // The batch as the stick dim needs a restickify first.
  og.compile.layouts["a"] = {1, 2, 0};
  REQUIRE_THROWS_WITH(matmul_problem(og, og.ops[0]), Contains("w.json: /compile/layouts/a: the stick dim"));
}

TEST_CASE("matmul family: random shapes and core counts fit the LX and write every output byte once") {
  // A deterministic sweep: batch dims broadcast or not, transposed operands, cores 1..48, a
  // small LX on some. Every PT step's A, B and output tiles fit the tile budget, the MACs are
  // the product's, C is written exactly once and the graph passes the loader's checks.
  std::uint64_t seed = 12345;
  auto next = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  for (int i = 0; i < 24; ++i) {
    const std::int64_t b = 1 + static_cast<std::int64_t>(next(4)), m = 1 + static_cast<std::int64_t>(next(300)),
                       n = 1 + static_cast<std::int64_t>(next(300)), k = 1 + static_cast<std::int64_t>(next(600));
    const bool ta = next(2), tb = next(2), shared_b = next(2);
    const int cores = 1 + static_cast<int>(next(48));
    const std::uint64_t lx = next(2) ? 1589376 : 65536;
    auto dims = [](std::vector<std::int64_t> v) {
      std::string s = "[";
      for (std::size_t j = 0; j < v.size(); ++j) s += (j ? ", " : "") + std::to_string(v[j]);
      return s + "]";
    };
    std::vector<std::int64_t> as = ta ? std::vector<std::int64_t>{b, k, m} : std::vector<std::int64_t>{b, m, k};
    std::vector<std::int64_t> bs = tb ? std::vector<std::int64_t>{n, k} : std::vector<std::int64_t>{k, n};
    if (!shared_b) bs.insert(bs.begin(), b);
    std::string attrs = std::string(R"({"transpose_a": )") + (ta ? "true" : "false") + R"(, "transpose_b": )" +
                        (tb ? "true" : "false") + "}";
    INFO(dims(as) << " @ " << dims(bs) << " " << attrs << " on " << cores << " cores, LX " << lx);
    Json j = matmul_graph(dims(as), dims(bs), dims({b, m, n}), attrs, cores);
    ChipConfig c = chip(48, lx);
    KernelGraph g = compile_ops(read_op_graph(j, "w.json"), c, cores);
    CHECK(macs(g) == static_cast<std::uint64_t>(b * m * n * k));
    for (const auto& task : g.tasks) {
      if (task.unit != UnitKind::pt) continue;
      std::uint64_t bytes = g.buffers[static_cast<std::size_t>(task.reads[0].buffer)].bytes +
                            g.buffers[static_cast<std::size_t>(task.reads[1].buffer)].bytes +
                            g.buffers[static_cast<std::size_t>(task.writes[0].buffer)].bytes;
      CHECK(bytes <= lx / 2);
    }
    ExpandedGraph eg = expand_graph(g, c);
    CHECK(all_equal(coverage(g, eg, "c", true), 1));
  }
}

// Tests of the fusion pass, the forced split and coarse tiles of rowwise ops, and the
// lowerings of the transformer ops: conservation of off-chip bytes, LX per tile, coverage.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <random>

#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/fusion.h"
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

constexpr std::uint64_t kUsable = 1589376;

ChipConfig chip(std::uint64_t lx = kUsable) {
  ChipConfig c;
  c.cores = 32;
  c.core.corelets = 2;
  c.core.lx.usable_bytes = lx;
  return c;
}

// A graph builder: tensors (name -> shape, fp16 unless given), ops in order.
struct G {
  Json j = {{"format", "dfsim.ops"}, {"version", 1}, {"name", "t"}, {"tensors", Json::object()},
            {"inputs", Json::array()}, {"outputs", Json::array()}, {"ops", Json::array()}};
  G& t(const std::string& n, std::vector<std::int64_t> s, const std::string& dt = "fp16") {
    j["tensors"][n] = {{"shape", s}, {"dtype", dt}};
    return *this;
  }
  G& in(std::vector<std::string> n) {
    for (auto& x : n) j["inputs"].push_back(x);
    return *this;
  }
  G& out(std::vector<std::string> n) {
    for (auto& x : n) j["outputs"].push_back(x);
    return *this;
  }
  G& op(const std::string& o, std::vector<std::string> ins, std::vector<std::string> outs, Json attrs = Json::object()) {
    Json e = {{"op", o}, {"inputs", ins}, {"outputs", outs}};
    if (!attrs.empty()) e["attrs"] = attrs;
    j["ops"].push_back(e);
    return *this;
  }
  OpGraph graph() const { return read_op_graph(j, "w.json"); }
  KernelGraph compile(int cores, std::uint64_t lx = kUsable) const { return compile_ops(graph(), chip(lx), cores); }
};

// Off-chip bytes DMA loads (or stores) of HBM buffer `name` over all cores; "" = every buffer.
std::uint64_t dma(const KernelGraph& g, const std::string& op, const std::string& name = "") {
  std::uint64_t n = 0;
  for (const auto& t : g.tasks) {
    if (t.unit != UnitKind::dma || t.op != op) continue;
    const Access& hbm = op == "load" ? t.reads[0] : t.writes[0];
    if (name.empty() || g.buffers[static_cast<std::size_t>(hbm.buffer)].name == name)
      n += hbm.total_bytes() * static_cast<std::uint64_t>(t.core_count);
  }
  return n;
}

std::vector<std::string> sfp_ops_of_first_tile(const KernelGraph& g) {
  std::vector<std::string> ops;
  for (const auto& t : g.tasks)
    if (t.unit == UnitKind::sfp && t.name.find("/g0/t0/") != std::string::npos) ops.push_back(t.op);
  return ops;
}

// The LX buffers of one tile (same name up to the last '/') never take more than the tile
// budget; the buffers loaded once per kernel (broadcast operands) fit it too.
// (cat copies its inputs one after another, each with the whole budget: not checked here.)
void check_lx_per_tile(const KernelGraph& g, std::uint64_t budget) {
  std::map<std::string, std::uint64_t> per_tile;
  for (const auto& b : g.buffers)
    if (b.space == Space::lx && b.name.find('@') == std::string::npos && b.name.rfind("cat_", 0) != 0)
      per_tile[b.name.substr(0, b.name.rfind('/'))] += b.bytes;
  for (const auto& [tile, bytes] : per_tile) {
    INFO(tile);
    CHECK(bytes <= budget);
  }
}

bool ok_to_load(const KernelGraph& g) {
  expand_graph(g, chip());
  check_kernel_graph(g);
  return true;
}

G norm_graph(const std::string& op, std::int64_t rows, std::int64_t d, int weights) {
  G b;
  b.t("x", {rows, d}).t("y", {rows, d}).in({"x"}).out({"y"});
  std::vector<std::string> ins = {"x"};
  for (int i = 0; i < weights; ++i) {
    std::string w = i == 0 ? "w" : "b";
    b.t(w, {d}).in({w});
    ins.push_back(w);
  }
  return b.op(op, ins, {"y"});
}

}  // namespace

TEST_CASE("fusion: softmax is one kernel that reads its input once and writes its output once") {
  KernelGraph g = norm_graph("softmax", 512, 1024, 0).compile(1);
  REQUIRE(g.kernels.size() == 1);
  CHECK(dma(g, "load") == 512u * 1024 * 2);
  CHECK(dma(g, "store") == 512u * 1024 * 2);
  CHECK(sfp_ops_of_first_tile(g) == std::vector<std::string>{"amax", "sub", "exp", "sum", "div"});
  // Per row: x, shifted, exp and y (2 KiB each) and the row's max and sum (2 B each) =
  // 8196 B; the 794 688-byte budget holds 96 rows, so 512 rows take ceil(512 / 96) = 6 tiles
  // of 86 or 85 rows.
  CHECK(g.tasks[0].reads[0].total_bytes() == 86u * 1024 * 2);
  check_lx_per_tile(g, kUsable / 2);
  CHECK(ok_to_load(g));
}

TEST_CASE("fusion: layernorm and rmsnorm move exactly input, weights and output") {
  for (int cores : {1, 7, 32}) {
    INFO(cores);
    KernelGraph ln = norm_graph("layernorm", 1000, 1024, 2).compile(cores);
    REQUIRE(ln.kernels.size() == 1);
    CHECK(dma(ln, "load", "x") == 1000u * 1024 * 2);
    CHECK(dma(ln, "load", "w") == 2048);  // once, multicast to every core
    CHECK(dma(ln, "load", "b") == 2048);
    CHECK(dma(ln, "store") == 1000u * 1024 * 2);
    CHECK(sfp_ops_of_first_tile(ln) == std::vector<std::string>{"mean", "sub", "mul", "mean", "rsqrt", "mul", "fma"});
    KernelGraph rms = norm_graph("rmsnorm", 1000, 1024, 1).compile(cores);
    CHECK(dma(rms, "load") == 1000u * 1024 * 2 + 2048);
    CHECK(dma(rms, "store") == 1000u * 1024 * 2);
    CHECK(sfp_ops_of_first_tile(rms) == std::vector<std::string>{"mul", "mean", "rsqrt", "mul", "mul"});
    CHECK(ok_to_load(ln));
    CHECK(ok_to_load(rms));
  }
}

TEST_CASE("fusion: add3 to add6 chains are one kernel, fuse false gives one kernel per op") {
  for (int n = 3; n <= 6; ++n) {
    INFO(n);
    G b;
    b.t("y", {256, 1024}).out({"y"});
    std::string acc = "a0";
    b.t("a0", {256, 1024}).in({"a0"});
    for (int i = 1; i < n; ++i) {
      std::string ai = "a" + std::to_string(i), si = i + 1 == n ? "y" : "s" + std::to_string(i);
      b.t(ai, {256, 1024}).in({ai});
      if (si != "y") b.t(si, {256, 1024});
      b.op("add", {acc, ai}, {si});
      acc = si;
    }
    KernelGraph g = b.compile(8);
    CHECK(g.kernels.size() == 1);
    CHECK(dma(g, "load") == static_cast<std::uint64_t>(n) * 256 * 1024 * 2);
    CHECK(dma(g, "store") == 256u * 1024 * 2);  // the partial sums stay in LX
    b.j["compile"] = {{"fuse", false}};
    KernelGraph u = b.compile(8);
    CHECK(u.kernels.size() == static_cast<std::size_t>(n - 1));
    CHECK(dma(u, "store") == static_cast<std::uint64_t>(n - 1) * 256 * 1024 * 2);
    // lx_planning "off" (the card's LX_PLANNING=0): no tensor stays in LX even with fusion on.
    // Each of the n-1 adds loads its two operands and stores its sum, 3(n-1) tensors in all:
    // add6 moves 15 x 512 KiB, the bytes of the device record add6 8192x1024 (15 x 16 MiB).
    b.j["compile"] = {{"fuse", true}, {"lx_planning", "off"}};
    KernelGraph off = b.compile(8);
    CHECK(off.kernels.size() == static_cast<std::size_t>(n - 1));
    CHECK(dma(off, "load") + dma(off, "store") == 3u * static_cast<std::uint64_t>(n - 1) * 256 * 1024 * 2);
  }
}

TEST_CASE("fusion: lx_planning off stores a matmul's output before its epilogue, an op's own level decides") {
  G b;
  b.t("a", {64, 64}).t("w", {64, 64}).t("c", {64, 64}).t("d", {64, 64}).in({"a", "w"}).out({"d"});
  b.op("matmul", {"a", "w"}, {"c"}).op("relu", {"c"}, {"d"});
  b.j["compile"] = {{"lx_planning", "off"}};
  auto split = form_kernels(b.graph(), TensorUses(b.graph()), 4, kUsable / 2);
  REQUIRE(split.size() == 2);
  CHECK(split[0].not_fused.empty());
  CHECK_THAT(split[1].not_fused, Contains("c is produced under lx_planning \"off\""));  // for --explain
  b.j["ops"][0]["compile"] = {{"lx_planning", "none"}};  // the producer's own level: kept in the kernel
  CHECK(form_kernels(b.graph(), TensorUses(b.graph()), 4, kUsable / 2).size() == 1);
  G r;  // an exp -> neg chain whose producer says "off" and whose graph says "none"
  r.t("x", {64, 1024}).t("y", {64, 1024}).t("z", {64, 1024}).in({"x"}).out({"z"});
  r.op("exp", {"x"}, {"y"}).op("neg", {"y"}, {"z"});
  CHECK(r.compile(4).kernels.size() == 1);
  r.j["ops"][0]["compile"] = {{"lx_planning", "off"}};
  KernelGraph g = r.compile(4);
  CHECK(g.kernels.size() == 2);
  CHECK(dma(g, "store", "y") == 64u * 1024 * 2);
  CHECK(ok_to_load(g));
}

TEST_CASE("tiles: a forced coarse tile whose share of a tensor exceeds LX leaves the softmax's tensors in HBM") {
  // softmax 2048x512 fp16 on one core: x is 2 MiB. One forced coarse tile (tiles d0=1, the
  // card's untiled BENCH_TILES=1) is the core's whole share, 2048 rows x 1 KiB = 2 MiB, more
  // than the 1 589 376 usable bytes of LX: every step loads what it reads and stores what it
  // writes. amax reads x, sub reads x and writes shifted, exp reads shifted and writes exp,
  // sum reads exp, div reads exp and writes y: 5 loads and 3 stores of 2 MiB = 16 MiB, the
  // device record's hbm_bytes (v2_softmax_row_tiling 10478).
  G b;
  b.t("x", {2048, 512}).t("y", {2048, 512}).in({"x"}).out({"y"}).op("softmax", {"x"}, {"y"}, {{"dim", -1}});
  const std::uint64_t mib2 = 2048u * 512 * 2;
  b.j["ops"][0]["compile"] = {{"tiles", {{"d0", 1}}}};
  KernelGraph spilled = b.compile(1);
  CHECK(dma(spilled, "load") == 5 * mib2);
  CHECK(dma(spilled, "store") == 3 * mib2);
  CHECK(dma(spilled, "load", "x") == 2 * mib2);
  CHECK(dma(spilled, "store", "y") == mib2);
  CHECK(ok_to_load(spilled));
  // Two coarse tiles: a share of 1 MiB per tensor fits, and only x and y move (4 MiB).
  b.j["ops"][0]["compile"] = {{"tiles", {{"d0", 2}}}};
  KernelGraph fits = b.compile(1);
  CHECK(dma(fits, "load") + dma(fits, "store") == 2 * mib2);
  // No forced tiles: dfsim's own tiles fit LX, as the card's compiler would choose them.
  b.j["ops"][0].erase("compile");
  KernelGraph own = b.compile(1);
  CHECK(dma(own, "load") + dma(own, "store") == 2 * mib2);
  // The norms spill the same way, on uneven core groups too; the weights stay loaded once.
  for (const char* op : {"layernorm", "rmsnorm"})
    for (int cores : {1, 3}) {
      INFO(op << " on " << cores << " cores");
      G n = norm_graph(op, 3000, 1024, std::string(op) == "layernorm" ? 2 : 1);
      n.j["ops"][0]["compile"] = {{"tiles", {{"d0", 1}}}};
      KernelGraph k = n.compile(cores);
      const std::uint64_t x = 3000u * 1024 * 2;
      CHECK(dma(k, "store", "y") == x);
      CHECK(dma(k, "load", "x") >= 2 * x);          // read by more than one step, loaded for each
      CHECK(dma(k, "load", "w") <= 1024u * 2 * 3);  // once per core group at most
      CHECK(ok_to_load(k));
    }
}

TEST_CASE("fusion: mul(x, x) loads x once, alone or fused") {
  G b;
  b.t("x", {512, 1024}).t("y", {512, 1024}).t("z", {512, 1024}).in({"x"}).out({"z"});
  b.op("mul", {"x", "x"}, {"y"}).op("mul", {"y"}, {"z"}, {{"scalar", 0.5}});
  KernelGraph fused = b.compile(4);
  CHECK(fused.kernels.size() == 1);
  CHECK(dma(fused, "load") == 512u * 1024 * 2);
  b.j["compile"] = {{"fuse", false}};
  KernelGraph alone = b.compile(4);
  CHECK(alone.kernels.size() == 2);
  CHECK(dma(alone, "load", "x") == 512u * 1024 * 2);
  CHECK(ok_to_load(alone));
}

TEST_CASE("fusion: what does not join a kernel") {
  SECTION("an op with compile.fuse false") {
    G b;
    b.t("x", {64, 1024}).t("y", {64, 1024}).t("z", {64, 1024}).in({"x"}).out({"z"});
    b.op("exp", {"x"}, {"y"}).op("neg", {"y"}, {"z"});
    b.j["ops"][1]["compile"] = {{"fuse", false}};
    CHECK(b.compile(4).kernels.size() == 2);
  }
  SECTION("a consumer that divides the tensor another way (a sum over rows, then an add)") {
    G b;
    b.t("x", {64, 1024}).t("s", {1, 1024}).t("z", {64, 1024}).in({"x"}).out({"z"});
    b.op("sum", {"x"}, {"s"}, {{"dim", 0}, {"keepdim", true}}).op("add", {"x", "s"}, {"z"});
    KernelGraph g = b.compile(4);
    CHECK(g.kernels.size() == 2);
    CHECK(ok_to_load(g));
  }
  SECTION("a matmul takes an elementwise epilogue, but not one whose running tensor is read elsewhere") {
    G b;
    b.t("a", {64, 64}).t("w", {64, 64}).t("c", {64, 64}).t("d", {64, 64}).in({"a", "w"}).out({"d"});
    b.op("matmul", {"a", "w"}, {"c"}).op("relu", {"c"}, {"d"});
    auto plan = form_kernels(b.graph(), TensorUses(b.graph()), 4, kUsable / 2);
    CHECK(plan.size() == 1);
    G o;
    o.t("a", {64, 64}).t("w", {64, 64}).t("c", {64, 64}).t("d", {64, 64}).in({"a", "w"}).out({"c", "d"});
    o.op("matmul", {"a", "w"}, {"c"}).op("relu", {"c"}, {"d"});
    CHECK(form_kernels(o.graph(), TensorUses(o.graph()), 4, kUsable / 2).size() == 2);  // c is a graph output
  }
}

TEST_CASE("split: compile.split d<i> divides a rowwise op over that many cores along that dim") {
  G b = norm_graph("softmax", 512, 1024, 0);
  b.j["ops"][0]["compile"] = {{"split", {{"d0", 4}}}};
  KernelGraph g = b.compile(32);
  int top = 0;
  for (const auto& t : g.tasks) top = std::max(top, t.first_core + t.core_count);
  CHECK(top == 4);
  CHECK(dma(g, "load") == 512u * 1024 * 2);
  SECTION("over the columns of an elementwise op: strided slices, each byte once") {
    G e;
    e.t("x", {64, 4096}).t("y", {64, 4096}).in({"x"}).out({"y"}).op("exp", {"x"}, {"y"});
    e.j["ops"][0]["compile"] = {{"split", {{"d1", 8}}}};
    KernelGraph h = e.compile(8);
    ExpandedGraph x = expand_graph(h, chip());
    CHECK(all_equal(coverage(h, x, "x", false), 1));
    CHECK(all_equal(coverage(h, x, "y", true), 1));
    CHECK(h.tasks[0].reads[0].rows == 64);  // 64 rows of 512 columns per core
  }
  SECTION("more cores than the compile has, or a split of a data-movement op") {
    b.j["ops"][0]["compile"] = {{"split", {{"d0", 64}}}};
    REQUIRE_THROWS_WITH(b.compile(32), Contains("w.json: /ops/0/compile/split: uses 64 cores, the compile has 32"));
    b.j["ops"][0]["compile"] = {{"split", {{"d1", 4}}}};
    REQUIRE_THROWS_WITH(b.compile(32), Contains("w.json: /ops/0/compile/split: softmax: d1 is the reduced dim; split a kept dim"));
    G t;
    t.t("x", {64, 128}).t("y", {128, 64}).in({"x"}).out({"y"}).op("transpose", {"x"}, {"y"}, {{"dims", {1, 0}}});
    t.j["ops"][0]["compile"] = {{"split", {{"d0", 2}}}};
    REQUIRE_THROWS_WITH(t.compile(4), Contains("w.json: /ops/0/compile/split: transpose: a forced split applies to matmuls and rowwise ops"));
  }
}

TEST_CASE("tiles: a coarse-tile loop over the rows runs its iterations one after the other over all cores") {
  G b = norm_graph("softmax", 512, 1024, 0);
  b.j["ops"][0]["compile"] = {{"tiles", {{"d0", 8}}}};
  KernelGraph g = b.compile(32);
  // 8 iterations of 64 rows, each over 32 cores (2 rows per core, one tile): 8 loads.
  int loads = 0;
  for (const auto& t : g.tasks)
    if (t.op == "load") {
      ++loads;
      CHECK(t.core_count == 32);
      CHECK(t.name.find("/i") != std::string::npos);
    }
  CHECK(loads == 8);
  CHECK(dma(g, "load") == 512u * 1024 * 2);
  CHECK(dma(g, "store") == 512u * 1024 * 2);
  CHECK(ok_to_load(g));
  // On each core an iteration starts once the one before has stored its output: iteration
  // i's load buffer takes over the space of iteration i - 1's stored output (Buffer::after),
  // which its store frees. The first iteration waits for nothing.
  for (const auto& t : g.tasks) {
    if (t.op != "load") continue;
    const Buffer& into = g.buffers[static_cast<std::size_t>(t.writes[0].buffer)];
    const bool first = t.name.find("/i0/") != std::string::npos;
    INFO(t.name);
    REQUIRE((into.after >= 0) == !first);
    if (first) continue;
    // It is what iteration k - 1 (task names <kernel>/i<k>/...) stores.
    const std::size_t at = t.name.find("/i") + 2;
    const int k = std::stoi(t.name.substr(at, t.name.find('/', at) - at));
    const std::string before = g.buffers[static_cast<std::size_t>(into.after)].name;
    CHECK(before.find("/i" + std::to_string(k - 1) + "/") != std::string::npos);
    bool stored = false;
    for (const auto& s : g.tasks) stored = stored || (s.op == "store" && s.reads[0].buffer == into.after);
    CHECK(stored);
  }
  // --explain names the loop and that its iterations wait for each other.
  CompileReport report;
  compile_ops(b.graph(), chip(kUsable), 32, &report);
  REQUIRE(report.kernels.size() == 1);
  REQUIRE(report.kernels[0].loops.size() == 2);  // outermost first: the coarse loop, then each iteration's tiles
  CHECK_THAT(report.kernels[0].loops[0], Contains("8 iterations along d0 (up to 64 each), one after another on each core"));
  CHECK_THAT(report.kernels[0].loops[1], Contains("d0: "));
}

TEST_CASE("tiles: a chain under the same coarse tiles is one kernel with one coarse-tile loop") {
  // softmax without its exp (torch-spyre's softmax_noexp_row_tiling): amax, sub, mul by a
  // scalar, sum, div over [512, 1024], all under tiles d0=8 (the graph's, as the card's
  // num_tiles_per_dim hint wraps the chain).
  G b;
  b.t("x", {512, 1024}).t("m", {512, 1}).t("t", {512, 1024}).t("z", {512, 1024}).t("s", {512, 1});
  b.t("y", {512, 1024}).in({"x"}).out({"y"});
  b.op("amax", {"x"}, {"m"}, {{"dim", -1}, {"keepdim", true}}).op("sub", {"x", "m"}, {"t"});
  b.op("mul", {"t"}, {"z"}, {{"scalar", 0.5}}).op("sum", {"z"}, {"s"}, {{"dim", -1}, {"keepdim", true}});
  b.op("div", {"z", "s"}, {"y"});
  b.j["compile"] = {{"tiles", {{"d0", 8}}}};
  KernelGraph g = b.compile(32);
  REQUIRE(g.kernels.size() == 1);
  // One loop of 8 iterations of 64 rows over 32 cores: x loaded once and y stored once, each
  // 512 x 1024 x 2 B (the intermediates stay in LX); 8 loads, one per iteration.
  CHECK(dma(g, "load") == 512u * 1024 * 2);
  CHECK(dma(g, "store") == 512u * 1024 * 2);
  int loads = 0;
  for (const auto& t : g.tasks) loads += t.op == "load";
  CHECK(loads == 8);
  CHECK(ok_to_load(g));
  // Different tiles on one op: it keeps a kernel of its own, and --explain says why.
  b.j["ops"][2]["compile"] = {{"tiles", {{"d0", 4}}}};
  auto kernels = form_kernels(b.graph(), TensorUses(b.graph()), 32, kUsable / 2);
  REQUIRE(kernels.size() == 3);
  CHECK_THAT(kernels[1].not_fused, Contains("its coarse tiles differ"));
  // Tiles over a dim the ops are not divided along (the sum's reduced dim: its row chunks) are
  // not a loop around the chain: the same tiles on both, and still two kernels (without them,
  // one).
  G c;
  c.t("x", {256, 4096}).t("e", {256, 4096}).t("s", {256, 1}).in({"x"}).out({"s"});
  c.op("exp", {"x"}, {"e"}).op("sum", {"e"}, {"s"}, {{"dim", 1}, {"keepdim", true}});
  CHECK(c.compile(8).kernels.size() == 1);
  c.j["compile"] = {{"tiles", {{"d1", 4}}}};
  CHECK(c.compile(8).kernels.size() == 2);
}

TEST_CASE("tiles: a sum with tiles over its reduced dim carries a partial chunk to chunk (ctsum)") {
  G b;
  b.t("x", {256, 4096}).t("s", {256, 1}).in({"x"}).out({"s"}).op("sum", {"x"}, {"s"}, {{"dim", 1}, {"keepdim", true}});
  b.j["ops"][0]["compile"] = {{"tiles", {{"d1", 4}}}};
  KernelGraph g = b.compile(8);
  // 32 rows per core, 4 chunks of 1024 columns: 4 loads of 32 runs of 2 KiB, 4 sums, 1 store.
  int sums = 0;
  for (const auto& t : g.tasks)
    if (t.op == "sum") {
      CHECK(t.reads.size() == (sums == 0 ? 1u : 2u));  // the carry from the previous chunk
      CHECK(t.elements == 32u * 1024);
      ++sums;
    }
  CHECK(sums == 4);
  CHECK(dma(g, "load") == 256u * 4096 * 2);
  CHECK(dma(g, "store") == 256u * 2);
  ExpandedGraph x = expand_graph(g, chip());
  CHECK(all_equal(coverage(g, x, "x", false), 1));
}

TEST_CASE("tiling inside a row: rows that do not fit LX are chunked (sum, elementwise, 2-D transpose)") {
  const std::uint64_t lx = 196608;  // configs/small.json: 96 KiB per tile
  G s;
  s.t("x", {4, 262144}).t("s", {4}).in({"x"}).out({"s"}).op("sum", {"x"}, {"s"});
  KernelGraph g = s.compile(2, lx);
  ExpandedGraph x = expand_graph(g, chip(lx));
  CHECK(all_equal(coverage(g, x, "x", false), 1));
  CHECK(dma(g, "store") == 8);
  check_lx_per_tile(g, lx / 2);
  G e;  // an elementwise op over the same rows: split along the columns instead
  e.t("x", {4, 262144}).t("y", {4, 262144}).in({"x"}).out({"y"}).op("add", {"x", "x"}, {"y"});
  KernelGraph eg = e.compile(2, lx);
  ExpandedGraph ex = expand_graph(eg, chip(lx));
  CHECK(all_equal(coverage(eg, ex, "x", false), 1));
  CHECK(all_equal(coverage(eg, ex, "y", true), 1));
  check_lx_per_tile(eg, lx / 2);
  G t;
  t.t("x", {2048, 1024}).t("y", {1024, 2048}).in({"x"}).out({"y"}).op("transpose", {"x"}, {"y"}, {{"dims", {1, 0}}});
  KernelGraph h = t.compile(2, lx);
  ExpandedGraph hx = expand_graph(h, chip(lx));
  CHECK(all_equal(coverage(h, hx, "x", false), 1));
  CHECK(all_equal(coverage(h, hx, "y", true), 1));
  check_lx_per_tile(h, lx / 2);
}

TEST_CASE("tiling inside a row: a norm whose row does not fit LX runs in two passes over row chunks") {
  const std::uint64_t lx = 196608;  // 96 KiB per tile
  for (int w : {0, 2}) {
    INFO(w << " weights");
    G b = norm_graph(w ? "layernorm" : "softmax", 64, 65536, w);  // 128 KiB rows
    KernelGraph g = b.compile(2, lx);
    CHECK(dma(g, "load", "x") == 2u * 64 * 65536 * 2);  // statistics pass, output pass
    CHECK(dma(g, "store", "y") == 64u * 65536 * 2);
    ExpandedGraph x = expand_graph(g, chip(lx));
    CHECK(all_equal(coverage(g, x, "y", true), 1));
    CHECK(all_equal(coverage(g, x, "x", false), 2));
    check_lx_per_tile(g, lx / 2);
    // Pass 1 of softmax carries the running max and sum: every chunk after the first reads them.
    if (!w)
      for (const auto& t : g.tasks)
        if (t.op == "sum" && t.name.find("/p1c1/") != std::string::npos) CHECK(t.reads.size() == 4);
  }
}

TEST_CASE("transformer ops: kv_write, reshape, slice, split, embedding move exactly their bytes") {
  SECTION("kv_write moves only the new rows, into the cache's own storage") {
    G b;
    b.t("cache", {1, 8, 1024, 64}).t("new", {1, 8, 16, 64}).t("c2", {1, 8, 1024, 64}).in({"cache", "new"}).out({"c2"});
    b.op("kv_write", {"cache", "new"}, {"c2"}, {{"position", 100}});
    KernelGraph g = b.compile(8);
    CHECK(g.find_buffer("c2") < 0);  // an alias of cache
    CHECK(dma(g, "load") == 8u * 16 * 64 * 2);
    CHECK(dma(g, "store", "cache") == 8u * 16 * 64 * 2);
    ExpandedGraph x = expand_graph(g, chip());
    auto w = coverage(g, x, "cache", true);
    for (std::uint64_t h = 0; h < 8; ++h)
      for (std::uint64_t r = 0; r < 1024; ++r) {
        const int expect = r >= 100 && r < 116 ? 1 : 0;
        CHECK(w[(h * 1024 + r) * 128] == expect);
      }
    // The cache must be a graph input (its storage holds the old rows).
    G p;
    p.t("x", {8, 1024, 64}).t("cache", {8, 1024, 64}).t("new", {8, 16, 64}).t("c2", {8, 1024, 64}).in({"x", "new"}).out({"c2"});
    p.op("copy", {"x"}, {"cache"}).op("kv_write", {"cache", "new"}, {"c2"});
    REQUIRE_THROWS_WITH(p.compile(8), Contains("w.json: /ops/1/inputs/0: kv_write updates its cache in place, which must be a graph input"));
  }
  SECTION("kv_write into a 2-D cache: the new rows in parts over every core, in tiles within the budget") {
    // 3000 new rows of 64 fp32 (256 B) at position 1000 of a 4000-row cache, on 8 cores: one
    // leading index, so the rows split 8 ways (375 each) and each part in tiles.
    G b;
    b.t("cache", {4000, 64}, "fp32").t("new", {3000, 64}, "fp32").t("c2", {4000, 64}, "fp32").in({"cache", "new"}).out({"c2"});
    b.op("kv_write", {"cache", "new"}, {"c2"}, {{"position", 1000}});
    KernelGraph g = b.compile(8);
    CHECK(dma(g, "load") == 3000u * 256);
    CHECK(dma(g, "store", "cache") == 3000u * 256);
    std::set<int> cores;
    for (const auto& t : g.tasks) cores.insert(t.first_core);
    CHECK(cores.size() == 8);
    ExpandedGraph x = expand_graph(g, chip());
    auto w = coverage(g, x, "cache", true);
    for (std::uint64_t r = 0; r < 4000; ++r) CHECK(w[r * 256] == (r >= 1000 ? 1 : 0));
    // A block of new rows larger than the tile budget (8 MB: 32000 rows): still tiles.
    G big;
    big.t("cache", {32000, 64}, "fp32").t("new", {32000, 64}, "fp32").t("c2", {32000, 64}, "fp32").in({"cache", "new"}).out({"c2"});
    big.op("kv_write", {"cache", "new"}, {"c2"});
    KernelGraph gb = big.compile(2);
    CHECK(dma(gb, "load") == 32000u * 256);
    check_lx_per_tile(gb, kUsable / 2);
  }
  SECTION("reshape: free when the stick dim allows (an alias), else a restickify copy") {
    G b;
    b.t("x", {64, 8, 128}).t("y", {64, 1024}).t("z", {64, 1024}).in({"x"}).out({"z"});
    b.op("reshape", {"x"}, {"y"}).op("exp", {"y"}, {"z"});
    KernelGraph g = b.compile(4);
    CHECK(g.kernels.size() == 1);  // no kernel for the reshape
    CHECK(g.find_buffer("y") < 0);
    CHECK(dma(g, "load", "x") == 64u * 1024 * 2);
    G free;
    free.t("x", {64, 1024}).t("y", {8, 8, 1024}).in({"x"}).out({"y"}).op("reshape", {"x"}, {"y"});
    REQUIRE_THROWS_WITH(free.compile(4), Contains("w.json: /ops: every op is free"));
    G r;
    r.t("x", {64, 5, 5}).t("y", {64, 25}).in({"x"}).out({"y"}).op("reshape", {"x"}, {"y"});
    KernelGraph h = r.compile(4);
    CHECK(dma(h, "load") == 64u * 25 * 2);
    CHECK(dma(h, "store") == 64u * 25 * 2);
    bool copy = false;
    for (const auto& t : h.tasks) copy = copy || (t.unit == UnitKind::sfp && t.op == "copy");
    CHECK(copy);
    // A flattening restickify whose single row does not fit is copied in flat chunks.
    G flat;
    flat.t("x", {100, 7, 100}).t("y", {70000}).in({"x"}).out({"y"}).op("reshape", {"x"}, {"y"});
    KernelGraph f = flat.compile(2, 196608);
    ExpandedGraph fx = expand_graph(f, chip(196608));
    CHECK(all_equal(coverage(f, fx, "y", true), 1));
    CHECK(all_equal(coverage(f, fx, "x", false), 1));
  }
  SECTION("slice with a step and split read each selected byte once") {
    G b;
    b.t("x", {4, 256, 64}).t("s", {4, 64, 64}).t("a", {4, 100, 64}).t("c", {4, 156, 64}).in({"x"}).out({"s", "a", "c"});
    b.op("slice", {"x"}, {"s"}, {{"dim", 1}, {"start", 1}, {"step", 4}});
    b.op("split", {"x"}, {"a", "c"}, {{"dim", 1}, {"sizes", {100, 156}}});
    KernelGraph g = b.compile(4);
    ExpandedGraph x = expand_graph(g, chip());
    CHECK(dma(g, "load") == 4u * 64 * 64 * 2 + 4u * 256 * 64 * 2);
    for (const char* o : {"s", "a", "c"}) CHECK(all_equal(coverage(g, x, o, true), 1));
    auto r = coverage(g, x, "x", false);
    CHECK(r[(1 * 64) * 2] == 2);   // row 1 of batch 0: the slice and the split
    CHECK(r[(2 * 64) * 2] == 1);   // row 2: the split only
  }
  SECTION("embedding gathers one table row per id") {
    G b;
    b.t("table", {32000, 512}).t("ids", {4, 64}, "int32").t("e", {4, 64, 512}).in({"table", "ids"}).out({"e"});
    b.op("embedding", {"table", "ids"}, {"e"});
    KernelGraph g = b.compile(8);
    CHECK(dma(g, "load", "table") == 256u * 512 * 2);
    CHECK(dma(g, "store") == 256u * 512 * 2);
    ExpandedGraph x = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, x, "e", true), 1));
  }
  SECTION("a table of fewer rows than a core's ids (a one-row token-type table) is gathered row by row") {
    G b;
    b.t("table", {1, 768}).t("ids", {2, 128}, "int32").t("e", {2, 128, 768}).in({"table", "ids"}).out({"e"});
    b.op("embedding", {"table", "ids"}, {"e"});
    KernelGraph g = b.compile(32);  // 8 ids per core, each reading the table's one row
    CHECK(dma(g, "load", "table") == 256u * 768 * 2);
    CHECK(dma(g, "store") == 256u * 768 * 2);
    ExpandedGraph x = expand_graph(g, chip());
    CHECK(all_equal(coverage(g, x, "e", true), 1));
  }
}

TEST_CASE("property: fused norms over random shapes and core counts conserve bytes and never over-fill LX") {
  std::mt19937 rng(7);
  const char* kinds[] = {"softmax", "layernorm", "rmsnorm", "chain"};
  for (int i = 0; i < 60; ++i) {
    const std::string kind = kinds[i % 4];
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(1, 3000)(rng);
    const std::int64_t d = 64 * std::uniform_int_distribution<std::int64_t>(1, 96)(rng);
    const int cores = std::uniform_int_distribution<int>(1, 32)(rng);
    const std::uint64_t lx = i % 2 ? kUsable : 196608;
    INFO(kind << " [" << rows << ", " << d << "] on " << cores << " cores, LX " << lx);
    G b;
    std::uint64_t weights = 0;
    if (kind == "chain") {
      b.t("x", {rows, d}).t("s", {rows, 1}).t("e", {rows, d}).t("y", {rows, d}).in({"x"}).out({"y"});
      b.op("amax", {"x"}, {"s"}, {{"keepdim", true}}).op("sub", {"x", "s"}, {"e"}).op("exp", {"e"}, {"y"});
    } else {
      int w = kind == "softmax" ? 0 : kind == "rmsnorm" ? 1 : 2;
      b = norm_graph(kind, rows, d, w);
      weights = static_cast<std::uint64_t>(w * d * 2);
    }
    const auto bytes = static_cast<std::uint64_t>(rows * d * 2);
    KernelGraph g = b.compile(cores, lx);
    if (kind != "chain") CHECK(g.kernels.size() == 1);
    bool two_pass = false;
    for (const auto& t : g.tasks) two_pass = two_pass || t.name.find("/p2c") != std::string::npos;
    if (two_pass) {
      // A row over the tile budget: the input is read twice (statistics, then output).
      CHECK(static_cast<std::uint64_t>(d) * 2 * 4 > lx / 2 / 2);
      CHECK(dma(g, "load", "x") == 2 * bytes);
    } else if (kind != "chain" || g.kernels.size() == 1) {
      CHECK(dma(g, "load") == bytes + weights);
    }
    CHECK(dma(g, "store", "y") == bytes);
    check_lx_per_tile(g, lx / 2);
    ExpandedGraph x = expand_graph(g, chip(lx));
    CHECK(all_equal(coverage(g, x, "y", true), 1));
  }
}

TEST_CASE("small config: every shipped workload compiles on 1 and 2 cores and passes the loader's checks") {
  const std::uint64_t lx = 196608;
  for (const char* w : {"add_2048x1024", "softmax_chain_512x1024", "sum_4x262144", "transpose_cat_2048x1024",
                        "mlp_block_512x2048", "matmul_1024", "softmax_512x1024", "layernorm_8192x1024",
                        "rmsnorm_2048x4096"})
    for (int cores : {1, 2}) {
      INFO(w << " on " << cores);
      OpGraph og = load_op_graph(std::string(DFSIM_SOURCE_DIR) + "/workloads/" + w + ".json");
      KernelGraph g = compile_ops(og, chip(lx), cores);
      ExpandedGraph x = expand_graph(g, chip(lx));
      CHECK(!x.instances.empty());
      check_lx_per_tile(g, lx / 2);
    }
}

TEST_CASE("residency: an op's own compile.lx_planning decides for its output") {
  G b;
  b.t("x", {256, 1024}).t("y", {256, 1024}).t("z", {256, 1024}).t("w", {256, 1024}).in({"x"}).out({"w"});
  b.op("exp", {"x"}, {"y"}).op("neg", {"y"}, {"z"}).op("relu", {"z"}, {"w"});
  b.j["compile"] = {{"fuse", false}, {"lx_planning", "none"}};
  b.j["ops"][0]["compile"] = {{"lx_planning", "all"}};
  KernelGraph g = b.compile(4);
  CHECK(g.find_buffer("y@lx") >= 0);  // exp's own "all"
  CHECK(g.find_buffer("z@lx") < 0);   // neg follows the graph's "none"
  CHECK(dma(g, "store", "y") == 0);
  CHECK(dma(g, "store", "z") == 256u * 1024 * 2);
}

TEST_CASE("every op of the catalogue but the matmul family lowers alone and fused, and passes the loader's checks") {
  G b;
  b.t("x", {1, 8, 128, 64}).t("cos", {128, 64}).t("sin", {128, 64}).t("r", {1, 8, 128, 64});
  b.t("cache", {1, 8, 1024, 64}).t("c2", {1, 8, 1024, 64}).t("sl", {1, 8, 64, 64});
  b.t("table", {32000, 512}).t("ids", {4, 64}, "int32").t("e", {4, 64, 512}).t("e2", {256, 512}).t("e4", {256, 4, 128});
  b.t("p1", {256, 1, 128}).t("p2", {256, 3, 128}).t("c", {256, 1, 128}).t("wh", {256, 3, 128});
  b.t("f", {256, 3, 128}, "fp32").t("h", {256, 3, 128}, "fp32").t("k", {256, 3, 128}, "fp32");
  b.t("rs", {256, 5, 5}).t("rs2", {256, 25}).t("rm", {256, 25}).t("sm", {256, 25}).t("ln", {256, 25});
  b.t("u", {256, 25}).t("s", {256, 1}).t("v", {256, 25}).t("tr", {25, 256}).t("ct", {25, 512});
  b.in({"x", "cos", "sin", "cache", "table", "ids", "c", "rs"}).out({"c2", "k", "sl", "ct", "s"});
  b.op("rope", {"x", "cos", "sin"}, {"r"}).op("kv_write", {"cache", "r"}, {"c2"}, {{"position", 100}});
  b.op("slice", {"c2"}, {"sl"}, {{"dim", 2}, {"end", 128}, {"step", 2}});
  b.op("embedding", {"table", "ids"}, {"e"}).op("reshape", {"e"}, {"e2"}).op("reshape", {"e2"}, {"e4"});
  b.op("split", {"e4"}, {"p1", "p2"}, {{"dim", 1}, {"sizes", {1, 3}}}).op("where", {"c", "p1", "p2"}, {"wh"});
  b.op("cast", {"wh"}, {"f"}).op("clamp", {"f"}, {"h"}, {{"min", 0}}).op("sigmoid", {"h"}, {"k"});
  b.op("reshape", {"rs"}, {"rs2"}).op("rmsnorm", {"rs2"}, {"rm"}).op("softmax", {"rm"}, {"sm"}).op("layernorm", {"sm"}, {"ln"});
  b.op("pow", {"ln"}, {"u"}, {{"exponent", 2}}).op("mul", {"u"}, {"v"}, {{"scalar", 0.5}}).op("amax", {"v"}, {"s"}, {{"keepdim", true}});
  b.op("transpose", {"v"}, {"tr"}, {{"dims", {1, 0}}}).op("cat", {"tr", "tr"}, {"ct"}, {{"dim", 1}});
  for (bool fuse : {true, false}) {
    INFO("fuse " << fuse);
    b.j["compile"] = {{"fuse", fuse}};
    KernelGraph g = b.compile(8);
    CHECK(ok_to_load(g));
    CHECK(g.kernels.size() < (fuse ? 15u : 100u));
  }
}

TEST_CASE("residency: the card's LX planning levels on an unfused softmax (none, reductions, inplace, clone)") {
  // softmax 512x1024 as five kernels on 4 cores (128 rows each): m = amax(x), t = x - m,
  // e = exp(t), s = sum(e), y = e / s. x, t, e, y are 1 MiB (256 KiB per core), m, s 1 KiB in
  // LX and 64 KiB through HBM (stick-sparse: a 128-B stick per row).
  G b;
  b.t("x", {512, 1024}).t("m", {512, 1}).t("t", {512, 1024}).t("e", {512, 1024}).t("s", {512, 1}).t("y", {512, 1024});
  b.in({"x"}).out({"y"});
  b.op("amax", {"x"}, {"m"}, {{"keepdim", true}}).op("sub", {"x", "m"}, {"t"}).op("exp", {"t"}, {"e"});
  b.op("sum", {"e"}, {"s"}, {{"keepdim", true}}).op("div", {"e", "s"}, {"y"});
  const std::uint64_t big = 1u << 20, small = 512 * 128;
  auto run = [&](const char* level) {
    b.j["compile"] = {{"fuse", false}, {"lx_planning", level}};
    KernelGraph g = b.compile(4);
    CHECK(ok_to_load(g));
    return std::pair{dma(g, "load"), dma(g, "store")};
  };
  // none: every kernel loads its inputs and stores its output.
  CHECK(run("none") == std::pair{5 * big + 2 * small, 3 * big + 2 * small});
  // reductions: m and s stay in LX.
  CHECK(run("reductions") == std::pair{5 * big, 3 * big});
  // inplace: t and e stay too (e takes over t's space at exp, t's last reader): x is read by
  // amax and sub, y stored.
  CHECK(run("inplace") == std::pair{2 * big, big});
  // clone: x is loaded into LX once for both of its readers.
  CHECK(run("clone") == std::pair{big, big});
  KernelGraph g = b.compile(4);
  CHECK(g.kernels[0].name == "clone_x");
}

TEST_CASE("tensor uses: readers, producer, inputs and outputs, positions in execution order") {
  // File order: op 0 reads y, which op 1 produces, so the execution order is 1, 0, 2, 3.
  // op 1: y = relu(x); op 0: z = add(y, y); op 2: w = mul(x, y); op 3: v = neg(w). Outputs z, v.
  G b;
  b.t("x", {8, 64}).t("y", {8, 64}).t("z", {8, 64}).t("w", {8, 64}).t("v", {8, 64}).in({"x"}).out({"z", "v"});
  b.op("add", {"y", "y"}, {"z"}).op("relu", {"x"}, {"y"}).op("mul", {"x", "y"}, {"w"}).op("neg", {"w"}, {"v"});
  const OpGraph g = b.graph();
  const TensorUses u(g);
  const int x = g.find_tensor("x"), y = g.find_tensor("y"), z = g.find_tensor("z"), w = g.find_tensor("w");
  CHECK(u.readers(x) == std::vector<int>{1, 2});
  CHECK(u.readers(y) == std::vector<int>{0, 2});  // op 0 reads y twice, listed once
  CHECK(u.readers(z).empty());
  CHECK(u.producer(x) == -1);
  CHECK(u.producer(y) == 1);
  CHECK(u.producer(w) == 2);
  CHECK(u.is_input(x));
  CHECK_FALSE(u.is_input(y));
  CHECK(u.is_output(z));
  CHECK_FALSE(u.is_output(w));
  CHECK(std::vector<int>{u.position(0), u.position(1), u.position(2), u.position(3)} == std::vector<int>{1, 0, 2, 3});
  CHECK(u.read_elsewhere(y, 0));        // op 2 reads it too
  CHECK(u.read_elsewhere(z, 0));        // a graph output
  CHECK_FALSE(u.read_elsewhere(w, 3));  // only op 3 reads it
  CHECK(u.read_elsewhere(w, 2));
}

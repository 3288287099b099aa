// Tests of the data-movement ops transpose and cat: op graph validation, and the compiled
// structure (tiles, DMA patterns, coverage, and where every element ends up).
#include <catch2/catch.hpp>

#include <map>
#include <numeric>

#include "sim/common/error.h"
#include "sim/compiler/compile.h"
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

ChipConfig chip32() {
  ChipConfig c;
  c.cores = 32;
  c.core.corelets = 2;
  c.core.lx.usable_bytes = 1589376;
  return c;
}

Json tensor(const std::vector<std::int64_t>& shape, const std::string& dtype = "fp16") {
  return Json{{"shape", shape}, {"dtype", dtype}};
}

// x -> transpose(dims) -> y, shapes given.
Json transpose_graph(const std::vector<std::int64_t>& xs, const std::vector<int>& dims, int cores = 32) {
  std::vector<std::int64_t> ys;
  const auto rank = static_cast<int>(xs.size());
  for (int d : dims) ys.push_back(xs[static_cast<std::size_t>(d < 0 ? d + rank : d)]);
  return Json{{"format", "dfsim.ops"}, {"version", 1}, {"name", "t"},
              {"tensors", {{"x", tensor(xs)}, {"y", tensor(ys)}}},
              {"inputs", {"x"}}, {"outputs", {"y"}},
              {"ops", {{{"op", "transpose"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"dims", dims}}}}}},
              {"compile", {{"cores", cores}}}};
}

// cat of the named inputs (tensors a, b, c with the given shapes) along dim.
Json cat_graph(const std::map<std::string, std::vector<std::int64_t>>& ins, const std::vector<std::string>& order,
               int dim, const std::vector<std::int64_t>& ys, int cores = 32) {
  Json ts = Json::object();
  std::vector<std::string> inputs;
  for (const auto& [n, s] : ins) {
    ts[n] = tensor(s);
    inputs.push_back(n);
  }
  ts["y"] = tensor(ys);
  return Json{{"format", "dfsim.ops"}, {"version", 1}, {"name", "c"}, {"tensors", ts},
              {"inputs", inputs}, {"outputs", {"y"}},
              {"ops", {{{"op", "cat"}, {"inputs", order}, {"outputs", {"y"}}, {"attrs", {{"dim", dim}}}}}},
              {"compile", {{"cores", cores}}}};
}

OpGraph ops(const Json& j) { return read_op_graph(j, "w.json"); }

// Plays the DMA tasks of a compiled graph on byte labels: every byte of an input buffer holds
// "input index << 32 | offset", a DMA moves the i-th byte it reads to the i-th byte it writes.
// Instances run in expansion order (a topological order for the compiler's output). Returns
// the labels of `out`; -1 where nothing was written. SFP tasks are not interpreted (false).
std::vector<std::int64_t> play(const KernelGraph& g, const ExpandedGraph& eg, const std::vector<std::string>& ins,
                               const std::string& out, bool* sfp_seen) {
  std::map<std::pair<int, int>, std::vector<std::int64_t>> mem;  // (buffer, core or -1)
  auto buf = [&](const Region& r) -> std::vector<std::int64_t>& {
    auto key = std::make_pair(r.buffer, r.core);
    auto it = mem.find(key);
    if (it == mem.end()) it = mem.emplace(key, std::vector<std::int64_t>(g.buffers[r.buffer].bytes, -1)).first;
    return it->second;
  };
  for (std::size_t i = 0; i < ins.size(); ++i) {
    Region r;
    r.buffer = g.find_buffer(ins[i]);
    auto& v = buf(r);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::int64_t>(i << 32 | k);
  }
  auto bytes_of = [](const Region& r) {
    std::vector<std::uint64_t> at;
    for (std::uint64_t row = 0; row < r.rows; ++row)
      for (std::uint64_t x = 0; x < r.bytes; ++x) at.push_back(r.offset + row * r.stride + x);
    return at;
  };
  *sfp_seen = false;
  for (const auto& inst : eg.instances) {
    const Task& t = g.tasks[static_cast<std::size_t>(inst.task)];
    if (t.unit != UnitKind::dma) {
      *sfp_seen = true;
      continue;
    }
    const Region read = reads_of(g, inst)[0];
    auto from = bytes_of(read);
    auto& src = buf(read);
    for (const Region& w : writes_of(g, inst)) {
      auto to = bytes_of(w);
      REQUIRE(to.size() == from.size());
      auto& dst = buf(w);
      for (std::size_t k = 0; k < to.size(); ++k) dst[to[k]] = src[from[k]];
    }
  }
  Region r;
  r.buffer = g.find_buffer(out);
  return buf(r);
}

// Row-major strides of a shape (elements).
std::vector<std::int64_t> strides(const std::vector<std::int64_t>& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (std::size_t i = s.size() - 1; i-- > 0;) st[i] = st[i + 1] * s[i + 1];
  return st;
}

}  // namespace

TEST_CASE("ops: transpose and cat attributes are resolved") {
  OpGraph t = ops(transpose_graph({4, 8, 64}, {-1, 0, 1}));
  CHECK(t.ops[0].perm == std::vector<int>{2, 0, 1});
  Json c = cat_graph({{"a", {4, 64}}, {"b", {4, 32}}}, {"a", "b", "a"}, -1, {4, 160});
  OpGraph g = ops(c);
  CHECK(g.ops[0].dim == 1);
  CHECK(g.ops[0].inputs.size() == 3);
  c["ops"][0].erase("attrs");  // dim defaults to 0
  c["tensors"]["b"]["shape"] = {2, 64};
  c["tensors"]["y"]["shape"] = {10, 64};
  CHECK(ops(c).ops[0].dim == 0);
}

TEST_CASE("ops: transpose rejections name the file and the JSON path") {
  Json j = transpose_graph({4, 64}, {1, 0});
  auto fails = [&](const std::string& what) { REQUIRE_THROWS_WITH(ops(j), Contains(what)); };
  SECTION("missing or unknown attribute") {
    j["ops"][0].erase("attrs");
    fails("w.json: /ops/0/attrs/dims: missing required field");
    j = transpose_graph({4, 64}, {1, 0});
    j["ops"][0]["attrs"] = {{"dim", 1}};
    fails("w.json: /ops/0/attrs/dim: unknown key (did you mean \"dims\"?)");
  }
  SECTION("not a permutation") {
    j["ops"][0]["attrs"]["dims"] = {1, 0, 2};
    fails("w.json: /ops/0/attrs/dims: has 3 entries, the input has rank 2");
    j["ops"][0]["attrs"]["dims"] = {0, 2};
    fails("w.json: /ops/0/attrs/dims/1: dim 2 out of range for a rank-2 input, expected in [-2, 1]");
    j["ops"][0]["attrs"]["dims"] = {0, -2};
    fails("w.json: /ops/0/attrs/dims/1: dim 0 appears twice: dims must be a permutation of 0..1");
  }
  SECTION("output shape and dtype") {
    j["tensors"]["y"]["shape"] = {4, 64};
    fails("w.json: /ops/0/outputs/0: shape mismatch for \"y\": expected [64, 4] from transpose, got [4, 64]");
    j = transpose_graph({4, 64}, {1, 0});
    j["tensors"]["y"]["dtype"] = "fp32";
    fails("w.json: /ops/0/outputs/0: transpose moves data and cannot convert: \"y\" is fp32, \"x\" is fp16");
  }
  SECTION("input count") {
    j["ops"][0]["inputs"] = {"x", "x"};
    fails("w.json: /ops/0/inputs: transpose takes 1 input(s), got 2");
  }
}

TEST_CASE("ops: cat rejections name the file and the JSON path") {
  Json j = cat_graph({{"a", {4, 64}}, {"b", {4, 32}}}, {"a", "b"}, 1, {4, 96});
  auto fails = [&](const std::string& what) { REQUIRE_THROWS_WITH(ops(j), Contains(what)); };
  SECTION("fewer than two inputs") {
    j["ops"][0]["inputs"] = {"a"};
    fails("w.json: /ops/0/inputs: cat takes 2 or more input(s), got 1");
  }
  SECTION("dim out of range") {
    j["ops"][0]["attrs"]["dim"] = 2;
    fails("w.json: /ops/0/attrs/dim: dim 2 out of range for rank-2 inputs, expected in [-2, 1]");
  }
  SECTION("shapes that differ outside the dim, or ranks") {
    j["ops"][0]["attrs"]["dim"] = 0;
    fails("w.json: /ops/0/inputs/1: shape [4, 32] of \"b\" does not match [4, 64] of \"a\" outside the "
          "concatenated dim 0");
    j["tensors"]["b"]["shape"] = {4, 1, 32};
    j["ops"][0]["attrs"]["dim"] = 1;
    fails("w.json: /ops/0/inputs/1: shape [4, 1, 32] of \"b\" does not match [4, 64]");
  }
  SECTION("dtypes") {
    j["tensors"]["b"]["dtype"] = "fp8";
    fails("w.json: /ops/0/inputs/1: cat inputs share a dtype: \"b\" is fp8, \"a\" is fp16");
    j["tensors"]["b"]["dtype"] = "fp16";
    j["tensors"]["y"]["dtype"] = "fp8";
    fails("w.json: /ops/0/outputs/0: cat moves data and cannot convert: \"y\" is fp8, \"a\" is fp16");
  }
  SECTION("output shape") {
    j["tensors"]["y"]["shape"] = {4, 64};
    fails("w.json: /ops/0/outputs/0: shape mismatch for \"y\": expected [4, 96] from cat, got [4, 64]");
  }
}

TEST_CASE("compiler: transpose that moves the stick dim (4096x2048 on 32 cores)") {
  KernelGraph g = compile_ops(ops(transpose_graph({4096, 2048}, {1, 0})), chip32(), 32);
  // Blocks over a grid of cores, chosen for the longest runs on both sides (choose_grid; tile
  // budget 794688 B, a block's two buffers, as loaded and reshuffled, at most a quarter of a
  // core's part so that loads overlap stores, unless its runs would fall below 512 B):
  //   1 x 32: 4096 x 64 per core, blocks 1024 x 64: x runs 128 B
  //   2 x 16: 2048 x 128, blocks 512 x 128: 256 B
  //   4 x 8: 1024 x 256 (512 KiB), blocks 256 x 256 (2 x 2 x 256 x 256 = 256 KiB, a half of
  //     the part's two buffers): x and y runs 512 B
  //   8 x 4, 16 x 2: the same 512 B, not longer, so the fewest grid rows stay: 4 x 8.
  // Per grid row (8 cores, consecutive column shares: one template), 4 blocks x (load x, SFP
  // copy, store y): 4 x 12 = 48 templates, 384 instances.
  REQUIRE(g.tasks.size() == 48);
  CHECK(g.instance_count() == 384);
  const Task& load = g.tasks[0];
  CHECK(load.op == "load");
  CHECK(load.core_count == 8);
  CHECK(load.reads[0].bytes == 256 * 2);   // a block row: 256 x columns
  CHECK(load.reads[0].rows == 256);        // 256 x rows, a row of x (4 KiB) apart
  CHECK(load.reads[0].stride == 4096);
  CHECK(load.reads[0].offset.alpha == 256 * 2);  // the next core: 256 columns on
  const Task& shuffle = g.tasks[1];
  CHECK(shuffle.unit == UnitKind::sfp);
  CHECK(shuffle.op == "copy");
  CHECK(shuffle.elements == 256 * 256);
  const Task& store = g.tasks[2];
  CHECK(store.writes[0].bytes == 256 * 2);  // a y row of the block: 256 x rows
  CHECK(store.writes[0].rows == 256);
  CHECK(store.writes[0].stride == 8192);
  CHECK(store.writes[0].offset.alpha == 256 * 8192);  // 256 y rows on
  CHECK(g.tasks[5].writes[0].offset.beta == 256 * 2);  // block 1: 256 rows of x later
  CHECK(g.tasks[12].first_core == 8);                    // grid row 1: x rows 1024 ...
  CHECK(g.tasks[12].reads[0].offset.at(8) == 1024 * 4096);

  ExpandedGraph eg = expand_graph(g, chip32());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
}

TEST_CASE("compiler: a transpose whose cores would have one block each cuts it in two") {
  KernelGraph g = compile_ops(ops(transpose_graph({1024, 2048}, {1, 0})), chip32(), 32);
  // 4 MiB on 32 cores, 128 KiB a core. With runs of 512 B at least, 4 x 8 gives each core one
  // 256 x 256 block: it would load it all, then store it all, in step with the other 31 cores
  // (a read phase and a write phase, 145 GB/s, where the card moves every size at ~116). So a
  // lone block is halved once more on one side, its runs there down to 256 B:
  //   1 x 32: 1024 x 64 per core, runs 128 B
  //   2 x 16: 512 x 128 per core, blocks 256 x 128: x runs 256 B, y runs 512 B, 2 blocks
  //   4 x 8: 256 x 256 per core, blocks 128 x 256 (or 256 x 128): runs 256 B, 2 blocks
  //   8 x 4, 16 x 2: the same 256 B; the fewest grid rows stay: 2 x 16.
  // Per grid row (16 cores, one template each), 2 blocks x (load x, SFP copy, store y):
  // 2 x 2 x 3 = 12 templates, 32 x 2 x 3 = 192 instances.
  REQUIRE(g.tasks.size() == 12);
  CHECK(g.instance_count() == 192);
  const Task& load = g.tasks[0];
  CHECK(load.core_count == 16);
  CHECK(load.reads[0].bytes == 128 * 2);  // a block row: 128 columns
  CHECK(load.reads[0].rows == 256);       // 256 rows of x, 4 KiB apart
  CHECK(load.reads[0].stride == 4096);
  const Task& store = g.tasks[2];
  CHECK(store.writes[0].bytes == 256 * 2);  // a y row of the block: 256 rows of x
  CHECK(store.writes[0].rows == 128);
  CHECK(store.writes[0].stride == 2048);    // a y row: 1024 x 2 B
  CHECK(g.tasks[3].reads[0].offset.beta == 256 * 4096);  // block 1: 256 rows of x later

  ExpandedGraph eg = expand_graph(g, chip32());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
}

TEST_CASE("compiler: transpose that keeps the stick dim gathers with DMA only") {
  // [2048, 8, 512] -> [8, 2048, 512] (transpose_outer, TO_MID = 8): output dim 1 (2048) is
  // split, 64 per core; a unit takes 8 x 512 x 2 B = 8 KiB, pipelined in 4 tiles of 16 units
  // (128 KiB). Per tile 8 loads (one per output dim-0 index m: 16 runs of 1 KiB, 8 KiB apart,
  // into LX at m x 16 KiB) and one store (8 runs of 16 KiB, 2 MiB apart):
  // 4 x 9 = 36 templates, no SFP.
  KernelGraph g = compile_ops(ops(transpose_graph({2048, 8, 512}, {1, 0, 2})), chip32(), 32);
  REQUIRE(g.tasks.size() == 36);
  for (const Task& t : g.tasks) CHECK(t.unit == UnitKind::dma);
  const Task& l3 = g.tasks[3];
  CHECK(l3.reads[0].rows == 16);
  CHECK(l3.reads[0].bytes == 1024);
  CHECK(l3.reads[0].stride == 8192);
  CHECK(l3.reads[0].offset.beta == 3 * 1024);
  CHECK(l3.reads[0].offset.alpha == 64 * 8192);
  CHECK(l3.writes[0].offset.beta == 3 * 16384);
  CHECK(l3.writes[0].bytes == 16384);
  const Task& st = g.tasks[8];
  CHECK(st.op == "store");
  CHECK(st.writes[0].rows == 8);
  CHECK(st.writes[0].bytes == 16384);
  CHECK(st.writes[0].stride == 2048 * 1024);
  ExpandedGraph eg = expand_graph(g, chip32());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
}

TEST_CASE("compiler: transposes of many shapes move every element to its place") {
  struct Case {
    std::vector<std::int64_t> xs;
    std::vector<int> dims;
    int cores;
  };
  const std::vector<Case> cases = {
      {{64, 128}, {1, 0}, 32},        {{4, 8, 64}, {1, 0, 2}, 32},   {{4, 8, 64}, {0, 2, 1}, 3},
      {{2, 3, 4, 64}, {2, 0, 1, 3}, 32}, {{5, 1, 70}, {2, 1, 0}, 4}, {{3, 64}, {0, 1}, 32},
      {{6, 5, 4, 3}, {3, 1, 2, 0}, 7}, {{7, 9, 130}, {1, 0, 2}, 5}, {{100, 3, 2, 64}, {1, 2, 0, 3}, 32},
      // 2-D, the stick moving: blocks over grids of cores, ragged edges.
      {{300, 500}, {1, 0}, 7},        {{1000, 70}, {1, 0}, 32},      {{2048, 1000}, {1, 0}, 32},
  };
  for (const Case& c : cases) {
    INFO("x " << Json(c.xs).dump() << " dims " << Json(c.dims).dump() << " on " << c.cores << " cores");
    KernelGraph g = compile_ops(ops(transpose_graph(c.xs, c.dims, c.cores)), chip32(), c.cores);
    ExpandedGraph eg = expand_graph(g, chip32());
    CHECK(all_equal(coverage(g, eg, "x", false), 1));
    CHECK(all_equal(coverage(g, eg, "y", true), 1));
    bool sfp = false;
    auto y = play(g, eg, {"x"}, "y", &sfp);
    const bool stick_moves = c.xs.back() > 1 && c.dims.back() != static_cast<int>(c.xs.size()) - 1;
    CHECK(sfp == stick_moves);  // the SFP pass only when the stick dim moves
    if (sfp) continue;          // its reshuffle is not played here; coverage is checked above
    // y[i0, i1, ...] = x[i at perm]: y element e is x element sum_i idx_i * xstride[dims[i]].
    std::vector<std::int64_t> ys;
    for (int d : c.dims) ys.push_back(c.xs[static_cast<std::size_t>(d)]);
    auto xst = strides(c.xs), yst = strides(ys);
    std::int64_t n = std::accumulate(ys.begin(), ys.end(), std::int64_t{1}, std::multiplies<>());
    bool ok = true;
    for (std::int64_t e = 0; e < n && ok; ++e) {
      std::int64_t src = 0;
      for (std::size_t i = 0; i < ys.size(); ++i) src += (e / yst[i]) % ys[i] * xst[static_cast<std::size_t>(c.dims[i])];
      ok = y[static_cast<std::size_t>(2 * e)] == 2 * src && y[static_cast<std::size_t>(2 * e + 1)] == 2 * src + 1;
    }
    CHECK(ok);
  }
}

TEST_CASE("compiler: cat of x with itself along the stick dim reads x once") {
  // cat([x, x], dim 1), x [4096, 4096] (the cat1 record): x rows over 32 cores, 128 each;
  // a row is 8 KiB, pipelined in 4 tiles of 32 rows (256 KiB). Per tile one load (32 rows,
  // contiguous) and two stores (32 runs of 8 KiB, 16 KiB apart, at column 0 and 4096):
  // 4 x 3 = 12 templates x 32 cores.
  KernelGraph g = compile_ops(ops(cat_graph({{"x", {4096, 4096}}}, {"x", "x"}, 1, {4096, 8192})), chip32(), 32);
  REQUIRE(g.tasks.size() == 12);
  CHECK(g.instance_count() == 384);
  CHECK(g.tasks[0].reads[0].bytes == 32 * 8192);
  CHECK(g.tasks[0].reads[0].offset.alpha == 128 * 8192);
  for (int k : {1, 2}) {
    const Access& w = g.tasks[static_cast<std::size_t>(k)].writes[0];
    CHECK(w.rows == 32);
    CHECK(w.bytes == 8192);
    CHECK(w.stride == 16384);
    CHECK(w.offset.beta == (k - 1) * 8192);
    CHECK(w.offset.alpha == 128 * 16384);
  }
  ExpandedGraph eg = expand_graph(g, chip32());
  CHECK(all_equal(coverage(g, eg, "x", false), 1));  // 32 MiB read once
  CHECK(all_equal(coverage(g, eg, "y", true), 1));   // 64 MiB written once
}

TEST_CASE("compiler: cats of many shapes move every element to its place") {
  struct Case {
    std::map<std::string, std::vector<std::int64_t>> ins;
    std::vector<std::string> order;
    int dim;
    int cores;
  };
  const std::vector<Case> cases = {
      {{{"a", {30, 7, 64}}, {"b", {2, 7, 64}}}, {"a", "b"}, 0, 32},
      {{{"a", {5, 3, 64}}, {"b", {5, 4, 64}}}, {"a", "b", "a"}, 1, 3},
      {{{"a", {1, 1, 100}}, {"b", {1, 1, 28}}}, {"b", "a"}, 2, 32},
      {{{"a", {1, 6, 10}}, {"b", {1, 6, 10}}}, {"a", "b"}, 0, 4},
      {{{"a", {100, 64}}}, {"a", "a"}, 0, 32},
      {{{"a", {33, 1, 5}}, {"b", {33, 2, 5}}, {"c", {33, 3, 5}}}, {"c", "a", "b"}, 1, 32},
  };
  for (const Case& c : cases) {
    std::vector<std::int64_t> ys = c.ins.at(c.order[0]);
    ys[static_cast<std::size_t>(c.dim)] = 0;
    for (const auto& n : c.order) ys[static_cast<std::size_t>(c.dim)] += c.ins.at(n)[static_cast<std::size_t>(c.dim)];
    INFO("cat of " << Json(c.order).dump() << " along " << c.dim << " on " << c.cores << " cores");
    KernelGraph g = compile_ops(ops(cat_graph(c.ins, c.order, c.dim, ys, c.cores)), chip32(), c.cores);
    ExpandedGraph eg = expand_graph(g, chip32());
    CHECK(all_equal(coverage(g, eg, "y", true), 1));
    if (static_cast<std::size_t>(c.dim) + 1 != ys.size()) {
      // Not the stick dim: a select over the output (next test). Every input byte is read,
      // the output written once, and nothing is read beyond the inputs.
      for (const auto& [n, s] : c.ins) {
        auto cov = coverage(g, eg, n, false);
        CHECK(std::all_of(cov.begin(), cov.end(), [](int v) { return v >= 1; }));
      }
      continue;
    }
    std::vector<std::string> names;
    for (const auto& [n, s] : c.ins) {
      names.push_back(n);
      CHECK(all_equal(coverage(g, eg, n, false), 1));  // each distinct input read once
    }
    bool sfp = false;
    auto y = play(g, eg, names, "y", &sfp);
    CHECK_FALSE(sfp);
    // Expected: walk the output row by row ([outer, row] view), input by input.
    const auto d = static_cast<std::size_t>(c.dim);
    std::int64_t inner = 1, outer = 1;
    for (std::size_t i = d + 1; i < ys.size(); ++i) inner *= ys[i];
    for (std::size_t i = 0; i < d; ++i) outer *= ys[i];
    std::vector<std::int64_t> expect;
    for (std::int64_t o = 0; o < outer; ++o)
      for (const auto& n : c.order) {
        auto idx = static_cast<std::int64_t>(std::find(names.begin(), names.end(), n) - names.begin());
        std::int64_t row = c.ins.at(n)[d] * inner * 2;  // bytes
        for (std::int64_t b = 0; b < row; ++b) expect.push_back(idx << 32 | (o * row + b));
      }
    CHECK(y == expect);
  }
}

TEST_CASE("compiler: cat along a dim other than the stick dim is a select over the output") {
  // cat([x, x], dim 0), x [512, 4096] (the cat0 record): y [1024, 4096], 8 KiB rows, 32 per
  // core. A row of the tile holds a row of each input and of the output (24 KiB): 32 rows fit
  // the 794 688-byte tile budget, cut into the 4 pipelined tiles of 8 rows (kPipelineTiles).
  // Each output tile loads 8 rows of x for each of the two inputs (a masked load still moves
  // its tile) and stores 8 rows: reads 2 x 8 MiB, writes 8 MiB, against 4 + 8 MiB for a copy;
  // the card's cat0 takes 1.9 x its cat1 time.
  KernelGraph g = compile_ops(ops(cat_graph({{"x", {512, 4096}}}, {"x", "x"}, 0, {1024, 4096})), chip32(), 32);
  ExpandedGraph eg = expand_graph(g, chip32());
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
  CHECK(all_equal(coverage(g, eg, "x", false), 4));  // 16 MiB of reads over a 4 MiB x
  std::uint64_t selects = 0, elements = 0;
  for (const auto& t : g.tasks)
    if (t.unit == UnitKind::sfp) {
      CHECK(t.op == "where");
      CHECK(t.reads.size() == 2);
      selects += static_cast<std::uint64_t>(t.core_count);
      elements += t.elements * static_cast<std::uint64_t>(t.core_count);
    }
  CHECK(elements == 1024u * 4096);  // every output element selected once
  CHECK(selects == 32u * 4);
  // An input with fewer rows than a tile is loaded whole (a KV cache's new row).
  KernelGraph kv = compile_ops(ops(cat_graph({{"p", {63, 256}}, {"n", {1, 256}}}, {"p", "n"}, 0, {64, 256})), chip32(), 4);
  ExpandedGraph ekv = expand_graph(kv, chip32());
  CHECK(all_equal(coverage(kv, ekv, "y", true), 1));
  auto covn = coverage(kv, ekv, "n", false);
  CHECK(std::all_of(covn.begin(), covn.end(), [](int v) { return v >= 1; }));
}

TEST_CASE("compiler: an int4 transpose's blocks start and end on whole bytes") {
  // Two int4 per byte: x [4096, 2048] is 4 MiB. Blocks are whole sticks (256 int4), so every
  // block's runs and offsets are whole bytes and each byte of x is read once, each of y
  // written once (it was refused as a compiled graph reading past x's end, splitting at odd
  // elements).
  for (std::vector<std::int64_t> xs : {std::vector<std::int64_t>{4096, 2048}, {4096, 4096}, {640, 384}}) {
    INFO("x " << Json(xs).dump());
    Json j = transpose_graph(xs, {1, 0});
    j["tensors"]["x"]["dtype"] = "int4";
    j["tensors"]["y"]["dtype"] = "int4";
    KernelGraph g = compile_ops(ops(j), chip32(), 32);
    CHECK(g.buffers[static_cast<std::size_t>(g.find_buffer("x"))].bytes == static_cast<std::uint64_t>(xs[0] * xs[1] / 2));
    ExpandedGraph eg = expand_graph(g, chip32());
    CHECK(all_equal(coverage(g, eg, "x", false), 1));
    CHECK(all_equal(coverage(g, eg, "y", true), 1));
  }
  // One core, 192 KiB of LX: x [4480, 128] in blocks of whole sticks (4480 rows are 17.5
  // sticks: near-equal blocks of 4480 / n rows started y's runs half a byte in, and two
  // blocks wrote the same byte).
  Json j = transpose_graph({4480, 128}, {1, 0}, 1);
  j["tensors"]["x"]["dtype"] = "int4";
  j["tensors"]["y"]["dtype"] = "int4";
  ChipConfig small = chip32();
  small.core.lx.usable_bytes = 196608;
  KernelGraph g = compile_ops(ops(j), small, 1);
  ExpandedGraph eg = expand_graph(g, small);
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
  // cat of 1-D int4 along its only dim: 128 + 64 elements on 32 cores, each byte once.
  Json c = cat_graph({{"a", {128}}, {"b", {64}}}, {"a", "b"}, 0, {192});
  for (const char* t : {"a", "b", "y"}) c["tensors"][t]["dtype"] = "int4";
  KernelGraph gc = compile_ops(ops(c), chip32(), 32);
  ExpandedGraph ec = expand_graph(gc, chip32());
  CHECK(all_equal(coverage(gc, ec, "a", false), 1));
  CHECK(all_equal(coverage(gc, ec, "b", false), 1));
  CHECK(all_equal(coverage(gc, ec, "y", true), 1));
}

TEST_CASE("compiler: a transpose with sticks wider than its 512 B run floor compiles") {
  // core.dma.stick_bytes = 1024 (512 fp16): blocks are whole sticks, so halving a block side
  // stops at 512 elements, but the pipelining shrink's floor was 512 B = 256 elements and the
  // loop never ended (transpose_cat_2048x1024 with stick_bytes 4096 hung in choose_grid). The
  // floor is at least a stick: x [2048, 1024] on 4 cores with 4 MiB usable LX (tile budget
  // 2 MiB) takes blocks of 512 x 512 (2 x 512 x 512 x 2 B = 1 MiB), every element once.
  Json j = transpose_graph({2048, 1024}, {1, 0}, 4);
  ChipConfig c = chip32();
  c.cores = 4;
  c.core.dma.stick_bytes = 1024;
  c.core.lx.bytes = c.core.lx.usable_bytes = 4u << 20;
  KernelGraph g = compile_ops(ops(j), c, 4);
  for (const Task& t : g.tasks)
    if (t.unit == UnitKind::sfp) CHECK(t.elements == 512 * 512);
  ExpandedGraph eg = expand_graph(g, c);
  CHECK(all_equal(coverage(g, eg, "x", false), 1));
  CHECK(all_equal(coverage(g, eg, "y", true), 1));
}

TEST_CASE("compiler: a transpose slice that does not fit the LX budget is rejected") {
  // x [1048576, 64] -> y [64, 1048576], in blocks: the smallest is a stick each way, 64 x 64
  // elements x 2 B x 2 buffers (as loaded, reshuffled) = 16 KiB.
  Json j = transpose_graph({1 << 20, 64}, {1, 0});
  ChipConfig c = chip32();
  c.core.lx.usable_bytes = 65536;  // tile budget 32 KiB: a block fits
  CHECK_NOTHROW(compile_ops(ops(j), c, 32));
  c.core.lx.usable_bytes = 16384;  // 8 KiB: nothing fits
  REQUIRE_THROWS_WITH(compile_ops(ops(j), c, 32),
                      Contains("w.json: /ops/0: transpose: one 64 x 64 block needs 16384 bytes of LX, more than the "
                               "8192-byte tile budget"));
}

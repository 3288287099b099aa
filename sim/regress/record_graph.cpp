#include "sim/regress/record_graph.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "sim/common/error.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

namespace {

using Dims = std::vector<long long>;

// A graph under construction: tensors (fp16), inputs, outputs, ops and compile options.
struct GraphBuilder {
  Json g;
  GraphBuilder(const std::string& name, long long cores, const Json& lx_planning) {
    g = {{"format", "dfsim.ops"}, {"version", 1}, {"name", name}, {"tensors", Json::object()},
         {"inputs", Json::array()}, {"outputs", Json::array()}, {"ops", Json::array()},
         {"compile", {{"cores", cores}, {"lx_planning", lx_planning}}}};
  }
  GraphBuilder& tensor(const std::string& name, const Dims& shape) {
    g["tensors"][name] = {{"shape", shape}, {"dtype", "fp16"}};
    return *this;
  }
  GraphBuilder& input(const std::string& name, const Dims& shape) {
    g["inputs"].push_back(name);
    return tensor(name, shape);
  }
  GraphBuilder& output(const std::string& name, const Dims& shape) {
    g["outputs"].push_back(name);
    return tensor(name, shape);
  }
  Json& op(const std::string& kind, const std::vector<std::string>& ins, const std::string& out, Json attrs = nullptr) {
    Json o = {{"op", kind}, {"inputs", ins}, {"outputs", {out}}};
    if (!attrs.is_null()) o["attrs"] = std::move(attrs);
    g["ops"].push_back(std::move(o));
    return g["ops"].back();
  }
};

// One record as a family's builder sees it: its dims (R = BENCH_ROWS, C = BENCH_COLS,
// N = BENCH_N) and coarse tiles, and the graph under construction.
struct Rec {
  const DeviceRecords& f;
  const DeviceRecord& r;
  const std::string& op;
  long long cores, R, C, N, B, tiles;
  bool tiled;  // BENCH_TILES >= 2: the card runs a coarse-tile loop (0 and 1: untiled)
  GraphBuilder& b;
  Dims rc() const { return {R, C}; }
};

// "1,0,2" -> [1, 0, 2] (a WD_LAYOUT_* value).
Json layout(const DeviceRecords& f, const DeviceRecord& r, const std::string& key) {
  Json out = Json::array();
  std::stringstream ss(r.param(key, ""));
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 2)
      throw InputError(f.file, "line " + std::to_string(r.line) + ", column params",
                       key + "=" + r.param(key, "") + ": expected dims such as 1,0,2");
    out.push_back(std::stoi(part));
  }
  return out;
}

// The record's forced work division (WD_B, WD_M, WD_N, WD_K) as a split map of the keys it
// sets, named `names` (e.g. {"m", "n", "k"} for attrs.work_division), fitted to the record's
// cores as torch-spyre's work division fits a hint: taken dim by dim, a split that would take
// the product past SENCORES is skipped and the rest kept. The order is N, M, B, K: both
// shipped records that ran such a hint and report their division (WD_M=4 WD_N=8 on 8 cores,
// WD_M=2 WD_N=2 on 2) kept N and dropped M (1 x 8, 1 x 2).
Json fitted_split(const Rec& x, std::initializer_list<std::pair<const char*, const char*>> names) {
  Json split = Json::object();
  long long product = 1;
  for (const char* k : {"N", "M", "B", "K"})
    for (const auto& [dim, name] : names) {
      if (std::string(dim) != k || x.r.param(std::string("WD_") + k, "").empty()) continue;
      const long long v = record_param_int(x.f, x.r, std::string("WD_") + k, 0);
      if (v > 1 && product * v > x.cores) continue;
      product *= v;
      split[name] = v;
    }
  return split;
}

// t0 + t1 + … + t{n-1} as a chain of binary adds into y (intermediates s1, s2, …).
void add_chain(GraphBuilder& b, int n, const Dims& shape) {
  auto name = [](const char* prefix, int i) { return fmt::format("{}{}", prefix, i); };
  for (int i = 0; i < n; ++i) b.input(name("t", i), shape);
  std::string acc = "t0";
  for (int i = 1; i < n; ++i) {
    std::string out = i == n - 1 ? "y" : name("s", i);
    (i == n - 1 ? b.output(out, shape) : b.tensor(out, shape)).op("add", {acc, name("t", i)}, out);
    acc = out;
  }
}

// The number in add<N> / add<N>_sep (N of 3 … 16), or 0.
int chain_length(const std::string& op) {
  if (op.rfind("add", 0) != 0) return 0;
  std::string digits = op.substr(3, op.find('_') == std::string::npos ? std::string::npos : op.find('_') - 3);
  if (digits.empty() || digits.size() > 2 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  const int n = std::stoi(digits);
  const std::string rest = op.substr(3 + digits.size());
  return n >= 3 && n <= 16 && (rest.empty() || rest == "_sep") ? n : 0;
}

// --- the families (torch-spyre's profile_ops.py names the ops; bench-ops.md) ---

// neg, copy (x + 1.0), gelu, relu, sigmoid, exp: the unary op over [R, C].
void unary(Rec& x) { x.b.input("x", x.rc()).output("y", x.rc()).op(x.op, {"x"}, "y"); }

// add, mul: a binary op of two [R, C].
void binary(Rec& x) { x.b.input("a", x.rc()).input("b", x.rc()).output("y", x.rc()).op(x.op, {"a", "b"}, "y"); }

// add<N>: the chain in one fused kernel; add<N>_sep: each + its own kernel (through HBM).
void chain(Rec& x) {
  add_chain(x.b, chain_length(x.op), x.rc());
  x.b.g["compile"]["fuse"] = x.op.find("_sep") == std::string::npos;
}

// Two independent adds in one graph.
void add_indep2(Rec& x) {
  x.b.input("a", x.rc()).input("b", x.rc()).input("c", x.rc()).input("d", x.rc());
  x.b.output("y", x.rc()).output("z", x.rc());
  x.b.op("add", {"a", "b"}, "y");
  x.b.op("add", {"c", "d"}, "z");
}

// read, sumrow (sum), amax, mean over the last dim: [R, C] -> [R].
void row_reduction(Rec& x) {
  const std::string kind = x.op == "amax" || x.op == "mean" ? x.op : "sum";
  x.b.input("x", x.rc()).output("y", {x.R}).op(kind, {"x"}, "y", {{"dim", -1}});
}

// ctsum, ctamax, ctamin, sumcol: a reduction over dim 0, [R, C] -> [C]; with BENCH_TILES >= 2
// (the ct* ops) the reduced dim is tiled: kept as dim 0 of the output ([1, C]) so that "d0"
// names it. ctamin runs as amax: the same compare per element, and dfsim has no amin.
void column_reduction(Rec& x) {
  const std::string kind = x.op == "ctamax" || x.op == "ctamin" ? "amax" : "sum";
  if (x.tiled && x.op != "sumcol") {
    x.b.input("x", x.rc()).output("y", {1, x.C});
    x.b.op(kind, {"x"}, "y", {{"dim", 0}, {"keepdim", true}})["compile"] = {{"tiles", {{"d0", x.tiles}}}};
  } else {
    x.b.input("x", x.rc()).output("y", {x.C}).op(kind, {"x"}, "y", {{"dim", 0}});
  }
}

// sumall: x.sum() to a scalar, the reduced axis split over all the cores and the partials
// combined: a free reshape to [R * C] and a sum of the only dim.
void sumall(Rec& x) {
  x.b.input("x", x.rc()).tensor("flat", {x.R * x.C}).output("y", {1});
  x.b.op("reshape", {"x"}, "flat");
  x.b.op("sum", {"flat"}, "y", {{"dim", 0}});
}

// write: b [1, C] + c [R, 1], both broadcast.
void write(Rec& x) { x.b.input("b", {1, x.C}).input("c", {x.R, 1}).output("y", x.rc()).op("add", {"b", "c"}, "y"); }

// bcast, mulbcast: a [R, C] with b [1, C]; bcastcol: with b [R, 1].
void broadcast(Rec& x) {
  const Dims bshape = x.op == "bcastcol" ? Dims{x.R, 1} : Dims{1, x.C};
  x.b.input("a", x.rc()).input("b", bshape).output("y", x.rc()).op(x.op == "mulbcast" ? "mul" : "add", {"a", "b"}, "y");
}

// mm, mmwd, matmul_row_tiling, matmul_k_tiling, mm_nested_m_k: [R, C] @ [C, N]. mmwd forces the
// card's work division (attrs.work_division from WD_M, WD_N, WD_K); the tiling ops loop over M,
// over K, or over M in 2 with K inside, when BENCH_TILES >= 2. mm ignores both.
void matmul(Rec& x) {
  x.b.input("a", x.rc()).input("b", {x.C, x.N}).output("y", {x.R, x.N});
  Json& mm = x.b.op("matmul", {"a", "b"}, "y");
  if (x.op == "mmwd") {
    Json wd = fitted_split(x, {{"M", "m"}, {"N", "n"}, {"K", "k"}});
    if (!wd.empty()) mm["attrs"] = {{"work_division", wd}};
  }
  if (!x.tiled) return;
  if (x.op == "matmul_row_tiling") mm["compile"] = {{"tiles", {{"M", x.tiles}}}};
  if (x.op == "matmul_k_tiling") mm["compile"] = {{"tiles", {{"K", x.tiles}}}};
  if (x.op == "mm_nested_m_k") mm["compile"] = {{"tiles", {{"M", 2}, {"K", x.tiles}}}};
}

// The batched matmuls: [B, R, C] @ [B, C, N] (B from the record, default 8), or with one 2-D
// weight [C, N] shared by the batch (the 3d2d ops). Any WD_* forces the split (compile.split);
// otherwise BENCH_TILES >= 2 loops over K (bmm_nested_b_k: over B in 2, K inside).
// WD_LAYOUT_A / WD_LAYOUT_B become the graph's compile.layouts.
void batched_matmul(Rec& x) {
  const bool shared_weight = x.op == "bmm_wd_3d2d" || x.op == "bmm_3d2d_k_tiling";
  x.b.input("a", {x.B, x.R, x.C}).input("b", shared_weight ? Dims{x.C, x.N} : Dims{x.B, x.C, x.N});
  x.b.output("y", {x.B, x.R, x.N});
  Json& mm = x.b.op("matmul", {"a", "b"}, "y");
  Json comp = Json::object();
  Json split = fitted_split(x, {{"B", "B"}, {"M", "M"}, {"N", "N"}, {"K", "K"}});
  bool forced = false;  // any WD_* set, even one the fit skipped
  for (const char* k : {"WD_B", "WD_M", "WD_N", "WD_K"}) forced = forced || !x.r.param(k, "").empty();
  if (!split.empty()) comp["split"] = split;
  if (x.tiled && !forced)
    comp["tiles"] = x.op == "bmm_nested_b_k" ? Json{{"B", 2}, {"K", x.tiles}} : Json{{"K", x.tiles}};
  if (!comp.empty()) mm["compile"] = comp;
  Json layouts = Json::object();
  if (!x.r.param("WD_LAYOUT_A", "").empty()) layouts["a"] = layout(x.f, x.r, "WD_LAYOUT_A");
  if (!x.r.param("WD_LAYOUT_B", "").empty()) layouts["b"] = layout(x.f, x.r, "WD_LAYOUT_B");
  if (!layouts.empty()) x.b.g["compile"]["layouts"] = layouts;
}

// transpose: [R, C] -> [C, R] (the stick dim moves).
void transpose(Rec& x) {
  x.b.input("x", x.rc()).output("y", {x.C, x.R}).op("transpose", {"x"}, "y", {{"dims", {1, 0}}});
}

// transpose_outer: [R, TO_MID, C] -> [TO_MID, R, C]; hbm_bytes = 2·R·TO_MID·C·2 in every record.
void transpose_outer(Rec& x) {
  const long long mid = record_param_int(x.f, x.r, "TO_MID", 8);
  x.b.input("x", {x.R, mid, x.C}).output("y", {mid, x.R, x.C});
  x.b.op("transpose", {"x"}, "y", {{"dims", {1, 0, 2}}});
}

// cat0, cat1: cat([x, x]) along dim 0 / 1; hbm_bytes = 3·R·C·2, x read once and written twice.
void cat(Rec& x) {
  const int d = x.op[3] - '0';
  x.b.input("x", x.rc()).output("y", d == 0 ? Dims{2 * x.R, x.C} : Dims{x.R, 2 * x.C});
  x.b.op("cat", {"x", "x"}, "y", {{"dim", d}});
}

// softmax_row_tiling, softmax_unrolled: softmax over the last dim. BENCH_TILES forces the card's
// coarse-tile loop; 0 and 1 force one tile, a core's whole share (the card does not cut it
// further: compile.tiles, docs/compiler.md). softmax_unrolled runs on one core (the card's
// harness sets sencores to 1 for it) with the loop unrolled, which dfsim times as the loop.
void softmax(Rec& x) {
  if (x.op == "softmax_unrolled") x.b.g["compile"]["cores"] = 1;
  Json& sm = x.b.input("x", x.rc()).output("y", x.rc()).op("softmax", {"x"}, "y", {{"dim", -1}});
  sm["compile"] = {{"tiles", {{"d0", std::max(1LL, x.tiles)}}}};
}

// softmax_noexp_row_tiling (amax, sub, mul by 0.5 in place of exp, sum, div) and
// softmax_stages (amax, sub, BENCH_STAGES sigmoids, exp, sum, div): the chain spelled out,
// every op under the same coarse tiles (the graph's), so that it fuses into one loop as the
// card's num_tiles_per_dim hint makes it.
void softmax_chain(Rec& x) {
  const Dims col{x.R, 1};
  GraphBuilder& b = x.b;
  b.input("x", x.rc()).tensor("m", col).tensor("t0", x.rc()).tensor("s", col).output("y", x.rc());
  b.g["compile"]["tiles"] = {{"d0", std::max(1LL, x.tiles)}};
  b.op("amax", {"x"}, "m", {{"dim", -1}, {"keepdim", true}});
  b.op("sub", {"x", "m"}, "t0");
  std::string cur = "t0";
  auto step = [&](const std::string& kind, Json attrs) {
    const std::string next = fmt::format("t{}", b.g["ops"].size() - 1);
    b.tensor(next, x.rc()).op(kind, {cur}, next, std::move(attrs));
    cur = next;
  };
  if (x.op == "softmax_noexp_row_tiling") {
    step("mul", {{"scalar", 0.5}});
  } else {
    const long long stages = record_param_int(x.f, x.r, "BENCH_STAGES", 0);
    if (stages < 0 || stages > 32)
      throw InputError(x.f.file, "line " + std::to_string(x.r.line) + ", column params",
                       fmt::format("BENCH_STAGES={}: expected 0 to 32 extra stages", stages));
    for (long long i = 0; i < stages; ++i) step("sigmoid", nullptr);
    step("exp", nullptr);
  }
  b.op("sum", {cur}, "s", {{"dim", -1}, {"keepdim", true}});
  b.op("div", {cur, "s"}, "y");
}

using Builder = void (*)(Rec&);

// Record op -> its family's builder (add<N> and add<N>_sep are matched by chain_length()).
const std::map<std::string, Builder>& families() {
  static const std::map<std::string, Builder> table = {
      {"neg", unary},
      {"copy", unary},
      {"gelu", unary},
      {"relu", unary},
      {"sigmoid", unary},
      {"exp", unary},
      {"add", binary},
      {"mul", binary},
      {"add_indep2", add_indep2},
      {"read", row_reduction},
      {"sumrow", row_reduction},
      {"amax", row_reduction},
      {"mean", row_reduction},
      {"ctsum", column_reduction},
      {"ctamax", column_reduction},
      {"ctamin", column_reduction},
      {"sumcol", column_reduction},
      {"sumall", sumall},
      {"write", write},
      {"bcast", broadcast},
      {"mulbcast", broadcast},
      {"bcastcol", broadcast},
      {"mm", matmul},
      {"mmwd", matmul},
      {"matmul_row_tiling", matmul},
      {"matmul_k_tiling", matmul},
      {"mm_nested_m_k", matmul},
      {"bmm_wd", batched_matmul},
      {"bmm_wd_3d2d", batched_matmul},
      {"bmm_layout", batched_matmul},
      {"bmm_k_tiling", batched_matmul},
      {"bmm_3d2d_k_tiling", batched_matmul},
      {"bmm_nested_b_k", batched_matmul},
      {"transpose", transpose},
      {"transpose_outer", transpose_outer},
      {"cat0", cat},
      {"cat1", cat},
      {"softmax_row_tiling", softmax},
      {"softmax_unrolled", softmax},
      {"softmax_noexp_row_tiling", softmax_chain},
      {"softmax_stages", softmax_chain},
  };
  return table;
}

}  // namespace

std::string record_category(const std::string& op) {
  static const std::map<std::string, std::string> table = {
      {"neg", "pointwise"},      {"copy", "pointwise"},      {"read", "pointwise"},     {"write", "pointwise"},
      {"gelu", "pointwise"},     {"relu", "pointwise"},      {"sigmoid", "pointwise"},  {"exp", "pointwise"},
      {"mul", "pointwise"},      {"bcast", "broadcast"},     {"bcastcol", "broadcast"}, {"mulbcast", "broadcast"},
      {"amax", "reduction"},     {"mean", "reduction"},      {"sumrow", "reduction"},   {"ctsum", "reduction"},
      {"ctamax", "reduction"},   {"ctamin", "reduction"},    {"sumcol", "reduction"},   {"sumall", "reduction"},
      {"cat0", "transport"},     {"cat1", "transport"},      {"transpose", "transport"},
      {"transpose_outer", "transport"}, {"mm", "matmul"},    {"mmwd", "matmul"},        {"matmul_row_tiling", "matmul"},
      {"matmul_k_tiling", "matmul"},    {"mm_nested_m_k", "matmul"}};
  if (op.rfind("add", 0) == 0) return "pointwise";
  if (op.rfind("bmm", 0) == 0) return "bmm";
  if (op.rfind("softmax", 0) == 0) return "softmax";
  auto it = table.find(op);
  return it == table.end() ? "other" : it->second;
}

RecordConfig record_config(const DeviceRecords& f, const DeviceRecord& r) {
  RecordConfig c;
  auto pick = [&](const char* column, const char* param, long long dflt) {
    return record_int(f, r, column, record_param_int(f, r, param, dflt));
  };
  c.cores = std::max(1LL, pick("cores", "SENCORES", 32));
  c.R = pick("rows", "BENCH_ROWS", 512);
  c.C = pick("cols", "BENCH_COLS", 16384);
  c.N = pick("N", "BENCH_N", c.C);
  c.B = pick("B", "BENCH_B", 8);
  c.tiles = pick("tiles", "BENCH_TILES", 0);
  const std::string& lx = r.at("lx_planning");
  c.lx_planning = (lx.empty() ? r.param("LX_PLANNING", "1") : lx) != "0";
  return c;
}

std::string record_shape(const DeviceRecords& f, const DeviceRecord& r) {
  const RecordConfig c = record_config(f, r);
  const std::string& op = r.at("op");
  const bool matmul = op.rfind("mm", 0) == 0 || op.rfind("matmul", 0) == 0 || op.rfind("bmm", 0) == 0;
  std::string s = fmt::format("{}x{}", c.R, c.C);
  if (matmul) s += fmt::format("x{}", c.N);
  if (op.rfind("bmm", 0) == 0) s = fmt::format("{}x{}", c.B, s);
  return s;
}

Json record_graph(const DeviceRecords& f, const DeviceRecord& r, std::string* reason) {
  const std::string& o = r.at("op");
  Builder build = nullptr;
  if (auto it = families().find(o); it != families().end()) build = it->second;
  if (!build && chain_length(o) > 0) build = chain;
  if (!build) {
    *reason = "op \"" + o + "\" has no op graph builder (sim/regress/record_graph.cpp)";
    return nullptr;
  }
  const RecordConfig c = record_config(f, r);
  // The card's scratchpad planning (LX_PLANNING=1) keeps reduction outputs in LX; with it off
  // (0) no tensor stays in LX, not even inside a fused kernel (lx_planning "off").
  GraphBuilder b(o, c.cores, c.lx_planning ? Json(true) : Json("off"));
  Rec x{f, r, o, c.cores, c.R, c.C, c.N, c.B, c.tiles, c.tiles >= 2, b};
  build(x);
  return b.g;
}

}  // namespace dfsim

#include "sim/regress/record_graph.h"

#include <fmt/format.h>

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

// The record's forced work division (WD_B, WD_M, WD_N, WD_K) as a compile.split, for the
// keys it sets.
Json split_of(const DeviceRecords& f, const DeviceRecord& r, std::initializer_list<const char*> keys) {
  Json split = Json::object();
  for (const char* k : keys) {
    std::string v = r.param(std::string("WD_") + k, "");
    if (!v.empty()) split[k] = record_param_int(f, r, std::string("WD_") + k, 0);
  }
  return split;
}

// A forced division needing more cores than the record's SENCORES: the card's compiler drops
// the M split and keeps the rest (both such records in the shipped file, WD_M=4 WD_N=8 on 8
// cores and WD_M=2 WD_N=2 on 2, report m_split 1 and their N split). `m` names M's key.
void drop_m_split_beyond(Json& split, const std::string& m, long long cores) {
  long long product = 1;
  for (const auto& [k, v] : split.items()) product *= v.get<long long>();
  if (product > cores && split.contains(m)) split.erase(m);
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

}  // namespace

std::string record_category(const std::string& op) {
  static const std::map<std::string, std::string> table = {
      {"neg", "pointwise"}, {"copy", "pointwise"}, {"read", "pointwise"}, {"write", "pointwise"},
      {"gelu", "pointwise"}, {"bcast", "broadcast"}, {"bcastcol", "broadcast"}, {"mulbcast", "broadcast"},
      {"amax", "reduction"}, {"mean", "reduction"}, {"sumrow", "reduction"}, {"ctsum", "reduction"},
      {"cat0", "transport"}, {"cat1", "transport"}, {"transpose", "transport"}, {"transpose_outer", "transport"},
      {"softmax_row_tiling", "softmax"}, {"mm", "matmul"}, {"mmwd", "matmul"}, {"matmul_row_tiling", "matmul"},
      {"matmul_k_tiling", "matmul"}};
  if (op.rfind("add", 0) == 0) return "pointwise";
  if (op.rfind("bmm", 0) == 0) return "bmm";
  auto it = table.find(op);
  return it == table.end() ? "other" : it->second;
}

std::string record_shape(const DeviceRecords& f, const DeviceRecord& r) {
  std::string s = fmt::format("{}x{}", r.at("rows"), r.at("cols"));
  if (!r.at("N").empty()) s += fmt::format("x{}", r.at("N"));
  if (r.at("op").rfind("bmm", 0) == 0) s = fmt::format("{}x{}", record_int(f, r, "B", 8), s);
  return s;
}

Json record_graph(const DeviceRecords& f, const DeviceRecord& r, std::string* reason) {
  const std::string& o = r.at("op");
  long long cores = record_int(f, r, "cores", 32);
  long long R = record_int(f, r, "rows", 0), C = record_int(f, r, "cols", 0);
  long long N = record_int(f, r, "N", C);
  long long tiles = record_int(f, r, "tiles", 0);  // 0 and 1: untiled
  bool tiled = tiles >= 2;
  // The card's scratchpad planning (LX_PLANNING=1) keeps reduction outputs in LX; with it off
  // (0) no tensor stays in LX, not even inside a fused kernel (lx_planning "off").
  GraphBuilder b(o, std::max(1LL, cores), r.at("lx_planning") == "1" ? Json(true) : Json("off"));
  Dims rc{R, C};

  if (o == "add") {
    b.input("a", rc).input("b", rc).output("y", rc).op("add", {"a", "b"}, "y");
  } else if (o.size() == 4 && o.rfind("add", 0) == 0 && o[3] >= '3' && o[3] <= '6') {
    // add3 … add6: t0 + t1 + … in one fused kernel (the compiler fuses the chain).
    add_chain(b, o[3] - '0', rc);
    b.g["compile"]["fuse"] = true;
  } else if (o.size() == 8 && o.rfind("add", 0) == 0 && o.substr(4) == "_sep") {
    // addN_sep: the same chain, each + its own kernel (through off-chip memory).
    add_chain(b, o[3] - '0', rc);
    b.g["compile"]["fuse"] = false;
  } else if (o == "add_indep2") {
    b.input("a", rc).input("b", rc).input("c", rc).input("d", rc).output("y", rc).output("z", rc);
    b.op("add", {"a", "b"}, "y");
    b.op("add", {"c", "d"}, "z");
  } else if (o == "neg" || o == "copy" || o == "gelu") {
    b.input("x", rc).output("y", rc).op(o, {"x"}, "y");
  } else if (o == "read" || o == "sumrow" || o == "amax" || o == "mean") {
    std::string kind = o == "amax" || o == "mean" ? o : "sum";
    b.input("x", rc).output("y", {R}).op(kind, {"x"}, "y", {{"dim", -1}});
  } else if (o == "ctsum") {
    if (tiled) {
      // Tiles the reduced dim R: kept as dim 0 of the output ([1, C]) so that "d0" names it.
      b.input("x", rc).output("y", {1, C});
      b.op("sum", {"x"}, "y", {{"dim", 0}, {"keepdim", true}})["compile"] = {{"tiles", {{"d0", tiles}}}};
    } else {
      b.input("x", rc).output("y", {C}).op("sum", {"x"}, "y", {{"dim", 0}});
    }
  } else if (o == "write") {
    b.input("b", {1, C}).input("c", {R, 1}).output("y", rc).op("add", {"b", "c"}, "y");
  } else if (o == "bcast" || o == "mulbcast") {
    b.input("a", rc).input("b", {1, C}).output("y", rc).op(o == "bcast" ? "add" : "mul", {"a", "b"}, "y");
  } else if (o == "bcastcol") {
    b.input("a", rc).input("b", {R, 1}).output("y", rc).op("add", {"a", "b"}, "y");
  } else if (o == "mm" || o == "mmwd" || o == "matmul_row_tiling" || o == "matmul_k_tiling") {
    b.input("a", rc).input("b", {C, N}).output("y", {R, N});
    Json& mm = b.op("matmul", {"a", "b"}, "y");
    // mmwd forces the card's work division: WD_M x WD_N cores over [M, N], WD_K over K
    // (attrs.work_division, which compile.split {M, N, K} replaces as issue 9 lands).
    Json wd = Json::object();
    for (const char* k : {"M", "N", "K"})
      if (std::string v = r.param(std::string("WD_") + k, ""); !v.empty())
        wd[std::string(1, static_cast<char>(k[0] - 'A' + 'a'))] = record_param_int(f, r, std::string("WD_") + k, 0);
    drop_m_split_beyond(wd, "m", cores);
    if (!wd.empty()) mm["attrs"] = {{"work_division", wd}};
    if (tiled) mm["compile"] = {{"tiles", {{o == "matmul_k_tiling" ? "K" : "M", tiles}}}};
  } else if (o == "bmm_wd" || o == "bmm_wd_3d2d" || o == "bmm_layout" || o == "bmm_k_tiling") {
    long long B = record_int(f, r, "B", record_param_int(f, r, "BENCH_B", 8));
    bool shared_weight = o == "bmm_wd_3d2d";  // one 2-D weight for the whole batch
    b.input("a", {B, R, C}).input("b", shared_weight ? Dims{C, N} : Dims{B, C, N}).output("y", {B, R, N});
    Json& mm = b.op("matmul", {"a", "b"}, "y");
    Json comp = Json::object();
    Json split = split_of(f, r, {"B", "M", "N", "K"});
    drop_m_split_beyond(split, "M", cores);
    if (!split.empty()) comp["split"] = split;
    // BENCH_TILES tiles K when no WD_* forces a split.
    if (tiled && split.empty()) comp["tiles"] = {{"K", tiles}};
    if (!comp.empty()) mm["compile"] = comp;
    Json layouts = Json::object();
    if (std::string la = r.param("WD_LAYOUT_A", ""); !la.empty()) layouts["a"] = layout(f, r, "WD_LAYOUT_A");
    if (std::string lb = r.param("WD_LAYOUT_B", ""); !lb.empty()) layouts["b"] = layout(f, r, "WD_LAYOUT_B");
    if (!layouts.empty()) b.g["compile"]["layouts"] = layouts;
  } else if (o == "transpose") {
    b.input("x", rc).output("y", {C, R}).op("transpose", {"x"}, "y", {{"dims", {1, 0}}});
  } else if (o == "transpose_outer") {
    // [R, TO_MID, C] -> [TO_MID, R, C]: hbm_bytes = 2·R·TO_MID·C·2 in every record.
    long long mid = record_param_int(f, r, "TO_MID", 8);
    b.input("x", {R, mid, C}).output("y", {mid, R, C}).op("transpose", {"x"}, "y", {{"dims", {1, 0, 2}}});
  } else if (o == "cat0" || o == "cat1") {
    // cat([x, x]): hbm_bytes = 3·R·C·2, x read once and written twice.
    int d = o[3] - '0';
    b.input("x", rc).output("y", d == 0 ? Dims{2 * R, C} : Dims{R, 2 * C}).op("cat", {"x", "x"}, "y", {{"dim", d}});
  } else if (o == "softmax_row_tiling") {
    // BENCH_TILES forces the card's coarse-tile loop; 0 and 1 force one tile, a core's whole
    // share (the card does not cut it further: compile.tiles, docs/compiler.md).
    Json& sm = b.input("x", rc).output("y", rc).op("softmax", {"x"}, "y", {{"dim", -1}});
    sm["compile"] = {{"tiles", {{"d0", std::max(1LL, tiles)}}}};
  } else {
    *reason = "op \"" + o + "\" has no op graph builder (sim/regress/record_graph.cpp)";
    return nullptr;
  }
  return b.g;
}

}  // namespace dfsim

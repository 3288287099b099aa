// The "compile" sections of an op graph: graph-level options (cores, lx_planning, fuse,
// split, tiles, layouts) and per-op overrides (split, tiles, fuse, lx_planning).
#include <fmt/format.h>

#include <algorithm>

#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// `compile.lx_planning`: false / true (= "reductions") or a policy name.
LxPlanning read_lx_planning(const JsonView& v) {
  const Json& j = v.json();
  if (j.is_boolean()) return j.get<bool>() ? LxPlanning::reductions : LxPlanning::none;
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    for (LxPlanning p : lx_plannings())
      if (s == lx_planning_name(p)) return p;
  }
  v.fail("expected true, false or one of " + lx_planning_names());
}

// {"M": 4, ...}: each value an integer >= 1.
std::map<std::string, std::int64_t> read_dim_map(const JsonView& v) {
  v.expect_object();
  std::map<std::string, std::int64_t> m;
  for (const auto& [k, val] : v.json().items()) m[k] = v.at(k).as_int(1, std::int64_t(1) << 20);
  return m;
}

std::string names_text(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The extent of a matmul dim B, M, N or K of `op` (matmul or linear: linear's leading dims are
// rows of M).
std::int64_t matmul_extent(const OpGraph& g, const Op& op, const std::string& dim) {
  const Shape& out = g.tensors[static_cast<std::size_t>(op.outputs[0])].shape;
  const Shape& a = g.tensors[static_cast<std::size_t>(op.inputs[0])].shape;
  const std::size_t r = out.size();
  const bool linear = op.op == "linear";
  auto product = [](const Shape& s, std::size_t n) {
    std::int64_t p = 1;
    for (std::size_t i = 0; i < n; ++i) p *= s[i];
    return p;
  };
  if (dim == "N") return out.back();
  if (dim == "K") return linear || !op.transpose_a ? a.back() : a[a.size() - 2];
  if (dim == "M") return linear ? product(out, r - 1) : out[r - 2];
  return linear ? 1 : product(out, r - 2);  // B
}

// Checks the keys of `m` (read from `v`) against the dims of `op`; values must not exceed the
// dim's size (d<i>, and a matmul's B, M, N, K).
void check_dim_map(const OpGraph& g, const Op& op, const std::map<std::string, std::int64_t>& m, const JsonView& v) {
  auto names = split_dim_names(g, op);
  // A reduction with keepdim names its reduced dim (size 1 in the output) by the input's size.
  const bool kept = find_op_info(op.op)->kind == OpKind::reduce && op.keepdim;
  const Shape& out = g.tensors[static_cast<std::size_t>(kept ? op.inputs[0] : op.outputs[0])].shape;
  for (const auto& [k, val] : m) {
    auto it = std::find(names.begin(), names.end(), k);
    if (it == names.end()) v.at(k).fail("unknown dim \"" + k + "\" for " + op.op + ", expected one of " + names_text(names));
    if (k[0] == 'd' && val > out[static_cast<std::size_t>(it - names.begin())])
      v.at(k).fail(fmt::format("{} parts of {}, which has size {} in op {} ({})", val, k,
                               out[static_cast<std::size_t>(it - names.begin())], op.index, op.op));
    if (find_op_info(op.op)->kind == OpKind::matmul && val > matmul_extent(g, op, k))
      v.at(k).fail(fmt::format("{} parts of {}, which has size {} in op {} ({})", val, k, matmul_extent(g, op, k), op.index,
                               op.op));
  }
}

bool names_all(const std::vector<std::string>& names, const std::map<std::string, std::int64_t>& m) {
  for (const auto& [k, v] : m)
    if (std::find(names.begin(), names.end(), k) == names.end()) return false;
  return true;
}

// layouts: tensor name -> a permutation of its dims.
void read_layouts(OpGraph& g, const JsonView& v) {
  v.expect_object();
  for (const auto& [name, val] : v.json().items()) {
    JsonView p = v.at(name);
    int t = g.find_tensor(name);
    if (t < 0) v.fail_at(name, "unknown tensor \"" + name + "\"");
    const auto rank = static_cast<std::int64_t>(g.tensors[static_cast<std::size_t>(t)].shape.size());
    p.expect_array();
    if (static_cast<std::int64_t>(p.size()) != rank)
      p.fail("has " + std::to_string(p.size()) + " entries, \"" + name + "\" has rank " + std::to_string(rank));
    std::vector<int> perm;
    for (std::size_t i = 0; i < p.size(); ++i) {
      auto d = static_cast<int>(p.at(i).as_int(0, rank - 1));
      if (std::find(perm.begin(), perm.end(), d) != perm.end())
        p.at(i).fail("dim " + std::to_string(d) + " appears twice: a layout is a permutation of 0.." + std::to_string(rank - 1));
      perm.push_back(d);
    }
    g.compile.layouts[name] = perm;
  }
}

// A matmul's split {M, N, K} is also today's work division (lower_matmul reads that).
void sync_work_division(Op& op) {
  if (find_op_info(op.op)->kind != OpKind::matmul) return;
  op.work_division.reset();
  if (op.split.empty() || op.split.count("B")) return;
  auto get = [&](const char* k) { return op.split.count(k) ? static_cast<int>(op.split.at(k)) : 1; };
  op.work_division = WorkDivision{get("M"), get("N"), get("K")};
}

}  // namespace

std::vector<std::string> split_dim_names(const OpGraph& g, const Op& op) {
  if (find_op_info(op.op)->kind == OpKind::matmul) return {"B", "M", "N", "K"};
  if (find_op_info(op.op)->kind == OpKind::sdpa) return {"Lq", "Lk"};  // tiles only
  std::vector<std::string> names;
  const Shape& out = g.tensors[static_cast<std::size_t>(op.outputs[0])].shape;
  for (std::size_t i = 0; i < out.size(); ++i) names.push_back(fmt::format("d{}", i));
  return names;
}

int apply_dim_map(OpGraph& g, const std::map<std::string, std::int64_t>& m, bool tiles) {
  int n = 0;
  for (Op& op : g.ops) {
    auto names = split_dim_names(g, op);
    if (!names_all(names, m)) continue;
    (tiles ? op.tiles : op.split) = m;
    if (!tiles) sync_work_division(op);
    ++n;
  }
  return n;
}

bool op_fuses(const OpGraph& g, const Op& op) { return op.fuse.value_or(g.compile.fuse); }

std::vector<int> stored_order(const OpGraph& g, const OpTensor& t) {
  if (auto it = g.compile.layouts.find(t.name); it != g.compile.layouts.end()) return it->second;
  std::vector<int> order(t.shape.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  return order;
}

void read_op_compile(const OpGraph& g, Op& op, const JsonView& c) {
  c.only_keys({"split", "tiles", "fuse", "lx_planning"});
  if (c.has("split")) {
    if (op.work_division)  // one of them won silently
      c.at("split").fail("the op's attrs.work_division divides it already; give one of attrs.work_division and compile.split");
    op.split = read_dim_map(c.at("split"));
    check_dim_map(g, op, op.split, c.at("split"));
    sync_work_division(op);  // compile.split replaces attrs.work_division
  }
  if (c.has("tiles")) {
    op.tiles = read_dim_map(c.at("tiles"));
    check_dim_map(g, op, op.tiles, c.at("tiles"));
  }
  if (c.has("fuse")) op.fuse = c.at("fuse").as_bool();
  if (c.has("lx_planning")) op.lx_planning = read_lx_planning(c.at("lx_planning"));
}

void read_graph_compile(OpGraph& g, const JsonView& c) {
  c.only_keys({"cores", "cards", "lx_planning", "fuse", "split", "tiles", "layouts", "hbm_layout"});
  g.compile.cores = static_cast<int>(c.get_int("cores", 1, 1, 1 << 20));
  g.compile.cards = static_cast<int>(c.get_int("cards", 1, 1, 64));
  if (c.has("lx_planning")) g.compile.lx_planning = read_lx_planning(c.at("lx_planning"));
  g.compile.fuse = c.get_bool("fuse", true);
  if (c.has("layouts")) read_layouts(g, c.at("layouts"));
  if (c.has("hbm_layout")) {
    const Json& j = c.at("hbm_layout").json();
    if (!j.is_string() || (j.get<std::string>() != "row_major" && j.get<std::string>() != "batched" &&
                           j.get<std::string>() != "stick"))
      c.at("hbm_layout").fail("expected \"row_major\", \"batched\" or \"stick\"");
    g.compile.hbm_layout = j.get<std::string>();
  }
  // Graph-level split and tiles: defaults for the ops whose dims they name (an op's own
  // compile section, or its attrs.work_division, wins).
  for (bool tiles : {false, true}) {
    const char* key = tiles ? "tiles" : "split";
    if (!c.has(key)) continue;
    auto m = read_dim_map(c.at(key));
    (tiles ? g.compile.tiles : g.compile.split) = m;
    int n = 0;
    for (Op& op : g.ops) {
      if (!names_all(split_dim_names(g, op), m)) continue;
      ++n;
      auto& own = tiles ? op.tiles : op.split;
      if (own.empty()) {
        check_dim_map(g, op, m, c.at(key));
        own = m;
        if (!tiles) sync_work_division(op);
      }
    }
    if (n == 0) c.at(key).fail("names dims no op has (matmuls: B, M, N, K; other ops: d0, d1, ... of their output)");
  }
}

}  // namespace dfsim

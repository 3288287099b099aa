// Parser and validator of the "dfsim.ops" format (names, shapes, producers, acyclicity).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

std::string hint_suffix(const std::string& word, const std::vector<std::string>& names) {
  std::string h = closest_match(word, names);
  return h.empty() ? "" : " (did you mean \"" + h + "\"?)";
}

// The tensors' names in file order (for hints) and by name (a lookup per reference: a linear
// search made a graph of 10^5 tensors and ops take minutes to read).
struct TensorNames {
  std::vector<std::string> names;
  std::unordered_map<std::string, int> index;
};

// Reads a list of tensor names into indices; unknown names and duplicates fail.
std::vector<int> read_tensor_list(const TensorNames& names, const JsonView& v, bool allow_repeats = false) {
  v.expect_array();
  std::vector<int> out;
  std::unordered_set<int> seen;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string n = v.at(i).as_string();
    auto it = names.index.find(n);
    if (it == names.index.end()) v.at(i).fail("unknown tensor \"" + n + "\"" + hint_suffix(n, names.names));
    if (!seen.insert(it->second).second && !allow_repeats) v.at(i).fail("duplicate tensor \"" + n + "\" in this list");
    out.push_back(it->second);
  }
  return out;
}

OpTensor read_tensor(const std::string& name, const JsonView& v) {
  v.only_keys({"shape", "dtype", "description"});
  OpTensor t;
  t.name = name;
  JsonView s = v.at("shape");
  s.expect_array();
  if (s.size() == 0) s.fail("shape must have at least one dimension");
  for (std::size_t i = 0; i < s.size(); ++i) t.shape.push_back(s.at(i).as_int(1, std::int64_t(1) << 40));
  t.dtype = v.at("dtype").as_dtype();
  // int4 packs two elements a byte; a row (the last dim) of whole bytes keeps every row, and
  // so every division of the outer dims, on byte boundaries, as packed int4 storage does.
  if (dtype_bits(t.dtype) % 8 != 0 && (t.shape.back() * dtype_bits(t.dtype)) % 8 != 0)
    s.at(s.size() - 1).fail("the last dim of an " + std::string(dtype_name(t.dtype)) + " tensor must make rows of whole bytes (" +
                            std::to_string(8 / dtype_bits(t.dtype)) + " elements a byte), got " + std::to_string(t.shape.back()));
  return t;
}

}  // namespace

// Data-movement ops (transpose, cat, reshape, slice, split): op_graph_move.cpp.
void check_move_op(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs);
// matmul, linear, sdpa: op_graph_matmul.cpp.
void check_matmul_family_op(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs);
// Transformer ops (normalize, where, cast, rope, embedding, kv_write, pow, clamp, scalar
// operands): op_graph_layer.cpp. false: not one of them.
bool check_layer_op(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v, const JsonView& attrs);
// Collectives and host transfers (op_graph_cards.cpp); false for any other op.
bool check_card_op(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v, const JsonView& attrs);
// Each op's inputs are on the cards it runs on (a partial group's output is only on the
// group's cards, to_host's only on the host): op_graph_cards.cpp. After the op order.
void check_card_placement(const OpGraph& g, const JsonView& root);
// The "compile" sections: op_graph_compile.cpp.
void read_graph_compile(OpGraph& g, const JsonView& c);
void read_op_compile(const OpGraph& g, Op& op, const JsonView& c);

namespace {

// Attributes, shape inference and the declared output shape of one op.
void check_op(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v) {
  static const Json empty = Json::object();
  JsonView attrs = v.has("attrs") ? v.at("attrs") : JsonView(empty, v.file(), v.path() + "/attrs");
  if (info.kind == OpKind::transpose || info.kind == OpKind::cat || info.kind == OpKind::reshape ||
      info.kind == OpKind::slice || info.kind == OpKind::split)
    return check_move_op(g, op, v, attrs);
  if (check_layer_op(g, op, info, v, attrs)) return;
  if (check_card_op(g, op, info, v, attrs)) return;
  if (info.kind == OpKind::matmul || info.kind == OpKind::sdpa) return check_matmul_family_op(g, op, v, attrs);
  const Shape& a = g.tensors[op.inputs[0]].shape;
  Shape expect;
  if (info.kind == OpKind::reduce) {
    attrs.only_keys({"dim", "keepdim"});
    std::int64_t rank = static_cast<std::int64_t>(a.size());
    std::int64_t d = attrs.get_int("dim", -1);
    if (d < -rank || d >= rank)
      attrs.at("dim").fail("dim " + std::to_string(d) + " out of range for a rank-" + std::to_string(rank) +
                           " input, expected in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]");
    op.dim = static_cast<int>(d < 0 ? d + rank : d);
    op.keepdim = attrs.get_bool("keepdim", false);
    expect = reduce_shape(a, op.dim, op.keepdim);
  } else {
    attrs.only_keys({});
  }
  if (info.kind == OpKind::unary) expect = a;
  if (info.kind == OpKind::binary) {
    const OpTensor& ta = g.tensors[op.inputs[0]];
    const OpTensor& tb = g.tensors[op.inputs[1]];
    if (ta.dtype != tb.dtype)
      v.at("inputs").fail("operand dtypes differ: \"" + ta.name + "\" is " + std::string(dtype_name(ta.dtype)) +
                          ", \"" + tb.name + "\" is " + std::string(dtype_name(tb.dtype)));
    const Shape& b = tb.shape;
    auto s = broadcast_shapes(a, b);
    if (!s) v.at("inputs").fail("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    expect = *s;
  }
  const OpTensor& out = g.tensors[op.outputs[0]];
  if (out.shape != expect)
    v.at("outputs").at(0).fail("shape mismatch for \"" + out.name + "\": expected " + shape_str(expect) +
                               " from " + info.name + ", got " + shape_str(out.shape));
}

Op read_op(const OpGraph& g, const TensorNames& names, const JsonView& v, int index) {
  v.only_keys({"op", "inputs", "outputs", "attrs", "compile", "description"});
  Op op;
  op.index = index;
  op.op = v.at("op").as_string();
  const OpInfo* info = find_op_info(op.op);
  if (!info) {
    std::vector<std::string> known;
    for (const auto& o : op_catalog()) known.push_back(o.name);
    v.at("op").fail("unknown op \"" + op.op + "\", expected one of " + op_names_list() + hint_suffix(op.op, known));
  }
  op.inputs = read_tensor_list(names, v.at("inputs"), /*allow_repeats=*/true);  // add(x, x) is fine
  op.outputs = read_tensor_list(names, v.at("outputs"));
  const int n_in = static_cast<int>(op.inputs.size()), n_out = static_cast<int>(op.outputs.size());
  // A binary elementwise op with attrs.scalar takes one input (the scalar is the other).
  const bool scalar = info->kind == OpKind::binary && v.has("attrs") && v.at("attrs").has("scalar");
  const int least = scalar ? 1 : info->inputs, most = scalar ? 1 : info->inputs + info->optional_inputs;
  if (info->variadic ? n_in < least : (n_in < least || n_in > most)) {
    std::string want = std::to_string(least) + (info->variadic ? " or more" : most > least ? " to " + std::to_string(most) : "");
    v.at("inputs").fail(op.op + " takes " + want + " input(s)" + (scalar ? " with attrs.scalar" : "") + ", got " +
                        std::to_string(n_in) +
                        (info->kind == OpKind::binary && n_in == 1 ? " (one input needs attrs.scalar)" : ""));
  }
  if (info->variadic_outputs ? n_out < info->outputs : n_out != info->outputs)
    v.at("outputs").fail(op.op + " has " + std::to_string(info->outputs) + (info->variadic_outputs ? " or more" : "") +
                         " output(s), got " + std::to_string(n_out));
  check_op(g, op, *info, v);
  if (v.has("compile")) read_op_compile(g, op, v.at("compile"));
  return op;
}

}  // namespace

void check_op_graph_dataflow(OpGraph& g, const JsonView& root);

const char* lx_planning_name(LxPlanning p) {
  switch (p) {
    case LxPlanning::off: return "off";
    case LxPlanning::none: return "none";
    case LxPlanning::reductions: return "reductions";
    case LxPlanning::inplace: return "inplace";
    case LxPlanning::clone: return "clone";
    case LxPlanning::all: return "all";
  }
  return "none";
}

const std::vector<LxPlanning>& lx_plannings() {
  static const std::vector<LxPlanning> all = {LxPlanning::off,     LxPlanning::none,  LxPlanning::reductions,
                                              LxPlanning::inplace, LxPlanning::clone, LxPlanning::all};
  return all;
}

std::string lx_planning_names() {
  std::string s;
  const auto& levels = lx_plannings();
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (i) s += i + 1 == levels.size() ? " or " : ", ";
    s += lx_planning_name(levels[i]);
  }
  return s;
}

std::uint64_t OpTensor::elements() const {
  std::uint64_t n = 1;  // saturates at UINT64_MAX: dims up to 2^40 each overflow from rank 2 on
  for (auto d : shape)
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return UINT64_MAX;
  return n;
}

int OpGraph::find_tensor(const std::string& n) const {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

bool OpGraph::is_input(int t) const { return std::find(inputs.begin(), inputs.end(), t) != inputs.end(); }

OpGraph read_op_graph(const Json& j, const std::string& file) {
  JsonView root(j, file);
  root.expect_format("dfsim.ops");
  root.only_keys({"format", "version", "name", "description", "tensors", "inputs", "outputs", "ops", "compile", "model"});
  const auto version = root.at("version").as_int(1, kOpGraphVersion);
  OpGraph g;
  g.file = file;
  g.name = read_name(root.at("name"));
  g.description = root.get_string("description", "");
  JsonView tensors = root.at("tensors");
  tensors.expect_object();
  TensorNames names;
  for (const auto& [name, val] : tensors.json().items()) {
    if (std::string why = name_problem(name); !why.empty()) tensors.fail_at(name, why);
    g.tensors.push_back(read_tensor(name, tensors.at(name)));
    names.index.emplace(name, static_cast<int>(names.names.size()));
    names.names.push_back(name);
  }
  g.inputs = read_tensor_list(names, root.at("inputs"));
  g.outputs = read_tensor_list(names, root.at("outputs"));
  // The ops' shapes depend on the cards (a collective's group): read that option first.
  if (root.has("compile") && root.at("compile").has("cards")) {
    if (version < 2) root.at("compile").at("cards").fail("compile.cards needs \"version\": 2");
    g.compile.cards = static_cast<int>(root.at("compile").at("cards").as_int(1, 64));
  }
  JsonView ops = root.at("ops");
  ops.expect_array();
  if (ops.size() == 0) ops.fail("the op list is empty");
  if (version < 2)  // the ops between cards came with version 2
    for (std::size_t i = 0; i < ops.size(); ++i) {
      JsonView o = ops.at(i);
      if (!o.json().is_object() || !o.has("op") || !o.at("op").json().is_string()) continue;  // read_op names it
      const OpInfo* info = find_op_info(o.at("op").as_string());
      if (info && crosses_cards(info->kind))
        o.at("op").fail("\"" + info->name + "\" (an op between cards) needs \"version\": 2");
    }
  for (std::size_t i = 0; i < ops.size(); ++i)
    g.ops.push_back(read_op(g, names, ops.at(i), static_cast<int>(i)));
  if (root.has("compile")) read_graph_compile(g, root.at("compile"));
  if (root.has("model")) g.model = read_model_step(root.at("model"));
  check_op_graph_dataflow(g, root);
  check_card_placement(g, root);
  return g;
}

OpGraph load_op_graph(const std::string& path) { return read_op_graph(load_json_file(path), path); }

}  // namespace dfsim

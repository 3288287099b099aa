#include "valid_graph_gen.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace dfsim::property {

namespace {

std::uint64_t dtype_bits(const std::string& d) {
  if (d == "int4") return 4;
  if (d == "fp8" || d == "int8") return 8;
  if (d == "fp32" || d == "int32") return 32;
  return 16;
}

std::uint64_t tensor_bytes(const Json& t) {
  std::uint64_t n = 1;
  for (auto d : t.at("shape")) n *= d.get<std::uint64_t>();
  return (n * dtype_bits(t.at("dtype").get<std::string>()) + 7) / 8;
}

template <class T>
const T& one_of(GraphDraft& d, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(d.pick(0, static_cast<std::int64_t>(v.size()) - 1))];
}

bool add_unary(GraphDraft& d) {
  static const std::vector<std::string> ops = {"neg", "copy", "abs", "relu", "exp", "log", "sqrt",
                                               "rsqrt", "reciprocal", "gelu", "silu", "tanh"};
  std::string x = d.pick_live();
  d.add_op(one_of(d, ops), {x}, d.new_tensor(d.shape_of(x), d.dtype_of(x), false));
  return true;
}

bool add_binary(GraphDraft& d) {
  static const std::vector<std::string> ops = {"add", "sub", "mul", "div", "max", "min"};
  std::string x = d.pick_live();
  Shape s = d.shape_of(x);
  std::string y;
  // Another live tensor of the same shape and dtype, else a new input that broadcasts.
  for (const auto& t : d.live)
    if (t != x && !d.in_place.count(t) && d.shape_of(t) == s && d.dtype_of(t) == d.dtype_of(x) && d.pick(0, 1)) y = t;
  if (y.empty()) {
    Shape b = s;
    int mode = static_cast<int>(d.pick(0, 2));
    if (mode == 1) b.back() = 1;                                   // a column: [.., 1]
    if (mode == 2 && b.size() > 1) b.erase(b.begin());             // missing leading dims
    y = d.new_tensor(b, d.dtype_of(x), true);
  }
  bool swap = d.pick(0, 1) && d.shape_of(y) == s;
  d.add_op(one_of(d, ops), swap ? std::vector<std::string>{y, x} : std::vector<std::string>{x, y},
           d.new_tensor(s, d.dtype_of(x), false));
  return true;
}

bool add_reduce(GraphDraft& d) {
  static const std::vector<std::string> ops = {"sum", "mean", "amax"};
  std::string x = d.pick_live();
  Shape s = d.shape_of(x);
  int rank = static_cast<int>(s.size());
  int dim = d.pick(0, 3) ? -1 : static_cast<int>(d.pick(-rank, rank - 1));  // mostly rows
  bool keepdim = d.pick(0, 1);
  int nd = dim < 0 ? dim + rank : dim;
  // Over an inner dim a unit holds the slice from that dim on: one that does not fit the small
  // chip's LX is the documented "one slice needs N bytes" limit, so reduce the rows instead.
  std::int64_t slice = 1;
  for (int i = nd; i < rank; ++i) slice *= s[static_cast<std::size_t>(i)];
  if (slice * 4 * 4 > 16384) dim = -1, nd = rank - 1;
  Shape out;
  for (int i = 0; i < rank; ++i)
    if (i != nd) out.push_back(s[static_cast<std::size_t>(i)]);
    else if (keepdim) out.push_back(1);
  if (out.empty()) out.push_back(1);
  d.add_op(one_of(d, ops), {x}, d.new_tensor(out, d.dtype_of(x), false), {{"dim", dim}, {"keepdim", keepdim}});
  return true;
}

bool add_matmul(GraphDraft& d) {
  std::string a = d.pick_live(2, 2);
  if (a.empty()) return false;
  Shape s = d.shape_of(a);
  std::int64_t n = one_of(d, std::vector<std::int64_t>{64, 128, 256});
  std::string b = d.new_tensor({s[1], n}, d.dtype_of(a), true);
  Json attrs = nullptr;
  if (d.pick(0, 2) == 0) {  // a forced work division: m x n x k <= cores, each dividing its dim
    auto divisor = [&](std::int64_t dim, std::int64_t most) {
      std::vector<std::int64_t> ok;
      for (std::int64_t x = 1; x <= std::min(dim, most); ++x)
        if (dim % x == 0) ok.push_back(x);
      return one_of(d, ok);
    };
    std::int64_t m = divisor(s[0], d.cores);
    std::int64_t nn = divisor(n, d.cores / m);
    std::int64_t k = divisor(s[1], d.cores / (m * nn));
    attrs = {{"work_division", {{"m", m}, {"n", nn}, {"k", k}}}};
  }
  d.add_op("matmul", {a, b}, d.new_tensor({s[0], n}, d.dtype_of(a), false), attrs);
  return true;
}

bool add_transpose(GraphDraft& d) {
  std::string x = d.pick_live(2, 3);
  if (x.empty()) return false;
  Shape s = d.shape_of(x);
  std::vector<int> dims(s.size());
  std::iota(dims.begin(), dims.end(), 0);
  do std::shuffle(dims.begin(), dims.end(), d.rng);
  while (std::is_sorted(dims.begin(), dims.end()));
  Shape out;
  for (int i : dims) out.push_back(s[static_cast<std::size_t>(i)]);
  d.add_op("transpose", {x}, d.new_tensor(out, d.dtype_of(x), false), {{"dims", dims}});
  return true;
}

bool add_cat(GraphDraft& d) {
  std::string x = d.pick_live();
  Shape s = d.shape_of(x);
  int rank = static_cast<int>(s.size());
  int dim = static_cast<int>(d.pick(0, rank - 1));
  Shape o = s;
  o[static_cast<std::size_t>(dim)] = dim == rank - 1 ? 64 * d.pick(1, 2) : d.pick(1, 16);
  std::string y = d.pick(0, 3) ? d.new_tensor(o, d.dtype_of(x), true) : x;  // cat(x, x) too
  Shape out = s;
  out[static_cast<std::size_t>(dim)] += d.shape_of(y)[static_cast<std::size_t>(dim)];
  d.add_op("cat", {x, y}, d.new_tensor(out, d.dtype_of(x), false), {{"dim", dim}});
  return true;
}

// The transformer ops (issue 9) on floating-point tensors.
bool is_float(const std::string& dtype) { return dtype == "fp16" || dtype == "fp32"; }

std::string pick_live_float(GraphDraft& d, std::size_t min_rank, std::size_t max_rank) {
  std::vector<std::string> ok;
  for (const auto& t : d.live) {
    auto r = d.shape_of(t).size();
    if (r >= min_rank && r <= max_rank && is_float(d.dtype_of(t)) && !d.in_place.count(t)) ok.push_back(t);
  }
  if (ok.empty()) return "";
  return d.pick(0, 1) ? ok.back() : ok[static_cast<std::size_t>(d.pick(0, static_cast<std::int64_t>(ok.size()) - 1))];
}

bool add_softmax(GraphDraft& d) {
  std::string x = pick_live_float(d, 1, 4);
  if (x.empty()) return false;
  int rank = static_cast<int>(d.shape_of(x).size());
  int dim = d.pick(0, 3) ? -1 : static_cast<int>(d.pick(-rank, rank - 1));
  // The slice a softmax unit holds (its dim, and the dims after it) fits the small chip's LX:
  // a larger one is the documented "one row needs N bytes" limit.
  Shape s = d.shape_of(x);
  std::int64_t slice = 1;
  for (std::size_t i = static_cast<std::size_t>(dim < 0 ? dim + rank : dim); i < s.size(); ++i) slice *= s[i];
  if (slice * 4 * 4 > 16384) return false;
  d.add_op("softmax", {x}, d.new_tensor(d.shape_of(x), d.dtype_of(x), false), {{"dim", dim}});
  return true;
}

bool add_norm(GraphDraft& d) {
  std::string x = pick_live_float(d, 1, 4);
  if (x.empty()) return false;
  Shape s = d.shape_of(x);
  bool layer = d.pick(0, 1);
  std::vector<std::string> in{x};
  int extra = static_cast<int>(d.pick(0, layer ? 2 : 1));  // weight, then bias
  for (int i = 0; i < extra; ++i) in.push_back(d.new_tensor({s.back()}, d.dtype_of(x), true));
  d.add_op(layer ? "layernorm" : "rmsnorm", in, d.new_tensor(s, d.dtype_of(x), false));
  return true;
}

bool add_linear(GraphDraft& d) {
  std::string x = pick_live_float(d, 2, 3);
  if (x.empty()) return false;
  Shape s = d.shape_of(x);
  std::int64_t n = one_of(d, std::vector<std::int64_t>{64, 128, 192, 256});
  std::vector<std::string> in{x, d.new_tensor({n, s.back()}, d.dtype_of(x), true)};
  if (d.pick(0, 1)) in.push_back(d.new_tensor({n}, d.dtype_of(x), true));
  Shape out = s;
  out.back() = n;
  d.add_op("linear", in, d.new_tensor(out, d.dtype_of(x), false));
  return true;
}

bool add_bmm(GraphDraft& d) {
  std::string a = pick_live_float(d, 3, 3);
  if (a.empty()) return false;
  Shape s = d.shape_of(a);
  std::int64_t n = one_of(d, std::vector<std::int64_t>{16, 64, 128});
  bool shared = d.pick(0, 2) == 0, tb = d.pick(0, 1);  // [K, N] for every batch; B stored [.., N, K]
  Shape b = shared ? Shape{s[2], n} : Shape{s[0], s[2], n};
  if (tb) std::swap(b[b.size() - 1], b[b.size() - 2]);
  Json attrs = tb ? Json{{"transpose_b", true}} : Json(nullptr);
  d.add_op("matmul", {a, d.new_tensor(b, d.dtype_of(a), true)}, d.new_tensor({s[0], s[1], n}, d.dtype_of(a), false), attrs);
  return true;
}

bool add_rope(GraphDraft& d) {
  // [..., T, D] with leading dims, as attention uses it: rope's unit is a [T, D] plane with its
  // cos and sin (docs/compiler.md), so a 2-D x of a long T is a documented limit, not drawn.
  std::string x = pick_live_float(d, 3, 4);
  if (x.empty()) return false;
  Shape s = d.shape_of(x);
  if (s.back() % 2 || 4 * s.back() * s[s.size() - 2] * (d.dtype_of(x) == "fp32" ? 4 : 2) > 32768) return false;
  Shape cs{s[s.size() - 2], s.back()};
  d.add_op("rope", {x, d.new_tensor(cs, d.dtype_of(x), true), d.new_tensor(cs, d.dtype_of(x), true)},
           d.new_tensor(s, d.dtype_of(x), false));
  return true;
}

bool add_sdpa(GraphDraft& d) {
  std::string dt = d.pick(0, 3) ? "fp16" : "fp32";
  std::int64_t b = d.pick(1, 2), hkv = one_of(d, std::vector<std::int64_t>{1, 2}), group = d.pick(1, 4);
  std::int64_t lq = one_of(d, std::vector<std::int64_t>{1, 8, 64, 100}), dh = one_of(d, std::vector<std::int64_t>{64, 128});
  bool causal = d.pick(0, 1);
  // A causal chunk may follow cached keys (causal_offset = Lk - Lq, as gen's prefill with context).
  std::int64_t cached = causal ? one_of(d, std::vector<std::int64_t>{0, 0, 7, 128}) : 0;
  std::int64_t lk = causal ? lq + cached : one_of(d, std::vector<std::int64_t>{lq, 64, 128});
  std::vector<std::string> in{d.new_tensor({b, hkv * group, lq, dh}, dt, true), d.new_tensor({b, hkv, lk, dh}, dt, true),
                              d.new_tensor({b, hkv, lk, dh}, dt, true)};
  if (!causal && d.pick(0, 2) == 0) in.push_back(d.new_tensor({lq, lk}, dt, true));
  Json attrs = {{"causal", causal}};
  if (cached) attrs["causal_offset"] = cached;
  d.add_op("sdpa", in, d.new_tensor({b, hkv * group, lq, dh}, dt, false), attrs);
  return true;
}

bool add_embedding(GraphDraft& d) {
  std::string dt = d.pick(0, 3) ? "fp16" : "fp32";
  std::int64_t v = one_of(d, std::vector<std::int64_t>{100, 1000, 32000}), dim = 64 * d.pick(1, 2);
  Shape ids = d.pick(0, 1) ? Shape{d.pick(1, 64)} : Shape{d.pick(1, 4), d.pick(1, 16)};
  Shape out = ids;
  out.push_back(dim);
  std::string table = d.new_tensor({v, dim}, dt, true);
  std::int64_t n = std::accumulate(ids.begin(), ids.end(), std::int64_t{1}, std::multiplies<>());
  d.partial_bytes[table] = tensor_bytes(Json{{"shape", {std::min(n, v), dim}}, {"dtype", dt}});  // the rows gathered
  std::string id_tensor = d.new_tensor(ids, "int32", true);
  d.partial_bytes[id_tensor] = 0;  // the ids are the DMA's descriptors
  std::string y = d.new_tensor(out, dt, false);
  d.add_op("embedding", {table, id_tensor}, y);
  return true;
}

bool add_kv_write(GraphDraft& d) {
  std::string x = pick_live_float(d, 2, 4);  // the new rows [..., T, D]
  if (x.empty()) return false;
  Shape s = d.shape_of(x), cache = s;
  std::int64_t t = s[s.size() - 2], lmax = t + d.pick(0, 3) * 16;
  cache[cache.size() - 2] = lmax;
  Json attrs = {{"position", d.pick(0, lmax - t)}};
  std::string in = d.new_tensor(cache, d.dtype_of(x), true);
  std::string out = d.new_tensor(cache, d.dtype_of(x), false);
  d.partial_bytes[in] = 0;  // updated in place: only the new rows move
  d.partial_bytes[out] = tensor_bytes(d.tensors[x]);
  d.add_op("kv_write", {in, x}, out, attrs);
  d.in_place.insert(in);  // updated in place: no other op may read the cache (later ops read `out`)
  return true;
}

}  // namespace

// The op families. Adding an op family (softmax, layernorm, ...) is one row here.
const std::vector<OpFamily>& op_families() {
  static const std::vector<OpFamily> f = {
      {"unary", 3, add_unary},   {"binary", 4, add_binary},       {"reduce", 2, add_reduce},
      {"matmul", 2, add_matmul}, {"transpose", 1, add_transpose}, {"cat", 1, add_cat},
      {"softmax", 1, add_softmax}, {"norm", 1, add_norm},         {"linear", 1, add_linear},
      {"bmm", 1, add_bmm},       {"rope", 1, add_rope},           {"sdpa", 1, add_sdpa},
      {"embedding", 1, add_embedding}, {"kv_write", 1, add_kv_write},
  };
  return f;
}

std::string GraphDraft::pick_live(std::size_t min_rank, std::size_t max_rank) {
  std::vector<std::string> ok;
  for (const auto& t : live) {
    auto r = shape_of(t).size();
    if (r >= min_rank && r <= max_rank && !in_place.count(t)) ok.push_back(t);
  }
  if (ok.empty()) return "";
  // Half the time the newest (a chain), else any (a DAG: fan-out, reconvergence).
  return pick(0, 1) ? ok.back() : ok[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(ok.size()) - 1))];
}

std::string GraphDraft::new_tensor(const Shape& s, const std::string& dtype, bool is_input) {
  std::string name = "t" + std::to_string(tensors.size());
  tensors[name] = {{"shape", s}, {"dtype", dtype}};
  live.push_back(name);
  uses.push_back(0);
  if (is_input) inputs.push_back(name);
  return name;
}

void GraphDraft::add_op(const std::string& op, const std::vector<std::string>& in, const std::string& out, Json attrs) {
  Json o = {{"op", op}, {"inputs", in}, {"outputs", {out}}};
  if (!attrs.is_null()) o["attrs"] = attrs;
  ops.push_back(o);
  for (const auto& t : in)
    for (std::size_t i = 0; i < live.size(); ++i)
      if (live[i] == t) ++uses[i];
}

Shape GraphDraft::random_shape(std::size_t rank) {
  Shape s;
  for (std::size_t i = 0; i + 1 < rank; ++i) s.push_back(pick(0, 2) ? 8 * pick(1, 16) : pick(1, 6));
  s.push_back(pick(0, 4) ? 64 * pick(1, 4) : pick(1, 96));  // mostly whole sticks
  return s;
}

GeneratedGraph generate_graph(std::uint64_t seed, std::uint64_t index) {
  std::seed_seq ss{seed, index, std::uint64_t{0x5eed}};
  std::mt19937_64 rng(ss);
  GraphDraft d{rng};
  GeneratedGraph g;
  g.config = d.pick(0, 1) ? "configs/small.json" : "configs/spyre.json";
  g.cores = static_cast<int>(g.config == "configs/small.json" ? d.pick(1, 2) : one_of(d, std::vector<std::int64_t>{1, 2, 3, 4, 8, 16, 32}));
  d.cores = g.cores;
  static const std::vector<std::string> dtypes = {"fp16", "fp16", "fp16", "fp8", "int8", "fp32", "int4"};
  std::size_t rank = static_cast<std::size_t>(d.pick(0, 3) ? 2 : d.pick(1, 3));
  d.new_tensor(d.random_shape(rank), one_of(d, dtypes), true);
  int n_ops = static_cast<int>(d.pick(1, 6));
  int total_weight = 0;
  for (const auto& f : op_families()) total_weight += f.weight;
  for (int i = 0; i < n_ops;) {
    std::int64_t w = d.pick(0, total_weight - 1);
    for (const auto& f : op_families()) {
      if ((w -= f.weight) >= 0) continue;
      if (f.add(d)) ++i;
      break;
    }
  }
  Json outputs = Json::array();
  for (std::size_t i = 0; i < d.live.size(); ++i)  // every unconsumed op output is a graph output
    if (d.uses[i] == 0 && std::find(d.inputs.begin(), d.inputs.end(), d.live[i]) == d.inputs.end())
      outputs.push_back(d.live[i]);
  // int4 rows are whole bytes (an even last dim, docs/op-graph-format.md): a graph whose ops
  // gave an int4 tensor odd rows (a row sum of [R, C] leaves [R]) is the same graph in int8.
  bool odd_int4 = false;
  for (const auto& [name, t] : d.tensors.items())
    odd_int4 = odd_int4 || (t.at("dtype") == "int4" && t.at("shape").back().get<std::int64_t>() % 2 != 0);
  if (odd_int4)
    for (auto& [name, t] : d.tensors.items())
      if (t.at("dtype") == "int4") t["dtype"] = "int8";
  Json inputs = Json::array();  // inputs no op reads are left out
  for (std::size_t i = 0; i < d.live.size(); ++i)
    if (d.uses[i] > 0 && std::find(d.inputs.begin(), d.inputs.end(), d.live[i]) != d.inputs.end()) inputs.push_back(d.live[i]);
  Json tensors = Json::object();
  for (std::size_t i = 0; i < d.live.size(); ++i)
    if (d.uses[i] > 0 || std::find(d.inputs.begin(), d.inputs.end(), d.live[i]) == d.inputs.end())
      tensors[d.live[i]] = d.tensors[d.live[i]];
  static const std::vector<std::string> planning = {"off", "none", "reductions", "all"};
  g.graph = {{"format", "dfsim.ops"}, {"version", 1}, {"name", "gen_" + std::to_string(seed) + "_" + std::to_string(index)},
             {"tensors", tensors}, {"inputs", inputs}, {"outputs", outputs}, {"ops", d.ops},
             {"compile", {{"cores", g.cores}, {"lx_planning", one_of(d, planning)}}}};
  auto compulsory = [&](const std::string& t) {
    auto it = d.partial_bytes.find(t);
    return it != d.partial_bytes.end() ? it->second : tensor_bytes(d.tensors[t]);
  };
  for (const auto& t : inputs) g.compulsory_bytes += compulsory(t.get<std::string>());
  for (const auto& t : outputs) g.compulsory_bytes += compulsory(t.get<std::string>());
  return g;
}

}  // namespace dfsim::property

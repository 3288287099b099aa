// Op catalogue and shape rules (broadcasting, reduction) of the op graph format.
#include "sim/graph/op_shapes.h"

#include <algorithm>

namespace dfsim {

const std::vector<OpInfo>& op_catalog() {
  static const std::vector<OpInfo> ops = {
      {"add", OpKind::binary, 2, 1}, {"sub", OpKind::binary, 2, 1}, {"mul", OpKind::binary, 2, 1},
      {"div", OpKind::binary, 2, 1}, {"max", OpKind::binary, 2, 1}, {"neg", OpKind::unary, 1, 1},
      {"min", OpKind::binary, 2, 1}, {"copy", OpKind::unary, 1, 1}, {"abs", OpKind::unary, 1, 1},
      {"relu", OpKind::unary, 1, 1}, {"exp", OpKind::unary, 1, 1},  {"log", OpKind::unary, 1, 1},
      {"sqrt", OpKind::unary, 1, 1}, {"rsqrt", OpKind::unary, 1, 1}, {"reciprocal", OpKind::unary, 1, 1},
      {"gelu", OpKind::unary, 1, 1}, {"silu", OpKind::unary, 1, 1}, {"tanh", OpKind::unary, 1, 1},
      {"sum", OpKind::reduce, 1, 1}, {"mean", OpKind::reduce, 1, 1}, {"amax", OpKind::reduce, 1, 1},
      {"matmul", OpKind::matmul, 2, 1}, {"linear", OpKind::matmul, 2, 1, false, /*optional_inputs=*/1},
      {"sdpa", OpKind::sdpa, 3, 1, false, /*optional_inputs=*/1},
      {"transpose", OpKind::transpose, 1, 1}, {"cat", OpKind::cat, 2, 1, /*variadic=*/true},
      {"sigmoid", OpKind::unary, 1, 1}, {"pow", OpKind::unary, 1, 1}, {"clamp", OpKind::unary, 1, 1},
      {"where", OpKind::where, 3, 1}, {"cast", OpKind::cast, 1, 1},
      {"softmax", OpKind::normalize, 1, 1},
      {"layernorm", OpKind::normalize, 1, 1, false, /*optional_inputs=*/2},
      {"rmsnorm", OpKind::normalize, 1, 1, false, /*optional_inputs=*/1},
      {"rope", OpKind::rope, 3, 1}, {"embedding", OpKind::embedding, 2, 1},
      {"kv_write", OpKind::kv_write, 2, 1}, {"reshape", OpKind::reshape, 1, 1},
      {"slice", OpKind::slice, 1, 1},
      {"split", OpKind::split, 1, 1, false, 0, /*variadic_outputs=*/true},
      {"all_reduce", OpKind::collective, 1, 1}, {"all_gather", OpKind::collective, 1, 1},
      {"reduce_scatter", OpKind::collective, 1, 1}, {"broadcast", OpKind::collective, 1, 1},
      {"from_host", OpKind::host, 1, 1}, {"to_host", OpKind::host, 1, 1},
  };
  return ops;
}

const OpInfo* find_op_info(const std::string& name) {
  for (const auto& o : op_catalog())
    if (o.name == name) return &o;
  return nullptr;
}

bool is_elementwise(OpKind k) {
  return k == OpKind::binary || k == OpKind::unary || k == OpKind::where || k == OpKind::cast;
}

bool crosses_cards(OpKind k) { return k == OpKind::collective || k == OpKind::host; }

std::string op_names_list() {
  std::string out;
  for (const auto& o : op_catalog()) out += (out.empty() ? "" : ", ") + o.name;
  return out;
}

std::uint64_t dims_product(const Shape& s, std::size_t from, std::size_t to) {
  std::uint64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= static_cast<std::uint64_t>(s[i]);
  return p;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = std::max(da, db);
  }
  return out;
}

Shape reduce_shape(const Shape& in, int dim, bool keepdim) {
  Shape out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (static_cast<int>(i) != dim) out.push_back(in[i]);
    else if (keepdim) out.push_back(1);
  }
  if (out.empty()) out.push_back(1);  // a full reduction of a 1-D tensor is a 1-element tensor
  return out;
}

Shape permute_shape(const Shape& in, const std::vector<int>& dims) {
  Shape out;
  for (int d : dims) out.push_back(in[static_cast<std::size_t>(d)]);
  return out;
}

}  // namespace dfsim

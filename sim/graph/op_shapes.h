#pragma once
// Op catalogue (arity, attributes) and shape inference of the op graph.
#include <optional>
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"

namespace dfsim {

// binary: elementwise with broadcasting (or one input and attrs.scalar); unary: elementwise;
// reduce: sum/mean/amax; normalize: softmax/layernorm/rmsnorm (a reduction and elementwise
// passes over one dim, output like the input); where: 3-input select; cast: dtype change;
// rope, embedding, kv_write: the transformer ops; reshape, slice, split: data movement;
// sdpa: scaled dot-product attention; collective: all_reduce, all_gather, reduce_scatter,
// broadcast between cards; host: from_host, to_host over a card's PCIe link.
enum class OpKind {
  binary, unary, reduce, matmul, transpose, cat,
  normalize, where, cast, rope, embedding, kv_write, reshape, slice, split, sdpa,
  collective, host,
};

// What the op graph format knows about one op.
struct OpInfo {
  std::string name;
  OpKind kind;
  int inputs;               // exact count, or the least count when variadic
  int outputs;
  bool variadic = false;    // takes `inputs` or more inputs (cat)
  int optional_inputs = 0;  // up to this many more inputs (layernorm's weight and bias)
  bool variadic_outputs = false;  // `outputs` or more outputs (split)
};

// Whether ops of this kind run elementwise on the SFP with numpy broadcasting (the fusion
// pass chains them): binary, unary, where, cast.
bool is_elementwise(OpKind k);
// Whether ops of this kind cross cards (collectives, host transfers): version 2 of the op
// graph format, lowered to link tasks.
bool crosses_cards(OpKind k);
// "add, sub, ...": the op names of the catalogue, for error messages.
std::string op_names_list();

const std::vector<OpInfo>& op_catalog();
const OpInfo* find_op_info(const std::string& name);

std::string shape_str(const Shape& s);
// Elements in dims [from, to) of `s` (1 for an empty range).
std::uint64_t dims_product(const Shape& s, std::size_t from, std::size_t to);

// Numpy-style broadcast of two shapes (aligned on the right, size-1 dims stretch).
// Returns nullopt if they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Output shape of sum over `dim` (normalised).
Shape reduce_shape(const Shape& in, int dim, bool keepdim);

// Output shape of a transpose: out[i] = in[dims[i]] (dims a permutation of the input's dims).
Shape permute_shape(const Shape& in, const std::vector<int>& dims);

}  // namespace dfsim

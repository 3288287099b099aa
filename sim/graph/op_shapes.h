#pragma once
// Op catalogue (arity, attributes) and shape inference of the op graph.
#include <optional>
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"

namespace dfsim {

enum class OpKind { binary, unary, reduce, matmul, transpose, cat, sdpa };

// What the op graph format knows about one op.
struct OpInfo {
  std::string name;
  OpKind kind;
  int inputs;               // exact count, or the least count when variadic
  int outputs;
  bool variadic = false;    // takes `inputs` or more inputs (cat)
};

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

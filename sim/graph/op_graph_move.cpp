// Validation of the data-movement ops of the op graph: transpose (attrs.dims, a permutation)
// and cat (attrs.dim, 2+ inputs equal outside that dim). Both move bytes and cannot convert.
#include <fmt/format.h>

#include <string>

#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

std::string rank_range(std::int64_t rank) { return fmt::format("[{}, {}]", -rank, rank - 1); }

// attrs.dims: one entry per input dim, each in [-rank, rank), together a permutation.
std::vector<int> read_permutation(const JsonView& attrs, std::int64_t rank) {
  JsonView dims = attrs.at("dims");
  dims.expect_array();
  if (static_cast<std::int64_t>(dims.size()) != rank)
    dims.fail("has " + std::to_string(dims.size()) + " entries, the input has rank " + std::to_string(rank) +
              " (dims lists, for each output dim, the input dim it takes)");
  std::vector<int> perm;
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    std::int64_t d = dims.at(i).as_int();
    if (d < -rank || d >= rank)
      dims.at(i).fail("dim " + std::to_string(d) + " out of range for a rank-" + std::to_string(rank) +
                      " input, expected in " + rank_range(rank));
    if (d < 0) d += rank;
    if (seen[static_cast<std::size_t>(d)])
      dims.at(i).fail("dim " + std::to_string(d) + " appears twice: dims must be a permutation of 0.." +
                      std::to_string(rank - 1));
    seen[static_cast<std::size_t>(d)] = true;
    perm.push_back(static_cast<int>(d));
  }
  return perm;
}

}  // namespace

void check_move_op(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  const OpTensor& first = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const auto rank = static_cast<std::int64_t>(first.shape.size());
  Shape expect;
  if (op.op == "transpose") {
    attrs.only_keys({"dims"});
    op.perm = read_permutation(attrs, rank);
    expect = permute_shape(first.shape, op.perm);
  } else {  // cat
    attrs.only_keys({"dim"});
    std::int64_t d = attrs.get_int("dim", 0);
    if (d < -rank || d >= rank)
      attrs.at("dim").fail("dim " + std::to_string(d) + " out of range for rank-" + std::to_string(rank) +
                           " inputs, expected in " + rank_range(rank));
    op.dim = static_cast<int>(d < 0 ? d + rank : d);
    expect = first.shape;
    expect[static_cast<std::size_t>(op.dim)] = 0;
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      const OpTensor& t = g.tensors[static_cast<std::size_t>(op.inputs[i])];
      JsonView at = v.at("inputs").at(i);
      if (t.dtype != first.dtype)
        at.fail("cat inputs share a dtype: \"" + t.name + "\" is " + std::string(dtype_name(t.dtype)) + ", \"" + first.name +
                "\" is " + std::string(dtype_name(first.dtype)));
      Shape a = t.shape, b = first.shape;
      bool ok = a.size() == b.size();
      if (ok) {
        a[static_cast<std::size_t>(op.dim)] = b[static_cast<std::size_t>(op.dim)] = 0;
        ok = a == b;
      }
      if (!ok)
        at.fail("shape " + shape_str(t.shape) + " of \"" + t.name + "\" does not match " + shape_str(first.shape) +
                " of \"" + first.name + "\" outside the concatenated dim " + std::to_string(op.dim));
      expect[static_cast<std::size_t>(op.dim)] += t.shape[static_cast<std::size_t>(op.dim)];
    }
  }
  const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (out.shape != expect)
    v.at("outputs").at(0).fail("shape mismatch for \"" + out.name + "\": expected " + shape_str(expect) + " from " +
                               op.op + ", got " + shape_str(out.shape));
  if (out.dtype != first.dtype)
    v.at("outputs").at(0).fail(op.op + " moves data and cannot convert: \"" + out.name + "\" is " +
                               std::string(dtype_name(out.dtype)) + ", \"" + first.name + "\" is " + std::string(dtype_name(first.dtype)));
}

}  // namespace dfsim

// Validation of the data-movement ops of the op graph: transpose (attrs.dims, a permutation),
// cat (attrs.dim, 2+ inputs equal outside that dim), reshape (same element count), slice
// (dim, start, end, step) and split (dim, sizes). All move bytes and cannot convert.
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

// A python-style bound of `size` (negative counts from the end), in [0, size].
std::int64_t read_bound(const JsonView& attrs, const char* key, std::int64_t dflt, std::int64_t size) {
  std::int64_t b = attrs.get_int(key, dflt);
  if (b < -size || b > size)
    attrs.at(key).fail(fmt::format("{} {} out of range for a dim of size {}, expected in [{}, {}]", key, b, size, -size, size));
  return b < 0 ? b + size : b;
}

int read_dim(const JsonView& attrs, std::int64_t rank) {
  std::int64_t d = attrs.get_int("dim", 0);
  if (d < -rank || d >= rank)
    attrs.at("dim").fail("dim " + std::to_string(d) + " out of range for a rank-" + std::to_string(rank) +
                         " input, expected in " + rank_range(rank));
  return static_cast<int>(d < 0 ? d + rank : d);
}

// The output shapes of reshape, slice and split.
std::vector<Shape> resize_shapes(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  const OpTensor& x = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  if (op.op == "reshape") {
    attrs.only_keys({});
    const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
    if (y.elements() != x.elements())
      v.at("outputs").at(0).fail(fmt::format("reshape keeps the element count: \"{}\" {} has {}, \"{}\" {} has {}", y.name,
                                             shape_str(y.shape), y.elements(), x.name, shape_str(x.shape), x.elements()));
    return {y.shape};
  }
  op.dim = read_dim(attrs, rank);
  const std::int64_t size = x.shape[static_cast<std::size_t>(op.dim)];
  Shape s = x.shape;
  if (op.op == "slice") {
    attrs.only_keys({"dim", "start", "end", "step"});
    op.start = read_bound(attrs, "start", 0, size);
    op.end = read_bound(attrs, "end", size, size);
    op.step = attrs.get_int("step", 1, 1, size);
    if (op.end <= op.start)
      attrs.fail(fmt::format("slice [{}, {}) of dim {} is empty", op.start, op.end, op.dim));
    s[static_cast<std::size_t>(op.dim)] = (op.end - op.start + op.step - 1) / op.step;
    return {s};
  }
  attrs.only_keys({"dim", "sizes"});  // split
  JsonView sizes = attrs.at("sizes");
  sizes.expect_array();
  if (sizes.size() != op.outputs.size())
    sizes.fail(fmt::format("has {} entries, the op has {} outputs", sizes.size(), op.outputs.size()));
  std::vector<Shape> out;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    op.sizes.push_back(sizes.at(i).as_int(1, size));
    total += op.sizes.back();
    s[static_cast<std::size_t>(op.dim)] = op.sizes.back();
    out.push_back(s);
  }
  if (total != size) sizes.fail(fmt::format("sizes add up to {}, dim {} has size {}", total, op.dim, size));
  return out;
}

}  // namespace

void check_move_op(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  const OpTensor& first = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const auto rank = static_cast<std::int64_t>(first.shape.size());
  if (op.op == "reshape" || op.op == "slice" || op.op == "split") {
    std::vector<Shape> shapes = resize_shapes(g, op, v, attrs);
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[i])];
      if (out.shape != shapes[i])
        v.at("outputs").at(i).fail("shape mismatch for \"" + out.name + "\": expected " + shape_str(shapes[i]) + " from " +
                                   op.op + ", got " + shape_str(out.shape));
      if (out.dtype != first.dtype)
        v.at("outputs").at(i).fail(op.op + " moves data and cannot convert: \"" + out.name + "\" is " +
                                   std::string(dtype_name(out.dtype)) + ", \"" + first.name + "\" is " +
                                   std::string(dtype_name(first.dtype)));
    }
    return;
  }
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

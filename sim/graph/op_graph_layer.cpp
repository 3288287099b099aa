// Validation and shape rules of the transformer ops of the op graph: softmax, layernorm,
// rmsnorm, rope, embedding, kv_write, where, cast, pow, clamp, sigmoid and scalar operands.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

constexpr double kHuge = std::numeric_limits<double>::max();

const OpTensor& input(const OpGraph& g, const Op& op, std::size_t i) {
  return g.tensors[static_cast<std::size_t>(op.inputs[i])];
}

// attrs.dim in [-rank, rank), normalised.
int read_dim(const JsonView& attrs, std::int64_t rank, std::int64_t dflt) {
  std::int64_t d = attrs.get_int("dim", dflt);
  if (d < -rank || d >= rank)
    attrs.at("dim").fail(fmt::format("dim {} out of range for a rank-{} input, expected in [{}, {}]", d, rank, -rank, rank - 1));
  return static_cast<int>(d < 0 ? d + rank : d);
}

// Optional per-feature operand (weight, bias) of a norm over the last dim of size `d`.
void check_feature_operand(const OpGraph& g, const Op& op, std::size_t i, std::int64_t d, const JsonView& v) {
  const OpTensor& t = input(g, op, i);
  if (t.shape != Shape{d})
    v.at("inputs").at(i).fail(fmt::format("{} of {} must have shape [{}] (the normalised dim), got {}",
                                          i == 1 ? "weight" : "bias", op.op, d, shape_str(t.shape)));
}

// The expected output shape of `op`; fails on an operand that does not fit.
Shape infer(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v, const JsonView& attrs) {
  const OpTensor& x = input(g, op, 0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  switch (info.kind) {
    case OpKind::binary: {  // with attrs.scalar (one input)
      attrs.only_keys({"scalar"});
      op.scalar = attrs.at("scalar").as_number(-kHuge, kHuge);
      return x.shape;
    }
    case OpKind::unary: {
      if (op.op == "pow") {
        attrs.only_keys({"exponent"});
        op.params["exponent"] = attrs.at("exponent").as_number(-kHuge, kHuge);
      } else if (op.op == "clamp") {
        attrs.only_keys({"min", "max"});
        if (!attrs.has("min") && !attrs.has("max")) attrs.fail("clamp needs \"min\", \"max\" or both");
        if (attrs.has("min")) op.params["min"] = attrs.at("min").as_number(-kHuge, kHuge);
        if (attrs.has("max")) op.params["max"] = attrs.at("max").as_number(-kHuge, kHuge);
        if (attrs.has("min") && attrs.has("max") && op.params["min"] > op.params["max"])
          attrs.at("max").fail(fmt::format("max {} is below min {}", op.params["max"], op.params["min"]));
      } else {
        attrs.only_keys({});
      }
      return x.shape;
    }
    case OpKind::normalize: {
      if (op.op == "softmax") {
        attrs.only_keys({"dim"});
        op.dim = read_dim(attrs, rank, -1);
        return x.shape;
      }
      attrs.only_keys({"eps"});
      op.params["eps"] = attrs.has("eps") ? attrs.at("eps").as_number(0, 1) : (op.op == "layernorm" ? 1e-5 : 1e-6);
      op.dim = static_cast<int>(rank - 1);  // normalised over the last dim
      for (std::size_t i = 1; i < op.inputs.size(); ++i) check_feature_operand(g, op, i, x.shape.back(), v);
      return x.shape;
    }
    case OpKind::where: {
      attrs.only_keys({});
      const OpTensor& a = input(g, op, 1);
      const OpTensor& b = input(g, op, 2);
      if (a.dtype != b.dtype)
        v.at("inputs").at(2).fail(fmt::format("where's a and b share a dtype: \"{}\" is {}, \"{}\" is {}", a.name,
                                              dtype_name(a.dtype), b.name, dtype_name(b.dtype)));
      auto ab = broadcast_shapes(a.shape, b.shape);
      auto all = ab ? broadcast_shapes(x.shape, *ab) : std::nullopt;
      if (!all)
        v.at("inputs").fail("shapes " + shape_str(x.shape) + ", " + shape_str(a.shape) + " and " + shape_str(b.shape) +
                            " do not broadcast");
      return *all;
    }
    case OpKind::cast:
      attrs.only_keys({});
      return x.shape;
    case OpKind::rope: {
      attrs.only_keys({});
      if (rank < 2) v.at("inputs").at(0).fail("rope takes x [..., T, D] (rank 2 or more), got " + shape_str(x.shape));
      Shape td{x.shape[static_cast<std::size_t>(rank - 2)], x.shape.back()};
      if (x.shape.back() % 2 != 0)
        v.at("inputs").at(0).fail(fmt::format("rope rotates halves of the last dim, which must be even, got {}", x.shape.back()));
      for (std::size_t i = 1; i < 3; ++i)
        if (input(g, op, i).shape != td)
          v.at("inputs").at(i).fail(fmt::format("{} of rope must have shape {} ([T, D] of x), got {}", i == 1 ? "cos" : "sin",
                                                shape_str(td), shape_str(input(g, op, i).shape)));
      return x.shape;
    }
    case OpKind::embedding: {
      attrs.only_keys({});
      const OpTensor& ids = input(g, op, 1);
      if (rank != 2) v.at("inputs").at(0).fail("embedding's table is [V, D], got " + shape_str(x.shape));
      if (ids.dtype != Dtype::int32)
        v.at("inputs").at(1).fail(fmt::format("embedding's ids are int32, \"{}\" is {}", ids.name, dtype_name(ids.dtype)));
      Shape out = ids.shape;
      out.push_back(x.shape[1]);
      const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
      if (y.dtype != x.dtype)
        v.at("outputs").at(0).fail(fmt::format("embedding copies rows of the table: \"{}\" is {}, the table is {}", y.name,
                                               dtype_name(y.dtype), dtype_name(x.dtype)));
      return out;
    }
    case OpKind::kv_write: {
      attrs.only_keys({"position"});
      const OpTensor& n = input(g, op, 1);
      if (rank < 2) v.at("inputs").at(0).fail("kv_write's cache is [..., Lmax, D], got " + shape_str(x.shape));
      Shape a = x.shape, b = n.shape;
      bool ok = a.size() == b.size();
      if (ok) a[a.size() - 2] = b[b.size() - 2] = 0;
      if (!ok || a != b)
        v.at("inputs").at(1).fail("new rows " + shape_str(n.shape) + " must match the cache " + shape_str(x.shape) +
                                  " in every dim but the row dim (-2)");
      if (n.dtype != x.dtype)
        v.at("inputs").at(1).fail(fmt::format("new rows share the cache's dtype: \"{}\" is {}, \"{}\" is {}", n.name,
                                              dtype_name(n.dtype), x.name, dtype_name(x.dtype)));
      const std::int64_t lmax = x.shape[static_cast<std::size_t>(rank - 2)], t = n.shape[static_cast<std::size_t>(rank - 2)];
      if (t > lmax)
        v.at("inputs").at(1).fail(fmt::format("{} new rows do not fit the cache's {} (Lmax, dim -2 of {})", t, lmax,
                                              shape_str(x.shape)));
      op.position = attrs.get_int("position", 0, 0, lmax - t);
      const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
      if (y.dtype != x.dtype)
        v.at("outputs").at(0).fail(fmt::format("kv_write updates the cache in place: \"{}\" is {}, the cache is {}", y.name,
                                               dtype_name(y.dtype), dtype_name(x.dtype)));
      return x.shape;
    }
    default:
      return {};
  }
}

}  // namespace

bool check_layer_op(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v, const JsonView& attrs) {
  const bool scalar = info.kind == OpKind::binary && op.inputs.size() == 1;
  const bool unary_attrs = info.kind == OpKind::unary && (op.op == "pow" || op.op == "clamp" || op.op == "sigmoid");
  if (info.kind == OpKind::binary && op.inputs.size() == 2 && attrs.has("scalar"))
    attrs.at("scalar").fail("a scalar operand replaces the second input: give " + op.op + " one input");
  if (!scalar && !unary_attrs && info.kind != OpKind::normalize && info.kind != OpKind::where &&
      info.kind != OpKind::cast && info.kind != OpKind::rope && info.kind != OpKind::embedding &&
      info.kind != OpKind::kv_write)
    return false;
  Shape expect = infer(g, op, info, v, attrs);
  const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (out.shape != expect)
    v.at("outputs").at(0).fail("shape mismatch for \"" + out.name + "\": expected " + shape_str(expect) + " from " +
                               info.name + ", got " + shape_str(out.shape));
  return true;
}

}  // namespace dfsim

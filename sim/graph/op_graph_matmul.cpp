// Validation of the matmul family of the op graph: matmul (batch dims broadcast as in
// torch.matmul, transpose_a/b), linear (x [..., K], weight [N, K], optional bias [N]) and sdpa
// (q [B,Hq,Lq,D], k and v [B,Hkv,Lk,D], optional mask [Lq,Lk]; Hq a multiple of Hkv).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

const OpTensor& input(const OpGraph& g, const Op& op, std::size_t i) {
  return g.tensors[static_cast<std::size_t>(op.inputs[i])];
}

// Every input has the first input's dtype.
void check_dtypes(const OpGraph& g, const Op& op, const JsonView& v) {
  const OpTensor& a = input(g, op, 0);
  for (std::size_t i = 1; i < op.inputs.size(); ++i) {
    const OpTensor& t = input(g, op, i);
    if (t.dtype != a.dtype)
      v.at("inputs").at(i).fail("operand dtypes differ: \"" + a.name + "\" is " + std::string(dtype_name(a.dtype)) +
                                ", \"" + t.name + "\" is " + std::string(dtype_name(t.dtype)));
  }
}

void check_count(const Op& op, const JsonView& v, std::size_t least, std::size_t most) {
  if (op.inputs.size() < least || op.inputs.size() > most)
    v.at("inputs").fail(fmt::format("{} takes {} to {} inputs, got {}", op.op, least, most, op.inputs.size()));
}

// attrs.work_division {m, n, k}: the alias of compile.split {M, N, K}.
void read_work_division(const OpGraph& g, Op& op, const JsonView& attrs) {
  if (!attrs.has("work_division")) return;
  JsonView w = attrs.at("work_division");
  w.expect_object();
  w.only_keys({"m", "n", "k"});
  const Shape& a = input(g, op, 0).shape;
  const Shape& b = input(g, op, 1).shape;
  // Each part gets at least one row, column or k index (and parts are cores).
  auto most = [](const Shape& s, std::size_t from_end) {
    return std::min<std::int64_t>(s.size() >= 2 ? s[s.size() - from_end] : 1, 1 << 20);
  };
  WorkDivision wd;
  wd.m = static_cast<int>(w.get_int("m", 1, 1, most(a, op.transpose_a ? 1 : 2)));
  wd.n = static_cast<int>(w.get_int("n", 1, 1, most(b, op.transpose_b ? 2 : 1)));
  wd.k = static_cast<int>(w.get_int("k", 1, 1, most(a, op.transpose_a ? 2 : 1)));
  op.work_division = wd;
  if (op.split.empty()) op.split = {{"M", wd.m}, {"N", wd.n}, {"K", wd.k}};
}

Shape check_matmul(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  attrs.only_keys({"work_division", "transpose_a", "transpose_b"});
  op.transpose_a = attrs.get_bool("transpose_a", false);
  op.transpose_b = attrs.get_bool("transpose_b", false);
  check_dtypes(g, op, v);
  Shape a = input(g, op, 0).shape, b = input(g, op, 1).shape;
  if (a.size() < 2 || b.size() < 2)
    v.at("inputs").fail("matmul takes operands of rank 2 or more ([..., M, K] @ [..., K, N]), got " + shape_str(a) +
                        " @ " + shape_str(b));
  if (op.transpose_a) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (op.transpose_b) std::swap(b[b.size() - 1], b[b.size() - 2]);
  if (a.back() != b[b.size() - 2])
    v.at("inputs").fail("matmul inner dimensions differ: " + shape_str(a) + " @ " + shape_str(b) +
                        (op.transpose_a || op.transpose_b ? " (after transpose_a/transpose_b)" : ""));
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  Shape batch = ba.empty() ? bb : bb.empty() ? ba : Shape{};
  if (!ba.empty() && !bb.empty()) {
    auto s = broadcast_shapes(ba, bb);
    if (!s) v.at("inputs").fail("matmul batch dims " + shape_str(ba) + " and " + shape_str(bb) + " do not broadcast");
    batch = *s;
  }
  read_work_division(g, op, attrs);
  batch.push_back(a[a.size() - 2]);
  batch.push_back(b.back());
  return batch;
}

Shape check_linear(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  attrs.only_keys({});
  check_count(op, v, 2, 3);
  check_dtypes(g, op, v);
  op.transpose_b = true;
  const Shape& x = input(g, op, 0).shape;
  const Shape& w = input(g, op, 1).shape;
  if (w.size() != 2) v.at("inputs").at(1).fail("linear weight is [N, K], got " + shape_str(w));
  if (x.back() != w[1])
    v.at("inputs").fail("linear: x " + shape_str(x) + " has " + std::to_string(x.back()) +
                        " features, weight " + shape_str(w) + " expects " + std::to_string(w[1]));
  if (op.inputs.size() == 3 && input(g, op, 2).shape != Shape{w[0]})
    v.at("inputs").at(2).fail("linear bias is [" + std::to_string(w[0]) + "], got " + shape_str(input(g, op, 2).shape));
  Shape out = x;
  out.back() = w[0];
  return out;
}

Shape check_sdpa(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  attrs.only_keys({"causal", "causal_offset", "scale"});
  check_count(op, v, 3, 4);
  check_dtypes(g, op, v);
  op.causal = attrs.get_bool("causal", false);
  if (attrs.has("scale")) op.scale = attrs.at("scale").as_number(1e-30, 1e30);
  const Shape &q = input(g, op, 0).shape, &k = input(g, op, 1).shape, &vv = input(g, op, 2).shape;
  const char* names[] = {"q [B, Hq, Lq, D]", "k [B, Hkv, Lk, D]", "v [B, Hkv, Lk, D]"};
  for (std::size_t i = 0; i < 3; ++i)
    if (input(g, op, i).shape.size() != 4)
      v.at("inputs").at(i).fail(std::string("sdpa takes ") + names[i] + ", got " + shape_str(input(g, op, i).shape));
  if (k[0] != q[0] || k[3] != q[3])
    v.at("inputs").at(1).fail("k " + shape_str(k) + " must match q " + shape_str(q) + " in B and D");
  if (vv != k) v.at("inputs").at(2).fail("v " + shape_str(vv) + " must have k's shape " + shape_str(k));
  if (q[1] % k[1] != 0)
    v.at("inputs").at(1).fail(fmt::format("query heads {} are not a multiple of key/value heads {}", q[1], k[1]));
  if (op.inputs.size() == 4 && input(g, op, 3).shape != Shape{q[2], k[2]})
    v.at("inputs").at(3).fail("mask is [Lq, Lk] = " + shape_str({q[2], k[2]}) + ", got " +
                              shape_str(input(g, op, 3).shape));
  // A chunk of queries after causal_offset cached keys: query i sees keys 0..causal_offset + i
  // (bottom-right aligned when causal_offset = Lk - Lq; 0 is torch's top-left is_causal).
  if (attrs.has("causal_offset")) {
    if (!op.causal) attrs.at("causal_offset").fail("causal_offset applies to a causal mask: set \"causal\": true");
    op.causal_offset = attrs.get_int("causal_offset", 0, 0, k[2] - 1);
  }
  return q;
}

}  // namespace

void check_matmul_family_op(const OpGraph& g, Op& op, const JsonView& v, const JsonView& attrs) {
  Shape expect = op.op == "linear" ? check_linear(g, op, v, attrs)
                 : op.op == "sdpa" ? check_sdpa(g, op, v, attrs)
                                   : check_matmul(g, op, v, attrs);
  const OpTensor& out = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (out.shape != expect)
    v.at("outputs").at(0).fail("shape mismatch for \"" + out.name + "\": expected " + shape_str(expect) + " from " +
                               op.op + ", got " + shape_str(out.shape));
}

}  // namespace dfsim

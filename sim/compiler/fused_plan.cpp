// Plan of a fused kernel (see fused_plan.h): slots and the SFP steps of each op, with the
// norms expanded into their passes (softmax: amax, sub, exp, sum, div).
#include "sim/compiler/fused_plan.h"

#include <algorithm>
#include <map>

namespace dfsim {

namespace {

class Planner {
 public:
  Planner(const OpGraph& g, const TensorUses& uses, FusedPlan& p) : g_(g), uses_(uses), p_(p) {}

  void add(const Op& op, const PointwisePlan& pp) {
    std::vector<int> in;
    for (std::size_t i = 0; i < op.inputs.size(); ++i) in.push_back(tensor_slot(op.inputs[i], pp.in[i]));
    const int out = tensor_slot(op.outputs[0], pp.out);
    const OpKind kind = find_op_info(op.op)->kind;
    const std::string& y = g_.tensors[static_cast<std::size_t>(op.outputs[0])].name;
    if (kind == OpKind::reduce) return step(op.op, op.op, {in[0]}, out, in[0]);
    if (kind == OpKind::cast) return step("cast", "convert", in, out, out);
    if (kind == OpKind::rope) {  // x * cos + rotate_half(x) * sin (the rotation is the fma's read order)
      int a = temp(y + ".xcos", in[0], 1);
      step("rope.mul", "mul", {in[0], in[1]}, a, a);
      return step("rope.fma", "fma", {in[0], in[2], a}, out, out);
    }
    if (kind != OpKind::normalize) return step(op.op, op.op, in, out, out);
    const std::int64_t d = g_.tensors[static_cast<std::size_t>(op.inputs[0])].shape[static_cast<std::size_t>(op.dim)];
    const int x = in[0];
    if (op.op == "softmax") {
      int m = temp(y + ".max", x, d), t = temp(y + ".shifted", x, 1), e = temp(y + ".exp", x, 1), s = temp(y + ".sum", x, d);
      step("softmax.amax", "amax", {x}, m, x);
      step("softmax.sub", "sub", {x, m}, t, t);
      step("softmax.exp", "exp", {t}, e, e);
      step("softmax.sum", "sum", {e}, s, e);
      return step("softmax.div", "div", {e, s}, out, out);
    }
    int src = x;
    std::string n = op.op + ".";
    if (op.op == "layernorm") {  // centre first
      int mu = temp(y + ".mean", x, d), xc = temp(y + ".centred", x, 1);
      step(n + "mean", "mean", {x}, mu, x);
      step(n + "sub", "sub", {x, mu}, xc, xc);
      src = xc;
    }
    int sq = temp(y + ".sq", x, 1), var = temp(y + ".var", x, d), rs = temp(y + ".rstd", x, d);
    step(n + "square", "mul", {src, src}, sq, sq);
    step(n + "mean_sq", "mean", {sq}, var, sq);
    step(n + "rsqrt", "rsqrt", {var}, rs, rs);  // + eps folded into the rsqrt pass
    if (in.size() == 1) return step(n + "scale", "mul", {src, rs}, out, out);
    int xn = temp(y + ".normed", x, 1);
    step(n + "scale", "mul", {src, rs}, xn, xn);
    if (in.size() == 2) return step(n + "weight", "mul", {xn, in[1]}, out, out);
    step(n + "affine", "fma", {xn, in[1], in[2]}, out, out);
  }

  // Marks the tensors used outside the kernel (graph outputs, later consumers) as stored.
  void finish() {
    for (FusedSlot& s : p_.slots) {
      if (s.tensor < 0 || s.external_in) continue;
      bool out = uses_.is_output(s.tensor);
      for (int r : uses_.readers(s.tensor))
        out = out || std::find(p_.ops.begin(), p_.ops.end(), r) == p_.ops.end();
      s.stored = out;
    }
  }

 private:
  int tensor_slot(int t, const OperandSlicer& sl) {
    auto [it, fresh] = by_tensor_.try_emplace(t, static_cast<int>(p_.slots.size()));
    if (!fresh) return it->second;
    FusedSlot s;
    s.tensor = t;
    s.name = g_.tensors[static_cast<std::size_t>(t)].name;
    s.slicer = sl;
    s.dtype = sl.tensor->dtype;
    s.unit = sl.unit_bytes();
    s.fixed = sl.fixed_bytes();
    s.unit_elems = sl.follows_split() ? sl.slice(0, 1).elements : 0;
    s.fixed_elems = sl.follows_split() ? 0 : sl.slice(0, 1).elements;
    // Not produced by an op of the kernel so far: read from outside.
    s.external_in = true;
    for (int oi : p_.ops) {
      const Op& op = g_.ops[static_cast<std::size_t>(oi)];
      if (op.outputs[0] == t) s.external_in = false;
    }
    p_.slots.push_back(s);
    return it->second;
  }

  // A temporary shaped like slot `like` with its reduced dim of size `reduced` folded to 1.
  int temp(const std::string& name, int like, std::int64_t reduced) {
    FusedSlot s = p_.slots[static_cast<std::size_t>(like)];
    s.name = name;
    s.tensor = -1;
    s.external_in = s.stored = false;
    const auto r = static_cast<std::uint64_t>(reduced);
    s.unit_elems /= r;
    s.fixed_elems /= r;
    s.unit = dtype_bytes(s.dtype, s.unit_elems);
    s.fixed = dtype_bytes(s.dtype, s.fixed_elems);
    p_.slots.push_back(s);
    return static_cast<int>(p_.slots.size()) - 1;
  }

  void step(const std::string& name, const std::string& op, std::vector<int> reads, int write, int elements_of) {
    p_.steps.push_back(FusedStep{name, op, std::move(reads), write, elements_of});
  }

  const OpGraph& g_;
  const TensorUses& uses_;
  FusedPlan& p_;
  std::map<int, int> by_tensor_;
};

}  // namespace

std::uint64_t FusedPlan::unit_bytes() const {
  std::uint64_t b = 0;
  for (const FusedSlot& s : slots)  // a broadcast operand takes its whole slice once (its fixed bytes)
    b += s.external_in && !s.slicer.follows_split() ? s.fixed : s.unit + s.fixed;
  return b;
}

FusedPlan plan_fused(const OpGraph& g, const TensorUses& uses, const std::vector<int>& ops, int cores) {
  FusedPlan p;
  Planner planner(g, uses, p);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = g.ops[static_cast<std::size_t>(ops[i])];
    PointwisePlan pp = plan_pointwise(g, op, cores);
    if (i == 0) {
      p.extent = pp.extent;
      p.cores = pp.cores;
      p.out_split_dim = std::max(pp.out.dim, 0);
    }
    p.ops.push_back(ops[i]);
    planner.add(op, pp);
  }
  planner.finish();
  return p;
}

}  // namespace dfsim

// Validation and shape rules of the ops between cards: the collectives (all_reduce, all_gather,
// reduce_scatter, broadcast) and the host transfers (from_host, to_host). An op graph with
// compile.cards = N runs every op on each of its N cards (SPMD); these are the ops that cross.
#include <fmt/format.h>

#include <algorithm>

#include "models/pcie/collective_schedule.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

bool check_card_op(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v, const JsonView& attrs) {
  if (info.kind != OpKind::collective && info.kind != OpKind::host) return false;
  const bool collective = info.kind == OpKind::collective;
  const bool along_dim = op.op == "all_gather" || op.op == "reduce_scatter";
  if (along_dim) attrs.only_keys({"group", "algorithm", "root", "dim"});
  else if (collective) attrs.only_keys({"group", "algorithm", "root"});
  else attrs.only_keys({"group"});
  const int cards = g.compile.cards;
  if (attrs.has("group")) {
    JsonView gv = attrs.at("group");
    op.group = gv.as_distinct_ints(0, 63, "card");
    for (std::size_t i = 0; i < op.group.size(); ++i)
      if (op.group[i] >= cards)
        gv.at(i).fail(fmt::format("card {} outside the graph's {} card(s) (compile.cards)", op.group[i], cards));
  }
  const int n = op.group.empty() ? cards : static_cast<int>(op.group.size());
  if (collective) {
    op.algorithm = attrs.get_string("algorithm", "ring");
    if (op.algorithm != "ring" && op.algorithm != "tree") attrs.at("algorithm").fail("expected \"ring\" or \"tree\"");
    std::string why = collective_unsupported(op.op, op.algorithm, n);
    if (!why.empty()) attrs.at("algorithm").fail(why);
    op.root = static_cast<int>(attrs.get_int("root", 0, 0, n - 1));
  }
  const OpTensor& x = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& y = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  if (y.dtype != x.dtype)
    v.at("outputs").at(0).fail(fmt::format("{} keeps the dtype: \"{}\" is {}, \"{}\" is {}", op.op, y.name,
                                           dtype_name(y.dtype), x.name, dtype_name(x.dtype)));
  Shape expect = x.shape;
  if (along_dim) {
    const auto rank = static_cast<std::int64_t>(x.shape.size());
    std::int64_t d = attrs.get_int("dim", 0);
    if (d < -rank || d >= rank)
      attrs.at("dim").fail(fmt::format("dim {} out of range for a rank-{} input", d, rank));
    op.dim = static_cast<int>(d < 0 ? d + rank : d);
    auto& e = expect[static_cast<std::size_t>(op.dim)];
    if (op.op == "all_gather") {
      e *= n;
    } else {
      if (e % n != 0)
        v.at("inputs").at(0).fail(fmt::format("reduce_scatter over {} cards needs dim {} ({}) divisible by {}", n, op.dim, e, n));
      e /= n;
    }
  }
  if (y.shape != expect)
    v.at("outputs").at(0).fail("shape mismatch for \"" + y.name + "\": expected " + shape_str(expect) + " from " + op.op +
                               " over " + std::to_string(n) + " card(s), got " + shape_str(y.shape));
  return true;
}

}  // namespace dfsim

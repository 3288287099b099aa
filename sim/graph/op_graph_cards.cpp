// Validation and shape rules of the ops between cards: the collectives (all_reduce, all_gather,
// reduce_scatter, broadcast) and the host transfers (from_host, to_host). An op graph with
// compile.cards = N runs every op on each of its N cards (SPMD); these are the ops that cross.
#include <fmt/format.h>

#include <algorithm>

#include "models/pcie/collective_schedule.h"
#include "sim/common/names.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

bool check_card_op(const OpGraph& g, Op& op, const OpInfo& info, const JsonView& v, const JsonView& attrs) {
  if (!crosses_cards(info.kind)) return false;
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

namespace {
// Where a tensor is: a bit per card, and the host.
struct Placement {
  std::uint64_t cards = 0;
  bool host = false;
};

std::string cards_str(std::uint64_t cards) {
  std::vector<std::string> list;
  for (int c = 0; c < 64; ++c)
    if (cards >> c & 1) list.push_back(std::to_string(c));
  return list.empty() ? "no card" : (list.size() == 1 ? "card " : "cards ") + join_for_message(list, ", ");
}
}  // namespace

void check_card_placement(const OpGraph& g, const JsonView& root) {
  if (g.compile.cards <= 1) return;  // one card: every tensor is on it (a group is at most card 0)
  const std::uint64_t all = g.compile.cards >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << g.compile.cards) - 1;
  std::vector<Placement> at(g.tensors.size(), Placement{all, true});  // graph inputs: everywhere
  for (int i : g.order) {
    const Op& op = g.ops[static_cast<std::size_t>(i)];
    const OpInfo* info = find_op_info(op.op);
    const bool crossing = info && crosses_cards(info->kind);
    std::uint64_t group = 0;
    for (int c : op.group) group |= std::uint64_t(1) << c;
    if (op.group.empty()) group = all;
    // from_host reads the host's copy; every other op reads on each card it runs on: the
    // group's cards, or (an op that does not cross) every card.
    const bool from_host = op.op == "from_host";
    const std::uint64_t runs_on = crossing ? group : all;
    for (std::size_t j = 0; j < op.inputs.size(); ++j) {
      const Placement& p = at[static_cast<std::size_t>(op.inputs[j])];
      const std::string& name = g.tensors[static_cast<std::size_t>(op.inputs[j])].name;
      if (from_host ? !p.host : (p.cards & runs_on) != runs_on)
        root.at("ops").at(static_cast<std::size_t>(i)).at("inputs").at(j).fail(fmt::format(
            "tensor \"{}\" is {}, but {} reads it {}", name,
            p.cards == 0 ? "only on the host" : "only on " + cards_str(p.cards) + (p.host ? " and the host" : ""), op.op,
            from_host ? "from the host" : "on " + cards_str(runs_on)));
    }
    Placement out = crossing ? Placement{op.op == "to_host" ? 0 : group, op.op == "to_host"} : Placement{all, false};
    for (int t : op.outputs) at[static_cast<std::size_t>(t)] = out;
  }
}

}  // namespace dfsim

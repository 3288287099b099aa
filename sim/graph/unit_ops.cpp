// Allowed ops per unit kind (see docs/graph-format.md, "Units and ops").
#include "sim/graph/unit_ops.h"

#include <algorithm>

namespace dfsim {

namespace {

// SFP ops and the function class that times them (docs/models.md, "SFP").
const std::vector<std::pair<std::string, std::string>>& sfp_table() {
  static const std::vector<std::pair<std::string, std::string>> t = {
      {"add", "add"},   {"sub", "add"},        {"mul", "add"},   {"neg", "add"},   {"copy", "add"},
      {"abs", "add"},   {"fma", "fma"},        {"max", "max"},   {"min", "max"},   {"relu", "max"},
      {"exp", "exp"},   {"log", "log"},        {"sqrt", "rsqrt"}, {"rsqrt", "rsqrt"}, {"div", "div"},
      {"reciprocal", "div"}, {"gelu", "gelu"}, {"silu", "gelu"}, {"tanh", "gelu"}, {"convert", "convert"},
      {"sum", "reduce"}, {"mean", "reduce"},   {"amax", "reduce"}, {"sigmoid", "gelu"}, {"pow", "exp"},
      {"clamp", "max"}, {"where", "max"}};
  return t;
}

}  // namespace

const std::vector<std::string>& unit_ops(UnitKind u) {
  static const std::vector<std::string> pt = {"matmul"};
  static const std::vector<std::string> sfp = [] {
    std::vector<std::string> v;
    for (const auto& [op, cls] : sfp_table()) v.push_back(op);
    return v;
  }();
  static const std::vector<std::string> dma = {"load", "store", "copy"};
  static const std::vector<std::string> ring = {"copy"};
  static const std::vector<std::string> link = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                                "from_host", "to_host"};
  switch (u) {
    case UnitKind::pt: return pt;
    case UnitKind::sfp: return sfp;
    case UnitKind::dma: return dma;
    case UnitKind::ring: return ring;
    case UnitKind::link: return link;
  }
  return sfp;
}

const std::string& sfp_op_class(const std::string& op) {
  static const std::string fallback = "add";
  for (const auto& [name, cls] : sfp_table())
    if (name == op) return cls;
  return fallback;
}

bool unit_accepts(UnitKind u, const std::string& op) {
  const auto& ops = unit_ops(u);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace dfsim

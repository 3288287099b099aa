// Allowed ops per unit kind (see docs/graph-format.md, "Units and ops").
#include "sim/graph/unit_ops.h"

#include <algorithm>

namespace dfsim {

const std::vector<std::string>& unit_ops(UnitKind u) {
  static const std::vector<std::string> pt = {"matmul"};
  static const std::vector<std::string> sfp = {"add", "sub", "mul", "div", "max",
                                               "neg", "copy", "exp", "sum"};
  static const std::vector<std::string> dma = {"load", "store", "copy"};
  static const std::vector<std::string> ring = {"copy"};
  switch (u) {
    case UnitKind::pt: return pt;
    case UnitKind::sfp: return sfp;
    case UnitKind::dma: return dma;
    case UnitKind::ring: return ring;
  }
  return sfp;
}

bool unit_accepts(UnitKind u, const std::string& op) {
  const auto& ops = unit_ops(u);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace dfsim

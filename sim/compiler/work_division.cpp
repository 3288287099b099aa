// Work division pass (see work_division.h).
#include "sim/compiler/work_division.h"

namespace dfsim {

std::vector<CoreGroup> divide_work(std::int64_t extent, int cores) {
  std::int64_t share = (extent + cores - 1) / cores;
  std::int64_t full = extent / share;
  std::int64_t rem = extent - full * share;
  std::vector<CoreGroup> groups;
  groups.push_back(CoreGroup{0, static_cast<int>(full), share, 0});
  if (rem > 0) groups.push_back(CoreGroup{static_cast<int>(full), 1, rem, full * share});
  return groups;
}

}  // namespace dfsim

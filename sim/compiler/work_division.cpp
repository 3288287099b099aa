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

CoreGrid choose_matmul_grid(std::int64_t m, std::int64_t n, std::int64_t k, int cores) {
  CoreGrid best;
  std::int64_t best_used = 0, best_traffic = 0;
  for (int rows = 1; rows <= cores; ++rows) {
    int cols = cores / rows;
    if (rows > m || cols > n) continue;
    // Cores that get work once each dimension is divided in whole shares.
    std::int64_t mshare = (m + rows - 1) / rows, nshare = (n + cols - 1) / cols;
    std::int64_t used = ((m + mshare - 1) / mshare) * ((n + nshare - 1) / nshare);
    std::int64_t traffic = k * (cols * m + rows * n);
    if (used > best_used || (used == best_used && traffic < best_traffic)) {
      best = CoreGrid{rows, cols};
      best_used = used;
      best_traffic = traffic;
    }
  }
  return best;
}

}  // namespace dfsim

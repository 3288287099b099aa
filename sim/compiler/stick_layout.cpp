// The card's stick layout of one tensor (see stick_layout.h).
#include "sim/compiler/stick_layout.h"

#include <algorithm>
#include <utility>

namespace dfsim {

std::uint64_t StickLayout::device(std::uint64_t x) const {
  const std::uint64_t row = x / row_bytes, within = x % row_bytes;
  const std::uint64_t i0 = row / middle, mid = row % middle;
  const std::uint64_t s = within / stick, lane = within % stick;
  return ((mid * (row_bytes / stick) + s) * first + i0) * stick + lane;
}

std::vector<DeviceRuns> device_runs(const StickLayout& l, std::uint64_t offset, std::uint64_t bytes, std::uint64_t rows,
                                    std::uint64_t stride) {
  // Every piece of the pattern within one stick, at its device byte.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::uint64_t x = offset + r * stride, end = x + bytes;
    while (x < end) {
      const std::uint64_t n = std::min(end, (x / l.stick + 1) * l.stick) - x;
      pieces.emplace_back(l.device(x), n);
      x += n;
    }
  }
  std::sort(pieces.begin(), pieces.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
  for (const auto& [at, n] : pieces) {
    if (!merged.empty() && merged.back().first + merged.back().second == at) merged.back().second += n;
    else merged.emplace_back(at, n);
  }
  // Equal runs at a constant stride become one pattern.
  std::vector<DeviceRuns> out;
  for (const auto& [at, n] : merged) {
    if (!out.empty()) {
      DeviceRuns& g = out.back();
      const std::uint64_t step = at - g.offset;
      if (g.bytes == n && g.rows == 1) {
        g.rows = 2;
        g.stride = step;
        continue;
      }
      if (g.bytes == n && g.rows > 1 && at == g.offset + g.rows * g.stride) {
        ++g.rows;
        continue;
      }
    }
    out.push_back(DeviceRuns{at, n, 1, 0});
  }
  return out;
}

RunCount count_runs(const std::vector<DeviceRuns>& d) {
  RunCount n;
  for (const DeviceRuns& r : d) {
    n.runs += r.rows;
    n.bytes += r.rows * r.bytes;
  }
  return n;
}

}  // namespace dfsim

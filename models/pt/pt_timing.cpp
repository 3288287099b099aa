#include "models/pt/pt_timing.h"

namespace dfsim {

namespace {
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
}  // namespace

std::uint64_t pt_matmul_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k, int rows, int cols,
                               int simd, int corelets) {
  if (m == 0 || n == 0 || k == 0) return 0;
  std::uint64_t m_share = ceil_div(m, corelets);  // the busiest corelet's rows
  std::uint64_t tiles = ceil_div(m_share, rows) * ceil_div(n, cols);
  std::uint64_t steps = ceil_div(k, simd);
  return tiles * steps + static_cast<std::uint64_t>(rows + cols - 2);
}

}  // namespace dfsim

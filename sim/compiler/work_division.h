#pragma once
// Work division pass: splits one dimension of an op over cores.
#include <cstdint>
#include <vector>

namespace dfsim {

// Cores [first, first+count) each take `share` consecutive units of the split dimension;
// core c starts at unit base + (c - first) * share.
struct CoreGroup {
  int first = 0;
  int count = 1;
  std::int64_t share = 0;
  std::int64_t base = 0;
  std::int64_t start(int core) const { return base + (core - first) * share; }
};

// Divides `extent` units over at most `cores` cores: share = ceil(extent / cores); the cores
// that get a full share form one group (an SPMD template), a smaller remainder goes to one
// more core (an explicit task). Fewer cores are used when extent < cores.
std::vector<CoreGroup> divide_work(std::int64_t extent, int cores);

// A grid of rows x cols cores for a 2-D output [M, N]: core r * cols + c computes block (r, c).
struct CoreGrid {
  int rows = 1, cols = 1;
};

// The grid for an [M, K] @ [K, N] matmul on at most `cores` cores: as many cores as the
// shape can use, then the least off-chip traffic. Block (r, c) reads an M/rows slice of A
// and an N/cols slice of B, so all blocks together read K * (cols * M + rows * N) elements.
CoreGrid choose_matmul_grid(std::int64_t m, std::int64_t n, std::int64_t k, int cores);

}  // namespace dfsim

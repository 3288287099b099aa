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

}  // namespace dfsim

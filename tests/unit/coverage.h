#pragma once
// Test helpers shared by the compiler tests: how often each byte of a buffer is touched.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/graph/kernel_graph.h"

namespace dfsim::testing {

// How many times the instances write (write=true) or read each byte of buffer `name`.
inline std::vector<int> coverage(const KernelGraph& g, const ExpandedGraph& eg, const std::string& name, bool write) {
  int b = g.find_buffer(name);
  std::vector<int> hits(g.buffers[static_cast<std::size_t>(b)].bytes, 0);
  for (const auto& inst : eg.instances)
    for (const Region& r : write ? writes_of(g, inst) : reads_of(g, inst))
      if (r.buffer == b)
        for (std::uint64_t row = 0; row < r.rows; ++row)
          for (std::uint64_t x = 0; x < r.bytes; ++x) ++hits[r.offset + row * r.stride + x];
  return hits;
}

inline bool all_equal(const std::vector<int>& v, int n) {
  return std::all_of(v.begin(), v.end(), [n](int x) { return x == n; });
}

}  // namespace dfsim::testing

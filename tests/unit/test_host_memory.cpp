// How dfsim uses host memory: large blocks on transparent huge pages (sim/common/huge_pages.cpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/common/huge_pages.h"

namespace {

// The kernel's transparent huge page mode: "always", "madvise" or "never" (the bracketed word).
std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto a = s.find('['), b = s.find(']');
  return a == std::string::npos || b == std::string::npos ? "never" : s.substr(a + 1, b - a - 1);
}

// AnonHugePages (kB) summed over this process's mappings that overlap [p, p + n): the advice
// splits a block's mapping in three (its unaligned ends and the huge-page-aligned inside).
long anon_huge_kb(const void* p, std::size_t n) {
  std::ifstream f("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = a + n;
  std::string line;
  bool in = false;
  long kb = 0;
  while (std::getline(f, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in = lo < b && a < hi;
      continue;
    }
    if (in && line.rfind("AnonHugePages:", 0) == 0) kb += std::stol(line.substr(14));
  }
  return kb;
}

}  // namespace

TEST_CASE("host memory: a large block is backed by huge pages where the kernel offers them", "[host]") {
  if (!dfsim::huge_page_advice_built_in() || thp_mode() == "never") {
    SUCCEED("no huge page advice in this build or on this kernel");
    return;
  }
  // 64 MiB holds 31 or 32 aligned huge pages; touching every byte faults them in.
  std::vector<char> big(std::size_t{64} << 20);
  std::memset(big.data(), 1, big.size());
  const long kb = anon_huge_kb(big.data(), big.size());
  INFO("THP mode " << thp_mode() << ", AnonHugePages " << kb << " kB");
  // At least half of it: the kernel may fall back to small pages for a few when memory is fragmented.
  CHECK(kb >= 32 * 1024);
}

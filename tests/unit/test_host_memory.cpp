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

// What /proc/self/smaps says of this process's mappings that overlap [p, p + n): whether one
// carries the huge page advice (VmFlags "hg"), and their AnonHugePages (kB). The advice splits
// a block's mapping in three: its unaligned ends and the huge-page-aligned inside.
struct Smaps {
  bool advised = false;
  long huge_kb = 0;
};
Smaps smaps_of(const void* p, std::size_t n) {
  std::ifstream f("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = a + n;
  Smaps s;
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in = lo < b && a < hi;
      continue;
    }
    if (!in) continue;
    if (line.rfind("AnonHugePages:", 0) == 0) s.huge_kb += std::stol(line.substr(14));
    if (line.rfind("VmFlags:", 0) == 0 && (line + " ").find(" hg ") != std::string::npos) s.advised = true;
  }
  return s;
}

}  // namespace

TEST_CASE("host memory: a large block carries the huge page advice, a small one does not", "[host]") {
  if (!dfsim::huge_page_advice_built_in()) {
    SUCCEED("no huge page advice in sanitizer builds");
    return;
  }
  // 64 MiB holds 31 or 32 aligned huge pages. The advice is the VMA's flag, whatever pages
  // the kernel then finds (AnonHugePages, shown on failure, depends on its mode and memory).
  std::vector<char> big(std::size_t{64} << 20);
  std::memset(big.data(), 1, big.size());
  const Smaps s = smaps_of(big.data(), big.size());
  INFO("AnonHugePages " << s.huge_kb << " kB");
  CHECK(s.advised);
  // Under 4 MiB nothing is advised (it may be reused heap memory).
  std::vector<char> small(std::size_t{1} << 20);
  CHECK_FALSE(smaps_of(small.data(), small.size()).advised);
}

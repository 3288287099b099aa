#pragma once
// mix64: the splitmix64 output function, a bijection of 64-bit words whose output bits each
// depend on every input bit (used by the serve RNG and the LPDDR5 channel hash).
#include <cstdint>

namespace dfsim {

constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace dfsim

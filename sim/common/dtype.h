#pragma once
// Element types of tensors and buffers, with their sizes in bits.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dfsim {

enum class Dtype { fp16, fp8, int8, int4, fp32, int32 };

inline constexpr Dtype kAllDtypes[] = {Dtype::fp16, Dtype::fp8, Dtype::int8,
                                       Dtype::int4, Dtype::fp32, Dtype::int32};

inline std::string_view dtype_name(Dtype d) {
  switch (d) {
    case Dtype::fp16: return "fp16";
    case Dtype::fp8: return "fp8";
    case Dtype::int8: return "int8";
    case Dtype::int4: return "int4";
    case Dtype::fp32: return "fp32";
    case Dtype::int32: return "int32";
  }
  return "?";
}

inline std::optional<Dtype> dtype_from_name(std::string_view s) {
  for (Dtype d : kAllDtypes)
    if (dtype_name(d) == s) return d;
  return std::nullopt;
}

inline unsigned dtype_bits(Dtype d) {
  switch (d) {
    case Dtype::fp16: return 16;
    case Dtype::fp8: return 8;
    case Dtype::int8: return 8;
    case Dtype::int4: return 4;
    case Dtype::fp32: return 32;
    case Dtype::int32: return 32;
  }
  return 0;
}

// Bytes that n elements of dtype d occupy (int4 packs two per byte, rounded up).
inline std::uint64_t dtype_bytes(Dtype d, std::uint64_t n) { return (n * dtype_bits(d) + 7) / 8; }

}  // namespace dfsim

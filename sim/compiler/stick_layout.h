#pragma once
// The card's generic stick layout of one tensor in off-chip memory, and the device runs a
// row-major byte pattern becomes in it (docs/compiler.md, "HBM layout"). Pure arithmetic: the
// layout pass (hbm_layout.h) rewrites accesses with it, the matmul plan estimates with it.
#include <cstdint>
#include <vector>

namespace dfsim {

// The generic stick layout of a tensor stored row-major as [p0, p1, ..., p(n-1)] (its dims in
// compile.layouts order, p(n-1) the stick dim): device dims [p1, ..., p(n-2), p(n-1)/stick, p0,
// stick]. The stick dim is cut into sticks and the first dim is the innermost outside the
// stick, so a 2-D [R, C] is [C/64, R, 64] for fp16 and a 3-D [B, M, K] is [M, K/64, B, 64].
struct StickLayout {
  std::uint64_t row_bytes = 0;  // bytes of the stick dim, whole sticks
  std::uint64_t first = 1;      // p0
  std::uint64_t middle = 1;     // p1 x ... x p(n-2)
  std::uint64_t stick = 128;
  // The device byte of row-major stored byte x.
  std::uint64_t device(std::uint64_t x) const;
  // A first stored dim of 1 (or rank 1): every byte where row-major puts it.
  bool identity() const { return first == 1; }
};

// One run pattern in device bytes: `rows` runs of `bytes`, `stride` apart.
struct DeviceRuns {
  std::uint64_t offset = 0, bytes = 0, rows = 1, stride = 0;
};
// The device runs of the row-major pattern (offset, bytes, rows, stride) of a tensor in layout
// `l`: every stick piece mapped, sorted, adjacent pieces merged, equal runs at a constant
// stride grouped. Their bytes add up to the pattern's.
std::vector<DeviceRuns> device_runs(const StickLayout& l, std::uint64_t offset, std::uint64_t bytes, std::uint64_t rows,
                                    std::uint64_t stride);

// Runs and bytes of a set of device patterns.
struct RunCount {
  std::uint64_t runs = 0, bytes = 0;
};
RunCount count_runs(const std::vector<DeviceRuns>& d);

}  // namespace dfsim

#pragma once
// LX tiling pass: sizes tiles so a tile's working set fits the per-tile LX budget.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/common/dtype.h"

namespace dfsim {

// A tile: `size` units starting `begin` units after the core's first unit.
struct TileRange {
  std::int64_t begin = 0;
  std::int64_t size = 0;
};

// Splits `extent` into ceil(extent / max_tile) tiles of near-equal size (earlier ones larger).
std::vector<TileRange> split_even(std::int64_t extent, std::int64_t max_tile);

// Tiles of a core's `share` units where each unit needs `unit_bytes` of LX and every tile
// also needs `fixed_bytes`. nullopt if even one unit does not fit `budget`.
std::optional<std::vector<TileRange>> tile_units(std::int64_t share, std::uint64_t unit_bytes,
                                                 std::uint64_t fixed_bytes, std::uint64_t budget);

// Matmul tile shape: A (m x k) + B (k x n) + two fp32 accumulators (m x n) fit `budget`.
struct MatmulTile {
  std::int64_t m = 0, n = 0, k = 0;
};
std::uint64_t matmul_tile_bytes(const MatmulTile& t, Dtype in);
// Off-chip bytes of A and B that an m x n x k block loads when tiled by `t` (loop order m, n, k).
std::uint64_t matmul_block_traffic(std::int64_t m, std::int64_t n, std::int64_t k, const MatmulTile& t, Dtype in);
std::optional<MatmulTile> plan_matmul_tile(std::int64_t m, std::int64_t n, std::int64_t k, Dtype in,
                                           std::uint64_t budget);

}  // namespace dfsim

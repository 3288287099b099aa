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

// The same count of tiles along a stick dim (`align` elements per stick): each tile whole
// sticks but the last, when `max_tile` is whole sticks (else split_even).
std::vector<TileRange> split_sticks(std::int64_t extent, std::int64_t max_tile, std::int64_t align);
// Tiles of a core's `share` units where each unit needs `unit_bytes` of LX and every tile
// also needs `fixed_bytes`. nullopt if even one unit does not fit `budget`. With
// `min_tiles` > 1 the share is cut into that many tiles, or as many as keep
// kMinPipelinedTileBytes of per-unit data each when fewer do, so that a core's loads of one
// tile overlap the store of the previous one (software pipelining).
constexpr std::uint64_t kMinPipelinedTileBytes = 16384;
// Tiles per core of a software-pipelined lowering (elementwise ops, transpose, cat).
constexpr int kPipelineTiles = 4;
std::optional<std::vector<TileRange>> tile_units(std::int64_t share, std::uint64_t unit_bytes,
                                                 std::uint64_t fixed_bytes, std::uint64_t budget, int min_tiles = 1);

// Matmul tile shape: A (m x k) + B (k x n) + one fp32 accumulator (m x n) fit `budget`
// (half the usable LX: the next step's A and B and the previous accumulator take the other
// half, so loads run ahead of the PT by one step).
struct MatmulTile {
  std::int64_t m = 0, n = 0, k = 0;
};
std::uint64_t matmul_tile_bytes(const MatmulTile& t, Dtype in);

// How the cores of a grid share operand loads: the A tile is read once for `a_sharers` cores
// (a grid row) and the B tile once for `b_sharers` (a grid column), each core loading a piece
// (A split along m, B along k) and multicasting it. 1 and 1: every core loads its own tiles.
struct OperandSharing {
  int a_sharers = 1, b_sharers = 1;
  // K split over grids: a tile's fp32 partial, the one received and their sum must fit too.
  bool reduce_partials = false;
  // Storage: A stored [K, M] (its contiguous runs along m), B stored [N, K] (runs along k, the
  // weight layout of F.linear). The tile keeps the shorter of the two runs long.
  bool a_transposed = false, b_transposed = false;
  std::uint64_t stick_bytes = 128;  // the DMA's unit (core.dma.stick_bytes)
};

// A contiguous run shorter than a row of the stored matrix moves whole sticks and, being one
// of many strided runs, opens a DRAM row of its own: charged this many bytes (tRCD + tRP at
// one channel's rate, about 240 B on LPDDR5-6400).
inline constexpr double kDramRunOverheadBytes = 256;

// Bytes off-chip memory spends on `bytes` moved in runs of `run` elements when a stored row has
// `row` elements: the bytes themselves for whole rows, else whole sticks plus the row overhead.
double effective_run_bytes(double bytes, std::int64_t run, std::int64_t row, Dtype in, std::uint64_t stick_bytes);

// Elements of dtype `d` in one stick of `stick_bytes` (at least 1).
std::int64_t stick_elements(std::uint64_t stick_bytes, Dtype d);
// `stick` (elements) when K is a stored operand's stick dim (A stored [M, K], or B stored
// [N, K]), else 0. The tile search and the emitter keep k-steps whole sticks then: a 112-step
// of K = 14 336 would read A in runs of 1.75 sticks.
std::int64_t matmul_k_stick(bool a_transposed, bool b_transposed, std::int64_t stick);
// Off-chip bytes of A and B that an m x n x k block loads when tiled by `t` (loop order m, n,
// k), counting a shared load once per sharer group (divided by the sharers).
std::uint64_t matmul_block_traffic(std::int64_t m, std::int64_t n, std::int64_t k, const MatmulTile& t, Dtype in,
                                   OperandSharing sh = {});
// The tile that fits `budget` with the least traffic, no larger than `most` in any dim
// (0: unbounded) and, where one fits, no smaller than `least` (whole sticks along the
// operands' stick dims). Sharers load bands of whole rows, which need not be equal.
std::optional<MatmulTile> plan_matmul_tile(std::int64_t m, std::int64_t n, std::int64_t k, Dtype in,
                                           std::uint64_t budget, OperandSharing sh = {}, MatmulTile most = {},
                                           MatmulTile least = {});

}  // namespace dfsim

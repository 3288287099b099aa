// LX tiling pass (see tiling.h).
#include "sim/compiler/tiling.h"

#include <cmath>

#include <algorithm>
#include <tuple>

namespace dfsim {

namespace {

// extent, ceil(extent/2), ceil(extent/4), ..., 1; along a stick dim (`align` elements per
// stick, 0 otherwise) the halvings above one stick are rounded up to whole sticks, so that
// 14 336 gives ..., 448, 256, 128 rather than 448, 224, 112.
std::vector<std::int64_t> halvings(std::int64_t extent, std::int64_t align = 0) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1;; d *= 2) {
    const std::int64_t raw = (extent + d - 1) / d;
    const std::int64_t v = align > 0 && raw > align ? std::min(extent, (raw + align - 1) / align * align) : raw;
    if (out.empty() || out.back() != v) out.push_back(v);
    if (raw == 1) break;
  }
  return out;
}

}  // namespace

std::vector<TileRange> split_even(std::int64_t extent, std::int64_t max_tile) {
  std::int64_t n = (extent + max_tile - 1) / max_tile;
  std::vector<TileRange> out;
  std::int64_t begin = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t size = extent / n + (i < extent % n ? 1 : 0);
    out.push_back(TileRange{begin, size});
    begin += size;
  }
  return out;
}

std::vector<TileRange> split_sticks(std::int64_t extent, std::int64_t max_tile, std::int64_t align) {
  if (align <= 0 || max_tile % align != 0) return split_even(extent, max_tile);
  // As many tiles as split_even, each of whole sticks but the last.
  std::int64_t n = (extent + max_tile - 1) / max_tile;
  std::int64_t size = ((extent + n - 1) / n + align - 1) / align * align;
  std::vector<TileRange> out;
  for (std::int64_t begin = 0; begin < extent; begin += size) out.push_back(TileRange{begin, std::min(size, extent - begin)});
  return out;
}

std::optional<std::vector<TileRange>> tile_units(std::int64_t share, std::uint64_t unit_bytes,
                                                 std::uint64_t fixed_bytes, std::uint64_t budget, int min_tiles) {
  if (fixed_bytes + unit_bytes > budget) return std::nullopt;
  std::int64_t max_units = unit_bytes == 0 ? share : static_cast<std::int64_t>((budget - fixed_bytes) / unit_bytes);
  // As many tiles as min_tiles asks while each keeps kMinPipelinedTileBytes: a share too
  // small for min_tiles such tiles still gets as many as it can hold, not one.
  const std::uint64_t share_bytes = static_cast<std::uint64_t>(share) * unit_bytes;
  const auto tiles = static_cast<std::int64_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(min_tiles), share_bytes / kMinPipelinedTileBytes));
  if (min_tiles > 1 && tiles > 1) max_units = std::min(max_units, (share + tiles - 1) / tiles);
  return split_even(share, std::clamp<std::int64_t>(max_units, 1, share));
}

std::uint64_t matmul_tile_bytes(const MatmulTile& t, Dtype in) {
  auto m = static_cast<std::uint64_t>(t.m), n = static_cast<std::uint64_t>(t.n), k = static_cast<std::uint64_t>(t.k);
  return dtype_bytes(in, m * k) + dtype_bytes(in, k * n) + dtype_bytes(Dtype::fp32, m * n);
}

std::uint64_t matmul_block_traffic(std::int64_t m, std::int64_t n, std::int64_t k, const MatmulTile& t, Dtype in,
                                   OperandSharing sh) {
  auto tiles = [](std::int64_t extent, std::int64_t tile) { return static_cast<std::uint64_t>((extent + tile - 1) / tile); };
  // A is reloaded for every n tile unless a single k-step lets all n tiles share it;
  // B is reloaded for every m tile.
  std::uint64_t a_loads = t.k == k ? 1 : tiles(n, t.n);
  return dtype_bytes(in, static_cast<std::uint64_t>(m * k)) * a_loads / static_cast<std::uint64_t>(sh.a_sharers) +
         dtype_bytes(in, static_cast<std::uint64_t>(k * n)) * tiles(m, t.m) / static_cast<std::uint64_t>(sh.b_sharers);
}

double effective_run_bytes(double bytes, std::int64_t run, std::int64_t row, Dtype in, std::uint64_t stick_bytes) {
  if (run >= row) return bytes;
  const auto rb = static_cast<double>(dtype_bytes(in, static_cast<std::uint64_t>(run)));
  const auto sb = static_cast<double>(stick_bytes);
  return bytes * (std::ceil(rb / sb) * sb + kDramRunOverheadBytes) / rb;
}

namespace {

// The least-traffic tile within [lo, most] per dim (most 0: unbounded).
std::optional<MatmulTile> best_tile(std::int64_t m, std::int64_t n, std::int64_t k, Dtype in, std::uint64_t budget,
                                    OperandSharing sh, MatmulTile most, MatmulTile lo) {
  // Among the tiles that fit, the one that moves the fewest bytes off-chip for the whole
  // block; tiles within 1 % of it are ties, which prefer more MACs per tile (fewer tasks),
  // then long contiguous runs of A and B in their stored layouts (the shorter of the two is
  // longest: a run of 64 fp16 elements costs a DRAM row per 128 B), then a longer k, then a
  // taller m.
  std::optional<MatmulTile> best;
  double best_traffic = 0;
  auto key = [&sh](const MatmulTile& t) {
    const std::int64_t a_run = sh.a_transposed ? t.m : t.k, b_run = sh.b_transposed ? t.k : t.n;
    return std::make_tuple(t.m * t.n * t.k, std::min(a_run, b_run), t.k, t.m);
  };
  const std::vector<std::int64_t> ks =
      halvings(k, matmul_k_stick(sh.a_transposed, sh.b_transposed, stick_elements(sh.stick_bytes, in)));
  for (auto mt : halvings(m))
    for (auto nt : halvings(n))
      for (auto kt : ks) {
        MatmulTile t{mt, nt, kt};
        if (mt < lo.m || nt < lo.n || kt < lo.k) continue;
        if ((most.m && mt > most.m) || (most.n && nt > most.n) || (most.k && kt > most.k)) continue;
        if (matmul_tile_bytes(t, in) > budget) continue;
        if (sh.reduce_partials && 3 * dtype_bytes(Dtype::fp32, static_cast<std::uint64_t>(mt * nt)) > budget) continue;
        const auto traffic = static_cast<double>(matmul_block_traffic(m, n, k, t, in, sh));
        if (!best || traffic < 0.99 * best_traffic || (traffic <= 1.01 * best_traffic && key(t) > key(*best))) {
          best = t;
          best_traffic = traffic;
        }
      }
  return best;
}

}  // namespace

std::int64_t stick_elements(std::uint64_t stick_bytes, Dtype d) {
  // A stick narrower than one element (core.dma.stick_bytes 1 with fp16) holds one: never 0,
  // which the work division divides by.
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(stick_bytes / std::max<std::uint64_t>(dtype_bytes(d, 1), 1)));
}

std::int64_t matmul_k_stick(bool a_transposed, bool b_transposed, std::int64_t stick) {
  return !a_transposed || b_transposed ? stick : 0;
}

std::optional<MatmulTile> plan_matmul_tile(std::int64_t m, std::int64_t n, std::int64_t k, Dtype in,
                                           std::uint64_t budget, OperandSharing sh, MatmulTile most,
                                           MatmulTile least) {
  // `least` is a preference: clipped to the extents and to `most`, dropped when nothing fits.
  auto clamp = [](std::int64_t lo, std::int64_t extent, std::int64_t hi) {
    return std::min(std::min(lo, extent), hi ? hi : extent);
  };
  MatmulTile lo{clamp(least.m, m, most.m), clamp(least.n, n, most.n), clamp(least.k, k, most.k)};
  if (auto t = best_tile(m, n, k, in, budget, sh, most, lo)) return t;
  return best_tile(m, n, k, in, budget, sh, most, {});
}

}  // namespace dfsim

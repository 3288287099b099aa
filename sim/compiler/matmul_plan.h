#pragma once
// Work division and tiling of the matmul family: the split of the cores over B, M, N and K,
// the per-core tile, and the compiler's own estimate of the time, from which it chooses.
#include <map>
#include <optional>
#include <string>

#include "sim/compiler/matmul_problem.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

struct ChipConfig;

// A work division: `bsplit` batch groups, each a `ksplit` x `rows` x `cols` set of grids
// (core = ((bg * ksplit + kk) * rows + r) * cols + c). Each core takes `bshare` batches,
// `mshare` rows, `nshare` columns and a `kpart` of K (the last part of a dim may be smaller),
// tiled by `tile`. The A tile of a grid row is loaded once for its `cols` cores and the B tile
// of a grid column once for its `rows` cores, each core loading a band and multicasting it.
struct MatmulPlan {
  int bsplit = 1, rows = 1, cols = 1, ksplit = 1;
  std::int64_t bshare = 1, mshare = 0, nshare = 0, kpart = 0;
  MatmulTile tile;
  bool b_resident = false;          // B's per-core block stays in LX across the m tiles
  bool a_resident = false;          // A (the same for every batch) stays in LX across the batches
  // The estimate: off-chip bytes, and time bounds in ns (the estimate is the largest).
  std::uint64_t offchip_bytes = 0;
  double compute_ns = 0, memory_ns = 0, dma_ns = 0, estimate_ns = 0;
  double port_requests_ns = 0;  // the busiest memory port's requests at memory.port_request_ns (in memory_ns)
  double fill_ns = 0;           // pipeline fill and drain, added to the largest bound
  std::string why;                  // how the division was chosen
  int cores() const { return bsplit * rows * cols * ksplit; }
  std::int64_t m_tiles() const { return (mshare + tile.m - 1) / tile.m; }
  std::int64_t n_tiles() const { return (nshare + tile.n - 1) / tile.n; }
  std::int64_t k_tiles() const { return (kpart + tile.k - 1) / tile.k; }
};

// What constrains the plan besides the shape: the cores, the tile budget, forced splits
// (names B, M, N, K), tiles (M or K: at least that many sequential tiles of the dim; lower_matmul
// runs a coarse loop over K as kernels of its own and passes M only), whether
// loop-invariant operands may stay in LX (B across m tiles, a batch-broadcast A across
// batches), extra off-chip bytes per output element (epilogue operands).
struct MatmulConstraints {
  int cores = 1;
  std::uint64_t budget = 0;
  std::map<std::string, std::int64_t> split, tiles;
  bool keep_invariant = false;
  double extra_bytes_per_output = 0;
};

// The plan for exactly this division (nullopt when a part would be empty or no tile fits).
std::optional<MatmulPlan> matmul_plan_for(const MatmulProblem& p, const ChipConfig& chip, const MatmulConstraints& c,
                                          int bsplit, int rows, int cols, int ksplit);
// The forced split when one is given, else the plan with the least estimate over every
// division on at most `c.cores` cores (ties: least off-chip traffic, then the larger batch
// split, then more cores), so no plan on fewer cores has a better estimate. Shares are whole
// sticks along stick dims unless forced. nullopt: no plan fits.
std::optional<MatmulPlan> choose_matmul_plan(const MatmulProblem& p, const ChipConfig& chip, const MatmulConstraints& c);

// The dims a division splits, "M=8 N=4" (those of 1 left out; "none" when it splits none).
std::string division_text(const MatmulPlan& plan);

// How many multicast loads a tile shared by `sharers` cores takes when one reaches at most
// `reach` of them (ring.multicast_max_cores; 0: no limit, one load).
int multicast_loads(int sharers, int reach);

// The address span one core's part of one operand may cover (a division that needs more is no
// candidate: docs/compiler.md, work division).
inline constexpr std::uint64_t kMaxSpanBytes = 256ull << 20;

}  // namespace dfsim

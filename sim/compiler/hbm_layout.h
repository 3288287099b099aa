#pragma once
// The layout of tensors in off-chip memory (compile.hbm_layout, docs/compiler.md "HBM layout"):
// "row_major" keeps the lowerings' addresses (each tensor row-major in its compile.layouts
// order); "stick" is the card's generic stick layout, applied to every HBM access of a
// compiled graph by one pass after lowering.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/compiler/compile_report.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/tensor_uses.h"

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
};

// Whether the graph's compile.hbm_layout is "stick" (compile_ops sets it from the chip's
// memory.hbm_layout when the graph does not say).
bool uses_stick_layout(const OpGraph& g);

// Whether tensor `t` is in the card's layout under compile.hbm_layout "batched": rank 3 or
// more and read or written by a matmul (a batched matmul's operands and output).
bool batched_matmul_tensor(const OpGraph& g, const TensorUses& uses, int t);

// The stick layout of tensor `t`, or nullopt when its bytes stay row-major: rank 1 or a first
// stored dim of 1 (both layouts agree), or a stick dim that is not whole sticks (the card pads
// it to whole sticks; dfsim keeps such a tensor row-major rather than move padding).
std::optional<StickLayout> stick_layout(const OpGraph& g, int t, std::uint64_t stick_bytes);

// The tiles of a core's `share` units of a rowwise op's split dim `dim` of `out`: tile_units,
// but in the stick layout a split of the stick dim tiles in whole sticks (part of a stick is a
// run of a few bytes in every row), and a split of an outer dim pipelines only as far as a
// tile keeps a DMA burst of rows (32 sticks, core.dma.burst_sticks: its run in every stick column).
std::optional<std::vector<TileRange>> layout_tiles(const OpGraph& g, const OpTensor& out, int dim, std::int64_t share,
                                                   std::uint64_t unit, std::uint64_t fixed, std::uint64_t budget,
                                                   int min_tiles);

// One run pattern in device bytes: `rows` runs of `bytes`, `stride` apart.
struct DeviceRuns {
  std::uint64_t offset = 0, bytes = 0, rows = 1, stride = 0;
};
// The device runs of the row-major pattern (offset, bytes, rows, stride) of a tensor in layout
// `l`: every stick piece mapped, sorted, adjacent pieces merged, equal runs at a constant
// stride grouped. Their bytes add up to the pattern's.
std::vector<DeviceRuns> device_runs(const StickLayout& l, std::uint64_t offset, std::uint64_t bytes, std::uint64_t rows,
                                    std::uint64_t stride);

// Names, in each kernel's --explain report, the HBM buffers it touches that `layouts` lays out
// in the card's stick layout (compile.hbm_layout `mode`): the compiler's estimates read them
// row-major, so a kernel slower than its estimate says why here.
void describe_layouts(const KernelGraph& g, const std::vector<std::optional<StickLayout>>& layouts,
                      const std::string& mode, CompileReport& report);

// Rewrites every HBM access of `g` whose buffer has a layout in `layouts` (per buffer; nullopt:
// unchanged) into its device runs: a DMA load gathers them, a store scatters them (one access
// per group of runs). A template whose cores' device runs do not form one affine pattern is
// split into per-core templates (folded again where consecutive cores agree).
void apply_stick_layout(KernelGraph& g, const std::vector<std::optional<StickLayout>>& layouts);

}  // namespace dfsim

#pragma once
// The layout of tensors in off-chip memory (compile.hbm_layout, docs/compiler.md "HBM layout"):
// "row_major" keeps the lowerings' addresses (each tensor row-major in its compile.layouts
// order); "stick" is the card's generic stick layout, applied to every HBM access of a
// compiled graph by one pass after lowering.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/compiler/compile_report.h"
#include "sim/compiler/stick_layout.h"
#include "sim/compiler/tiling.h"
#include "sim/graph/kernel_graph.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/tensor_uses.h"

namespace dfsim {

// Whether the graph's compile.hbm_layout is "stick" (compile_ops sets it from the chip's
// memory.hbm_layout when the graph does not say).
bool uses_stick_layout(const OpGraph& g);

// Whether tensor `t` is in the card's layout under compile.hbm_layout "batched": rank 3 or
// more and read or written by a matmul (a batched matmul's operands and output).
bool batched_matmul_tensor(const OpGraph& g, const TensorUses& uses, int t);

// Per HBM buffer (`hbm`: each op graph tensor's buffer; `alias`: >= 0 for a tensor that is a
// view of another's buffer), the stick layout the graph's compile.hbm_layout stores it in:
// every tensor under "stick", the batched matmuls' tensors under "batched"; nullopt otherwise.
std::vector<std::optional<StickLayout>> planned_layouts(const OpGraph& g, const TensorUses& uses, const std::vector<int>& hbm,
                                                        const std::vector<int>& alias, std::uint64_t stick_bytes);

// The stick layout of tensor `t`, or nullopt when it stays row-major: a stick dim that is not
// whole sticks (the card pads it to whole sticks; dfsim keeps such a tensor row-major rather
// than move padding). Rank 1 and a first stored dim of 1 are laid out as their own row-major
// bytes (StickLayout::identity): still the card's layout, whose runs the port rate charges.
std::optional<StickLayout> stick_layout(const OpGraph& g, int t, std::uint64_t stick_bytes);

// The tiles of a core's `share` units of a rowwise op's split dim `dim` of `out`: tile_units,
// but in the stick layout a split of the stick dim tiles in whole sticks (part of a stick is a
// run of a few bytes in every row), and a split of an outer dim pipelines only as far as a
// tile keeps a DMA burst of rows (32 sticks, core.dma.burst_sticks: its run in every stick column).
std::optional<std::vector<TileRange>> layout_tiles(const OpGraph& g, const OpTensor& out, int dim, std::int64_t share,
                                                   std::uint64_t unit, std::uint64_t fixed, std::uint64_t budget,
                                                   int min_tiles);

// Names, in each kernel's --explain report, the HBM buffers it touches that `layouts` lays out
// in the card's stick layout (compile.hbm_layout `mode`), whose runs the matmul estimate reads
// (matmul_plan.h) and the run moves.
void describe_layouts(const KernelGraph& g, const std::vector<std::optional<StickLayout>>& layouts,
                      const std::string& mode, CompileReport& report);

// Rewrites every HBM access of `g` whose buffer has a layout in `layouts` (per buffer; nullopt:
// unchanged) into its device runs: a DMA load gathers them, a store scatters them (one access
// per group of runs). A template whose cores' device runs do not form one affine pattern is
// split into per-core templates (folded again where consecutive cores agree).
void apply_stick_layout(KernelGraph& g, const std::vector<std::optional<StickLayout>>& layouts);

}  // namespace dfsim

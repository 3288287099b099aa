#pragma once
// Lowering pass: one op to one kernel of DMA load / compute / DMA store tasks per tile.
#include <optional>
#include <string>
#include <vector>

#include "sim/compiler/graph_builder.h"
#include "sim/compiler/slicing.h"
#include "sim/compiler/stick_layout.h"
#include "sim/compiler/tiling.h"
#include "sim/compiler/work_division.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"
#include "sim/graph/tensor_uses.h"

namespace dfsim {

struct ChipConfig;
struct CompileReport;

// What every lowering needs: the graph being built, the op graph, where tensors live.
struct LowerContext {
  GraphBuilder& builder;
  const OpGraph& ops;
  std::vector<int> hbm;        // HBM buffer of each op graph tensor
  int cores = 1;               // cores to divide each op over
  std::uint64_t budget = 0;    // LX bytes one tile's buffers may take (half the usable LX)
  std::vector<int> lx;         // per op graph tensor: its LX buffer when kept in LX, else -1
  std::uint64_t stick_bytes = 128;  // core.dma.stick_bytes: the DMA word, the unit of layout
  const ChipConfig* chip = nullptr;  // for the lowerings' own estimates (matmul family)
  CompileReport* report = nullptr;   // what the lowerings decided, when asked for
  const TensorUses* uses = nullptr;  // readers and producers of ops' tensors (set by compile_ops)
  // Per HBM buffer, the card's stick layout the layout pass will store it in (compile.hbm_layout;
  // nullopt: row-major), for the lowerings' estimates (set by compile_ops).
  const std::vector<std::optional<StickLayout>>* layouts = nullptr;
  // HBM buffers a lowering made that are stored like an op graph tensor's (a coarse K loop's
  // partial sums, shaped like the output): (new buffer, the tensor's buffer). compile_ops lays
  // them out alike.
  std::vector<std::pair<int, int>> laid_out_like{};
  // Per op graph tensor: stored stick-sparse, a stick per element (sparse_outputs.h; set by
  // compile_ops; empty: none). Only the pointwise lowering meets such a tensor.
  std::vector<bool> sparse{};
};

// How a pointwise op or reduction divides one of its tensors over the cores: the tensor's
// dim that follows the split, and the split's extent.
struct TensorSplit {
  int dim = -1;
  std::int64_t extent = 0;
  int cores = 1;
};
// nullopt when the op reads the tensor whole or broadcasts it, is a matmul, splits a reduced
// dim (a split reduction), or runs a coarse-tile loop (it visits its units out of core order,
// so what it produces is never kept in LX for another kernel).
std::optional<TensorSplit> tensor_split(const OpGraph& g, const Op& op, int tensor, int cores);
// The same, whatever the op's coarse tiles: how the ops of one fused kernel, which run one
// coarse-tile loop together, divide the tensors they share.
std::optional<TensorSplit> rowwise_split(const OpGraph& g, const Op& op, int tensor, int cores);
bool split_reduction_applies(const OpGraph& g, const Op& op, int cores);

// How a pointwise op, reduction or norm is sliced: the slicers of its inputs and output, the
// extent of the split dim and the cores it is divided over (compile.split d<i> or all).
struct PointwisePlan {
  std::vector<OperandSlicer> in;
  OperandSlicer out;
  std::int64_t extent = 1;
  int cores = 1;
};
PointwisePlan plan_pointwise(const OpGraph& g, const Op& op, int cores);
// Whether the op is sliced like a pointwise op (elementwise, reduction, norm, rope).
bool is_rowwise(const Op& op);

// Elementwise (binary with broadcasting, unary) and sum.
void lower_pointwise(LowerContext& ctx, const Op& op, const std::string& kernel);
// Several rowwise ops (elementwise, reductions, norms, rope) in one kernel (lower_fused.cpp):
// per tile each input is loaded once, every op runs on the SFP with intermediates in LX, and
// only the tensors used outside the kernel are stored. `ops`: op indices in execution order.
void lower_fused(LowerContext& ctx, const std::vector<int>& ops, const std::string& kernel);
// The same for one op (the table row of softmax, layernorm, rmsnorm and rope).
void lower_rowwise(LowerContext& ctx, const Op& op, const std::string& kernel);
// Data movement of the transformer ops (lower_gather.cpp, lower_resize.cpp): embedding rows
// gathered by DMA, kv_write's new rows stored in place, reshape (free when an alias, else a
// restickify copy), slice and split (DMA through LX).
void lower_embedding(LowerContext& ctx, const Op& op, const std::string& kernel);
void lower_kv_write(LowerContext& ctx, const Op& op, const std::string& kernel);
void lower_reshape(LowerContext& ctx, const Op& op, const std::string& kernel);
void lower_slice(LowerContext& ctx, const Op& op, const std::string& kernel);
// Whether a reshape is free: input and output share their byte layout (same stick dim size,
// or both stick dims whole sticks), so the output is an alias of the input's HBM buffer.
bool reshape_is_alias(const OpGraph& g, const Op& op, std::uint64_t stick_bytes);

// Loads graph input `tensor` once into its kept LX buffer, each core its slice of `split`
// (compile.lx_planning "clone"; lower_clone.cpp).
void lower_clone(LowerContext& ctx, int tensor, const TensorSplit& split, const std::string& kernel);

// One row of the lowering table (lowering_table.cpp): the lowering of every op of a kind that
// runs in a kernel of its own. A new op kind = one lowering file + one row here.
using LowerFn = void (*)(LowerContext&, const Op&, const std::string&);
LowerFn lowering_for(OpKind kind);
// A reduction with fewer kept elements than cores: the reduced dim over the cores, then a
// tree of ring copies and SFP combines. false (nothing emitted) when it does not apply.
bool lower_split_reduction(LowerContext& ctx, const Op& op, const std::string& kernel);
// A reduction over the last dim tiled inside its rows (rows that do not fit LX, or `chunks`
// > 1 chunks asked by compile.tiles), the partials carried chunk to chunk
// (lower_row_chunks.cpp). false (nothing emitted) when it does not apply.
bool lower_row_chunks(LowerContext& ctx, const Op& op, const std::string& kernel, std::int64_t chunks);
// A reduction over the rows of a 2-D tensor whose stick-wide column tile does not fit LX with
// all the rows: stick-wide column tiles over chunks of the rows, the partials carried chunk to
// chunk (lower_column_chunks.cpp). false (nothing emitted) when it does not apply.
bool lower_column_chunks(LowerContext& ctx, const Op& op, const std::string& kernel);
// A norm over the last dim whose rows do not fit LX: chunks of the row in two passes (the row
// statistics carried chunk to chunk, then the output), lower_norm_chunks.cpp. false (nothing
// emitted) when it does not apply.
bool lower_norm_chunks(LowerContext& ctx, const Op& op, const std::string& kernel);
// 2-D matmul: a core grid over M and N, operands shared over the grid when the shape divides.
// `epilogue`: op graph op indices, in order, of elementwise ops fused after the matmul (the
// first reads the matmul's output, each next one the previous one's; their other operands are
// loaded per output tile); they run on the SFP as each output tile is stored, and the last
// one's output tensor is what the kernel stores. Empty: the matmul's own output is stored.
void lower_matmul(LowerContext& ctx, const Op& op, const std::string& kernel, const std::vector<int>& epilogue = {});
// Whether the fusion pass may append op `next` to the epilogue of `matmul` (whose current
// epilogue is `epilogue`): an elementwise op whose running operand is the previous output
// (read by nothing else, not a graph output), whose output has the matmul output's shape, and
// whose other operand, if any, has that shape too or is a row vector [N] (a bias), and is a
// graph input or the output of an op before the matmul.
bool matmul_epilogue_ok(const OpGraph& g, const TensorUses& uses, const Op& matmul, const std::vector<int>& epilogue,
                        const Op& next);
// Scaled dot-product attention (lower_sdpa.cpp): tile loops batch -> KV head -> Lq tiles ->
// Lk tiles with an online-softmax body, K and V loaded once per GQA group.
void lower_sdpa(LowerContext& ctx, const Op& op, const std::string& kernel);
// Data movement through LX, DMA only (lower_transpose.cpp, lower_cat.cpp); a transpose that
// moves the stick dim adds one SFP copy pass per tile for the element reshuffle.
void lower_transpose(LowerContext& ctx, const Op& op, const std::string& kernel);
void lower_cat(LowerContext& ctx, const Op& op, const std::string& kernel);
// The ops between cards (lower_collective.cpp): one PCIe link task per card of the group.
void lower_collective(LowerContext& ctx, const Op& op, const std::string& kernel);

// Shared helpers of the lowerings.
Task group_task(const std::string& name, UnitKind unit, const std::string& op, const CoreGroup& g, Dtype dtype);
// HBM access of a slice: `p` is the first core's pattern; each further core of the group
// moves `unit_offset * g.share` on (HalfByteSplit when that is not whole bytes).
Access hbm_slice(int buffer, const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g);
// A load of `p` into a new LX buffer `lx_name`; returns the LX buffer.
int emit_load(LowerContext& ctx, const std::string& task_name, const std::string& lx_name, int hbm_buffer,
              Dtype dtype, const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g);
// A load of `p` (the same bytes for every core) into a new LX buffer on each of cores
// [0, cores): read once and multicast. When `p` is one run that splits into `cores` bands of
// whole sticks, core c loads band c; otherwise core 0 loads it all. Returns the LX buffer.
// (One operand read from memory for every core, as the card's broadcast operands are: not
// limited by ring.multicast_max_cores, which bounds the band exchange among sharers.)
int emit_broadcast_load(LowerContext& ctx, const std::string& task_name, const std::string& lx_name, int hbm_buffer,
                        Dtype dtype, const SlicePattern& p, int cores);
// A tile of `rows` rows of `row_bytes` (row r at HBM byte `offset + r * row_stride`) loaded into
// LX buffer `lx` (rows packed) on every core of `sharers`: sharer i loads band i of the rows
// (ceil(rows / sharers) each, the last fewer) and multicasts it, one task per sharer added to
// `tasks` (operand sharing: every byte crosses the off-chip bus once per multicast group).
// With `reach` > 0 (multicast_reach) and more sharers, each group of `reach` consecutive
// sharers loads the whole tile for itself (multicast_groups).
class CoreTasks;
void emit_band_multicast(CoreTasks& tasks, int hbm, std::uint64_t offset, std::uint64_t rows, std::uint64_t row_bytes,
                         std::uint64_t row_stride, int lx, const std::vector<int>& sharers, Dtype dtype, int reach);
// The most cores one multicast load reaches (ring.multicast_max_cores of the chip; 0: no limit).
int multicast_reach(const LowerContext& ctx);
// Says in the compile report (when there is one and no lowering described the kernel yet) how
// a row-wise kernel divides its work: `tensor`'s dim `dim` (`extent` long) over `used` cores,
// `share` each, in `tiles` tiles of up to `tile` (the first core group's); `min_tiles`: the
// pipelining asked for.
void describe_row_split(LowerContext& ctx, const std::string& kernel, const OpTensor& tensor, int dim, std::int64_t extent,
                        int used, std::int64_t share, std::size_t tiles, std::int64_t tile, bool forced, int min_tiles);
// `sharers` cut into groups of at most `reach` consecutive entries (one group when reach <= 0).
std::vector<std::vector<int>> multicast_groups(const std::vector<int>& sharers, int reach);
void emit_store(LowerContext& ctx, const std::string& task_name, int lx_buffer, int hbm_buffer, Dtype dtype,
                const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g);
// One step of a reduction carried tile to tile: loads `p` of input `in` (HBM buffer
// `hbm_in`), reduces it with
// `op` on the SFP together with the previous partial `prev` (-1: none) into a new partial of
// `part_bytes` named `<prefix>/partial`. Returns the new partial's LX buffer.
// The SFP op of a reduction: its own (a `reduce`-class op, whose rows take the cross-lane
// adder tree) when it reduces the last dim, whose elements lie along a stick's lanes; over an
// outer dim every lane keeps its own column, so it is an elementwise accumulate of one stick
// into another ("max" for amax, "add" for sum and mean).
std::string reduction_sfp_op(const OpGraph& g, const Op& op);
int emit_carried_reduce(LowerContext& ctx, const std::string& prefix, const Op& op, const OpTensor& in, int hbm_in, Dtype out,
                        const SlicePattern& p, UnitStep unit_offset, const CoreGroup& g, int prev,
                        std::uint64_t part_bytes);
// The part of a tensor kept in LX (one core's slice, units of the split dim one after
// another) that tile `t` of the core's share covers.
Access kept_part(int buffer, const OperandSlicer& s, const TileRange& t);

}  // namespace dfsim

#pragma once
// In-memory form of an op graph ("format": "dfsim.ops", v1): tensors, ops, compile options.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/json_io.h"
#include "sim/graph/model_step.h"

namespace dfsim {

// Version 2 added several cards: compile.cards and the collective and host-transfer ops. A
// graph that uses neither is written as version 1; both are read.
inline constexpr int kOpGraphVersion = 2;

using Shape = std::vector<std::int64_t>;

// Which tensors the compiler keeps in LX (docs/compiler.md), least kept first: off (the card
// with its scratchpad planning switched off: nothing, not even between the ops of one fused
// kernel), none (between kernels all through HBM; a fused kernel keeps its own
// intermediates), the outputs of reductions (true in files: the card's default scratchpad
// planning), + elementwise outputs written in place (inplace), + graph inputs read by several
// kernels cloned into LX once (clone: the card's further levels), or every intermediate that
// fits (all).
enum class LxPlanning { off, none, reductions, inplace, clone, all };
const char* lx_planning_name(LxPlanning p);
const std::vector<LxPlanning>& lx_plannings();  // every level, in order
std::string lx_planning_names();                // "off, none, reductions, inplace, clone or all"

// A named tensor of the op graph.
struct OpTensor {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp16;
  std::uint64_t elements() const;  // saturates at UINT64_MAX
  std::uint64_t bytes() const {    // saturates at UINT64_MAX; exact below it (2^60 fp16 are 2^61 B)
    const std::uint64_t n = elements(), bits = dtype_bits(dtype);
    std::uint64_t whole = 0;  // the bytes of n rounded down to 8 elements, then the rest's
    if (n == UINT64_MAX || __builtin_mul_overflow(n / 8, bits, &whole)) return UINT64_MAX;
    const std::uint64_t b = whole + (n % 8 * bits + 7) / 8;
    return b < whole ? UINT64_MAX : b;
  }
};

// A forced work division of a matmul: an m x n grid of cores over [M, N], repeated k times
// over K (the card's WD_M, WD_N, WD_K).
struct WorkDivision {
  int m = 1, n = 1, k = 1;
};

// One op: kind, operand tensor indices, attributes (resolved).
struct Op {
  std::string op;                  // a name of op_catalog() (op_shapes.h)
  std::vector<int> inputs, outputs;
  int dim = -1;                    // reductions: reduced dim; cat: concatenated dim; normalised to [0, rank)
  bool keepdim = false;            // reductions
  std::optional<WorkDivision> work_division;  // matmul: forced; absent: the compiler chooses
  std::vector<int> perm;           // transpose: output dim i is input dim perm[i]
  bool transpose_a = false;        // matmul: A is stored [..., K, M]
  bool transpose_b = false;        // matmul: B is stored [..., N, K] (the weight layout of F.linear)
  bool causal = false;             // sdpa: a causal mask (query i sees keys 0..causal_offset + i)
  std::int64_t causal_offset = 0;  // sdpa: keys before the first query (a KV cache's earlier tokens)
  double scale = 0;                // sdpa: scores scale; 0: 1/sqrt(D)
  int index = 0;                   // position in the file's "ops" list
  // Effective compile options of this op (graph-level "compile" merged with the op's own
  // "compile" and the CLI flags). split: cores along each named dim (B, M, N, K for the
  // matmul family; d0, d1, ... output dims for the others); tiles: a sequential coarse-tile
  // loop of that many iterations over the named dim. Empty: the compiler chooses.
  std::map<std::string, std::int64_t> split, tiles;
  std::optional<bool> fuse;                // the op's own compile.fuse (absent: the graph's)
  std::optional<LxPlanning> lx_planning;   // the op's own compile.lx_planning (absent: the graph's)
  // Attributes of the transformer ops (docs/op-graph-format.md).
  std::optional<double> scalar;            // binary op with one input: the other operand
  std::map<std::string, double> params;    // eps (layernorm, rmsnorm), exponent (pow), min and max (clamp)
  std::int64_t start = 0, end = 0, step = 1;  // slice of `dim`: [start, end) every step
  std::vector<std::int64_t> sizes;         // split: output sizes along `dim`
  std::int64_t position = 0;               // kv_write: first cache row written
  // Collectives and host transfers (op_graph_cards.cpp): the cards taking part, in ring order
  // (empty: every card of compile.cards), the algorithm (ring or tree), broadcast's root
  // position. all_gather and reduce_scatter gather / scatter along `dim`.
  std::vector<int> group;
  std::string algorithm;
  int root = 0;
};


// Options of the "compile" section.
struct CompileOptions {
  int cores = 1;                   // cores to divide each op over
  int cards = 1;                   // cards the graph runs on: every op runs on each (SPMD)
  LxPlanning lx_planning = LxPlanning::none;
  bool fuse = true;                // fuse elementwise chains, reductions and matmul epilogues into kernels
  // Device dimension order of a tensor (by name): the last axis is the stick dimension.
  std::map<std::string, std::vector<int>> layouts;
  // How HBM tensors are laid out: "row_major" or "stick" (the card's generic stick layout,
  // docs/compiler.md); absent: the chip's memory.hbm_layout.
  std::optional<std::string> hbm_layout;
  // Graph-level defaults of the per-op split and tiles (applied to the ops whose dims they name).
  std::map<std::string, std::int64_t> split, tiles;
};

// A validated op graph: shapes inferred and checked, acyclic, every used tensor produced.
struct OpGraph {
  std::string name, description, file;
  std::vector<OpTensor> tensors;
  std::vector<int> inputs, outputs;  // tensor indices
  std::vector<Op> ops;               // file order
  std::vector<int> order;            // op indices in a topological order (file order on ties)
  CompileOptions compile;
  std::optional<ModelStep> model;    // the "model" object: a step of a whole model (dfsim gen)

  int find_tensor(const std::string& name) const;  // -1 if absent
  bool is_input(int tensor) const;
};

OpGraph read_op_graph(const Json& j, const std::string& file);
ModelStep read_model_step(const JsonView& v);  // the "model" object (model_step.cpp)
Json model_step_json(const ModelStep& m);       // the same object, as read_model_step reads it
// The dim names `split` and `tiles` may use for `op`: B, M, N, K for the matmul family; d0,
// d1, ... (the dims of its first output) for the others.
std::vector<std::string> split_dim_names(const OpGraph& g, const Op& op);
// Applies a split or tiles map (the CLI's --split / --tiles) to every op whose dims it names;
// returns how many ops took it.
int apply_dim_map(OpGraph& g, const std::map<std::string, std::int64_t>& m, bool tiles);
// Whether `op` is fused with its neighbours (its compile.fuse, else the graph's).
bool op_fuses(const OpGraph& g, const Op& op);
// The order `t`'s dims are stored in: its compile.layouts entry, else 0 .. rank-1. The last
// is the stick dim.
std::vector<int> stored_order(const OpGraph& g, const OpTensor& t);
OpGraph load_op_graph(const std::string& path);

}  // namespace dfsim

#pragma once
// In-memory form of an op graph ("format": "dfsim.ops", v1): tensors, ops, compile options.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/json_io.h"

namespace dfsim {

inline constexpr int kOpGraphVersion = 1;

using Shape = std::vector<std::int64_t>;

// A named tensor of the op graph.
struct OpTensor {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::fp16;
  std::uint64_t elements() const;  // saturates at UINT64_MAX
  std::uint64_t bytes() const {    // saturates at UINT64_MAX
    std::uint64_t n = elements();
    return n > (std::uint64_t(1) << 58) ? UINT64_MAX : dtype_bytes(dtype, n);
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
  int index = 0;                   // position in the file's "ops" list
  // Effective compile options of this op (graph-level "compile" merged with the op's own
  // "compile" and the CLI flags). split: cores along each named dim (B, M, N, K for the
  // matmul family; d0, d1, ... output dims for the others); tiles: a sequential coarse-tile
  // loop of that many iterations over the named dim. Empty: the compiler chooses.
  std::map<std::string, std::int64_t> split, tiles;
};

// Which intermediate tensors the compiler keeps in LX between kernels (docs/compiler.md):
// none (all through HBM), the outputs of reductions (true in files: the card's default
// scratchpad planning), or every intermediate that fits.
enum class LxPlanning { none, reductions, all };
const char* lx_planning_name(LxPlanning p);

// Options of the "compile" section.
struct CompileOptions {
  int cores = 1;                   // cores to divide each op over
  LxPlanning lx_planning = LxPlanning::none;
  bool fuse = true;                // fuse elementwise chains, reductions and matmul epilogues into kernels
  // Device dimension order of a tensor (by name): the last axis is the stick dimension.
  std::map<std::string, std::vector<int>> layouts;
};

// A validated op graph: shapes inferred and checked, acyclic, every used tensor produced.
struct OpGraph {
  std::string name, description, file;
  std::vector<OpTensor> tensors;
  std::vector<int> inputs, outputs;  // tensor indices
  std::vector<Op> ops;               // file order
  std::vector<int> order;            // op indices in a topological order (file order on ties)
  CompileOptions compile;

  int find_tensor(const std::string& name) const;  // -1 if absent
  bool is_input(int tensor) const;
};

OpGraph read_op_graph(const Json& j, const std::string& file);
OpGraph load_op_graph(const std::string& path);

}  // namespace dfsim

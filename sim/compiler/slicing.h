#pragma once
// How a tensor in HBM is sliced when its op is divided along one dimension: the byte
// pattern (offset, rows of bytes, stride) of a range of that dimension.
#include <cstdint>
#include <stdexcept>

#include "sim/graph/op_graph.h"

namespace dfsim {

// How far one unit of the split dimension moves a core's slice on in HBM, in bits: exact for
// int4, whose unit may be half a byte (a core's share of units is then whole bytes or refused).
struct UnitStep {
  std::uint64_t bits = 0;
  static UnitStep bytes(std::uint64_t n) { return UnitStep{n * 8}; }
};

// A slice that would start, or a core step that would be, half a byte into an int4 tensor:
// the compiler turns it into an InputError naming the op (compile.cpp).
class HalfByteSplit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The strided byte pattern of one slice (offset relative to the tensor's start).
struct SlicePattern {
  std::uint64_t offset = 0, bytes = 0, rows = 1, stride = 0;
  std::uint64_t elements = 0;
  std::uint64_t total_bytes() const { return bytes * rows; }
};

// Bytes between the slices of consecutive cores that take `share` units each (HalfByteSplit
// when that is not whole bytes).
std::uint64_t core_step_bytes(UnitStep step, std::int64_t share);

// One operand of a divided op: sliced along `dim`, or read whole (dim = -1, e.g. a
// broadcast operand without the split dimension), or pinned to index 0 of a size-1 dim.
struct OperandSlicer {
  const OpTensor* tensor = nullptr;
  int dim = -1;            // tensor dim that follows the split; -1: whole tensor each tile
  bool pinned = false;     // dim has size 1 and is broadcast: always index 0
  // Bytes of memory per byte of the dense tensor: 1, or a stick per element for a tensor
  // stored stick-sparse (sparse_outputs.h). Scales every pattern and size below.
  std::uint64_t scale = 1;

  bool follows_split() const { return dim >= 0 && !pinned; }
  // Pattern of units [begin, begin+len) of the split dimension (HalfByteSplit when it would
  // start inside a byte).
  SlicePattern slice(std::int64_t begin, std::int64_t len) const;
  // Offset added per unit of the split dimension (0 unless follows_split()).
  UnitStep unit_offset() const;
  // LX bytes per unit of the split dimension, and bytes needed regardless of the tile size.
  std::uint64_t unit_bytes() const;
  std::uint64_t unit_bits() const;  // exact (an int4 unit may be half a byte)
  std::uint64_t fixed_bytes() const;
};

}  // namespace dfsim

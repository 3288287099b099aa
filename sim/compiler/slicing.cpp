// Slicing of HBM tensors along the split dimension (see slicing.h).
#include "sim/compiler/slicing.h"

#include "sim/graph/op_shapes.h"

namespace dfsim {

SlicePattern OperandSlicer::slice(std::int64_t begin, std::int64_t len) const {
  const Shape& s = tensor->shape;
  Dtype dt = tensor->dtype;
  SlicePattern p;
  if (dim < 0) {
    p.elements = tensor->elements();
    p.bytes = tensor->bytes() * scale;
    return p;
  }
  auto d = static_cast<std::size_t>(dim);
  std::uint64_t outer = dims_product(s, 0, d), inner = dims_product(s, d + 1, s.size());
  auto extent = static_cast<std::uint64_t>(s[d]);
  std::uint64_t b = pinned ? 0 : static_cast<std::uint64_t>(begin);
  std::uint64_t n = pinned ? 1 : static_cast<std::uint64_t>(len);
  p.elements = outer * n * inner;
  p.offset = dtype_bytes(dt, b * inner);
  if (outer == 1 || n == extent) {  // one contiguous run
    p.bytes = dtype_bytes(dt, p.elements);
  } else {
    p.rows = outer;
    p.bytes = dtype_bytes(dt, n * inner);
    p.stride = dtype_bytes(dt, extent * inner);
  }
  p.offset *= scale;
  p.bytes *= scale;
  p.stride *= scale;
  return p;
}

std::uint64_t OperandSlicer::unit_offset() const {
  if (!follows_split()) return 0;
  return dtype_bytes(tensor->dtype, dims_product(tensor->shape, dim + 1, tensor->shape.size())) * scale;
}

std::uint64_t OperandSlicer::unit_bytes() const {
  if (!follows_split()) return 0;
  return dtype_bytes(tensor->dtype, dims_product(tensor->shape, 0, dim) * dims_product(tensor->shape, dim + 1, tensor->shape.size())) *
         scale;
}

std::uint64_t OperandSlicer::fixed_bytes() const {
  if (follows_split()) return 0;
  return slice(0, 1).total_bytes();
}

}  // namespace dfsim

// Slicing of HBM tensors along the split dimension (see slicing.h).
#include "sim/compiler/slicing.h"

#include "sim/graph/op_shapes.h"

namespace dfsim {

std::uint64_t core_step_bytes(UnitStep step, std::int64_t share) {
  const std::uint64_t bits = step.bits * static_cast<std::uint64_t>(share);
  if (bits % 8 != 0)
    throw HalfByteSplit("each core's share (" + std::to_string(share) + " of the split dim, " + std::to_string(bits) +
                        " bits) would end half a byte into the next core's");
  return bits / 8;
}

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
  if ((b * inner * dtype_bits(dt)) % 8 != 0)
    throw HalfByteSplit(tensor->name + " would be cut inside a byte: element " + std::to_string(b * inner) + " of " +
                        std::string(dtype_name(dt)) + " starts half a byte in");
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

UnitStep OperandSlicer::unit_offset() const {
  if (!follows_split()) return {};
  return UnitStep{dims_product(tensor->shape, dim + 1, tensor->shape.size()) * dtype_bits(tensor->dtype) * scale};
}

std::uint64_t OperandSlicer::unit_bytes() const {
  if (!follows_split()) return 0;
  return dtype_bytes(tensor->dtype, dims_product(tensor->shape, 0, dim) * dims_product(tensor->shape, dim + 1, tensor->shape.size())) *
         scale;
}

std::uint64_t OperandSlicer::unit_bits() const {
  if (!follows_split()) return 0;
  return dims_product(tensor->shape, 0, dim) * dims_product(tensor->shape, dim + 1, tensor->shape.size()) *
         dtype_bits(tensor->dtype) * scale;
}

std::uint64_t OperandSlicer::fixed_bytes() const {
  if (follows_split()) return 0;
  return slice(0, 1).total_bytes();
}

}  // namespace dfsim

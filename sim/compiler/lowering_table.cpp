// The lowering table: op kind -> the lowering of a kernel of one op of that kind. A new op
// kind = one lowering file + one row here (fused kernels: fusion.cpp, lower_fused.cpp).
#include <utility>

#include "sim/compiler/lowering.h"

namespace dfsim {

namespace {

void lower_matmul_alone(LowerContext& ctx, const Op& op, const std::string& kernel) { lower_matmul(ctx, op, kernel); }

const std::vector<std::pair<OpKind, LowerFn>>& table() {
  static const std::vector<std::pair<OpKind, LowerFn>> t = {
      {OpKind::binary, lower_pointwise},   {OpKind::unary, lower_pointwise},     {OpKind::reduce, lower_pointwise},
      {OpKind::where, lower_pointwise},    {OpKind::cast, lower_rowwise},        {OpKind::matmul, lower_matmul_alone},
      {OpKind::transpose, lower_transpose}, {OpKind::cat, lower_cat},           {OpKind::normalize, lower_rowwise},
      {OpKind::rope, lower_rowwise},       {OpKind::embedding, lower_embedding}, {OpKind::kv_write, lower_kv_write},
      {OpKind::reshape, lower_reshape},    {OpKind::slice, lower_slice},         {OpKind::split, lower_slice},
      {OpKind::sdpa, lower_sdpa},          {OpKind::collective, lower_collective}, {OpKind::host, lower_collective},
  };
  return t;
}

}  // namespace

LowerFn lowering_for(OpKind kind) {
  for (const auto& [k, fn] : table())
    if (k == kind) return fn;
  throw std::logic_error("no lowering for an op kind of the catalogue");
}

}  // namespace dfsim

#include "sim/graph/size_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/common/error.h"
#include "sim/config/chip_config.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

namespace {

std::string bytes_text(std::uint64_t b) {
  if (b == std::numeric_limits<std::uint64_t>::max()) return "more than 2^64 B";
  return fmt::format("{} B ({:.3g} GiB)", b, b / 1073741824.0);
}

}  // namespace

void check_op_graph_fits(const OpGraph& ops, const ChipConfig& cfg) {
  const std::uint64_t cap = cfg.memory.capacity_bytes;
  std::uint64_t total = 0;
  for (const OpTensor& t : ops.tensors) {
    std::uint64_t b = t.bytes();
    if (b > cap)
      throw InputError(ops.file, "/tensors/" + t.name + "/shape",
                       fmt::format("{} {} is {}, more than memory.capacity_bytes ({}) of config \"{}\"",
                                   shape_str(t.shape), dtype_name(t.dtype), bytes_text(b), bytes_text(cap), cfg.name));
    // Offsets are counted in bits further on (n x 32 for fp32): beyond 2^58 elements they would
    // wrap. Only a memory.capacity_bytes of 2^55 B or more lets such a tensor get here.
    if (t.elements() > kMaxTensorElements)
      throw InputError(ops.file, "/tensors/" + t.name + "/shape",
                       fmt::format("{} {} has {} elements, more than 2^58, the most dfsim takes in one tensor",
                                   shape_str(t.shape), dtype_name(t.dtype), t.elements()));
    total = add_sat(total, b);
  }
  if (total > cap)
    throw InputError(ops.file, "/tensors",
                     fmt::format("the tensors need {} together, more than memory.capacity_bytes ({}) of config \"{}\"",
                                 bytes_text(total), bytes_text(cap), cfg.name));
}

void check_op_graph_tiles(const OpGraph& ops, std::uint64_t max_tasks) {
  if (max_tasks == 0) max_tasks = kDefaultMaxTasks;
  std::uint64_t least = 0;
  for (const Op& op : ops.ops) {
    std::uint64_t iterations = 1;
    for (const auto& [dim, count] : op.tiles) iterations = mul_sat(iterations, static_cast<std::uint64_t>(std::max<std::int64_t>(count, 1)));
    if (iterations == 1) continue;
    least = add_sat(least, iterations);
    if (least > max_tasks)
      throw InputError(ops.file, "/ops/" + std::to_string(op.index),
                       fmt::format("compile.tiles asks for {} coarse-tile iterations of {}: with the ops before it at "
                                   "least {} task instances, more than --max-tasks {} (raise it with --max-tasks N)",
                                   iterations, op.op, least, max_tasks));
  }
}

void check_task_count(const KernelGraph& g, const std::string& file, std::uint64_t max_tasks) {
  if (max_tasks == 0) max_tasks = kDefaultMaxTasks;
  std::uint64_t n = 0;
  for (const Task& t : g.tasks) n = add_sat(n, static_cast<std::uint64_t>(t.core_count));
  if (n > max_tasks)
    throw InputError(file, "/kernels",
                     fmt::format("{} task instances, more than --max-tasks {} (raise it with --max-tasks N; "
                                 "each instance costs host memory)", n, max_tasks));
}

}  // namespace dfsim

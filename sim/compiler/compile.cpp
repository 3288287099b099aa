// Compiler driver: places tensors in HBM, then lowers each op (in topological order) into
// one kernel, and checks the result like a loaded file.
#include "sim/compiler/compile.h"

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/residency.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

KernelGraph compile_ops(const OpGraph& ops, const ChipConfig& config, int cores, CompileReport* report) {
  if (cores < 1 || cores > config.cores)
    throw InputError(ops.file, "/compile/cores",
                     "asks for " + std::to_string(cores) + " cores, the chip has " + std::to_string(config.cores));
  GraphBuilder builder(ops.name, cores);
  // Residency: every op graph tensor has an HBM buffer (graph inputs preloaded); the ones the
  // LX plan keeps between kernels also get an LX buffer for each core's slice.
  const std::uint64_t usable = config.core.lx.usable_bytes;
  ResidencyPlan residency = plan_residency(ops, ops.compile.lx_planning, cores, usable);
  LowerContext ctx{builder, ops, {}, cores, usable / 2, {}};
  ctx.stick_bytes = config.core.dma.stick_bytes;
  ctx.chip = &config;
  ctx.report = report;
  for (std::size_t t = 0; t < ops.tensors.size(); ++t) {
    const OpTensor& x = ops.tensors[t];
    ctx.hbm.push_back(builder.add_buffer(x.name, Space::hbm, x.bytes(), x.dtype, ops.is_input(static_cast<int>(t))));
    std::uint64_t kept = residency.kept_bytes[t];
    ctx.lx.push_back(kept ? builder.add_buffer(x.name + "@lx", Space::lx, kept, x.dtype) : -1);
  }
  for (int oi : ops.order) {
    const Op& op = ops.ops[oi];
    std::string kernel = op.op + "_" + ops.tensors[op.outputs[0]].name;
    ctx.budget = residency.tile_budget[static_cast<std::size_t>(oi)];
    builder.begin_kernel(kernel);
    const OpKind kind = find_op_info(op.op)->kind;
    if (kind == OpKind::matmul) lower_matmul(ctx, op, kernel);
    else if (kind == OpKind::sdpa) lower_sdpa(ctx, op, kernel);
    else if (kind == OpKind::transpose) lower_transpose(ctx, op, kernel);
    else if (kind == OpKind::cat) lower_cat(ctx, op, kernel);
    else lower_pointwise(ctx, op, kernel);
    if (report && report->kernel(kernel).ops.empty())
      report->kernel(kernel).ops.push_back(op.op + " -> " + ops.tensors[static_cast<std::size_t>(op.outputs[0])].name);
  }
  KernelGraph g = builder.take();
  g.description = "compiled by dfsim from " + (ops.file.empty() ? ops.name : ops.file) + " for " +
                  std::to_string(cores) + " cores";
  check_kernel_graph(g);
  if (report) report->measure(g, config);
  return g;
}

}  // namespace dfsim

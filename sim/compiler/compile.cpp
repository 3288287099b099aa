// Compiler driver: forms kernels (fusion pass), places tensors in HBM (aliases for free
// reshapes and in-place kv_write), plans LX residency, lowers each kernel through the
// lowering table (lowering_table.cpp), and checks the result like a loaded file.
#include "sim/compiler/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/fusion.h"
#include "sim/compiler/hbm_layout.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/residency.h"
#include "sim/compiler/sparse_outputs.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// compile.split of each op: the cores it names fit the compile's; non-matmul ops split one dim.
void check_compile_options(const OpGraph& g, int cores) {
  for (const Op& op : g.ops) {
    if (op.split.empty() || find_op_info(op.op)->kind == OpKind::matmul) continue;  // lower_matmul checks its own
    std::int64_t product = 1;
    for (const auto& [dim, n] : op.split) product *= n;
    const std::string at = fmt::format("/ops/{}/compile/split", op.index);
    if (product > cores) throw InputError(g.file, at, fmt::format("uses {} cores, the compile has {}", product, cores));
    const OpKind kind = find_op_info(op.op)->kind;
    const bool kept_dim = kind == OpKind::normalize || (kind == OpKind::reduce && op.keepdim);
    if (kept_dim && op.split.begin()->first == fmt::format("d{}", op.dim))
      throw InputError(g.file, at, fmt::format("{}: d{} is the reduced dim; split a kept dim", op.op, op.dim));
    if (op.split.size() > 1 || !is_rowwise(op))
      throw InputError(g.file, at,
                       fmt::format("{}: {}", op.op, is_rowwise(op) ? "a forced split names one output dim (d<i>)"
                                                                    : "a forced split applies to matmuls and rowwise ops"));
  }
}

// Per tensor: the tensor whose HBM buffer it shares (a free reshape's output, kv_write's
// updated cache), or -1.
std::vector<int> hbm_aliases(const OpGraph& g, std::uint64_t stick_bytes) {
  std::vector<int> alias(g.tensors.size(), -1);
  for (int oi : g.order) {
    const Op& op = g.ops[static_cast<std::size_t>(oi)];
    const OpKind kind = find_op_info(op.op)->kind;
    if (kind == OpKind::kv_write && !g.is_input(op.inputs[0]))
      throw InputError(g.file, fmt::format("/ops/{}/inputs/0", op.index),
                       "kv_write updates its cache in place, which must be a graph input (\"" +
                           g.tensors[static_cast<std::size_t>(op.inputs[0])].name + "\" is produced by an op)");
    if (kind == OpKind::kv_write || (kind == OpKind::reshape && reshape_is_alias(g, op, stick_bytes))) {
      int src = op.inputs[0];
      while (alias[static_cast<std::size_t>(src)] >= 0) src = alias[static_cast<std::size_t>(src)];
      alias[static_cast<std::size_t>(op.outputs[0])] = src;
    }
  }
  return alias;
}

}  // namespace

KernelGraph compile_ops(const OpGraph& ops, const ChipConfig& config, int cores, CompileReport* report,
                        std::uint64_t max_tasks) {
  // The passes read the HBM layout from the op graph: the chip's default when it does not say.
  if (!ops.compile.hbm_layout) {
    OpGraph resolved = ops;
    resolved.compile.hbm_layout = config.memory.hbm_layout;
    return compile_ops(resolved, config, cores, report, max_tasks);
  }
  if (cores < 1 || cores > config.cores)
    throw InputError(ops.file, "/compile/cores",
                     "asks for " + std::to_string(cores) + " cores, the chip has " + std::to_string(config.cores));
  check_compile_options(ops, cores);
  if (ops.compile.cards > config.system.cards)
    throw InputError(ops.file, "/compile/cards", "asks for " + std::to_string(ops.compile.cards) +
                                                     " cards, the system has " + std::to_string(config.system.cards) +
                                                     " (system.cards; configs/spyre-drawer.json has 8)");
  GraphBuilder builder(ops.name, cores);
  builder.limit_instances(max_tasks, ops.compile.cards);
  const std::uint64_t usable = config.core.lx.usable_bytes;
  const TensorUses uses(ops);
  std::vector<KernelPlan> kernels = form_kernels(ops, uses, cores, usable / 2);
  // Residency: every op graph tensor has an HBM buffer (graph inputs preloaded) unless it
  // aliases another's; the ones the LX plan keeps between kernels also get an LX buffer for
  // each core's slice.
  // Not candidates: tensors that live only inside a fused kernel, a matmul kernel's output (its
  // epilogue's last), which the matmul lowering stores from its own tiles, and the other operands
  // of its epilogue ops, which it loads from HBM in its own tiles (kept in LX, their producer
  // wrote only the LX slice and the epilogue waited for HBM bytes no task wrote).
  std::vector<bool> never_kept = fused_away_tensors(ops, uses, kernels);
  never_kept.resize(ops.tensors.size(), false);
  for (const KernelPlan& k : kernels)
    if (find_op_info(ops.ops[static_cast<std::size_t>(k.ops.front())].op)->kind == OpKind::matmul) {
      never_kept[static_cast<std::size_t>(ops.ops[static_cast<std::size_t>(k.ops.back())].outputs[0])] = true;
      for (std::size_t i = 1; i < k.ops.size(); ++i)
        for (int t : ops.ops[static_cast<std::size_t>(k.ops[i])].inputs) never_kept[static_cast<std::size_t>(t)] = true;
    }
  ResidencyPlan residency = plan_residency(ops, uses, ops.compile.lx_planning, cores, usable, never_kept);
  LowerContext ctx{builder, ops, {}, cores, usable / 2, {}};
  ctx.stick_bytes = config.core.dma.stick_bytes;
  ctx.chip = &config;
  ctx.report = report;
  ctx.uses = &uses;
  std::vector<int> alias = hbm_aliases(ops, ctx.stick_bytes);
  ctx.sparse = stick_sparse_tensors(ops, uses, kernels, residency, alias, cores, usable / 2, ctx.stick_bytes);
  ctx.hbm.assign(ops.tensors.size(), -1);
  // The names the compiler makes must not be the op graph's: a tensor's LX copy is "NAME@lx"
  // and everything a kernel makes is "KERNEL/...", so a tensor named so (legal in an op graph)
  // would give two buffers one name, as would two kernels of one name. Such a made name (a
  // buffer's, or a kernel's used as a prefix) takes a "~2", "~3", ... suffix.
  std::set<std::string> tensor_names;
  for (const OpTensor& x : ops.tensors) tensor_names.insert(x.name);
  auto free_name = [&](const std::string& base, bool as_prefix, std::set<std::string>& used) {
    auto taken = [&](const std::string& n) {
      if (used.count(n)) return true;
      if (!as_prefix) return tensor_names.count(n) > 0;
      auto it = tensor_names.lower_bound(n + "/");
      return it != tensor_names.end() && it->compare(0, n.size() + 1, n + "/") == 0;
    };
    std::string n = base;
    for (int i = 2; taken(n); ++i) n = base + "~" + std::to_string(i);
    used.insert(n);
    return n;
  };
  std::set<std::string> lx_names, kernel_names;
  for (std::size_t t = 0; t < ops.tensors.size(); ++t) {
    const OpTensor& x = ops.tensors[t];
    const std::uint64_t scale = ctx.sparse[t] ? sparse_scale(x.dtype, ctx.stick_bytes) : 1;
    if (alias[t] < 0)
      ctx.hbm[t] = builder.add_buffer(x.name, Space::hbm, x.bytes() * scale, x.dtype, ops.is_input(static_cast<int>(t)));
    std::uint64_t kept = residency.kept_bytes[t];
    ctx.lx.push_back(kept ? builder.add_buffer(free_name(x.name + "@lx", false, lx_names), Space::lx, kept, x.dtype) : -1);
  }
  for (std::size_t t = 0; t < ops.tensors.size(); ++t)
    if (alias[t] >= 0) ctx.hbm[t] = ctx.hbm[static_cast<std::size_t>(alias[t])];
  std::vector<std::optional<StickLayout>> planned = planned_layouts(ops, uses, ctx.hbm, alias, ctx.stick_bytes);
  for (std::size_t t = 0; t < ops.tensors.size(); ++t)  // a sparse tensor's sticks are its own layout
    if (ctx.sparse[t] && static_cast<std::size_t>(ctx.hbm[t]) < planned.size()) planned[static_cast<std::size_t>(ctx.hbm[t])].reset();
  ctx.layouts = &planned;
  std::vector<bool> cloned = residency.cloned;  // still to load
  const Op* lowering = &ops.ops.front();  // the op being lowered, for the instance limit's message
  try {
    for (const KernelPlan& k : kernels) {
      const Op& op = ops.ops[static_cast<std::size_t>(k.ops.front())];
      lowering = &op;
      for (int oi : k.ops)
        for (int t : ops.ops[static_cast<std::size_t>(oi)].inputs)
          if (cloned[static_cast<std::size_t>(t)]) {
            cloned[static_cast<std::size_t>(t)] = false;
            const std::string clone = free_name("clone_" + ops.tensors[static_cast<std::size_t>(t)].name, true, kernel_names);
            builder.begin_kernel(clone);
            lower_clone(ctx, t, residency.clone_split[static_cast<std::size_t>(t)], clone);
          }
      if (find_op_info(op.op)->kind == OpKind::reshape && alias[static_cast<std::size_t>(op.outputs[0])] >= 0) continue;
      std::string kernel = free_name(kernel_name(ops, k), true, kernel_names);
      ctx.budget = usable / 2;
      for (int oi : k.ops) ctx.budget = std::min(ctx.budget, residency.tile_budget[static_cast<std::size_t>(oi)]);
      builder.begin_kernel(kernel);
      try {
        if (k.matmul_epilogue) lower_matmul(ctx, op, kernel, std::vector<int>(k.ops.begin() + 1, k.ops.end()));
        else if (k.ops.size() > 1) lower_fused(ctx, k.ops, kernel);
        else lowering_for(find_op_info(op.op)->kind)(ctx, op, kernel);
      } catch (const HalfByteSplit& e) {
        // int4 packs two elements a byte: a division of the op's work must give every core (and
        // every tile) whole bytes, which this shape over these cores does not.
        throw InputError(ops.file, "/ops/" + std::to_string(op.index),
                         op.op + " on " + std::to_string(ctx.cores) + " cores: " + e.what() +
                             "; int4 work is divided at whole bytes only (try another core count, compile.split or an even extent)");
      }
      if (report && !k.not_fused.empty()) report->kernel(kernel).warnings.push_back(k.not_fused);
      if (report)
        for (int oi : k.ops)
          if (int t = ops.ops[static_cast<std::size_t>(oi)].outputs[0]; ctx.sparse[static_cast<std::size_t>(t)])
            report->kernel(kernel).layout = ops.tensors[static_cast<std::size_t>(t)].name +
                                            " stick-sparse: one " + std::to_string(ctx.stick_bytes) +
                                            "-byte stick per element, as the card stores a reduction over the stick dim";
      if (report && report->kernel(kernel).ops.empty())
        for (int oi : k.ops) {
          const Op& o = ops.ops[static_cast<std::size_t>(oi)];
          report->kernel(kernel).ops.push_back(o.op + " -> " + ops.tensors[static_cast<std::size_t>(o.outputs[0])].name);
        }
    }
  } catch (const InstanceLimitExceeded& e) {
    throw InputError(ops.file, "/ops/" + std::to_string(lowering->index),
                     lowering->op + ": compiling it takes the graph's task instances to more than --max-tasks " +
                         std::to_string(e.limit) + " (each costs host memory: raise the limit with --max-tasks N, or ask for fewer coarse tiles)");
  }
  if (builder.graph().tasks.empty())
    throw InputError(ops.file, "/ops", "every op is free (reshapes that alias their input): nothing moves, nothing to simulate");
  KernelGraph g = builder.take();
  // (No tensor laid out, e.g. row-major: nothing to map.)
  if (std::any_of(planned.begin(), planned.end(), [](const auto& l) { return l.has_value(); })) {
    std::vector<std::optional<StickLayout>> layouts = planned;
    layouts.resize(g.buffers.size());
    for (auto [made, like] : ctx.laid_out_like) layouts[static_cast<std::size_t>(made)] = layouts[static_cast<std::size_t>(like)];
    if (report) describe_layouts(g, layouts, ops.compile.hbm_layout.value_or("row_major"), *report);
    apply_stick_layout(g, layouts);
  }
  g.cards = ops.compile.cards;
  g.description = "compiled by dfsim from " + (ops.file.empty() ? ops.name : ops.file) + " for " +
                  std::to_string(cores) + " cores" + (g.cards > 1 ? " on each of " + std::to_string(g.cards) + " cards" : "");
  g.model = ops.model;
  // A check that fails on the compiled graph names the op graph it came from (not "<input>").
  g.file = ops.file.empty() ? "" : ops.file + " (compiled)";
  check_kernel_graph(g);
  g.file.clear();  // compiled in memory
  if (report) report->measure(g, config);
  return g;
}

}  // namespace dfsim

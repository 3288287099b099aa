// The card's generic stick layout of HBM tensors, applied after lowering (see hbm_layout.h).
#include "sim/compiler/hbm_layout.h"

#include <algorithm>
#include <set>
#include <utility>

#include "sim/compiler/spmd_merge.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

bool uses_stick_layout(const OpGraph& g) { return g.compile.hbm_layout.value_or("row_major") == "stick"; }

bool batched_matmul_tensor(const OpGraph& g, const TensorUses& uses, int t) {
  if (g.tensors[static_cast<std::size_t>(t)].shape.size() < 3) return false;
  auto matmul = [&](int op) { return op >= 0 && find_op_info(g.ops[static_cast<std::size_t>(op)].op)->kind == OpKind::matmul; };
  const std::vector<int>& readers = uses.readers(t);
  return matmul(uses.producer(t)) || std::any_of(readers.begin(), readers.end(), matmul);
}

std::optional<StickLayout> stick_layout(const OpGraph& g, int t, std::uint64_t stick_bytes) {
  const OpTensor& x = g.tensors[static_cast<std::size_t>(t)];
  const std::size_t n = x.shape.size();
  if (n == 0) return std::nullopt;
  const std::vector<int> order = stored_order(g, x);
  Shape p;
  for (int d : order) p.push_back(x.shape[static_cast<std::size_t>(d)]);
  StickLayout l;
  l.stick = stick_bytes;
  l.row_bytes = dtype_bytes(x.dtype, static_cast<std::uint64_t>(p[n - 1]));
  // Rank 1 ([p0/64, 64]) and a first stored dim of 1 are the layout of their row-major bytes
  // (device() is the identity): still the card's layout, whose runs the port rate charges.
  l.first = n == 1 ? 1 : static_cast<std::uint64_t>(p[0]);
  l.middle = n == 1 ? 1 : dims_product(p, 1, n - 1);
  if (l.first < 1 || l.row_bytes == 0 || l.row_bytes % stick_bytes != 0) return std::nullopt;
  return l;
}

std::vector<std::optional<StickLayout>> planned_layouts(const OpGraph& g, const TensorUses& uses, const std::vector<int>& hbm,
                                                        const std::vector<int>& alias, std::uint64_t stick_bytes) {
  const std::string mode = g.compile.hbm_layout.value_or("row_major");
  std::vector<std::optional<StickLayout>> layouts;
  if (mode == "row_major") return layouts;
  for (std::size_t t = 0; t < g.tensors.size(); ++t) {
    if (alias[t] >= 0 || hbm[t] < 0 || !(mode == "stick" || batched_matmul_tensor(g, uses, static_cast<int>(t)))) continue;
    const auto b = static_cast<std::size_t>(hbm[t]);
    if (layouts.size() <= b) layouts.resize(b + 1);
    layouts[b] = stick_layout(g, static_cast<int>(t), stick_bytes);
  }
  return layouts;
}

std::optional<std::vector<TileRange>> layout_tiles(const OpGraph& g, const OpTensor& out, int dim, std::int64_t share,
                                                   std::uint64_t unit, std::uint64_t fixed, std::uint64_t budget,
                                                   int min_tiles) {
  constexpr std::uint64_t kStickBytes = 128;  // the layout's stick (lower_pointwise.cpp)
  constexpr std::int64_t kBurstSticks = 32;
  if (!uses_stick_layout(g) || out.shape.size() < 2) return tile_units(share, unit, fixed, budget, min_tiles);
  if (dim == static_cast<int>(out.shape.size()) - 1) {
    const auto per = static_cast<std::int64_t>(std::max<std::uint64_t>(1, kStickBytes / dtype_bytes(out.dtype, 1)));
    if (share % per != 0) return tile_units(share, unit, fixed, budget, min_tiles);
    auto tiles = tile_units(share / per, unit * static_cast<std::uint64_t>(per), fixed, budget, min_tiles);
    if (tiles)
      for (TileRange& t : *tiles) t = TileRange{t.begin * per, t.size * per};
    return tiles;
  }
  return tile_units(share, unit, fixed, budget, static_cast<int>(std::clamp<std::int64_t>(share / kBurstSticks, 1, min_tiles)));
}

namespace {

// The device accesses of HBM access `a` on `core`, with absolute offsets.
std::vector<Access> device_accesses(const StickLayout& l, const Access& a, int core) {
  std::vector<Access> out;
  for (const DeviceRuns& d : device_runs(l, static_cast<std::uint64_t>(a.offset.at(core)), a.bytes, a.rows, a.stride)) {
    Access x = a;
    x.offset = Affine{0, static_cast<std::int64_t>(d.offset)};
    x.bytes = d.bytes;
    x.rows = d.rows;
    x.stride = d.rows > 1 ? d.stride : 0;
    out.push_back(x);
  }
  return out;
}

// Which side of a task may take several device accesses: a DMA load's reads (a gather), a DMA
// store's writes (a scatter). Elsewhere (links, HBM -> HBM copies) an access keeps its
// row-major bytes unless its device runs are one pattern (e.g. a whole tensor).
bool may_gather(const Task& t, bool reads) {
  return t.unit == UnitKind::dma && ((reads && t.op == "load") || (!reads && t.op == "store"));
}

// Access `a` of task `t` on `core`, absolute offsets: its device runs when its buffer has a
// layout (and the task may take several, or they are one), else itself.
std::vector<Access> on_core(const KernelGraph& g, const Task& t, const Access& a, bool reads, int core,
                            const std::vector<std::optional<StickLayout>>& layouts) {
  const std::optional<StickLayout>& l = layouts[static_cast<std::size_t>(a.buffer)];
  Access fixed = a;
  fixed.offset = Affine{0, a.offset.at(core)};
  if (a.core) fixed.core = Affine{0, a.core->at(core)};
  if (!l || g.buffers[static_cast<std::size_t>(a.buffer)].space != Space::hbm) return {fixed};
  std::vector<Access> d = device_accesses(*l, a, core);
  if (d.size() == 1 || may_gather(t, reads)) return d;
  return {fixed};
}

// The device step per core of access `a` whose row-major step is `alpha`, when one exists for
// every byte: a step of whole rows that moves the first stored dim only (k rows, k a multiple
// of the middle dims' rows) moves every stick by the same k / middle sticks.
std::optional<std::int64_t> device_step(const std::optional<StickLayout>& l, std::int64_t alpha) {
  if (!l || alpha == 0) return alpha;
  if (alpha < 0 || static_cast<std::uint64_t>(alpha) % l->row_bytes != 0) return std::nullopt;
  const std::uint64_t k = static_cast<std::uint64_t>(alpha) / l->row_bytes;
  if (k % l->middle != 0) return std::nullopt;
  return static_cast<std::int64_t>(k / l->middle * l->stick);
}

// The task as one template over its cores when every layout access has a device step, from
// its first core's device runs.
std::optional<Task> as_template(const KernelGraph& g, const Task& t, const std::vector<std::optional<StickLayout>>& layouts) {
  Task c = t;
  auto rewrite = [&](std::vector<Access>& acc, bool reads) {
    std::vector<Access> out;
    for (const Access& a : acc) {
      const bool hbm = g.buffers[static_cast<std::size_t>(a.buffer)].space == Space::hbm;
      const std::optional<StickLayout>& l = hbm ? layouts[static_cast<std::size_t>(a.buffer)] : std::nullopt;
      std::optional<std::int64_t> step = device_step(l, a.offset.alpha);
      if (!step) return false;
      if (!l) {
        out.push_back(a);
        continue;
      }
      std::vector<Access> d = device_accesses(*l, a, t.first_core);
      if (d.size() > 1 && !may_gather(t, reads)) {  // kept row-major (on_core): its own step
        out.push_back(a);
        continue;
      }
      for (Access& x : d) x.offset = Affine{*step, x.offset.beta - *step * t.first_core};
      out.insert(out.end(), d.begin(), d.end());
    }
    acc = std::move(out);
    return true;
  };
  if (!rewrite(c.reads, true) || !rewrite(c.writes, false)) return std::nullopt;
  return c;
}

// The task on one core: absolute offsets, layout accesses replaced by their device runs.
Task on_core(const KernelGraph& g, const Task& t, int core, const std::vector<std::optional<StickLayout>>& layouts) {
  Task c = t;
  c.first_core = core;
  c.core_count = 1;
  auto rewrite = [&](std::vector<Access>& acc, bool reads) {
    std::vector<Access> out;
    for (const Access& a : acc) {
      std::vector<Access> d = on_core(g, t, a, reads, core, layouts);
      out.insert(out.end(), d.begin(), d.end());
    }
    acc = std::move(out);
  };
  rewrite(c.reads, true);
  rewrite(c.writes, false);
  return c;
}

bool touches_layout(const KernelGraph& g, const Task& t, const std::vector<std::optional<StickLayout>>& layouts) {
  for (const auto* acc : {&t.reads, &t.writes})
    for (const Access& a : *acc)
      if (layouts[static_cast<std::size_t>(a.buffer)] && g.buffers[static_cast<std::size_t>(a.buffer)].space == Space::hbm)
        return true;
  return false;
}

}  // namespace

void describe_layouts(const KernelGraph& g, const std::vector<std::optional<StickLayout>>& layouts,
                      const std::string& mode, CompileReport& report) {
  for (const Kernel& k : g.kernels) {
    std::set<std::string> names;
    for (int ti : k.tasks)
      for (const auto* acc : {&g.tasks[static_cast<std::size_t>(ti)].reads, &g.tasks[static_cast<std::size_t>(ti)].writes})
        for (const Access& a : *acc) {
          const Buffer& b = g.buffers[static_cast<std::size_t>(a.buffer)];
          if (b.space == Space::hbm && layouts[static_cast<std::size_t>(a.buffer)]) names.insert(b.name);
        }
    if (names.empty()) continue;
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    std::string& layout = report.kernel(k.name).layout;
    layout += (layout.empty() ? "" : "; ") + list + " in the card's stick layout (hbm_layout \"" + mode + "\")";
  }
}

void apply_stick_layout(KernelGraph& g, const std::vector<std::optional<StickLayout>>& all) {
  // Every laid-out buffer is marked; only those not laid out as their own bytes move any access
  // (a batch of 1's tensors rewrite nothing: a whole prefill's 1.1 M templates stay in place).
  std::vector<std::optional<StickLayout>> layouts(g.buffers.size());
  bool moves = false;
  for (std::size_t b = 0; b < g.buffers.size() && b < all.size(); ++b) {
    if (!all[b] || g.buffers[b].space != Space::hbm) continue;
    g.buffers[b].stick_layout = true;
    if (all[b]->identity()) continue;
    layouts[b] = all[b];
    moves = true;
  }
  if (!moves) return;
  std::vector<Task> tasks;
  tasks.reserve(g.tasks.size());
  for (Kernel& k : g.kernels) {
    std::vector<int> ids;
    for (int ti : k.tasks) {
      Task& t = g.tasks[static_cast<std::size_t>(ti)];
      std::vector<Task> out;
      if (!touches_layout(g, t, layouts)) {
        out.push_back(std::move(t));
      } else {
        std::optional<Task> tpl = t.core_count > 1 ? as_template(g, t, layouts) : std::nullopt;
        if (tpl) {
          out.push_back(std::move(*tpl));
        } else {
          std::vector<Task> per_core;
          for (int c = t.first_core; c < t.first_core + t.core_count; ++c) per_core.push_back(on_core(g, t, c, layouts));
          out = fold_core_tasks(std::move(per_core), t.name);
        }
      }
      for (Task& x : out) {
        ids.push_back(static_cast<int>(tasks.size()));
        tasks.push_back(std::move(x));
      }
    }
    k.tasks = std::move(ids);
  }
  g.tasks = std::move(tasks);
}

}  // namespace dfsim

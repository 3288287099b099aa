// Lowering of the matmul family (matmul with batch dims and transposed operands, linear):
// a plan (matmul_plan.h) divides batches, M, N and K over the cores; per core, tiles of m x n
// with a chain of k-steps on the PT; the A tile of a grid row and the B tile of a grid column
// are loaded once, in bands, and multicast; K parts meet in a ring tree; an epilogue of
// elementwise ops runs on the SFP before each output tile is stored.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/matmul_accumulate.h"
#include "sim/compiler/matmul_epilogue.h"
#include "sim/compiler/matmul_plan.h"
#include "sim/compiler/spmd_merge.h"
#include "sim/config/chip_config.h"
#include "sim/graph/op_shapes.h"

namespace dfsim {

namespace {

// A core's place in the plan and the ranges it owns.
struct CoreRange {
  int bg = 0, kk = 0, r = 0, c = 0;
  std::int64_t b0 = 0, nb = 0, m0 = 0, nm = 0, n0 = 0, nn = 0, k0 = 0, nk = 0;
};

std::int64_t clip(std::int64_t begin, std::int64_t size, std::int64_t extent) {
  return std::max<std::int64_t>(0, std::min(begin + size, extent) - begin);
}

class MatmulEmitter {
 public:
  MatmulEmitter(LowerContext& ctx, const MatmulProblem& p, const MatmulPlan& plan, std::vector<EpilogueStep> steps,
                const OpTensor& stored, int stored_hbm, std::string kernel)
      : ctx_(ctx), p_(p), plan_(plan), steps_(std::move(steps)), out_(stored), out_hbm_(stored_hbm),
        kernel_(std::move(kernel)) {
    const int R = plan.rows, C = plan.cols, KS = plan.ksplit;
    for (int x = 0; x < plan.cores(); ++x) {
      CoreRange cr;
      cr.c = x % C;
      cr.r = (x / C) % R;
      cr.kk = (x / (C * R)) % KS;
      cr.bg = x / (C * R * KS);
      cr.b0 = cr.bg * plan.bshare;
      cr.nb = clip(cr.b0, plan.bshare, p.batches);
      cr.m0 = cr.r * plan.mshare;
      cr.nm = clip(cr.m0, plan.mshare, p.M);
      cr.n0 = cr.c * plan.nshare;
      cr.nn = clip(cr.n0, plan.nshare, p.N);
      cr.k0 = cr.kk * plan.kpart;
      cr.nk = clip(cr.k0, plan.kpart, p.K);
      cores_.push_back(cr);
    }
    mt_ = split_even(plan.mshare, plan.tile.m);
    nt_ = split_even(plan.nshare, plan.tile.n);
    // K steps along a stored operand's stick dim are whole sticks (the last may be shorter).
    kt_ = split_sticks(plan.kpart, plan.tile.k,
                       matmul_k_stick(p.a.transposed, p.b.transposed, stick_elements(ctx.stick_bytes, p.a.tensor->dtype)));
  }

  void emit() {
    const std::int64_t nb = plan_.bshare;
    std::map<std::pair<std::size_t, std::size_t>, int> a_kept;  // (mi, ki) -> resident A tile
    // The A tile of m tile mi, k step ki (all of K when ki is absent): loaded, or kept from the
    // first batch when A stays in LX.
    auto a_tile = [&](const std::string& prefix, std::int64_t j, std::size_t mi, std::optional<std::size_t> ni,
                      std::size_t ki) {
      if (!plan_.a_resident) return load_a(prefix, j, mi, ni, ki);
      auto it = a_kept.find({mi, ki});
      if (it != a_kept.end()) return it->second;
      return a_kept[{mi, ki}] = load_a(prefix, j, mi, std::nullopt, ki);
    };
    for (std::int64_t j = 0; j < nb; ++j) {
      std::string bp = kernel_ + (nb > 1 ? "/b" + std::to_string(j) : "");
      std::map<std::pair<std::size_t, std::size_t>, int> b_kept;  // (ni, ki) -> resident B tile
      for (std::size_t mi = 0; mi < mt_.size(); ++mi) {
        std::string mp = bp + "/m" + std::to_string(mi);
        int a_shared = kt_.size() == 1 ? a_tile(mp, j, mi, std::nullopt, 0) : -1;
        for (std::size_t ni = 0; ni < nt_.size(); ++ni) {
          std::string np = mp + "/n" + std::to_string(ni);
          std::vector<int> cur(cores_.size(), -1);
          for (std::size_t ki = 0; ki < kt_.size(); ++ki) {
            std::string kp = np + "/k" + std::to_string(ki);
            int a = a_shared >= 0 ? a_shared : a_tile(kp, j, mi, ni, ki);
            int b;
            if (plan_.b_resident && mi > 0) {
              b = b_kept.at({ni, ki});
            } else {
              b = load_b(kp, j, mi, ni, ki);
              if (plan_.b_resident) b_kept[{ni, ki}] = b;
            }
            matmul_step(kp, j, mi, ni, ki, a, b, cur);
          }
          reduce_parts(np, j, mi, ni, cur);
          run_epilogue(np, j, mi, ni, cur);
          store(np, j, mi, ni, cur);
        }
      }
    }
  }

 private:
  // The core's tile extents (0 when it has no work there).
  std::int64_t tile_m(const CoreRange& c, std::size_t mi) const { return clip(mt_[mi].begin, mt_[mi].size, c.nm); }
  std::int64_t tile_n(const CoreRange& c, std::size_t ni) const { return clip(nt_[ni].begin, nt_[ni].size, c.nn); }
  std::int64_t tile_k(const CoreRange& c, std::size_t ki) const { return clip(kt_[ki].begin, kt_[ki].size, c.nk); }
  bool active(const CoreRange& c, std::int64_t j) const { return j < c.nb; }
  int core_of(int bg, int kk, int r, int c) const {
    return ((bg * plan_.ksplit + kk) * plan_.rows + r) * plan_.cols + c;
  }

  // Loads a tile of `m` (stored rows [sr, sr+snr) x cols [sc, sc+snc) of batch b) into `buf`
  // on every core of `sharers`, in bands of rows.
  void band_load(CoreTasks& tasks, const StoredMatrix& m, int hbm, int buf, std::int64_t b, std::int64_t sr,
                 std::int64_t snr, std::int64_t sc, std::int64_t snc, const std::vector<int>& sharers) {
    SlicePattern first = m.stored_block(b, sr, 1, sc, snc);
    const std::uint64_t stride = dtype_bytes(m.tensor->dtype, static_cast<std::uint64_t>(m.row_stride ? m.row_stride : m.stored_cols()));
    emit_band_multicast(tasks, hbm, first.offset, static_cast<std::uint64_t>(snr), first.bytes, stride, buf, sharers,
                        m.tensor->dtype, multicast_reach(ctx_));
  }

  // The A tile (m tile mi, k step ki or the core's whole K part) of every grid row, shared by
  // the row's cores that have an n tile ni (any n tile when ni is absent).
  int load_a(const std::string& prefix, std::int64_t j, std::size_t mi, std::optional<std::size_t> ni, std::size_t ki) {
    const std::int64_t ksz = kt_[ki].size;
    int buf = ctx_.builder.add_buffer(prefix + "/" + p_.a.tensor->name, Space::lx,
                                      dtype_bytes(p_.a.tensor->dtype, static_cast<std::uint64_t>(mt_[mi].size * ksz)),
                                      p_.a.tensor->dtype);
    CoreTasks tasks(prefix + "/load_" + p_.a.tensor->name);
    for (std::size_t x = 0; x < cores_.size(); ++x) {
      const CoreRange& cr = cores_[x];
      if (cr.c != 0 || !active(cr, j)) continue;  // one band set per grid row
      std::int64_t m = tile_m(cr, mi), k = tile_k(cr, ki);
      if (m == 0 || k == 0) continue;
      std::vector<int> sharers;
      for (int c = 0; c < plan_.cols; ++c) {
        const CoreRange& o = cores_[static_cast<std::size_t>(core_of(cr.bg, cr.kk, cr.r, c))];
        if (ni ? tile_n(o, *ni) > 0 : o.nn > 0) sharers.push_back(core_of(cr.bg, cr.kk, cr.r, c));
      }
      std::int64_t m0 = cr.m0 + mt_[mi].begin, k0 = cr.k0 + kt_[ki].begin;
      auto [sr, snr, sc, snc] = p_.a.transposed ? std::tuple{k0, k, m0, m} : std::tuple{m0, m, k0, k};
      band_load(tasks, p_.a, ctx_.hbm[p_.a.index], buf, cr.b0 + j, sr, snr, sc, snc, sharers);
    }
    tasks.flush(ctx_.builder);
    return buf;
  }

  // The B tile (k step ki, n tile ni) of every grid column, shared by the column's cores that
  // have an m tile mi.
  int load_b(const std::string& prefix, std::int64_t j, std::size_t mi, std::size_t ni, std::size_t ki) {
    int buf = ctx_.builder.add_buffer(prefix + "/" + p_.b.tensor->name, Space::lx,
                                      dtype_bytes(p_.b.tensor->dtype, static_cast<std::uint64_t>(kt_[ki].size * nt_[ni].size)),
                                      p_.b.tensor->dtype);
    CoreTasks tasks(prefix + "/load_" + p_.b.tensor->name);
    for (std::size_t x = 0; x < cores_.size(); ++x) {
      const CoreRange& cr = cores_[x];
      if (cr.r != 0 || !active(cr, j)) continue;  // one band set per grid column
      std::int64_t n = tile_n(cr, ni), k = tile_k(cr, ki);
      if (n == 0 || k == 0) continue;
      std::vector<int> sharers;
      for (int r = 0; r < plan_.rows; ++r) {
        const CoreRange& o = cores_[static_cast<std::size_t>(core_of(cr.bg, cr.kk, r, cr.c))];
        if (plan_.b_resident ? o.nm > 0 : tile_m(o, mi) > 0) sharers.push_back(core_of(cr.bg, cr.kk, r, cr.c));
      }
      std::int64_t n0 = cr.n0 + nt_[ni].begin, k0 = cr.k0 + kt_[ki].begin;
      auto [sr, snr, sc, snc] = p_.b.transposed ? std::tuple{n0, n, k0, k} : std::tuple{k0, k, n0, n};
      band_load(tasks, p_.b, ctx_.hbm[p_.b.index], buf, cr.b0 + j, sr, snr, sc, snc, sharers);
    }
    tasks.flush(ctx_.builder);
    return buf;
  }

  // Lazily created LX buffers of one step, by name.
  int buffer(const std::string& name, Dtype dt, std::uint64_t elements) {
    auto it = made_.find(name);
    if (it != made_.end()) return it->second;
    return made_[name] = ctx_.builder.add_buffer(name, Space::lx, dtype_bytes(dt, elements), dt);
  }

  Dtype matmul_out() const { return ctx_.ops.tensors[static_cast<std::size_t>(op_out_)].dtype; }

  void matmul_step(const std::string& kp, std::int64_t j, std::size_t mi, std::size_t ni, std::size_t ki, int a, int b,
                   std::vector<int>& cur) {
    CoreTasks tasks(kp + "/matmul");
    const auto full = static_cast<std::uint64_t>(mt_[mi].size * nt_[ni].size);
    for (std::size_t x = 0; x < cores_.size(); ++x) {
      const CoreRange& cr = cores_[x];
      std::int64_t m = tile_m(cr, mi), n = tile_n(cr, ni), k = tile_k(cr, ki);
      if (!active(cr, j) || m == 0 || n == 0 || k == 0) continue;
      const bool last = ki + 1 == kt_.size() || tile_k(cr, ki + 1) == 0;
      const bool final = last && plan_.ksplit == 1;
      const Dtype od = final ? matmul_out() : Dtype::fp32;
      int out = buffer(kp + (final ? "/" + ctx_.ops.tensors[static_cast<std::size_t>(op_out_)].name : "/acc"), od, full);
      const auto elems = static_cast<std::uint64_t>(m * n);
      Task t = group_task("", UnitKind::pt, "matmul", CoreGroup{static_cast<int>(x), 1, 0, 0}, od);
      t.m = static_cast<std::uint64_t>(m);
      t.n = static_cast<std::uint64_t>(n);
      t.k = static_cast<std::uint64_t>(k);
      // A matmul whose K is split over cores runs on one corelet of each (the card's backend
      // leaves an op with a cross-core reduction on one corelet: half the PT throughput).
      if (plan_.ksplit > 1) t.corelet = 0;
      t.reads = {whole(a, dtype_bytes(p_.a.tensor->dtype, static_cast<std::uint64_t>(m * k))),
                 whole(b, dtype_bytes(p_.b.tensor->dtype, static_cast<std::uint64_t>(k * n)))};
      if (cur[x] >= 0) t.reads.push_back(whole(cur[x], dtype_bytes(Dtype::fp32, elems)));
      t.writes.push_back(whole(out, dtype_bytes(od, elems)));
      tasks.add(std::move(t));
      cur[x] = out;
    }
    tasks.flush(ctx_.builder);
  }

  // K parts meet in a binary tree: at step s, K group kk + s sends its partial to group kk (a
  // multiple of 2s), core for core, and group kk adds the two on its SFP.
  void reduce_parts(const std::string& np, std::int64_t j, std::size_t mi, std::size_t ni, std::vector<int>& cur) {
    const int KS = plan_.ksplit, RC = plan_.rows * plan_.cols;
    const auto full = static_cast<std::uint64_t>(mt_[mi].size * nt_[ni].size);
    for (int s = 1; s < KS; s *= 2) {
      const bool final = 2 * s >= KS;
      std::string tp = np + "/tree" + std::to_string(s);
      int recv = buffer(tp + "/received", Dtype::fp32, full);
      const Dtype od = final ? matmul_out() : Dtype::fp32;
      int sum = buffer(tp + (final ? "/" + ctx_.ops.tensors[static_cast<std::size_t>(op_out_)].name : "/partial"), od, full);
      CoreTasks send(tp + "/send"), add(tp + "/add");
      std::vector<int> next = cur;
      for (std::size_t x = 0; x < cores_.size(); ++x) {
        const CoreRange& cr = cores_[x];
        std::int64_t m = tile_m(cr, mi), n = tile_n(cr, ni);
        if (!active(cr, j) || m == 0 || n == 0 || cr.kk % (2 * s) != 0) continue;
        const auto elems = static_cast<std::uint64_t>(m * n);
        const auto from = static_cast<std::size_t>(static_cast<int>(x) + s * RC);
        const bool partner = cr.kk + s < KS && cur[from] >= 0;
        if (partner) {
          Task c = group_task("", UnitKind::ring, "copy", CoreGroup{static_cast<int>(from), 1, 0, 0}, Dtype::fp32);
          c.reads.push_back(whole(cur[from], dtype_bytes(Dtype::fp32, elems)));
          Access to = whole(recv, dtype_bytes(Dtype::fp32, elems));
          to.core = Affine{0, static_cast<int>(x)};
          c.writes.push_back(to);
          send.add(std::move(c));
        }
        // Group kk adds the received partial (or, without a partner, converts its own).
        Task a = group_task("", UnitKind::sfp, partner ? "add" : "copy", CoreGroup{static_cast<int>(x), 1, 0, 0}, od);
        a.elements = elems;
        a.reads.push_back(whole(cur[x], dtype_bytes(Dtype::fp32, elems)));
        if (partner) a.reads.push_back(whole(recv, dtype_bytes(Dtype::fp32, elems)));
        a.writes.push_back(whole(sum, dtype_bytes(od, elems)));
        add.add(std::move(a));
        next[x] = sum;
      }
      send.flush(ctx_.builder);
      add.flush(ctx_.builder);
      cur = next;
    }
  }

  void run_epilogue(const std::string& np, std::int64_t j, std::size_t mi, std::size_t ni, std::vector<int>& cur) {
    const auto full = static_cast<std::uint64_t>(mt_[mi].size * nt_[ni].size);
    for (std::size_t si = 0; si < steps_.size(); ++si) {
      const EpilogueStep& s = steps_[si];
      std::string sp = np + "/" + s.op + (steps_.size() > 1 ? std::to_string(si) : "");
      int operand = -1;
      CoreTasks loads(sp + "/load_" + (s.operand >= 0 ? ctx_.ops.tensors[static_cast<std::size_t>(s.operand)].name : ""));
      CoreTasks sfp(sp);
      if (s.operand >= 0) {
        const OpTensor& t = ctx_.ops.tensors[static_cast<std::size_t>(s.operand)];
        operand = buffer(sp + "/" + t.name, t.dtype, s.row_vector ? static_cast<std::uint64_t>(nt_[ni].size) : full);
      }
      const bool last = si + 1 == steps_.size();
      int out = buffer(sp + (last ? "/" + out_.name : "/out"), s.out, full);
      for (std::size_t x = 0; x < cores_.size(); ++x) {
        const CoreRange& cr = cores_[x];
        std::int64_t m = tile_m(cr, mi), n = tile_n(cr, ni);
        if (!active(cr, j) || m == 0 || n == 0 || cr.kk != 0) continue;
        const auto elems = static_cast<std::uint64_t>(m * n);
        const CoreGroup one{static_cast<int>(x), 1, 0, 0};
        Task t = group_task("", UnitKind::sfp, s.op, one, s.out);
        t.elements = elems;
        t.reads.push_back(whole(cur[x], dtype_bytes(ctx_.builder.graph().buffers[static_cast<std::size_t>(cur[x])].dtype, elems)));
        if (operand >= 0) {
          const OpTensor& ot = ctx_.ops.tensors[static_cast<std::size_t>(s.operand)];
          std::int64_t m0 = cr.m0 + mt_[mi].begin, n0 = cr.n0 + nt_[ni].begin;
          SlicePattern pat;
          if (s.row_vector) {
            pat.offset = dtype_bytes(ot.dtype, static_cast<std::uint64_t>(n0));
            pat.bytes = dtype_bytes(ot.dtype, static_cast<std::uint64_t>(n));
            pat.elements = static_cast<std::uint64_t>(n);
          } else {
            pat = s.view.block(cr.b0 + j, m0, m, n0, n);
          }
          Task ld = group_task("", UnitKind::dma, "load", one, ot.dtype);
          ld.reads.push_back(hbm_slice(ctx_.hbm[static_cast<std::size_t>(s.operand)], pat, UnitStep{}, CoreGroup{}));
          ld.writes.push_back(whole(operand, pat.total_bytes()));
          loads.add(std::move(ld));
          t.reads.push_back(whole(operand, pat.total_bytes()));
        }
        t.writes.push_back(whole(out, dtype_bytes(s.out, elems)));
        sfp.add(std::move(t));
        cur[x] = out;
      }
      loads.flush(ctx_.builder);
      sfp.flush(ctx_.builder);
    }
  }

  void store(const std::string& np, std::int64_t j, std::size_t mi, std::size_t ni, const std::vector<int>& cur) {
    CoreTasks tasks(np + "/store_" + out_.name);
    StoredMatrix c = p_.c;
    c.tensor = &out_;
    for (std::size_t x = 0; x < cores_.size(); ++x) {
      const CoreRange& cr = cores_[x];
      std::int64_t m = tile_m(cr, mi), n = tile_n(cr, ni);
      if (!active(cr, j) || m == 0 || n == 0 || cr.kk != 0) continue;
      SlicePattern pat = c.block(cr.b0 + j, cr.m0 + mt_[mi].begin, m, cr.n0 + nt_[ni].begin, n);
      Task t = group_task("", UnitKind::dma, "store", CoreGroup{static_cast<int>(x), 1, 0, 0}, out_.dtype);
      t.reads.push_back(whole(cur[x], pat.total_bytes()));
      t.writes.push_back(hbm_slice(out_hbm_, pat, UnitStep{}, CoreGroup{}));
      tasks.add(std::move(t));
      last_stored_ = cur[x];
    }
    tasks.flush(ctx_.builder);
  }

 public:
  int op_out_ = -1;       // the matmul's own output tensor
  int last_stored_ = -1;  // the LX buffer of the last output tile stored

 private:
  LowerContext& ctx_;
  const MatmulProblem& p_;
  const MatmulPlan& plan_;
  std::vector<EpilogueStep> steps_;
  const OpTensor& out_;  // the tensor the kernel stores (the epilogue's last output)
  int out_hbm_;
  std::string kernel_;
  std::vector<CoreRange> cores_;
  std::vector<TileRange> mt_, nt_, kt_;
  std::map<std::string, int> made_;
};

// How often a tile shared by `sharers` cores is loaded, one multicast per group of `reach`.
std::string loads_text(int sharers, int reach) {
  if (multicast_loads(sharers, reach) == 1) return "once";
  return fmt::format("{} times (once per {} cores, ring.multicast_max_cores)", multicast_loads(sharers, reach), reach);
}

std::string split_text(const MatmulPlan& plan, int cores) {
  return division_text(plan) + fmt::format(" ({} of {} cores)", plan.cores(), cores);
}

void describe(LowerContext& ctx, const std::string& kernel, const Op& op, const std::vector<int>& epilogue,
              const MatmulProblem& p, const MatmulPlan& plan) {
  if (!ctx.report) return;
  KernelReport& r = ctx.report->kernel(kernel);
  const OpGraph& g = ctx.ops;
  r.ops.push_back(op.op + " -> " + g.tensors[static_cast<std::size_t>(op.outputs[0])].name);
  for (int e : epilogue)
    r.ops.push_back(g.ops[static_cast<std::size_t>(e)].op + " -> " +
                    g.tensors[static_cast<std::size_t>(g.ops[static_cast<std::size_t>(e)].outputs[0])].name);
  r.split = split_text(plan, ctx.cores);
  r.why = plan.why;
  if (plan.bshare > 1) r.loops.push_back(fmt::format("batch: {} per core", plan.bshare));
  r.loops.push_back(fmt::format("M: {} tiles of {} rows", plan.m_tiles(), plan.tile.m));
  r.loops.push_back(fmt::format("N: {} tiles of {} columns", plan.n_tiles(), plan.tile.n));
  r.loops.push_back(fmt::format("K: {} steps of {}", plan.k_tiles(), plan.tile.k));
  if (plan.a_resident)
    r.lx_resident.push_back(fmt::format("{}: the core's {} x {} block, the same for every batch, loaded once for its {} "
                                        "batches", p.a.tensor->name, plan.mshare, plan.kpart, plan.bshare));
  if (plan.b_resident)
    r.lx_resident.push_back(fmt::format("{}: the core's {} x {} block, loaded once for all {} m tiles",
                                        p.b.tensor->name, plan.kpart, plan.nshare, plan.m_tiles()));
  if (plan.k_tiles() == 1 && plan.n_tiles() > 1)
    r.lx_resident.push_back(fmt::format("{}: each m tile, shared by the {} n tiles", p.a.tensor->name, plan.n_tiles()));
  if (plan.rows * plan.cols == 1)
    r.sharing = "off: one core per grid (nothing to share)";
  else
    r.sharing = fmt::format("on: the {} tile of a grid row is loaded {} for its {} cores, the {} tile of a grid "
                            "column {} for its {} cores (bands, multicast)",
                            p.a.tensor->name, loads_text(plan.cols, multicast_reach(ctx)), plan.cols, p.b.tensor->name,
                            loads_text(plan.rows, multicast_reach(ctx)), plan.rows);
  r.estimate_ns = plan.estimate_ns;
  r.estimate_terms_ns = {{"compute", plan.compute_ns}, {"memory", plan.memory_ns}};
  if (plan.port_requests_ns > 0) r.estimate_terms_ns.emplace_back("port requests", plan.port_requests_ns);
  r.estimate_terms_ns.emplace_back("DMA", plan.dma_ns);
  r.estimate_terms_ns.emplace_back("fill and drain", plan.fill_ns);
  if (plan.cores() < ctx.cores)
    r.warnings.push_back(fmt::format("{} of {} cores idle: {}", ctx.cores - plan.cores(), ctx.cores,
                                     plan.why == "forced by split" ? "the forced split uses fewer"
                                                                   : "no division on more cores has a better estimate"));
  if (p.M % plan.mshare != 0 || p.N % plan.nshare != 0 || p.K % plan.kpart != 0 || p.batches % plan.bshare != 0)
    r.warnings.push_back(fmt::format("the grid does not divide evenly (shares B {} M {} N {} K {}): the last parts are "
                                     "smaller, their cores idle part of the time",
                                     plan.bshare, plan.mshare, plan.nshare, plan.kpart));
  if (!plan.b_resident && plan.m_tiles() > 1)
    r.warnings.push_back(fmt::format("{} is re-read for each of the {} m tiles ({} MiB in all); lx_planning keeps it "
                                     "in LX when the core's block fits",
                                     p.b.tensor->name, plan.m_tiles(),
                                     static_cast<double>(dtype_bytes(p.b.tensor->dtype, static_cast<std::uint64_t>(p.K * p.N)) *
                                                         static_cast<std::uint64_t>(plan.m_tiles() * p.batches)) /
                                         (1 << 20)));
}

// The parts of K of a coarse-tile loop over K (compile.tiles {"K": T}, the card's
// num_tiles_per_dim hint on the reduction dim): one part without one.
std::vector<TileRange> k_parts(const MatmulProblem& p, const std::map<std::string, std::int64_t>& tiles) {
  auto it = tiles.find("K");
  const std::int64_t n = it == tiles.end() ? 1 : std::max<std::int64_t>(it->second, 1);
  return split_even(p.K, (p.K + n - 1) / n);
}

}  // namespace

void lower_matmul(LowerContext& ctx, const Op& op, const std::string& kernel, const std::vector<int>& epilogue) {
  const OpGraph& g = ctx.ops;
  if (!ctx.chip) throw std::logic_error("lower_matmul: LowerContext::chip is not set");
  MatmulProblem p = matmul_problem(g, op);
  if (ctx.layouts)  // the layouts the pass after lowering stores them in, for the plan's estimate
    for (StoredMatrix* m : {&p.a, &p.b, &p.c}) {
      const auto buffer = static_cast<std::size_t>(ctx.hbm[static_cast<std::size_t>(m->index)]);
      if (buffer < ctx.layouts->size()) m->layout = (*ctx.layouts)[buffer];
    }
  std::vector<EpilogueStep> steps = epilogue_steps(g, p, op, epilogue);
  const int stored = epilogue.empty() ? op.outputs[0] : g.ops[static_cast<std::size_t>(epilogue.back())].outputs[0];
  MatmulConstraints c;
  c.cores = ctx.cores;
  c.budget = ctx.budget;
  c.split = op.split;
  c.tiles = op.tiles;
  c.tiles.erase("K");  // a loop over K runs its parts one after another (below)
  c.keep_invariant = g.compile.lx_planning > LxPlanning::none;
  for (const EpilogueStep& s : steps)
    if (s.operand >= 0 && !s.row_vector) c.extra_bytes_per_output += static_cast<double>(dtype_bytes(s.view.tensor->dtype, 1));
  const std::string at = "/ops/" + std::to_string(op.index) + (op.work_division ? "/attrs/work_division" : "/compile/split");
  if (!op.split.empty()) {
    std::int64_t product = 1;
    for (const auto& [d, v] : op.split) {
      if (d != "B" && d != "M" && d != "N" && d != "K")
        throw InputError(g.file, at, "unknown dim \"" + d + "\" for " + op.op + ", expected B, M, N or K");
      product *= v;
    }
    if (product > ctx.cores)
      throw InputError(g.file, at, fmt::format("needs {} cores (the product of the split), the program has {}", product,
                                               ctx.cores));
  }
  // A coarse-tile loop over K runs each part of K as a matmul kernel of its own, one after
  // another, as the card's loop body does: the part's product is stored, and from the second
  // part on an elementwise pass adds it to the running sum, which round-trips HBM
  // (docs/compiler.md, coarse tiles of a matmul).
  const std::vector<TileRange> parts = k_parts(p, op.tiles);
  const OpTensor& out = g.tensors[static_cast<std::size_t>(stored)];
  const int out_hbm = ctx.hbm[static_cast<std::size_t>(stored)];
  std::map<std::int64_t, MatmulPlan> plans;  // by the part's K
  std::optional<MatmulPlan> first_plan;
  MatmulProblem first_problem;
  double estimate_ns = 0;
  int before = -1;  // the LX buffer of the last tile the iteration before stored
  int sum = -1;     // the HBM buffer of the running sum
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    MatmulProblem q = parts.size() == 1 ? p : k_part(p, parts[i].begin, parts[i].size);
    auto it = plans.find(q.K);
    if (it == plans.end()) {
      std::optional<MatmulPlan> plan = choose_matmul_plan(q, *ctx.chip, c);
      if (!plan) {
        // (Both limits named: which one failed depends on the division tried.)
        const std::string limits = fmt::format("a core's part of each operand must span at most {} MiB of memory and its "
                                               "smallest tile fit the {}-byte tile budget (docs/compiler.md, work division)",
                                               kMaxSpanBytes >> 20, ctx.budget);
        const std::string what = fmt::format("{} x [{}, {}] @ [{}, {}]{}", q.batches, q.M, q.K, q.K, q.N,
                                             parts.size() > 1 ? " (one part of the coarse K loop)" : "");
        if (!op.split.empty())
          throw InputError(g.file, at, fmt::format("cannot divide {} that way: a part would be empty, or {}", what, limits));
        throw InputError(g.file, "/ops/" + std::to_string(op.index),
                         fmt::format("{}: no division of {} over at most {} cores fits: {}", op.op, what, ctx.cores, limits));
      }
      it = plans.emplace(q.K, *plan).first;
    }
    const MatmulPlan& plan = it->second;
    if (!first_plan) {
      first_plan = plan;
      first_problem = q;
    }
    estimate_ns += plan.estimate_ns;
    // Where this part's product goes: the output when it is the only part, the running sum's
    // first value for the first part, else a buffer of its own that the accumulation reads.
    auto scratch = [&](const char* what) {
      const int b = ctx.builder.add_buffer(fmt::format("{}/i{}/{}", kernel, i, what), Space::hbm, out.bytes(), out.dtype);
      ctx.laid_out_like.emplace_back(b, out_hbm);  // stored as the output is (the card's layout, when it has one)
      return b;
    };
    const int product = parts.size() == 1 ? out_hbm : scratch(i == 0 ? "sum" : "product");
    const auto first_buffer = ctx.builder.graph().buffers.size();
    // The op's epilogue (linear's bias) runs on the last part's product.
    MatmulEmitter e(ctx, q, plan, last ? steps : std::vector<EpilogueStep>{}, out, product,
                    parts.size() == 1 ? kernel : fmt::format("{}/i{}", kernel, i));
    e.op_out_ = op.outputs[0];
    e.emit();
    int stored_last = e.last_stored_;
    if (i > 0) {
      const int next = last ? out_hbm : scratch("sum");
      stored_last = emit_accumulate(ctx, fmt::format("{}/i{}/accumulate", kernel, i), out, sum, product, next);
      sum = next;
    } else {
      sum = product;
    }
    // Iteration i's buffers take over the space of the last tile iteration i - 1 stored: on
    // each core, its loads start once that store is done (card.loop_iteration_ns later).
    if (before >= 0)
      for (std::size_t b = first_buffer; b < ctx.builder.graph().buffers.size(); ++b)
        if (ctx.builder.graph().buffers[b].space == Space::lx) ctx.builder.set_after(static_cast<int>(b), before);
    before = stored_last;
  }
  describe(ctx, kernel, op, epilogue, first_problem, *first_plan);
  if (ctx.report && parts.size() > 1) {
    KernelReport& rep = ctx.report->kernel(kernel);
    // The parts' estimates, and the running sum's loads and stores at the memory's peak.
    rep.estimate_ns = estimate_ns + static_cast<double>(3 * (parts.size() - 1) * out.bytes()) / ctx.chip->memory_peak_gbps();
    rep.estimate_terms_ns.clear();  // the first part's terms; the estimate is the parts' sum
    rep.loops.insert(rep.loops.begin(),
                     fmt::format("coarse tiles: K in {} parts, one after another on each core, each a matmul kernel of "
                                 "its own (its division and tiles below are the first part's); from the second part on, "
                                 "the part's product is stored, then loaded with the running sum, added and stored again "
                                 "(the partial sums round-trip HBM)",
                                 parts.size()));
  }
}

}  // namespace dfsim

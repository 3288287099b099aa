// Lowering of scaled dot-product attention, as the card's backend compiles it: work units
// (batch, KV head, Lq tile) over the cores; per unit the G = Hq / Hkv query heads of the KV
// head's group share each K and V tile (loaded once per group), and an online softmax runs
// over the Lk tiles with its carries (running max, running sum, output accumulator) in LX.
#include <fmt/format.h>

#include <algorithm>

#include "sim/common/error.h"
#include "sim/compiler/compile_report.h"
#include "sim/compiler/lowering.h"
#include "sim/compiler/spmd_merge.h"
#include "sim/compiler/tiling.h"

namespace dfsim {

namespace {

struct SdpaShape {
  std::int64_t B = 0, Hq = 0, Hkv = 0, Lq = 0, Lk = 0, D = 0, G = 1;
};

// LX bytes of one unit's working set with Lq tiles of tq and Lk tiles of tk: the group's Q
// tile, K and V tiles, a score tile in fp32 and its probabilities, and per query head two
// fp32 output accumulators (before and after a step) and the row max and sum carries.
std::uint64_t sdpa_tile_bytes(const SdpaShape& s, std::int64_t tq, std::int64_t tk, Dtype dt, bool mask) {
  auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  std::uint64_t b = dtype_bytes(dt, u(s.G * tq * s.D)) + 2 * dtype_bytes(dt, u(tk * s.D)) +
                    dtype_bytes(Dtype::fp32, u(2 * tq * tk)) + dtype_bytes(dt, u(tq * tk)) +
                    u(s.G) * dtype_bytes(Dtype::fp32, u(2 * tq * s.D + 4 * tq));
  if (mask) b += dtype_bytes(dt, u(tq * tk));
  return b;
}

// Per core and step: which unit, its Lq range, and how many Lk tiles it needs.
struct Unit {
  bool valid = false;
  std::int64_t b = 0, hk = 0, q0 = 0, nq = 0, lk_tiles = 0;
};

}  // namespace

void lower_sdpa(LowerContext& ctx, const Op& op, const std::string& kernel) {
  const OpGraph& g = ctx.ops;
  const OpTensor& Q = g.tensors[static_cast<std::size_t>(op.inputs[0])];
  const OpTensor& K = g.tensors[static_cast<std::size_t>(op.inputs[1])];
  const OpTensor& V = g.tensors[static_cast<std::size_t>(op.inputs[2])];
  const OpTensor& O = g.tensors[static_cast<std::size_t>(op.outputs[0])];
  const bool has_mask = op.inputs.size() == 4;
  SdpaShape s{Q.shape[0], Q.shape[1], K.shape[1], Q.shape[2], K.shape[2], Q.shape[3], Q.shape[1] / K.shape[1]};
  const Dtype dt = Q.dtype;
  const std::uint64_t e = dtype_bytes(dt, 1);

  // Tiles: the tallest Lq tile that fits with an Lk tile of at least a stick (K and V then move
  // once per group and Lq tile), shortened while the units leave cores idle; `tiles` {Lq, Lk}
  // forces the counts.
  auto halvings = [](std::int64_t n) {
    std::vector<std::int64_t> v;
    for (std::int64_t d = 1;; d *= 2) {
      std::int64_t x = (n + d - 1) / d;
      if (v.empty() || v.back() != x) v.push_back(x);
      if (x == 1) break;
    }
    return v;
  };
  auto forced = [&](const char* name) -> std::int64_t {
    auto it = op.tiles.find(name);
    return it == op.tiles.end() ? 0 : it->second;
  };
  const std::int64_t min_tk = std::min<std::int64_t>(s.Lk, static_cast<std::int64_t>(ctx.stick_bytes / e));
  auto units_of = [&](std::int64_t q) { return s.B * s.Hkv * ((s.Lq + q - 1) / q); };
  std::vector<std::pair<std::int64_t, std::int64_t>> fits;  // (tq, the longest tk that fits)
  for (std::int64_t q : halvings(s.Lq)) {
    if (forced("Lq") && q != (s.Lq + forced("Lq") - 1) / forced("Lq")) continue;
    for (std::int64_t k : halvings(s.Lk)) {
      if (forced("Lk") ? k != (s.Lk + forced("Lk") - 1) / forced("Lk") : k < min_tk) continue;
      if (sdpa_tile_bytes(s, q, k, dt, has_mask) <= ctx.budget) {
        fits.emplace_back(q, k);
        break;
      }
    }
  }
  std::int64_t tq = 0, tk = 0;
  for (auto [q, k] : fits)
    if (tq == 0 || (units_of(tq) < ctx.cores && q >= 64)) {
      tq = q;
      tk = k;
    }
  if (!tq)
    throw InputError(g.file, "/ops/" + std::to_string(op.index),
                     fmt::format("sdpa: no Lq x Lk tile (with {} query heads per KV head, D = {}) fits the {}-byte "
                                 "tile budget{}", s.G, s.D, ctx.budget, op.tiles.empty() ? "" : " with the forced tiles"));
  const std::int64_t nq = (s.Lq + tq - 1) / tq, nk = (s.Lk + tk - 1) / tk;
  const std::int64_t units = s.B * s.Hkv * nq;
  const int used = static_cast<int>(std::min<std::int64_t>(units, ctx.cores));
  const std::int64_t share = (units + used - 1) / used;

  auto unit_of = [&](int core, std::int64_t i) {
    Unit u;
    std::int64_t id = core * share + i;
    if (i >= share || id >= units) return u;
    u.valid = true;
    std::int64_t qt = id % nq, bh = id / nq;
    u.hk = bh % s.Hkv;
    u.b = bh / s.Hkv;
    u.q0 = qt * tq;
    u.nq = std::min(tq, s.Lq - u.q0);
    u.lk_tiles = nk;
    if (op.causal)  // key j > offset + i is masked: Lk tiles past the unit's last query's keys are skipped
      u.lk_tiles = std::min(nk, (op.causal_offset + u.q0 + u.nq - 1) / tk + 1);
    return u;
  };
  auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  auto hbm = [&](int tensor, std::uint64_t offset_elems, std::uint64_t run_elems, std::uint64_t rows,
                 std::uint64_t stride_elems) {
    SlicePattern p;
    p.offset = offset_elems * e;
    p.bytes = run_elems * e;
    p.rows = rows;
    p.stride = rows > 1 ? stride_elems * e : 0;
    p.elements = run_elems * rows;
    return hbm_slice(ctx.hbm[static_cast<std::size_t>(tensor)], p, UnitStep{}, CoreGroup{});
  };
  auto one = [](int core) { return CoreGroup{core, 1, 0, 0}; };
  auto buffer = [&](const std::string& name, Dtype d, std::int64_t elems) {
    return ctx.builder.add_buffer(name, Space::lx, dtype_bytes(d, u64(elems)), d);
  };
  const std::int64_t G = s.G, D = s.D;

  for (std::int64_t i = 0; i < share; ++i) {
    std::string ip = kernel + "/u" + std::to_string(i);
    std::vector<Unit> us;
    for (int c = 0; c < used; ++c) us.push_back(unit_of(c, i));
    // The group's query tile: G runs (one per query head) of nq rows.
    int qb = buffer(ip + "/" + Q.name, dt, G * tq * D);
    CoreTasks lq(ip + "/load_" + Q.name);
    for (int c = 0; c < used; ++c) {
      const Unit& u = us[static_cast<std::size_t>(c)];
      if (!u.valid) continue;
      Task t = group_task("", UnitKind::dma, "load", one(c), dt);
      t.reads.push_back(hbm(op.inputs[0], u64(((u.b * s.Hq + u.hk * G) * s.Lq + u.q0) * D), u64(u.nq * D), u64(G),
                            u64(s.Lq * D)));
      t.writes.push_back(whole(qb, dtype_bytes(dt, u64(G * u.nq * D))));
      lq.add(std::move(t));
    }
    lq.flush(ctx.builder);
    // Carries per core and query head: running max, running sum, output accumulator.
    std::vector<std::vector<int>> mx(static_cast<std::size_t>(used), std::vector<int>(static_cast<std::size_t>(G), -1));
    auto sum = mx, acc = mx;
    for (std::int64_t j = 0; j < nk; ++j) {
      std::string jp = ip + "/k" + std::to_string(j);
      const std::int64_t k0 = j * tk, nkj = std::min(tk, s.Lk - k0);
      auto needs = [&](const Unit& u) { return u.valid && j < u.lk_tiles; };
      int kb = buffer(jp + "/" + K.name, dt, tk * D), vb = buffer(jp + "/" + V.name, dt, tk * D);
      int mb = has_mask ? buffer(jp + "/mask", dt, tq * tk) : -1;
      CoreTasks lk(jp + "/load_" + K.name), lv(jp + "/load_" + V.name), lm(jp + "/load_mask");
      // K and V tiles: one load per KV head for every core whose unit works on that head and
      // needs this Lk tile (in bands, multicast), so each K/V byte moves once per GQA group (and
      // per multicast group of ring.multicast_max_cores such cores).
      std::vector<bool> done(static_cast<std::size_t>(used), false);
      for (int c = 0; c < used; ++c) {
        const Unit& u = us[static_cast<std::size_t>(c)];
        if (!needs(u) || done[static_cast<std::size_t>(c)]) continue;
        std::vector<int> sharers;
        for (int d = c; d < used; ++d) {
          const Unit& o = us[static_cast<std::size_t>(d)];
          if (needs(o) && o.b == u.b && o.hk == u.hk) {
            sharers.push_back(d);
            done[static_cast<std::size_t>(d)] = true;
          }
        }
        const std::uint64_t off = dtype_bytes(dt, u64(((u.b * s.Hkv + u.hk) * s.Lk + k0) * D)), row = dtype_bytes(dt, u64(D));
        const int reach = multicast_reach(ctx);
        emit_band_multicast(lk, ctx.hbm[static_cast<std::size_t>(op.inputs[1])], off, u64(nkj), row, row, kb, sharers, dt,
                            reach);
        emit_band_multicast(lv, ctx.hbm[static_cast<std::size_t>(op.inputs[2])], off, u64(nkj), row, row, vb, sharers, dt,
                            reach);
      }
      for (int c = 0; c < used; ++c) {
        const Unit& u = us[static_cast<std::size_t>(c)];
        if (!needs(u)) continue;
        if (has_mask) {
          Task t = group_task("", UnitKind::dma, "load", one(c), dt);
          t.reads.push_back(hbm(op.inputs[3], u64(u.q0 * s.Lk + k0), u64(nkj), u64(u.nq), u64(s.Lk)));
          t.writes.push_back(whole(mb, dtype_bytes(dt, u64(u.nq * nkj))));
          lm.add(std::move(t));
        }
      }
      lk.flush(ctx.builder);
      lv.flush(ctx.builder);
      lm.flush(ctx.builder);
      for (std::int64_t h = 0; h < G; ++h) {
        std::string hp = jp + "/h" + std::to_string(h);
        const auto hs = static_cast<std::size_t>(h);
        int sb = buffer(hp + "/scores", Dtype::fp32, tq * tk), sc = buffer(hp + "/scaled", Dtype::fp32, tq * tk);
        int mnew = buffer(hp + "/max", Dtype::fp32, tq), pb = buffer(hp + "/p", dt, tq * tk);
        int lnew = buffer(hp + "/sum", Dtype::fp32, tq), oc = j > 0 ? buffer(hp + "/corrected", Dtype::fp32, tq * D) : -1;
        int onew = buffer(hp + "/acc", Dtype::fp32, tq * D);
        CoreTasks qk(hp + "/qk"), scale(hp + "/scale"), amax(hp + "/amax"), ex(hp + "/exp"), rs(hp + "/sum"),
            corr(hp + "/correct"), pv(hp + "/pv");
        for (int c = 0; c < used; ++c) {
          const Unit& u = us[static_cast<std::size_t>(c)];
          if (!needs(u)) continue;
          const auto cs = static_cast<std::size_t>(c);
          const std::uint64_t tile = u64(u.nq * nkj), rows = u64(u.nq);
          auto f32 = [&](std::uint64_t n) { return dtype_bytes(Dtype::fp32, n); };
          Task t = group_task("", UnitKind::pt, "matmul", one(c), Dtype::fp32);  // q . k^T
          t.m = rows;
          t.n = u64(nkj);
          t.k = u64(D);
          Access qa = whole(qb, dtype_bytes(dt, rows * u64(D)));
          qa.offset.beta = static_cast<std::int64_t>(dtype_bytes(dt, u64(h * u.nq * D)));
          t.reads = {qa, whole(kb, dtype_bytes(dt, u64(nkj * D)))};
          t.writes = {whole(sb, f32(tile))};
          qk.add(std::move(t));
          Task sct = group_task("", UnitKind::sfp, has_mask ? "add" : "mul", one(c), Dtype::fp32);  // scale, mask
          sct.elements = tile;
          sct.reads = {whole(sb, f32(tile))};
          if (has_mask) sct.reads.push_back(whole(mb, dtype_bytes(dt, tile)));
          sct.writes = {whole(sc, f32(tile))};
          scale.add(std::move(sct));
          Task mt = group_task("", UnitKind::sfp, "amax", one(c), Dtype::fp32);  // running max
          mt.elements = tile;
          mt.reads = {whole(sc, f32(tile))};
          if (mx[cs][hs] >= 0) mt.reads.push_back(whole(mx[cs][hs], f32(rows)));
          mt.writes = {whole(mnew, f32(rows))};
          amax.add(std::move(mt));
          Task et = group_task("", UnitKind::sfp, "exp", one(c), dt);  // p = exp(s - max)
          et.elements = tile;
          et.reads = {whole(sc, f32(tile)), whole(mnew, f32(rows))};
          et.writes = {whole(pb, dtype_bytes(dt, tile))};
          ex.add(std::move(et));
          Task st = group_task("", UnitKind::sfp, "sum", one(c), Dtype::fp32);  // l = l * corr + rowsum(p)
          st.elements = tile;
          st.reads = {whole(pb, dtype_bytes(dt, tile)), whole(mnew, f32(rows))};
          if (sum[cs][hs] >= 0) st.reads.push_back(whole(sum[cs][hs], f32(rows)));
          st.writes = {whole(lnew, f32(rows))};
          rs.add(std::move(st));
          int prev = acc[cs][hs];
          if (prev >= 0) {  // o *= exp(old max - new max)
            Task ct = group_task("", UnitKind::sfp, "mul", one(c), Dtype::fp32);
            ct.elements = rows * u64(D);
            ct.reads = {whole(prev, f32(rows * u64(D))), whole(mx[cs][hs], f32(rows)), whole(mnew, f32(rows))};
            ct.writes = {whole(oc, f32(rows * u64(D)))};
            corr.add(std::move(ct));
            prev = oc;
          }
          Task pt = group_task("", UnitKind::pt, "matmul", one(c), Dtype::fp32);  // o += p . v
          pt.m = rows;
          pt.n = u64(D);
          pt.k = u64(nkj);
          pt.reads = {whole(pb, dtype_bytes(dt, tile)), whole(vb, dtype_bytes(dt, u64(nkj * D)))};
          if (prev >= 0) pt.reads.push_back(whole(prev, f32(rows * u64(D))));
          pt.writes = {whole(onew, f32(rows * u64(D)))};
          pv.add(std::move(pt));
          mx[cs][hs] = mnew;
          sum[cs][hs] = lnew;
          acc[cs][hs] = onew;
        }
        for (CoreTasks* t : {&qk, &scale, &amax, &ex, &rs, &corr, &pv}) t->flush(ctx.builder);
      }
    }
    // o / l per head into the group's output tile, then one store of G runs.
    int ob = buffer(ip + "/" + O.name, O.dtype, G * tq * D);
    for (std::int64_t h = 0; h < G; ++h) {
      CoreTasks div(ip + "/h" + std::to_string(h) + "/div");
      for (int c = 0; c < used; ++c) {
        const Unit& u = us[static_cast<std::size_t>(c)];
        if (!u.valid) continue;
        const auto cs = static_cast<std::size_t>(c), hs = static_cast<std::size_t>(h);
        const std::uint64_t n = u64(u.nq * D);
        Task t = group_task("", UnitKind::sfp, "div", one(c), O.dtype);
        t.elements = n;
        t.reads = {whole(acc[cs][hs], dtype_bytes(Dtype::fp32, n)), whole(sum[cs][hs], dtype_bytes(Dtype::fp32, u64(u.nq)))};
        Access w = whole(ob, dtype_bytes(O.dtype, n));
        w.offset.beta = static_cast<std::int64_t>(dtype_bytes(O.dtype, u64(h) * n));
        t.writes = {w};
        div.add(std::move(t));
      }
      div.flush(ctx.builder);
    }
    CoreTasks st(ip + "/store_" + O.name);
    for (int c = 0; c < used; ++c) {
      const Unit& u = us[static_cast<std::size_t>(c)];
      if (!u.valid) continue;
      Task t = group_task("", UnitKind::dma, "store", one(c), O.dtype);
      t.reads = {whole(ob, dtype_bytes(O.dtype, u64(G * u.nq * D)))};
      t.writes.push_back(hbm(op.outputs[0], u64(((u.b * s.Hq + u.hk * G) * s.Lq + u.q0) * D), u64(u.nq * D), u64(G),
                             u64(s.Lq * D)));
      st.add(std::move(t));
    }
    st.flush(ctx.builder);
  }

  if (ctx.report) {
    KernelReport& r = ctx.report->kernel(kernel);
    r.ops.push_back("sdpa -> " + O.name);
    r.split = fmt::format("units (batch, KV head, Lq tile) = {} x {} x {} = {} over {} cores, {} per core", s.B, s.Hkv,
                          nq, units, used, share);
    r.why = op.tiles.empty() ? "the tallest Lq tile that fits the LX budget, shortened while cores would idle"
                             : "tiles forced";
    r.loops = {fmt::format("units: {} per core", share), fmt::format("Lq: tiles of {} rows ({} tiles)", tq, nq),
               fmt::format("Lk: {} tiles of {}{}", nk, tk,
                           !op.causal ? std::string()
                           : op.causal_offset ? fmt::format(" (causal after {} cached keys: tiles past the last "
                                                            "query's keys skipped)", op.causal_offset)
                                              : std::string(" (causal: tiles past the last query skipped)")),
               fmt::format("query heads per KV head (GQA group): {}", G)};
    r.lx_resident = {fmt::format("the group's Q tile ({} heads x {} x {}) for all Lk tiles", G, tq, D),
                     "per query head: running max, running sum and the fp32 output accumulator (online softmax)"};
    r.sharing = fmt::format("K and V tiles loaded once per GQA group of {} query heads and multicast to every core "
                            "working on that KV head in the same step{}",
                            G, multicast_reach(ctx) > 0 ? fmt::format(" (at most {} cores per load, "
                                                                      "ring.multicast_max_cores)", multicast_reach(ctx))
                                                        : "");
    if (share > 1 && nq > 1)
      r.warnings.push_back(fmt::format("K and V are re-read in each of the {} steps of a core", share));
    if (used < ctx.cores)
      r.warnings.push_back(fmt::format("{} of {} cores idle: only {} units", ctx.cores - used, ctx.cores, units));
  }
}

}  // namespace dfsim

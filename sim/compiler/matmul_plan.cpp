// Work division and tiling of the matmul family (see matmul_plan.h).
#include "sim/compiler/matmul_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "models/pt/pt_timing.h"
#include "sim/config/chip_config.h"

namespace dfsim {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Share of `extent` over `parts`: ceil(extent / parts), rounded up to whole sticks of
// `stick` elements when that still leaves every part some work. 0: a part would be empty, or
// (unless `forced`) the shares cannot be whole sticks. Along a stick dim (`stick` > 1) a forced
// share is at least whole bytes: `byte_elems` elements (2 for int4: a part may not end in the
// middle of a byte).
std::int64_t share_of(std::int64_t extent, int parts, std::int64_t stick, bool forced, std::int64_t byte_elems = 1) {
  if (parts > extent) return 0;
  std::int64_t s = ceil_div(extent, parts);
  if (parts == 1) return s;
  std::int64_t whole = ceil_div(s, stick) * stick;
  if ((parts - 1) * whole < extent) return whole;
  if (stick > 1) s = ceil_div(s, byte_elems) * byte_elems;
  return forced && (parts - 1) * s < extent ? s : 0;
}

// Largest byte distance between the first and last byte a core touches in `m` when it takes
// batches [0, bshare), logical rows [0, rows) and cols [0, cols).
std::uint64_t span(const StoredMatrix& m, std::int64_t bshare, std::int64_t rows, std::int64_t cols) {
  SlicePattern first = m.block(0, 0, std::min(rows, m.rows), 0, std::min(cols, m.cols));
  auto last_b = static_cast<std::size_t>(std::min<std::int64_t>(bshare, static_cast<std::int64_t>(m.batch_elems.size())) - 1);
  std::uint64_t end = dtype_bytes(m.tensor->dtype, m.batch_elems[last_b]) + first.offset + (first.rows - 1) * first.stride +
                      first.bytes;
  return end - first.offset;
}


// The busiest memory port's inbound or outbound bytes. Each core reaches memory through the
// port of its ring half (Ring::memory_port: port = core x ports / stops), and a multicast
// crosses the port of every half its sharers sit in; cores numbered as lower_matmul's core_of.
// A's tiles are shared by a grid row's cores, B's by a grid column's, each loaded once per
// multicast group of ring.multicast_max_cores sharers (`a` and `b`: all of those loads); C and
// the epilogue's operands (`other`) belong to one core each. Bytes are spread evenly over the
// groups.
double busiest_port_bytes(const ChipConfig& chip, const MatmulPlan& plan, double a, double b, double c, double other) {
  const int ports = chip.memory.ports, stops = std::max(1, chip.cores);
  auto port_of = [&](int core) { return static_cast<std::size_t>(static_cast<std::int64_t>(core) * ports / stops % ports); };
  auto core_of = [&](int g, int kk, int r, int cl) { return ((g * plan.ksplit + kk) * plan.rows + r) * plan.cols + cl; };
  std::vector<double> in(static_cast<std::size_t>(ports), 0.0), out(in);
  const double groups = static_cast<double>(plan.bsplit * plan.ksplit);
  const double cores = groups * plan.rows * plan.cols;
  const int reach = chip.ring.multicast_max_cores;
  // One load of `bytes` to sharers [0, n) (core(i) their cores): each multicast group's load
  // to every port its cores use.
  auto share = [&](int n, double bytes, auto core) {
    const int step = reach > 0 ? reach : n;
    for (int first = 0; first < n; first += step) {
      std::vector<char> used(in.size(), 0);
      for (int i = first; i < std::min(n, first + step); ++i) used[port_of(core(i))] = 1;
      for (std::size_t p = 0; p < in.size(); ++p)
        if (used[p]) in[p] += bytes;
    }
  };
  const double a_load = a / (groups * plan.rows * multicast_loads(plan.cols, reach));
  const double b_load = b / (groups * plan.cols * multicast_loads(plan.rows, reach));
  for (int g = 0; g < plan.bsplit; ++g)
    for (int kk = 0; kk < plan.ksplit; ++kk) {
      for (int r = 0; r < plan.rows; ++r)  // A: one share per grid row
        share(plan.cols, a_load, [&](int cl) { return core_of(g, kk, r, cl); });
      for (int cl = 0; cl < plan.cols; ++cl)  // B: one share per grid column
        share(plan.rows, b_load, [&](int r) { return core_of(g, kk, r, cl); });
      for (int r = 0; r < plan.rows; ++r)
        for (int cl = 0; cl < plan.cols; ++cl) {
          std::size_t p = port_of(core_of(g, kk, r, cl));
          in[p] += other / cores;
          out[p] += c / cores;
        }
    }
  return std::max(*std::max_element(in.begin(), in.end()), *std::max_element(out.begin(), out.end()));
}

// A run of a tile in the card's stick layout: its runs are a few sticks apart (a default-order
// batched operand's single sticks are B sticks apart), mostly in DRAM rows other runs of the
// tile have open, so a run costs less than kDramRunOverheadBytes. Fitted on dfsim's own runs:
// workloads/bmm_32x512x128.json (every operand single sticks) moves 24 MiB in 288.5 us, about
// 1.5 x the time of whole-burst runs at the rate the estimate assumes.
constexpr double kLayoutRunOverheadBytes = 64;

// How one operand's loads or stores meet memory: the bytes off-chip memory spends on them, and
// their mean request (one run of a tile, at most a burst).
struct Moved {
  double bytes = 0, request = 0;
};

// `bytes` of matrix `m` moved in tiles of `rows` x `cols` logical elements. Row-major: runs of
// `run` elements of a stored row of `row` elements (effective_run_bytes; whole rows make one
// run of the tile's stored rows, `stored_rows`), or of `dram_run` where cores side by side make
// one longer run of the row at the same step (the requests stay `run` long). In the card's stick layout: the device runs
// of one tile (batch 0, its first kMaxRows rows: the runs repeat with the rows), each whole
// sticks plus kLayoutRunOverheadBytes, unless the tile is one run (a default-order batched
// operand is single sticks: 1.5 x its bytes, requests of one stick).
Moved moved_bytes(const StoredMatrix& m, std::uint64_t bytes, std::int64_t rows, std::int64_t cols, std::int64_t run,
                  std::int64_t row, std::int64_t stored_rows, const DmaConfig& dma, std::int64_t dram_run = 0) {
  const Dtype dt = m.tensor->dtype;
  const auto sb = static_cast<double>(dma.stick_bytes);
  const double burst = sb * dma.burst_sticks;
  auto whole_sticks = [&](double b) { return std::max(sb, std::ceil(b / sb) * sb); };
  if (!m.layout) {
    const auto run_bytes = static_cast<double>(dtype_bytes(dt, static_cast<std::uint64_t>(run < row ? run : row * stored_rows)));
    return {effective_run_bytes(static_cast<double>(bytes), std::max(run, dram_run), row, dt, dma.stick_bytes),
            std::min(burst, whole_sticks(run_bytes))};
  }
  constexpr std::int64_t kMaxRows = 128;
  const SlicePattern t = m.block(0, 0, std::min({rows, m.rows, kMaxRows}), 0, std::min(cols, m.cols));
  const RunCount n = count_runs(device_runs(*m.layout, t.offset, t.bytes, t.rows, t.stride));
  const double mean = static_cast<double>(n.bytes) / static_cast<double>(std::max<std::uint64_t>(n.runs, 1));
  if (n.runs <= 1) return {static_cast<double>(bytes), std::min(burst, whole_sticks(mean))};
  return {static_cast<double>(bytes) * (whole_sticks(mean) + kLayoutRunOverheadBytes) / mean, std::min(burst, whole_sticks(mean))};
}

// One DMA queue keeps max_outstanding requests in flight, each about kDmaBaseLatencyNs plus
// its bytes at kDmaRequestGbps from issue to completion on a loaded memory (dfsim's own runs:
// ~735 ns for single sticks, ~1.6 us for 4 KiB bursts, i.e. ~20 GB/s per queue in bursts, the
// "read bandwidth, 1 of 32 cores" of dfsim calibrate). The time a core's queue needs for
// `bytes` in requests of `request` bytes.
constexpr double kDmaBaseLatencyNs = 700, kDmaRequestGbps = 4.3;
double in_flight_ns(double bytes, double request, int outstanding) {
  if (bytes <= 0 || request <= 0) return 0;
  return bytes / request * (kDmaBaseLatencyNs + request / kDmaRequestGbps) / std::max(outstanding, 1);
}

}  // namespace

std::string division_text(const MatmulPlan& plan) {
  std::string s;
  auto add = [&](const char* d, int n) {
    if (n > 1) s += fmt::format("{}{}={}", s.empty() ? "" : " ", d, n);
  };
  add("B", plan.bsplit);
  add("M", plan.rows);
  add("N", plan.cols);
  add("K", plan.ksplit);
  return s.empty() ? "none" : s;
}

// How much less a K split's estimate must be than a K-free division's to be chosen (above).
constexpr double kKSplitMargin = 0.10;

// The estimate's side-by-side runs, fill and drain, and K splits searched for every shape (with
// kKSplitMargin) are validated on one-batch problems whose operands are row-major or in the
// card's layout as their own bytes (docs/compiler.md, "How good the choice is"): every model
// step's projections at batch 1. Batched problems and operands whose batches interleave stick
// by stick keep the estimate they had, on which those terms rank divisions worse.
bool refined_estimate(const MatmulProblem& p) {
  auto own_bytes = [](const StoredMatrix& m) { return !m.layout || m.layout->identity(); };
  return p.batches == 1 && !p.folded && own_bytes(p.a) && own_bytes(p.b) && own_bytes(p.c);
}

int multicast_loads(int sharers, int reach) { return reach > 0 ? (sharers + reach - 1) / reach : 1; }

std::optional<MatmulPlan> matmul_plan_for(const MatmulProblem& p, const ChipConfig& chip, const MatmulConstraints& c,
                                          int bsplit, int rows, int cols, int ksplit) {
  const Dtype in = p.a.tensor->dtype, out = p.c.tensor->dtype;
  const std::int64_t stick = stick_elements(chip.core.dma.stick_bytes, in);
  MatmulPlan plan;
  plan.bsplit = bsplit;
  plan.rows = rows;
  plan.cols = cols;
  plan.ksplit = ksplit;
  // Whole sticks per core along the dims that are some operand's stick dim: N (C, and B
  // unless transposed), K (A unless transposed), M only when A is stored transposed.
  const bool forced = !c.split.empty();
  // Elements of a byte: 2 if an operand or the output is int4, whose bytes hold two.
  const unsigned bits = std::min({dtype_bits(in), dtype_bits(p.b.tensor->dtype), dtype_bits(out)});
  const std::int64_t byte_elems = bits < 8 ? 8 / bits : 1;
  plan.bshare = share_of(p.batches, bsplit, 1, forced);
  plan.mshare = share_of(p.M, rows, p.a.transposed ? stick : 1, forced, byte_elems);
  plan.nshare = share_of(p.N, cols, stick, forced, byte_elems);
  plan.kpart = share_of(p.K, ksplit, stick, forced, byte_elems);
  if (!plan.bshare || !plan.mshare || !plan.nshare || !plan.kpart) return std::nullopt;
  MatmulTile most;
  if (auto t = c.tiles.find("M"); t != c.tiles.end()) most.m = ceil_div(plan.mshare, t->second);
  if (auto t = c.tiles.find("N"); t != c.tiles.end()) most.n = ceil_div(plan.nshare, t->second);
  if (auto t = c.tiles.find("K"); t != c.tiles.end()) most.k = ceil_div(plan.kpart, t->second);
  OperandSharing sharing{cols, rows, ksplit > 1, p.a.transposed, p.b.transposed, static_cast<std::uint64_t>(chip.core.dma.stick_bytes)};
  const bool ta = p.a.transposed, tb = p.b.transposed;
  const MatmulTile least{ta ? stick : 0, stick, matmul_k_stick(ta, tb, stick)};
  // Loop-invariant operands kept in LX take their whole per-core block out of the tile budget
  // (half of it from each half): A when every batch shares it, B when there are several m tiles.
  const std::uint64_t a_block = dtype_bytes(in, static_cast<std::uint64_t>(plan.mshare * plan.kpart));
  const std::uint64_t b_block = dtype_bytes(in, static_cast<std::uint64_t>(plan.kpart * plan.nshare));
  bool a_invariant = p.batches > 1;
  for (std::uint64_t e : p.a.batch_elems) a_invariant = a_invariant && e == p.a.batch_elems[0];
  plan.a_resident = c.keep_invariant && a_invariant && plan.bshare > 1 && 2 * a_block <= c.budget;
  const std::uint64_t reserved = plan.a_resident ? a_block / 2 : 0;
  std::optional<MatmulTile> tile;
  if (c.keep_invariant && 2 * (b_block + reserved) <= c.budget) {
    tile = plan_matmul_tile(plan.mshare, plan.nshare, plan.kpart, in, c.budget - reserved - b_block / 2, sharing, most, least);
    plan.b_resident = tile && ceil_div(plan.mshare, tile->m) > 1;
  }
  if (!plan.b_resident) tile = plan_matmul_tile(plan.mshare, plan.nshare, plan.kpart, in, c.budget - reserved, sharing, most, least);
  if (!tile && plan.a_resident) {
    plan.a_resident = false;
    tile = plan_matmul_tile(plan.mshare, plan.nshare, plan.kpart, in, c.budget, sharing, most, least);
  }
  if (!tile) return std::nullopt;
  plan.tile = *tile;
  for (const StoredMatrix* m : {&p.a, &p.b, &p.c}) {
    std::int64_t r = m == &p.b ? plan.kpart : plan.mshare, cl = m == &p.a ? plan.kpart : plan.nshare;
    if (span(*m, plan.bshare, r, cl) > kMaxSpanBytes) return std::nullopt;
  }

  // Off-chip bytes: A once per n tile unless one k-step lets the n tiles share it, B once per
  // m tile unless it stays in LX; a shared load once per multicast group of its sharers
  // (ring.multicast_max_cores: a grid row's cols share A, a grid column's rows share B).
  const auto nb = static_cast<std::uint64_t>(p.batches);
  const int reach = chip.ring.multicast_max_cores;
  const std::uint64_t a_loads = (plan.k_tiles() == 1 ? 1 : static_cast<std::uint64_t>(plan.n_tiles())) *
                                static_cast<std::uint64_t>(multicast_loads(cols, reach));
  const std::uint64_t b_loads = (plan.b_resident ? 1 : static_cast<std::uint64_t>(plan.m_tiles())) *
                                static_cast<std::uint64_t>(multicast_loads(rows, reach));
  const std::uint64_t a_bytes = plan.a_resident ? static_cast<std::uint64_t>(bsplit) * dtype_bytes(in, static_cast<std::uint64_t>(p.M * p.K)) *
                                                      static_cast<std::uint64_t>(multicast_loads(cols, reach))
                                                : nb * dtype_bytes(in, static_cast<std::uint64_t>(p.M * p.K)) * a_loads;
  const std::uint64_t b_bytes = nb * dtype_bytes(in, static_cast<std::uint64_t>(p.K * p.N)) * b_loads;
  const std::uint64_t c_bytes = nb * dtype_bytes(out, static_cast<std::uint64_t>(p.M * p.N));
  plan.offchip_bytes = a_bytes + b_bytes + c_bytes +
                       static_cast<std::uint64_t>(c.extra_bytes_per_output * static_cast<double>(nb * p.M * p.N));
  // Time bounds: the busiest core's PT (one corelet when K is split), the memory, the busiest core's DMA.
  const double ghz = chip.core.clock_mhz / 1000.0;
  const int simd = chip.core.pt.simd.count(in) ? chip.core.pt.simd.at(in) : 1;
  const std::uint64_t tile_cycles = pt_matmul_cycles(static_cast<std::uint64_t>(plan.tile.m), static_cast<std::uint64_t>(plan.tile.n),
                                                     static_cast<std::uint64_t>(plan.tile.k), chip.core.pt.rows, chip.core.pt.cols,
                                                     simd, ksplit > 1 ? 1 : chip.core.corelets, chip.core.pt.dataflow,
                                                     chip.core.pt.fold_stream_limit);
  const auto steps = static_cast<double>(plan.bshare * plan.m_tiles() * plan.n_tiles() * plan.k_tiles());
  plan.compute_ns = steps * static_cast<double>(tile_cycles) / ghz;
  if (ksplit > 1)  // the partials' tree: a ring copy of each fp32 output tile per level
    plan.compute_ns += std::ceil(std::log2(ksplit)) * static_cast<double>(plan.bshare * plan.mshare * plan.nshare * 4) /
                       chip.ring.bytes_per_cycle / ghz;
  const double gbps = chip.memory_peak_gbps();
  const DmaConfig& dma = chip.core.dma;
  const Moved am = moved_bytes(p.a, a_bytes, plan.tile.m, plan.tile.k, ta ? plan.tile.m : plan.tile.k, ta ? p.M : p.K,
                               ta ? plan.tile.k : plan.tile.m, dma);
  // A grid row's `cols` cores whose n tile is their whole N share read B's rows (and store C's)
  // in adjacent runs at the same step: the DRAM sees the run they cover together, whose row it
  // opens once (dfsim's runs: 512 x 4096 x 4096 on 1 x 32, B in 256 B runs, 83 % row hits).
  const bool refined = refined_estimate(p);
  const std::int64_t side_n = refined && plan.tile.n == plan.nshare ? plan.nshare * cols : 0;
  const Moved bm = moved_bytes(p.b, b_bytes, plan.tile.k, plan.tile.n, tb ? plan.tile.k : plan.tile.n, tb ? p.K : p.N,
                               tb ? plan.tile.n : plan.tile.k, dma, tb ? 0 : side_n);
  const Moved cm = moved_bytes(p.c, c_bytes, plan.tile.m, plan.tile.n, plan.tile.n, p.N, plan.tile.m, dma, side_n);
  const double a_eff = am.bytes, b_eff = bm.bytes, c_eff = cm.bytes;
  const double other = static_cast<double>(plan.offchip_bytes - a_bytes - b_bytes - c_bytes);
  plan.memory_ns = (a_eff + b_eff + c_eff + other) / gbps;
  if (chip.memory.ports > 0) {
    // The ports between the controllers and the ring, each with its ring half's cores: a
    // division on one half's cores, or multicasts to both halves, load a port more.
    const double port_gbps = chip.memory.port_bytes_per_cycle * ghz;
    plan.memory_ns = std::max(plan.memory_ns, busiest_port_bytes(chip, plan, a_eff, b_eff, c_eff, other) / port_gbps);
    // The ports' request rate (memory.port_request_ns) on the requests it applies to (an
    // operand in the card's stick layout, or every one under memory.port_request_scope
    // "all"): the busiest port's requests, counted as its bytes are, at least that long each.
    if (chip.memory.port_request_ns > 0) {
      const bool every = chip.memory.port_request_scope == "all";
      auto requests = [&](const StoredMatrix& m, const Moved& mv, std::uint64_t bytes) {
        return (every || m.layout) && mv.request > 0 ? static_cast<double>(bytes) / mv.request : 0.0;
      };
      const double busiest = busiest_port_bytes(chip, plan, requests(p.a, am, a_bytes), requests(p.b, bm, b_bytes),
                                                requests(p.c, cm, c_bytes), 0.0);
      plan.port_requests_ns = busiest * chip.memory.port_request_ns;
      plan.memory_ns = std::max(plan.memory_ns, plan.port_requests_ns);
    }
  }
  // One core's DMA: word generation (per request and per stick), and the requests its queues
  // keep in flight (in_flight_ns). Inbound and outbound have queues of their own. A grid's
  // shared tile is loaded in bands by its sharers: each core loads its share of every load.
  const double cores_all = static_cast<double>(plan.cores());
  const double a_core = static_cast<double>(a_bytes) / cores_all, b_core = static_cast<double>(b_bytes) / cores_all;
  const double c_core = static_cast<double>(c_bytes) / (rows * cols * bsplit);
  const double requests_in = a_core / am.request + b_core / bm.request;
  const double sticks = (a_core + b_core) / static_cast<double>(dma.stick_bytes);
  const int queue = dma.max_outstanding;
  plan.dma_ns = std::max({(sticks * dma.stick_issue_cycles + requests_in * dma.issue_cycles) / ghz,
                          in_flight_ns(a_core, am.request, queue) + in_flight_ns(b_core, bm.request, queue),
                          in_flight_ns(c_core, cm.request, queue)});
  // Pipeline fill and drain: a core's steps overlap their loads, PT work and stores only in
  // between; its first A and B bands (a multicast group's sharers load one each), one PT step
  // and its last output tile's store stand outside the bounds, less the bound's own share of a
  // step (which the bound counts already).
  const double bound = std::max({plan.compute_ns, plan.memory_ns, plan.dma_ns});
  if (refined) {
    auto group = [&](int sharers) { return static_cast<double>(reach > 0 ? std::min(sharers, reach) : sharers); };
    const double a_band = static_cast<double>(dtype_bytes(in, static_cast<std::uint64_t>(plan.tile.m * plan.tile.k))) / group(cols);
    const double b_band = static_cast<double>(dtype_bytes(in, static_cast<std::uint64_t>(plan.tile.k * plan.tile.n))) / group(rows);
    const double c_tile = static_cast<double>(dtype_bytes(out, static_cast<std::uint64_t>(plan.tile.m * plan.tile.n)));
    const double one_step = in_flight_ns(a_band, am.request, queue) + in_flight_ns(b_band, bm.request, queue) +
                            static_cast<double>(tile_cycles) / ghz + in_flight_ns(c_tile, cm.request, queue);
    plan.fill_ns = std::max(0.0, one_step - bound / steps);
  }
  plan.estimate_ns = bound + plan.fill_ns;
  return plan;
}

std::optional<MatmulPlan> choose_matmul_plan(const MatmulProblem& p, const ChipConfig& chip, const MatmulConstraints& c) {
  auto forced = [&](const char* d) -> int {
    auto it = c.split.find(d);
    return it == c.split.end() ? 0 : static_cast<int>(it->second);
  };
  if (!c.split.empty()) {
    auto plan = matmul_plan_for(p, chip, c, std::max(forced("B"), 1), std::max(forced("M"), 1), std::max(forced("N"), 1),
                                std::max(forced("K"), 1));
    if (plan) plan->why = "forced by split";
    return plan;
  }
  std::optional<MatmulPlan> best;
  std::vector<MatmulPlan> plans;  // every division that fits, for the runners-up in `why`
  int considered = 0;
  const bool refined = refined_estimate(p);
  const double k_margin = refined ? kKSplitMargin : 0.0;
  auto better = [k_margin](const MatmulPlan& x, const MatmulPlan& y) {
    // Memory-bound plans whose estimates are within 3 % stream their bytes at the same
    // card-level rate; the one on more cores has more DMA queues in flight, which the card
    // needs to reach that rate (dfsim calibrate: 8 cores read at 54 % of peak, 32 at 73 %).
    // Within that margin, fewer off-chip bytes first: the estimate's port and DRAM figures
    // are averages, the bytes are exact.
    const bool both_memory = x.estimate_ns == x.memory_ns && y.estimate_ns == y.memory_ns;
    if (both_memory && std::abs(x.estimate_ns - y.estimate_ns) <= 0.03 * std::max(x.estimate_ns, y.estimate_ns)) {
      if (x.offchip_bytes != y.offchip_bytes) return x.offchip_bytes < y.offchip_bytes;
      if (x.cores() != y.cores()) return x.cores() > y.cores();
    }
    // A K split must beat a K-free division by kKSplitMargin: what it adds beyond the estimate
    // (one corelet, the partials' ring reduction, the row conflicts of twice the streams, e.g.
    // 512 x 4096 x 14336 on M=4 N=4 K=2: 1678 us estimated, 2835 simulated, the DRAM at 58
    // GB/s with 8 % row hits) is not in it.
    if ((x.ksplit > 1) != (y.ksplit > 1) && k_margin > 0) {
      const double xe = x.ksplit > 1 ? x.estimate_ns / (1 - k_margin) : x.estimate_ns;
      const double ye = y.ksplit > 1 ? y.estimate_ns / (1 - k_margin) : y.estimate_ns;
      if (xe != ye) return xe < ye;
    }
    if (x.estimate_ns != y.estimate_ns) return x.estimate_ns < y.estimate_ns;
    if (x.offchip_bytes != y.offchip_bytes) return x.offchip_bytes < y.offchip_bytes;
    if (x.bsplit != y.bsplit) return x.bsplit > y.bsplit;  // batch first
    return x.cores() > y.cores();  // more DMA queues in flight for the same estimate
  };
  // Batch, M and N; then K split as well (a ring reduction): always under the refined
  // estimate, else only when the output blocks alone cannot keep half the cores busy.
  auto search = [&](bool split_k) {
    for (int b = 1; b <= std::min<std::int64_t>(p.batches, c.cores); ++b)
      for (int r = 1; b * r <= c.cores && r <= p.M; ++r)
        for (int cl = 1; b * r * cl <= c.cores && cl <= p.N; ++cl)
          for (int k = split_k ? 2 : 1; b * r * cl * k <= c.cores; k *= 2) {
            auto plan = matmul_plan_for(p, chip, c, b, r, cl, k);
            if (plan) {
              ++considered;
              plans.push_back(*plan);
            }
            if (plan && (!best || better(*plan, *best))) best = plan;
            if (!split_k) break;
          }
  };
  search(false);
  if (refined || !best || 2 * best->cores() < c.cores) search(true);
  if (best) {
    const double e = std::max({best->compute_ns, best->memory_ns, best->dma_ns});  // the largest bound
    const char* bound = e == best->compute_ns               ? "compute"
                        : e == best->port_requests_ns        ? "memory-port request"  // single sticks of a laid-out operand
                        : e == best->memory_ns               ? "memory"
                                                             : "DMA";
    best->why = fmt::format("least estimate ({:.1f} us, {} bound) of {} divisions on at most {} cores{}", best->estimate_ns / 1000.0,
                            bound, considered, c.cores,
                            refined ? fmt::format(" (a K split needs {:.0f} % less)", 100 * kKSplitMargin) : "");
    // The next best estimates, so that a user can see how close the choice was.
    std::vector<const MatmulPlan*> others;
    for (const MatmulPlan& q : plans)
      if (std::tie(q.bsplit, q.rows, q.cols, q.ksplit) != std::tie(best->bsplit, best->rows, best->cols, best->ksplit))
        others.push_back(&q);
    const std::size_t shown = std::min<std::size_t>(2, others.size());
    std::partial_sort(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(shown), others.end(),
                      [](const MatmulPlan* x, const MatmulPlan* y) {
                        return std::make_tuple(x->estimate_ns, x->offchip_bytes, -x->cores(), x->bsplit, x->rows, x->cols) <
                               std::make_tuple(y->estimate_ns, y->offchip_bytes, -y->cores(), y->bsplit, y->rows, y->cols);
                      });
    for (std::size_t i = 0; i < shown; ++i)
      best->why += fmt::format("{} {} {:.1f} us", i == 0 ? "; next:" : ",", division_text(*others[i]),
                               others[i]->estimate_ns / 1000.0);
  }
  return best;
}

}  // namespace dfsim

#include "sim/runtime/simulation.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <systemc>

#include "models/chip/card.h"
#include "models/common/task_unit.h"
#include "sim/common/error.h"
#include "sim/runtime/watchdog.h"

namespace dfsim {

namespace {

// Off-chip addresses: buffers laid out in file order, each aligned to the channel interleave,
// on every card whose tasks use it (a buffer has one address, the same on each of its cards:
// after the buffers already on any of them). One card, or every buffer on every card: one
// sequence. A placement's workloads on separate cards each start at address 0.
std::vector<std::uint64_t> layout_hbm(const KernelGraph& g, const ChipConfig& cfg) {
  std::vector<std::vector<char>> on(g.buffers.size(), std::vector<char>(static_cast<std::size_t>(g.cards), 0));
  for (const Task& t : g.tasks)
    for (int c : g.cards_of(t))
      for (const auto* list : {&t.reads, &t.writes})
        for (const Access& a : *list) on[static_cast<std::size_t>(a.buffer)][static_cast<std::size_t>(c)] = 1;
  std::vector<std::uint64_t> base(g.buffers.size(), 0), next(static_cast<std::size_t>(g.cards), 0);
  std::uint64_t align = std::max<std::uint64_t>(cfg.memory.interleave_bytes, 128);
  // Saturating: with memory.interleave_bytes 2^62 four buffers end at 2^64, which wrapped to 0
  // and passed the capacity check below with addresses far past the memory.
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  auto sat_add = [&](std::uint64_t a, std::uint64_t b) { return a > kMax - b ? kMax : a + b; };
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {
    if (g.buffers[i].space != Space::hbm) continue;
    // A buffer no task touches still takes its place on every card (as on one card before).
    bool any = std::find(on[i].begin(), on[i].end(), 1) != on[i].end();
    std::uint64_t at = 0;
    for (std::size_t c = 0; c < next.size(); ++c)
      if (!any || on[i][c]) at = std::max(at, next[c]);
    base[i] = at;
    const std::uint64_t blocks = g.buffers[i].bytes / align + (g.buffers[i].bytes % align != 0);
    const std::uint64_t span = blocks > kMax / align ? kMax : blocks * align;
    for (std::size_t c = 0; c < next.size(); ++c)
      if (!any || on[i][c]) next[c] = sat_add(at, span);
  }
  std::uint64_t most = *std::max_element(next.begin(), next.end());
  if (most > cfg.memory.capacity_bytes)
    throw InputError(g.file, "/buffers",
                     (most == kMax ? "off-chip buffers need more than 2^64 B" : "off-chip buffers need " + std::to_string(most) + " B") +
                         (align > 128 ? " (each starting at a multiple of memory.interleave_bytes, " + std::to_string(align) + " B)"
                                      : std::string()) +
                         ", more than memory.capacity_bytes (" + std::to_string(cfg.memory.capacity_bytes) + " B)" +
                         (g.cards > 1 ? " on a card" : ""));
  return base;
}

Tick bucket_ticks(const ChipConfig& cfg) {
  Tick b = ns_to_ticks(cfg.sim.utilization_bucket_ns);
  return b == 0 ? 1 : b;
}

}  // namespace

Simulation::Simulation(const KernelGraph& g, const ExpandedGraph& x, const ChipConfig& cfg, TraceLevel trace)
    : g_(g), x_(x), cfg_(cfg), rec_(bucket_ticks(cfg)), hbm_base_(layout_hbm(g, cfg)), sched_(g, x, rec_) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  rec_.set_level(cfg.sim.trace ? trace : TraceLevel::off);  // before the models add their tracks
  // SystemC's own informational messages (e.g. on sc_stop) are not for dfsim's users.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sched_.set_program_order_allocation(cfg.core.lx.allocation == "program_order");
  sched_.set_kernel_launch(ns_to_ticks(cfg.kernel_launch_ns));
  sched_.set_loop_iteration(ns_to_ticks(cfg.loop_iteration_ns));
  system_ = std::make_unique<System>("system", g.cards, cfg, sched_, rec_, hbm_base_);
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskInstance& t = x.instances[i];
    sched_.bind(static_cast<int>(i), &system_->card(t.card).unit(g, t));
  }
}

Simulation::~Simulation() = default;

RunResult Simulation::run(const RunLimits& limits) {
  RunResult res;
  auto t0 = std::chrono::steady_clock::now();
  ActivationCounter::value() = 0;
  sched_.start();
  // Polls limits and signals every 10 us of simulated time: negligible next to the models.
  Watchdog dog("watchdog", sched_, WatchLimits{limits.max_events, limits.timeout_seconds, limits.progress}, ns_to_ticks(10000));
  if (limits.max_sim_time_ns > 0)
    sc_core::sc_start(sc_core::sc_time::from_value(ns_to_ticks(limits.max_sim_time_ns)));
  else
    sc_core::sc_start();
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.activations = ActivationCounter::value();
  res.end = sched_.last_completion();
  if (!sched_.finished()) {
    bool events_left = sc_core::sc_pending_activity();
    if (dog.stop_signal()) {
      res.status = RunResult::Status::interrupted;
      res.signal = dog.stop_signal();
      res.reason = dog.stop_reason();
    } else if (!dog.stop_reason().empty()) {
      res.status = RunResult::Status::limit;
      res.reason = dog.stop_reason();
    } else if (events_left) {
      res.status = RunResult::Status::limit;
      res.reason = "stopped at --max-sim-time before all tasks completed";
    } else {
      res.status = RunResult::Status::deadlock;
      res.reason = "deadlock: " + std::to_string(sched_.total() - sched_.completed()) + " of " +
                   std::to_string(sched_.total()) + " task instances can never fire";
    }
    res.blocked = sched_.blocked_report(20);
    res.end = static_cast<Tick>(sc_core::sc_time_stamp().value());
    // A DMA records its busy time when a transfer completes: count the ones cut off by the
    // stop (busy until the stop, and as an item served, so the unit shows in the outputs).
    for (const TaskRecord& t : rec_.tasks())
      if (t.fired && !t.done && t.track >= 0 && rec_.tracks()[static_cast<std::size_t>(t.track)].kind == "dma" &&
          t.start < res.end)
        rec_.busy(t.track, t.start, res.end);
  }
  rec_.flush_buckets();
  return res;
}

}  // namespace dfsim

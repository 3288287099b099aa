#include "models/pcie/collective_engine.h"

#include <algorithm>
#include <cmath>

#include "models/common/task_host.h"
#include "models/pcie/link_port.h"

namespace dfsim {

CollectiveEngine::CollectiveEngine(sc_core::sc_module_name n, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
                                   PcieFabric& fabric)
    : sc_core::sc_module(n), sched_(sched), rec_(rec), fabric_(fabric), clk_(cfg.core.clock_mhz) {
  double per_vector = cfg.core.sfp.cycles_per_vector.at("add");
  reduce_per_cycle_ = static_cast<double>(cfg.cores) * cfg.core.corelets * cfg.core.sfp.lanes / per_vector;
  for (int c = 0; c < cfg.system.cards; ++c)
    reduce_track_.push_back(rec.add_track("pcie", "card " + std::to_string(c) + " reduce (sfp)", "sfp_reduce"));
  SC_HAS_PROCESS(CollectiveEngine);
  SC_METHOD(advance);
  sensitive << step_ev_;
  dont_initialize();
}

void CollectiveEngine::arrive(int inst, LinkPort& port) {
  const TaskInstance& ti = sched_.instance(inst);
  const Task& t = sched_.task_of(inst);
  Running& r = running_[ti.task];
  if (r.ports.empty()) {
    r.cards = sched_.graph().cards_of(t);
    r.ports.assign(r.cards.size(), nullptr);
  }
  auto pos = std::find(r.cards.begin(), r.cards.end(), port.card()) - r.cards.begin();
  r.ports[static_cast<std::size_t>(pos)] = &port;
  if (++r.arrived < static_cast<int>(r.cards.size())) return;
  // The full tensor: the gathered output of an all_gather, the input otherwise.
  std::uint64_t bytes = (t.op == "all_gather" ? ti.writes : ti.reads).at(0).total_bytes();
  r.steps = collective_steps(t.op, t.algorithm.empty() ? "ring" : t.algorithm, static_cast<int>(r.cards.size()), bytes,
                             t.root);
  r.elem_bits = dtype_bits(t.dtype);
  r.at = sim_now();
  step_ev_.notify(sc_core::SC_ZERO_TIME);
}

// Plays step r.next at `now`: every transfer of the step enters the fabric now; the step ends
// when the last byte has arrived and been reduced.
void CollectiveEngine::play(Running& r, Tick now) {
  Tick end = now;
  for (const CollectiveTransfer& x : r.steps[r.next]) {
    int dst = r.cards[static_cast<std::size_t>(x.dst)];
    Tick arrived = fabric_.transfer(now, r.cards[static_cast<std::size_t>(x.src)], dst, x.bytes);
    if (x.reduce) {
      std::uint64_t elements = x.bytes * 8 / r.elem_bits;
      Tick d = clk_.cycles(static_cast<std::uint64_t>(std::ceil(static_cast<double>(elements) / reduce_per_cycle_)));
      // Pipelined with the transfer: the last chunk's addition follows the last byte.
      Tick reduced = std::max(arrived, now + fabric_.latency() + d);
      rec_.busy(reduce_track_[static_cast<std::size_t>(dst)], reduced - d, reduced);
      reduced_ += elements;
      arrived = reduced;
    }
    end = std::max(end, arrived);
  }
  ++r.next;
  r.at = end;
}

void CollectiveEngine::advance() {
  ++ActivationCounter::value();
  Tick now = sim_now(), next = ~Tick(0);
  for (auto it = running_.begin(); it != running_.end();) {
    Running& r = it->second;
    if (r.arrived == static_cast<int>(r.cards.size()) && r.at <= now) {
      if (r.next < r.steps.size()) {
        play(r, now);
      } else {
        for (LinkPort* p : r.ports) p->complete_at(now);
        it = running_.erase(it);
        continue;
      }
    }
    if (r.arrived == static_cast<int>(r.cards.size())) next = std::min(next, r.at);
    ++it;
  }
  if (next != ~Tick(0)) step_ev_.notify(sc_core::sc_time::from_value(next - now));
}

}  // namespace dfsim

#include "models/pcie/collective_engine.h"

#include <algorithm>
#include <cmath>

#include "models/common/task_host.h"
#include "models/pcie/link_dma.h"
#include "models/pcie/link_port.h"
#include "models/sfp/sfp_unit.h"

namespace dfsim {

CollectiveEngine::CollectiveEngine(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec, PcieFabric& fabric,
                                   int cards)
    : sc_core::sc_module(n), sched_(sched), rec_(rec), fabric_(fabric) {
  for (int c = 0; c < cards; ++c)
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
    r.insts.assign(r.cards.size(), -1);
  }
  auto pos = std::find(r.cards.begin(), r.cards.end(), port.card()) - r.cards.begin();
  r.ports[static_cast<std::size_t>(pos)] = &port;
  r.insts[static_cast<std::size_t>(pos)] = inst;
  if (++r.arrived < static_cast<int>(r.cards.size())) return;
  // The full tensor: the gathered output of an all_gather, the input otherwise.
  const KernelGraph& g = sched_.graph();
  std::uint64_t bytes = (t.op == "all_gather" ? writes_of(g, ti) : reads_of(g, ti)).at(0).total_bytes();
  r.steps = collective_steps(t.op, t.algorithm, static_cast<int>(r.cards.size()), bytes,
                             t.root);
  r.elem_bits = dtype_bits(t.dtype);
  r.at = sim_now();
  step_ev_.notify(sc_core::SC_ZERO_TIME);
}

// Plays step r.next at `now`: every transfer of the step enters the fabric now, its bytes
// streamed out of the sender's memory and into the receiver's at the link's pace; a reducing
// receiver also reads its own part and adds the two on its SFP. The step ends when the last
// byte has arrived and been reduced, and every memory stream is done.
void CollectiveEngine::play(Running& r, Tick now) {
  const KernelGraph& g = sched_.graph();
  r.at = now;
  auto stream_done = [this, rp = &r](Tick t) {
    rp->at = std::max(rp->at, t);
    if (--rp->streams == 0) step_ev_.notify(sc_core::sc_time::from_value(rp->at > sim_now() ? rp->at - sim_now() : 0));
  };
  Tick end = now;
  for (const CollectiveTransfer& x : r.steps[r.next]) {
    const auto src = static_cast<std::size_t>(x.src), dst = static_cast<std::size_t>(x.dst);
    const TaskInstance& from = sched_.instance(r.insts[src]);
    const TaskInstance& to = sched_.instance(r.insts[dst]);
    const int kernel = sched_.task_of(r.insts[src]).kernel;
    Tick arrived = fabric_.transfer(now, r.cards[src], r.cards[dst], x.bytes, kernel);
    Tick every = fabric_.duration(r.ports[src]->dma().burst_bytes(), false);
    r.streams += x.reduce ? 3 : 2;
    fabric_.tally_memory(kernel, x.bytes * (x.reduce ? 2 : 1), x.bytes);
    r.ports[src]->dma().stream(reads_of(g, from).at(0), x.bytes, false, now, every, stream_done);
    r.ports[dst]->dma().stream(writes_of(g, to).at(0), x.bytes, true, now, every, stream_done);
    if (x.reduce) {
      r.ports[dst]->dma().stream(reads_of(g, to).at(0), x.bytes, false, now, every, stream_done);
      std::uint64_t elements = x.bytes * 8 / r.elem_bits;
      SfpUnit& sfp = r.ports[dst]->sfp(to.core);
      Tick d = sfp.add_time(elements, sched_.task_of(r.insts[dst]).dtype);
      // Pipelined with the transfer: from the first byte (after the latency) at the earliest,
      // as late as ending with the last byte, once the SFP is free.
      Tick s = sfp.book(std::max(now + fabric_.latency(), arrived > d ? arrived - d : 0), d);
      rec_.busy(reduce_track_[static_cast<std::size_t>(r.cards[dst])], s, s + d);
      reduced_ += elements;
      arrived = std::max(arrived, s + d);
    }
    end = std::max(end, arrived);
  }
  ++r.next;
  r.at = std::max(r.at, end);
}

void CollectiveEngine::advance() {
  ++ActivationCounter::value();
  Tick now = sim_now(), next = ~Tick(0);
  for (auto it = running_.begin(); it != running_.end();) {
    Running& r = it->second;
    auto ready = [&] { return r.arrived == static_cast<int>(r.cards.size()) && r.streams == 0; };
    if (ready() && r.at <= now) {
      if (r.next < r.steps.size()) {
        play(r, now);
      } else {
        for (std::size_t k = 0; k < r.ports.size(); ++k) r.ports[k]->collective_done(r.insts[k]);
        it = running_.erase(it);
        continue;
      }
    }
    if (ready()) next = std::min(next, r.at);
    ++it;
  }
  if (next != ~Tick(0)) step_ev_.notify(sc_core::sc_time::from_value(next - now));
}

}  // namespace dfsim

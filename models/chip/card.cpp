#include "models/chip/card.h"

#include "models/common/task_host.h"

namespace dfsim {

Card::Card(sc_core::sc_module_name n, int id, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
           const std::vector<std::uint64_t>& hbm_base, PcieFabric& fabric, CollectiveEngine& engine)
    : sc_core::sc_module(n),
      id_(id),
      mem_(MemoryRegistry::create(cfg.memory.impl, "memory")),
      ring_("ring"),
      link_dma_("link_dma", cfg, *mem_, hbm_base),
      link_("link", sched, rec, id, fabric, engine, link_dma_) {
  mem_->attach(rec);
  mem_->init(cfg, rec);
  ring_.init(cfg, rec);
  lx_.resize(cfg.cores, nullptr);
  for (int i = 0; i < cfg.cores; ++i) {
    std::string name = "core" + std::to_string(i);
    cores_.push_back(std::make_unique<Core>(name.c_str(), i, cfg, sched, rec, *mem_, ring_, lx_, hbm_base));
    lx_[i] = &cores_.back()->lx();
    // The scheduler numbers the LX of the graph's cores card by card: card x graph cores + core.
    if (i < sched.graph().cores) sched.set_lx(id * sched.graph().cores + i, lx_[i]);
  }
  // A memory model that tells completions when requests are sent has the DMA book each
  // burst's memory port ahead, in the order the cores issue rather than the order the bytes
  // arrive: the ports, shared by a half's cores, then fill the gaps such bookings leave.
  if (mem_->tells_completion_at_send()) ring_.set_port_backfill(true);
  // Ring links serve bursts in the order they arrive (ring.link_order): "auto" does so under a
  // model that tells completions at their time (lpddr5) and keeps booking order under one that
  // tells them when sent (bandwidth, simple), whose read/write dip comes from it
  // (docs/models.md, "Ring").
  const std::string& order = cfg.ring.link_order;
  ring_.set_link_calendar(order == "arrival" || (order == "auto" && !mem_->tells_completion_at_send()));
  std::vector<SfpUnit*> sfps;
  for (auto& c : cores_) sfps.push_back(&c->sfp());
  link_.set_sfps(std::move(sfps));
}

TaskUnit& Card::unit(const KernelGraph& g, const TaskInstance& t) {
  if (g.tasks[t.task].unit == UnitKind::link) return link_;
  return core(t.core).unit(g, t);
}

System::System(sc_core::sc_module_name n, int cards, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
               const std::vector<std::uint64_t>& hbm_base)
    : sc_core::sc_module(n), fabric_(cfg, rec), engine_("collectives", sched, rec, fabric_, cfg.system.cards) {
  for (int c = 0; c < cards; ++c) {
    // One card keeps the groups it always had ("core 3", "memory"); several are told apart.
    rec.set_group_prefix(cards > 1 ? "card " + std::to_string(c) + " " : "");
    std::string name = "card" + std::to_string(c);
    cards_.push_back(std::make_unique<Card>(name.c_str(), c, cfg, sched, rec, hbm_base, fabric_, engine_));
  }
  rec.set_group_prefix("");
}

}  // namespace dfsim

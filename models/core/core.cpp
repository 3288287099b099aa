#include "models/core/core.h"

namespace dfsim {

Core::Core(sc_core::sc_module_name n, int id, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
           IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& all_lx,
           const std::vector<std::uint64_t>& hbm_base)
    : sc_core::sc_module(n),
      id_(id),
      lx_("lx", cfg, rec, id),
      pt_("pt", sched, rec, cfg, lx_, id),
      sfp_("sfp", sched, rec, cfg, lx_, id),
      dma_(cfg.core.dma.queues == 2 ? "dma_in" : "dma", sched, rec, cfg, id, mem, ring, all_lx, hbm_base,
           cfg.core.dma.queues == 2 ? "dma in" : "dma"),
      ring_port_("ring_port", sched, rec, id, ring, all_lx) {
  if (cfg.core.dma.queues == 2)
    dma_out_ = std::make_unique<DmaEngine>("dma_out", sched, rec, cfg, id, mem, ring, all_lx, hbm_base, "dma out");
}

TaskUnit& Core::unit(const KernelGraph& g, const TaskInstance& t) {
  switch (g.tasks[t.task].unit) {
    case UnitKind::pt: return pt_;
    case UnitKind::sfp: return sfp_;
    case UnitKind::dma: return dma_out_ && DmaEngine::outbound(g, t) ? *dma_out_ : dma_;
    case UnitKind::ring: return ring_port_;
    case UnitKind::link: break;  // the card's PCIe port (Card::unit)
  }
  return sfp_;
}

DmaStats Core::dma_stats() const {
  DmaStats d = dma_.stats();
  if (dma_out_) d += dma_out_->stats();
  return d;
}

}  // namespace dfsim

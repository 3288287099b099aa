#include "models/core/core.h"

namespace dfsim {

Core::Core(sc_core::sc_module_name n, int id, const ChipConfig& cfg, Scheduler& sched, Recorder& rec,
           IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& all_lx,
           const std::vector<std::uint64_t>& hbm_base)
    : sc_core::sc_module(n),
      id_(id),
      lx_("lx", cfg, rec, id),
      pt_("pt", sched, rec, cfg, lx_, id),
      sfp_("sfp", sched, rec, cfg, lx_, id),
      dma_("dma", sched, rec, cfg, id, mem, ring, all_lx, hbm_base),
      ring_port_("ring_port", sched, rec, id, ring, all_lx) {}

TaskUnit& Core::unit(UnitKind kind) {
  switch (kind) {
    case UnitKind::pt: return pt_;
    case UnitKind::sfp: return sfp_;
    case UnitKind::dma: return dma_;
    case UnitKind::ring: return ring_port_;
  }
  return sfp_;
}

}  // namespace dfsim

#pragma once
// One core: its LX scratchpad, the PT and SFP units of its corelets, its DMA engine(s) and its
// ring port. Task instances are bound to the unit of their kind; with core.dma.queues = 2 a
// DMA task goes to the inbound queue (it reads off-chip memory: HBM->LX, HBM->HBM) or to the
// outbound queue (it reads this core's LX: LX->HBM, LX->LX), which run concurrently.
#include <memory>
#include <systemc>
#include <vector>

#include "models/dma/dma_engine.h"
#include "models/lx/lx_scratchpad.h"
#include "models/noc/ring_port.h"
#include "models/pt/pt_unit.h"
#include "models/sfp/sfp_unit.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

class Core : public sc_core::sc_module {
 public:
  Core(sc_core::sc_module_name n, int id, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
       IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& all_lx, const std::vector<std::uint64_t>& hbm_base);

  // The unit that runs task instance `t` of graph `g`.
  TaskUnit& unit(const KernelGraph& g, const TaskInstance& t);
  LxScratchpad& lx() { return lx_; }
  SfpUnit& sfp() { return sfp_; }
  // DMA queue 0 (inbound, or the only one) and 1 (outbound, when core.dma.queues = 2).
  DmaEngine& dma(int queue = 0) { return queue == 1 && dma_out_ ? *dma_out_ : dma_; }
  int dma_queues() const { return dma_out_ ? 2 : 1; }
  // Bytes, bursts and sticks of all DMA queues of this core.
  DmaStats dma_stats() const;
  int id() const { return id_; }

 private:
  int id_;
  LxScratchpad lx_;
  PtUnit pt_;
  SfpUnit sfp_;
  DmaEngine dma_;
  std::unique_ptr<DmaEngine> dma_out_;
  RingPort ring_port_;
};

}  // namespace dfsim

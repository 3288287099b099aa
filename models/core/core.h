#pragma once
// One core: its LX scratchpad, the PT and SFP units of its corelets, its DMA engine and its
// ring port. Task instances are bound to the unit of their kind.
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
  Core(sc_core::sc_module_name n, int id, const ChipConfig& cfg, Scheduler& sched, Recorder& rec,
       IMemory& mem, Ring& ring, std::vector<LxScratchpad*>& all_lx, const std::vector<std::uint64_t>& hbm_base);

  TaskUnit& unit(UnitKind kind);
  LxScratchpad& lx() { return lx_; }
  DmaEngine& dma() { return dma_; }
  int id() const { return id_; }

 private:
  int id_;
  LxScratchpad lx_;
  PtUnit pt_;
  SfpUnit sfp_;
  DmaEngine dma_;
  RingPort ring_port_;
};

}  // namespace dfsim

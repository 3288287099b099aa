#pragma once
// One card: the off-chip memory (model chosen by memory.impl), the ring, the cores and the
// card's PCIe port with its DMA into the card's memory. The System holds the cards a program uses and the PCIe fabric between
// them and the host (models/pcie/).
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/core.h"
#include "models/memory/memory.h"
#include "models/noc/ring.h"
#include "models/pcie/collective_engine.h"
#include "models/pcie/link_dma.h"
#include "models/pcie/link_port.h"
#include "models/pcie/pcie_fabric.h"

namespace dfsim {

class Card : public sc_core::sc_module {
 public:
  Card(sc_core::sc_module_name n, int id, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
       const std::vector<std::uint64_t>& hbm_base, PcieFabric& fabric, CollectiveEngine& engine);

  Core& core(int i) { return *cores_.at(i); }
  int cores() const { return static_cast<int>(cores_.size()); }
  int id() const { return id_; }
  IMemory& memory() { return *mem_; }
  Ring& ring() { return ring_; }
  LinkPort& link() { return link_; }
  // The unit of this card that runs task instance `t` of graph `g`.
  TaskUnit& unit(const KernelGraph& g, const TaskInstance& t);

 private:
  int id_;
  std::unique_ptr<IMemory> mem_;
  Ring ring_;
  std::vector<LxScratchpad*> lx_;
  std::vector<std::unique_ptr<Core>> cores_;
  LinkDma link_dma_;
  LinkPort link_;
};

// The whole simulated system: the cards a program uses, on the PCIe fabric of
// config.system (system.cards cards in drawers of system.cards_per_drawer).
class System : public sc_core::sc_module {
 public:
  System(sc_core::sc_module_name n, int cards, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
         const std::vector<std::uint64_t>& hbm_base);
  Card& card(int i = 0) { return *cards_.at(i); }
  int cards() const { return static_cast<int>(cards_.size()); }
  PcieFabric& fabric() { return fabric_; }
  CollectiveEngine& collectives() { return engine_; }

 private:
  PcieFabric fabric_;
  CollectiveEngine engine_;
  std::vector<std::unique_ptr<Card>> cards_;
};

}  // namespace dfsim

#pragma once
// One card: the off-chip memory (model chosen by memory.impl), the ring and the cores.
// The System holds the cards (one for now; the hierarchy is there for multi-card later).
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/core.h"
#include "models/memory/memory.h"
#include "models/noc/ring.h"

namespace dfsim {

class Card : public sc_core::sc_module {
 public:
  Card(sc_core::sc_module_name n, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
       const std::vector<std::uint64_t>& hbm_base);

  Core& core(int i) { return *cores_.at(i); }
  int cores() const { return static_cast<int>(cores_.size()); }
  IMemory& memory() { return *mem_; }
  Ring& ring() { return ring_; }

 private:
  std::unique_ptr<IMemory> mem_;
  Ring ring_;
  std::vector<LxScratchpad*> lx_;
  std::vector<std::unique_ptr<Core>> cores_;
};

// The whole simulated system: a set of cards.
class System : public sc_core::sc_module {
 public:
  System(sc_core::sc_module_name n, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
         const std::vector<std::uint64_t>& hbm_base);
  Card& card(int i = 0) { return *cards_.at(i); }

 private:
  std::vector<std::unique_ptr<Card>> cards_;
};

}  // namespace dfsim

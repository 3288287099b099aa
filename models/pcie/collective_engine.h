#pragma once
// Runs the collectives of a system: gathers the cards of a collective's group as their ports
// fire it, then plays its steps (collective_schedule.h) on the PCIe fabric one after the other,
// each step once the previous one has fully arrived: every transfer read from the sender's
// memory and written to the receiver's by their LinkDmas; a receiver that reduces also reads
// its own part and adds on the SFP of the core that runs the collective, pipelined with the
// transfer. One SC_METHOD for every collective in flight.
#include <map>
#include <systemc>
#include <vector>

#include "models/pcie/collective_schedule.h"
#include "models/pcie/pcie_fabric.h"
#include "sim/config/chip_config.h"
#include "sim/common/dtype.h"

namespace dfsim {

class TaskHost;
class LinkPort;

class CollectiveEngine : public sc_core::sc_module {
 public:
  CollectiveEngine(sc_core::sc_module_name n, TaskHost& sched, Recorder& rec, PcieFabric& fabric, int cards);

  // Card `port.card()` fired collective instance `inst`.
  void arrive(int inst, LinkPort& port);

  std::uint64_t reduced_elements() const { return reduced_; }  // SFP additions of all collectives

 private:
  struct Running {
    std::vector<LinkPort*> ports;       // by position in the group (nullptr until arrived)
    std::vector<int> insts;             // the instance of each position
    int arrived = 0;
    int streams = 0;                    // memory streams of the step being played not yet done
    std::vector<int> cards;             // the group, in ring order
    std::vector<CollectiveStep> steps;
    std::size_t next = 0;               // next step to play
    Tick at = 0;                        // when it may be played
    unsigned elem_bits = 16;
  };
  void advance();
  void play(Running& r, Tick now);

  TaskHost& sched_;
  Recorder& rec_;
  PcieFabric& fabric_;
  std::vector<int> reduce_track_;       // per card
  std::map<int, Running> running_;      // by task template
  std::uint64_t reduced_ = 0;
  sc_core::sc_event step_ev_;
};

}  // namespace dfsim

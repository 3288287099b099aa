#pragma once
// A card's PCIe port: runs the card's "link" tasks. Host transfers (from_host, to_host), one
// at a time, cross the fabric at once, their bytes streamed from or to the card's memory by
// its LinkDma; a collective is handed to the CollectiveEngine, where it waits until every
// card of its group has arrived, without holding the port (so that collectives of two
// workloads reaching two cards in opposite orders cannot deadlock), and completes when the
// engine's last step has.
#include <vector>

#include "models/common/timed_unit.h"

namespace dfsim {

class PcieFabric;
class CollectiveEngine;
class LinkDma;
class SfpUnit;

class LinkPort : public TimedTaskUnit {
 public:
  LinkPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int card, PcieFabric& fabric,
           CollectiveEngine& engine, LinkDma& dma);
  int card() const { return card_; }
  LinkDma& dma() { return dma_; }
  // The SFP of each core of the card (a collective's reduction runs on one), set by the card.
  void set_sfps(std::vector<SfpUnit*> sfps) { sfps_ = std::move(sfps); }
  SfpUnit& sfp(int core) { return *sfps_.at(static_cast<std::size_t>(core)); }
  int track() const { return track_; }
  // From the engine: collective instance `inst` completes now.
  void collective_done(int inst);

 private:
  void start(int inst) override;
  void finish_at(Tick end);  // records the port busy until `end`, then completes the task there
  int card_;
  PcieFabric& fabric_;
  CollectiveEngine& engine_;
  LinkDma& dma_;
  std::vector<SfpUnit*> sfps_;
  int track_;
};

}  // namespace dfsim

#pragma once
// A card's PCIe port: runs the card's "link" tasks one at a time. Host transfers (from_host,
// to_host) cross the fabric at once; a collective waits in the CollectiveEngine until every
// card of its group has arrived, and completes when the engine's last step has.
#include "models/common/task_unit.h"

namespace dfsim {

class PcieFabric;
class CollectiveEngine;

class LinkPort : public TaskUnit {
 public:
  LinkPort(sc_core::sc_module_name n, TaskHost& s, Recorder& r, int card, PcieFabric& fabric,
           CollectiveEngine& engine);
  int card() const { return card_; }
  int track() const { return track_; }
  // From the engine: the running collective completes at `end` (>= now).
  void complete_at(Tick end);

 private:
  void start(int inst) override;
  void done();
  int card_;
  PcieFabric& fabric_;
  CollectiveEngine& engine_;
  int track_;
  int current_ = -1;
  sc_core::sc_event done_ev_;
};

}  // namespace dfsim

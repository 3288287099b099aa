#pragma once
// A resource served in arrival order (a DRAM channel, a ring link, an LX port): closed-form
// reservation of its next free time, so a burst or a tile costs one computation, not cycles.
#include "sim/common/time.h"
#include "sim/stats/recorder.h"

namespace dfsim {

class Resource {
 public:
  Resource() = default;
  Resource(Recorder* rec, int track) : rec_(rec), track_(track) {}

  // Occupies the resource for `duration` from the later of `arrival` and its free time.
  // Returns the start time.
  Tick reserve(Tick arrival, Tick duration) {
    Tick start = arrival > free_at_ ? arrival : free_at_;
    free_at_ = start + duration;
    if (rec_ && track_ >= 0) rec_->busy(track_, start, free_at_);
    return start;
  }
  Tick free_at() const { return free_at_; }
  int track() const { return track_; }

 private:
  Recorder* rec_ = nullptr;
  int track_ = -1;
  Tick free_at_ = 0;
};

}  // namespace dfsim

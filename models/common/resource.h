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

  // For bookings that come out of time order (a memory model that tells a request's completion
  // when it is sent, so the DMA books the ring and LX legs ahead): a booking that arrives before
  // the idle gap the latest booking left, and fits in it, is served there instead of after
  // everything booked (one gap, the latest: the same rule as the coarse memory's channels).
  void set_backfill(bool on) { backfill_ = on; }

  // Occupies the resource for `duration` from the later of `arrival` and its free time (or
  // within the gap, above). Returns the start time.
  Tick reserve(Tick arrival, Tick duration) {
    if (backfill_) {
      const Tick in_gap = arrival > gap_start_ ? arrival : gap_start_;
      if (arrival < gap_end_ && in_gap + duration <= gap_end_) {
        gap_start_ = in_gap + duration;  // what lies before `in_gap` stays idle
        if (rec_ && track_ >= 0) rec_->busy_backfill(track_, in_gap, gap_start_);
        return in_gap;
      }
    }
    Tick start = arrival > free_at_ ? arrival : free_at_;
    if (backfill_ && start > free_at_) {
      gap_start_ = free_at_;
      gap_end_ = start;
    }
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
  bool backfill_ = false;
  Tick gap_start_ = 0, gap_end_ = 0;
};

}  // namespace dfsim

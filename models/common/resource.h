#pragma once
// A resource served in arrival order (a DRAM channel, a ring link, an LX port): closed-form
// reservation of its next free time, so a burst or a tile costs one computation, not cycles.
#include <cstddef>
#include <memory>

#include "models/common/gap_list.h"
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
  // Bookings served in order of arrival whatever the order they are made in (a ring link: a
  // burst booked later for an earlier time crosses the link in an idle gap the earlier bookings
  // left, not after all of them): the latest idle gaps before the free time are kept (GapList),
  // each split around what it serves; a booking that fits in none goes after everything booked.
  void set_calendar(bool on) { gaps_ = on ? std::make_unique<GapList>() : nullptr; }

  // Occupies the resource for `duration` from the later of `arrival` and its free time (or
  // within the gap, above). Returns the start time.
  Tick reserve(Tick arrival, Tick duration) {
    if (gaps_) {
      Tick in_gap;
      if (arrival < free_at_ && gaps_->take(arrival, duration, in_gap)) {
        if (rec_ && track_ >= 0) rec_->busy_backfill(track_, in_gap, in_gap + duration);
        return in_gap;
      }
      if (arrival > free_at_) gaps_->push(free_at_, arrival);
    } else if (backfill_) {
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
  std::unique_ptr<GapList> gaps_;  // set_calendar
};

}  // namespace dfsim

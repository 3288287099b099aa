#pragma once
// The idle gaps a resource left before its free time, earliest first, in a fixed ring buffer:
// where a booking made out of time order is served (Resource::set_calendar).
#include <array>
#include <cstddef>

#include "sim/common/time.h"

namespace dfsim {

class GapList {
 public:
  // The latest gaps kept; older ones are dropped (a booking is made at most a few hundred ns
  // late, so gaps long past are never searched: take() walks back from the latest).
  static constexpr std::size_t kCapacity = 64;

  // Notes the idle interval [start, end) (after every gap kept).
  void push(Tick start, Tick end) {
    if (count_ == kCapacity) drop_front();
    at(count_) = {start, end};
    ++count_;
  }
  // Serves a booking of `duration` arriving at `arrival` in the earliest gap that holds it from
  // its arrival on; the gap is split around it. Returns false when no gap holds it.
  bool take(Tick arrival, Tick duration, Tick& start);

 private:
  struct Gap {
    Tick start, end;
  };
  static constexpr std::size_t kMask = kCapacity - 1;
  static_assert((kCapacity & kMask) == 0, "the capacity is a power of two");
  Gap& at(std::size_t i) { return buf_[(head_ + i) & kMask]; }
  void drop_front() {
    head_ = (head_ + 1) & kMask;
    --count_;
  }

  std::array<Gap, kCapacity> buf_{};
  std::size_t head_ = 0, count_ = 0;
};

}  // namespace dfsim

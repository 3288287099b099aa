#include "models/common/gap_list.h"

namespace dfsim {

bool GapList::take(Tick arrival, Tick duration, Tick& start) {
  // Gaps are disjoint and in order, so their ends rise: skip those that end by the arrival,
  // walking back from the latest (a booking made late is late by little: it is nearly always
  // the latest gap or the one before).
  std::size_t lo = count_;
  while (lo > 0 && at(lo - 1).end > arrival) --lo;
  for (std::size_t i = lo; i < count_; ++i) {
    Gap& g = at(i);
    const Tick s = arrival > g.start ? arrival : g.start, e = s + duration;
    if (e > g.end) continue;
    start = s;
    if (s > g.start && e < g.end) {
      // Split: the part after the booking becomes a gap of its own, right after this one.
      const Gap after{e, g.end};
      if (count_ == kCapacity && i == 0) {  // full, and this is the oldest: its front part goes
        g = after;
        return true;
      }
      g.end = s;
      if (count_ == kCapacity) {  // full: the oldest gap (not this one) goes
        drop_front();
        --i;
      }
      for (std::size_t j = count_; j > i + 1; --j) at(j) = at(j - 1);
      at(i + 1) = after;
      ++count_;
    } else if (s > g.start) {
      g.end = s;
    } else if (e < g.end) {
      g.start = e;
    } else {
      for (std::size_t j = i; j + 1 < count_; ++j) at(j) = at(j + 1);
      --count_;
    }
    return true;
  }
  return false;
}

}  // namespace dfsim

#include "sim/stats/recorder.h"

#include <algorithm>

namespace dfsim {

int Recorder::add_track(std::string group, std::string name, std::string kind) {
  tracks_.push_back(Track{std::move(group), std::move(name), std::move(kind), 0, 0, {}, {}});
  return static_cast<int>(tracks_.size()) - 1;
}

int Recorder::add_counter(std::string group, std::string name) {
  counters_.push_back(Counter{std::move(group), std::move(name), {}});
  return static_cast<int>(counters_.size()) - 1;
}

void Recorder::busy(int id, Tick start, Tick end, bool new_item) {
  if (end <= start) {
    if (new_item) ++tracks_[id].items;
    return;
  }
  Track& t = tracks_[id];
  if (new_item) ++t.items;
  // Busy time counts only what is not already covered (spans on a track never overlap
  // in the models, but a merged span may be extended).
  if (keep_spans_) {
    if (!t.spans.empty() && start <= t.spans.back().second) {
      Tick& last_end = t.spans.back().second;
      if (end <= last_end) return;
      start = last_end;
      last_end = end;
    } else {
      t.spans.emplace_back(start, end);
    }
  }
  t.busy += end - start;
  std::size_t first = start / bucket_, last = (end - 1) / bucket_;
  if (t.bucket_busy.size() <= last) t.bucket_busy.resize(last + 1, 0);
  for (std::size_t b = first; b <= last; ++b) {
    Tick lo = std::max<Tick>(start, b * bucket_), hi = std::min<Tick>(end, (b + 1) * bucket_);
    t.bucket_busy[b] += hi - lo;
  }
}

void Recorder::counter(int id, Tick t, double value) {
  auto& pts = counters_[id].points;
  if (!pts.empty() && pts.back().first == t) {
    pts.back().second = value;
    return;
  }
  if (!pts.empty() && pts.back().second == value) return;
  pts.emplace_back(t, value);
}

}  // namespace dfsim

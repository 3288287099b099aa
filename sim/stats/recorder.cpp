#include "sim/stats/recorder.h"

#include <algorithm>

namespace dfsim {

int Recorder::add_track(std::string group, std::string name, std::string kind) {
  Track t;
  t.group = std::move(group);
  t.name = std::move(name);
  t.kind = std::move(kind);
  tracks_.push_back(std::move(t));
  return static_cast<int>(tracks_.size()) - 1;
}

int Recorder::add_counter(std::string group, std::string name) {
  counters_.push_back(Counter{std::move(group), std::move(name), {}});
  return static_cast<int>(counters_.size()) - 1;
}

void Recorder::busy(int id, Tick start, Tick end, bool new_item) {
  Track& t = tracks_[id];
  if (new_item) ++t.items;
  // Only the part after the previous interval counts, so nothing is counted twice.
  start = std::max(start, t.last_end);
  if (end <= start) return;
  t.busy += end - start;
  t.last_end = end;
  if (keep_spans_) {
    if (!t.spans.empty() && start <= t.spans.back().second + merge_gap_)
      t.spans.back().second = end;
    else
      t.spans.emplace_back(start, end);
  }
  if (start >= t.hot_lo && end <= t.hot_hi) {
    t.bucket_busy[t.hot] += end - start;
    return;
  }
  std::size_t first = start / bucket_, last = (end - 1) / bucket_;
  if (t.bucket_busy.size() <= last) t.bucket_busy.resize(std::max(last + 1, t.bucket_busy.size() * 2), 0);
  t.hot = last;
  t.hot_lo = last * bucket_;
  t.hot_hi = t.hot_lo + bucket_;
  if (first == last) {
    t.bucket_busy[first] += end - start;
    return;
  }
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

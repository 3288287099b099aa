#include "sim/stats/recorder.h"

#include <algorithm>

namespace dfsim {

const char* trace_level_name(TraceLevel l) {
  switch (l) {
    case TraceLevel::off: return "off";
    case TraceLevel::kernels: return "kernels";
    case TraceLevel::units: return "units";
    case TraceLevel::full: return "full";
  }
  return "?";
}

bool parse_trace_level(const std::string& s, TraceLevel* out) {
  for (TraceLevel l : {TraceLevel::off, TraceLevel::kernels, TraceLevel::units, TraceLevel::full})
    if (s == trace_level_name(l)) {
      *out = l;
      return true;
    }
  return false;
}

int Recorder::add_track(std::string group, std::string name, std::string kind) {
  Track t;
  t.group = prefix_ + group;
  t.name = std::move(name);
  t.kind = std::move(kind);
  // Only resources that serve bursts (DRAM channels, ring links) are drawn from their spans;
  // task units are drawn from the task records.
  t.keep_spans = level_ >= TraceLevel::full && (t.kind == "dram" || t.kind == "ring");
  tracks_.push_back(std::move(t));
  return static_cast<int>(tracks_.size()) - 1;
}

int Recorder::add_counter(std::string group, std::string name, std::string unit, TraceLevel detail) {
  counters_.push_back(Counter{prefix_ + group, std::move(name), std::move(unit), level_ >= detail, {}});
  return static_cast<int>(counters_.size()) - 1;
}

int Recorder::add_series(std::string group, std::string name) {
  series_.push_back(Series{prefix_ + group, std::move(name), {}});
  return static_cast<int>(series_.size()) - 1;
}

// Doubles the bucket width until t falls within kMaxBuckets buckets, summing pairs of
// buckets of every track and series. Returns t's bucket.
std::size_t Recorder::coarsen_for(Tick t) {
  auto halve = [](auto& v) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i / 2] = (i % 2 ? v[i / 2] : 0) + v[i];
    v.resize((v.size() + 1) / 2);
  };
  while (t / bucket_ >= kMaxBuckets) {
    bucket_ *= 2;
    for (Track& tr : tracks_) {
      flush_hot(tr);
      halve(tr.bucket_busy);
      tr.hot_lo = tr.hot_hi = 0;  // recomputed at the next update
    }
    for (Series& s : series_) {
      halve(s.per_bucket);
      s.hot_lo = s.hot_hi = 0;  // recomputed at the next amount
    }
  }
  return t / bucket_;
}

void merge_spans(std::vector<BusySpan>& v, Tick gap) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (n > 0 && v[i].start <= v[n - 1].end + gap) {
      v[n - 1].end = std::max(v[n - 1].end, v[i].end);
      v[n - 1].busy += v[i].busy;
    } else {
      v[n++] = v[i];
    }
  }
  v.resize(n);
}

namespace {
// A track's spans reached the cap: bridges gaps of a doubled width (the first 1 % of a
// bucket) until at most half the cap are left.
void coarsen_spans(Track& t, std::vector<BusySpan>& v, Tick bucket) {
  while (v.size() >= Recorder::kMaxSpansPerTrack / 2) {
    t.span_gap = t.span_gap == 0 ? bucket / 100 + 1 : t.span_gap * 2;
    merge_spans(v, t.span_gap);
  }
}
}  // namespace

void Recorder::keep_span(Track& t, Tick start, Tick end) {
  auto& v = t.spans;
  if (!v.empty() && start <= v.back().end + t.span_gap) {
    v.back().end = end;
    v.back().busy += end - start;
    return;
  }
  if (v.size() >= kMaxSpansPerTrack) {
    coarsen_spans(t, v, bucket_);
    if (start <= v.back().end + t.span_gap) {
      v.back().end = end;
      v.back().busy += end - start;
      return;
    }
  }
  v.push_back(BusySpan{start, end, end - start});
}

void Recorder::busy_backfill(int id, Tick start, Tick end) {
  Track& t = tracks_[id];
  ++t.items;
  if (end <= start) return;
  t.busy += end - start;
  if (t.keep_spans) {
    auto& v = t.fill_spans;
    v.push_back(BusySpan{start, end, end - start});
    if (v.size() >= kMaxSpansPerTrack) {
      std::sort(v.begin(), v.end());
      merge_spans(v, t.span_gap);
      coarsen_spans(t, v, bucket_);
    }
  }
  add_to_buckets(t, start, end);
}

void Recorder::add_to_buckets(Track& t, Tick start, Tick end) {
  if (start >= t.hot_lo && end <= t.hot_hi) {
    t.hot_busy += end - start;
    return;
  }
  flush_hot(t);  // before bucket_index: coarsening halves bucket_busy
  std::size_t last = bucket_index(end - 1), first = start / bucket_;
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

}  // namespace dfsim
